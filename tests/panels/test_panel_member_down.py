"""A panel member whose server dies — from the start, or after answering some cells — against real
local servers: the cells pooled without it are marked in every report, the run exits 3 and one
line on stderr names the member and how many cells it failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from tests.fakellm import Call, FakeLLM, Hangup, unused_port_url
from tests.panels.judges import LONG, RIGHT, RUBRIC, Judges, member, sample_text

pytestmark = pytest.mark.timeout(120)
N = 8
COIN = "judge-coin"
DYING = member(LONG)


class DiesAfter:
    """Answers ``answers`` calls, then stops listening (a server that went away mid-run): the call
    in hand is hung up on, every later one finds nothing listening."""

    def __init__(self, answers: int):
        self.answers, self.inner, self.server = answers, Judges(), None

    def __call__(self, call: Call):
        if self.answers == 0:
            self.server.close()
            return Hangup()
        self.answers -= 1
        return self.inner(call)


@pytest.fixture
def alive(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLM(brain=Judges()) as server:
        yield server


def project(tmp_path: Path, alive: FakeLLM, dying_url: str) -> Path:
    """A rubric whose panel has judge-long at ``dying_url`` (one call at a time, so the order of its
    cells is the samples'), and judge-right and the coin at ``alive``."""
    panel = (f"  panel:\n    - {{model: {member(RIGHT)}, base_url: '{alive.base_url_openai}'}}\n"
             f"    - {{model: {DYING}, base_url: '{dying_url}', concurrency: 1}}\n"
             f"    - {{model: {member(COIN)}, base_url: '{alive.base_url_openai}'}}\n")
    (tmp_path / "r.yaml").write_text(RUBRIC.replace("  max_retries: 0\n", "  max_retries: 0\n" + panel))
    (tmp_path / "s.jsonl").write_text("".join(json.dumps({"id": f"s{i:02d}", "output": sample_text(i)}) + "\n"
                                              for i in range(N)))
    return tmp_path


def grade(folder: Path, capsys, fmt: str, *extra: str) -> tuple[int, str, str]:
    code = main(["grade", str(folder / "r.yaml"), str(folder / "s.jsonl"), "--allow-code", "--no-cache",
                 "--format", fmt, *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def marked(data: dict) -> list[str]:
    """The samples whose cell was pooled without an errored member, each checked to name it."""
    found = []
    for sample in data["samples"]:
        panel = sample["criteria"][0]["panel"]
        if panel["errors"]:
            assert panel["errored"] == [DYING] and sample["criteria"][0]["status"] in ("met", "unmet")
            found.append(sample["id"])
        else:
            assert panel["errored"] == []
    return found


def test_a_member_dead_from_the_start_marks_every_cell_and_is_named_in_one_line(tmp_path, alive, capsys):
    folder = project(tmp_path, alive, unused_port_url())
    code, out, err = grade(folder, capsys, "json")
    assert code == 3
    (line,) = err.strip().splitlines()  # no second line naming only the URL
    assert line.startswith(f"error: judge panel member {DYING} failed on every cell it judged ({N} of {N}): ")
    assert "connection refused" in line
    data = json.loads(out)
    assert len(marked(data)) == N and data["summary"]["errors"] == 0
    assert "judge_stopped" not in data  # the panel went on; the member stopped (usage.members says so)
    assert data["usage"]["members"][DYING]["errors"] == N and "cannot connect" in data["usage"]["members"][DYING]["stopped"]


def test_a_member_that_dies_mid_run_fails_the_run_and_says_so_in_one_line(tmp_path, alive, capsys):
    with FakeLLM(brain=DiesAfter(3)) as dying:
        dying.brain.server = dying
        folder = project(tmp_path, alive, dying.base_url_openai)
        code, out, err = grade(folder, capsys, "json")
    assert code == 3  # was 1: the verdicts of the two others hid it
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: judge panel member {DYING} stopped answering mid-run: failed on 5 of {N} cells "
                           "after answering 3")
    assert "connection refused" in line
    data = json.loads(out)
    assert marked(data) == [f"s{i:02d}" for i in range(3, N)]
    assert data["usage"]["members"][DYING]["errors"] == 5


def test_the_table_and_the_html_report_mark_the_cells_pooled_without_the_member(tmp_path, alive, capsys):
    folder = project(tmp_path, alive, unused_port_url())
    code, out, err = grade(folder, capsys, "table")
    rows = [line for line in out.splitlines() if line.startswith("│ s")]
    assert code == 3 and len(rows) == N
    assert all(" ⚠1 " in row for row in rows)  # e.g. "✓ 2–0 ⚠1": met, 2–0, one member errored
    assert "⚠1 pooled without 1 panel member that errored" in " ".join(out.split())  # the legend
    code, _, _ = grade(folder, capsys, "html", "-o", str(folder / "r.html"))
    page = (folder / "r.html").read_text()
    assert code == 3 and page.count("⚠1</a>") == N
    assert "pooled without 1 panel member that errored" in page
    assert f"judge panel member {DYING} failed on every cell it judged ({N} of {N})" in page  # the summary's notes
