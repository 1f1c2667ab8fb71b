"""A shared repository cannot make rubric-studio overwrite the user's files through links it ships.

Every writer — the card, the labels sidecar (command line and Python API), label exports, rubric
exports and imports, reports, the rubric's own save, the run history, the folder's write lock —
meets the same planted links: a symbolic link to a file outside the rubric's folder (absolute and
relative), into a hidden folder inside it, into a credentials folder, a hard link to a file outside,
and a link on a folder on the way. Each target is a decoy holding a valid rubric (so a writer that
read through the link would find something it could edit). After each writer: every decoy holds
its bytes and mode, the command exits 2 with one line naming the file (the API raises), and nothing
new appears outside the folder. See docs/concepts/trust.md, "Writes stay in the folder".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from rubric_studio.cli import main

RUBRIC = "name: r\ncriteria:\n  - id: short\n    check: {type: length, max_words: 5}\n"
DECOY = "name: decoy\ncriteria:\n  - id: kept\n    check: {type: length, max_words: 9}\ns0: {verdict: fail}\n"
SAMPLES = '{"id": "s0", "output": "a b c"}\n{"id": "s1", "output": "a b c d e f g h"}\n'
PROMPTFOO = ("description: pf\ntests:\n  - assert:\n      - type: llm-rubric\n        value: Is polite\n")
KINDS = ["absolute", "relative", "hidden", "credentials", "hard"]


class Repo:
    """A home with decoys and a project folder holding a rubric, its samples and a labels CSV."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.project = self.home / "project"
        self.project.mkdir(parents=True)
        (self.project / "r.yaml").write_text(RUBRIC)
        (self.project / "r.samples.jsonl").write_text(SAMPLES)
        (self.project / "l.csv").write_text("id,annotator,verdict,score,note,short\ns0,ann,pass,,ok,met\n")
        (self.project / "pf.yaml").write_text(PROMPTFOO)
        self.decoys = {
            "absolute": self.home / ".bashrc",
            "relative": self.home / "other" / "notes.yaml",
            "hidden": self.project / ".git" / "config",
            "credentials": self.home / ".ssh" / "authorized_keys",
            "hard": self.home / "other" / "hard.yaml",
        }
        for decoy in self.decoys.values():
            decoy.parent.mkdir(parents=True, exist_ok=True)
            decoy.write_text(DECOY)
            decoy.chmod(0o600)
        self.before = self.snapshot()

    def plant(self, name: str, kind: str) -> Path:
        """Put a link of ``kind`` at ``name`` (relative to the project) to that kind's decoy."""
        link = self.project / name
        link.parent.mkdir(parents=True, exist_ok=True)
        decoy = self.decoys[kind]
        if kind == "hard":
            os.link(decoy, link)
        elif kind == "relative":
            link.symlink_to(os.path.relpath(decoy, link.parent))
        else:
            link.symlink_to(decoy)
        return link

    def snapshot(self) -> dict[str, tuple[bytes, int]]:
        """Every file outside the project folder, and the decoy inside it, with its mode."""
        seen = {}
        for path in sorted(self.home.rglob("*")):
            inside = path.is_relative_to(self.project) and ".git" not in path.parts
            if path.is_file() and not path.is_symlink() and not inside:
                seen[str(path)] = (path.read_bytes(), path.stat().st_mode)
        return seen


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    made = Repo(tmp_path)
    monkeypatch.setenv("HOME", str(made.home))
    monkeypatch.chdir(made.project)
    return made


def cli(*argv: str) -> Callable[[], int]:
    return lambda: main(list(argv))


def label_through_api() -> int:
    from rubric_studio.core.labels import set_verdict

    set_verdict("r.labels.yaml", "s0", "pass")
    return 0


#: (writer, the file it names itself or the user named, how it is run)
WRITERS: list[tuple[str, str, Callable[[], int]]] = [
    ("card", "r.card.yaml", cli("card", "r.yaml")),
    ("labels import", "r.labels.yaml", cli("labels", "import", "r.yaml", "l.csv")),
    ("labels API", "r.labels.yaml", label_through_api),
    ("labels export csv -o", "out.csv", cli("labels", "export", "r.yaml", "--to", "csv", "-o", "out.csv")),
    ("labels export label-studio -o DIR", "ls/r.tasks.json",
     cli("labels", "export", "r.yaml", "--to", "label-studio", "-o", "ls")),
    ("export promptfoo -o", "promptfooconfig.yaml", cli("export", "r.yaml", "--to", "promptfoo", "-o",
                                                        "promptfooconfig.yaml")),
    ("import -o", "imported.yaml", cli("import", "pf.yaml", "--from", "promptfoo", "-o", "imported.yaml")),
    ("grade json -o", "report.json", cli("grade", "r.yaml", "r.samples.jsonl", "--format", "json", "-o",
                                         "report.json")),
    ("grade jsonl -o (streamed)", "report.jsonl", cli("grade", "r.yaml", "r.samples.jsonl", "--format", "jsonl",
                                                      "-o", "report.jsonl")),
    ("grade html -o", "report.html", cli("grade", "r.yaml", "r.samples.jsonl", "--format", "html", "-o",
                                         "report.html")),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("writer", "name", "run"), WRITERS, ids=[w[0] for w in WRITERS])
def test_no_writer_changes_a_decoy_through_a_planted_link(repo, capsys, writer, name, run, kind):
    link = repo.plant(name, kind)
    code = run() if writer != "labels API" else _raises_oserror(run)
    err = capsys.readouterr().err
    assert repo.snapshot() == repo.before, f"{writer} changed a file outside the folder through a {kind} link"
    assert code == 2, (writer, kind, code, err)
    if writer != "labels API":
        assert Path(name).name in err and err.count("\n") >= 1, err
    assert link.is_symlink() or kind == "hard"


def _raises_oserror(run: Callable[[], int]) -> int:
    with pytest.raises(OSError, match="nothing written|names \\(hard links\\)|hidden|outside|credentials"):
        run()
    return 2


@pytest.mark.parametrize("kind", ["absolute", "relative", "credentials"])
def test_the_rubric_saved_through_a_link_to_elsewhere_is_refused(repo, kind):
    (repo.project / "r.yaml").unlink()
    repo.plant("r.yaml", kind)
    from rubric_studio.core.atomic import UnsafeTarget
    from rubric_studio.core.document import RubricDocument

    document = RubricDocument.load("r.yaml")
    document.replace_text(document.text.replace("decoy", "renamed"))
    with pytest.raises(UnsafeTarget, match="symbolic link"):
        document.save()
    assert repo.snapshot() == repo.before


@pytest.mark.parametrize("planted", ["folder", "lock"])
def test_a_planted_working_folder_or_lock_is_never_written_through(repo, capsys, planted):
    outside = repo.home / "other"
    if planted == "folder":
        (repo.project / ".rubric-studio").symlink_to(outside)
    else:
        (repo.project / ".rubric-studio").mkdir()
        (repo.project / ".rubric-studio" / "lock").symlink_to(repo.decoys["relative"])
    code = main(["labels", "import", "r.yaml", "l.csv"])
    assert code == 2, capsys.readouterr().err
    assert repo.snapshot() == repo.before
    assert sorted(p.name for p in outside.iterdir()) == ["hard.yaml", "notes.yaml"]  # no lock, no .gitignore there
    assert not (repo.project / "r.labels.yaml").exists()


def test_a_folder_link_on_the_way_is_the_users_but_never_into_credentials(repo, capsys):
    """The folder an ``-o`` path names is the user's choice, links and all (a projects folder that
    is a link to another disk); a link on the way that lands in a credentials folder the path does
    not name is refused all the same."""
    (repo.project / "out").symlink_to(repo.home / "other")
    assert main(["grade", "r.yaml", "r.samples.jsonl", "--format", "json", "-o", "out/report.json"]) in (0, 1)
    assert (repo.home / "other" / "report.json").read_text().startswith("{")
    (repo.project / "keys").symlink_to(repo.decoys["credentials"].parent)
    assert main(["grade", "r.yaml", "r.samples.jsonl", "--format", "json", "-o", "keys/authorized_keys"]) == 2
    assert "where credentials are kept" in capsys.readouterr().err
    assert repo.decoys["credentials"].read_text() == DECOY


def test_a_rubric_folder_reached_through_the_users_own_link_is_written(repo, tmp_path, capsys):
    elsewhere = tmp_path / "disk" / "projects"
    elsewhere.parent.mkdir()
    repo.project.rename(elsewhere)
    (repo.home / "project").symlink_to(elsewhere)
    assert main(["card", str(repo.home / "project" / "r.yaml")]) == 0, capsys.readouterr().err
    assert (elsewhere / "r.card.yaml").is_file()


def test_the_run_history_never_appends_through_a_link(repo, tmp_path):
    from rubric_studio.engine.versions._history import RunHistory, history_path

    cache = tmp_path / "cache" / "cache.db"
    path = history_path(repo.project / "r.yaml", cache)
    path.parent.mkdir(parents=True)
    path.symlink_to(repo.decoys["absolute"])
    history = RunHistory(path, repo.project / "r.yaml")
    with pytest.raises(OSError, match="symbolic link"):
        history._append_line(b'{"number": 1}')
    assert repo.snapshot() == repo.before


def test_what_the_user_names_is_written_and_a_link_inside_the_folder_is_followed(repo, capsys):
    named = repo.home / "other" / "named-report.json"
    assert main(["grade", "r.yaml", "r.samples.jsonl", "--format", "json", "-o", str(named)]) in (0, 1)
    assert named.read_text().startswith("{")
    (repo.project / "card-real.yaml").write_text("old\n")
    (repo.project / "r.card.yaml").symlink_to("card-real.yaml")
    assert main(["card", "r.yaml"]) in (0, 1), capsys.readouterr().err
    assert (repo.project / "r.card.yaml").is_symlink()
    assert (repo.project / "card-real.yaml").read_text() != "old\n"


def test_the_working_folder_stays_out_of_git_status_and_follows_the_umask(repo):
    old = os.umask(0o077)
    try:
        assert main(["labels", "import", "r.yaml", "l.csv"]) == 0
    finally:
        os.umask(old)
    state = repo.project / ".rubric-studio"
    assert (state / ".gitignore").read_text().splitlines()[-1] == "*"
    for path in [state, *state.iterdir(), repo.project / "r.labels.yaml"]:
        assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))
