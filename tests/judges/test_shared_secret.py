"""A team's or CI's judge cache hits when they share the fence secret, and only then."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.judges import userdir
from tests.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(60)
SECRET = "0123456789abcdef" * 4
OTHER = "fedcba9876543210" * 4


def grade_as(user_home: Path, folder: Path, server: FakeLLM, monkeypatch, **env: str) -> dict:
    """``grade`` as the user whose config folder is ``user_home``, sharing one cache file; the usage."""
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(user_home))
    for name in ("RUBRIC_STUDIO_SECRET", "RUBRIC_STUDIO_SECRET_FILE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = folder / f"report-{user_home.name}.json"
    main(["grade", str(folder / "r.yaml"), "--base-url", server.base_url_openai, "--cache-path",
          str(folder / "shared.sqlite"), "--format", "json", "-o", str(out)])  # fmt: skip
    return json.loads(out.read_text())["usage"]


def secret_file(folder: Path, value: str, mode: int = 0o600) -> Path:
    path = folder / "team-secret"
    path.write_text(value + "\n")
    path.chmod(mode)
    return path


@pytest.fixture(autouse=True)
def fresh_process_state(monkeypatch):
    """Warnings are printed once per process, and secret files are read once per version."""
    monkeypatch.setattr(userdir, "_WARNED", set())
    monkeypatch.setattr(userdir, "_FILE_SECRETS", {})


@pytest.fixture
def project(tmp_path: Path, monkeypatch):
    """A rubric of 2 criteria and 10 samples, the fake judge, and ``grade(user, **env) -> usage``."""
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    criteria = "  - {id: hi, outcome: Says hello}\n  - {id: bye, outcome: Says goodbye}\n"
    (tmp_path / "r.yaml").write_text("name: r\ncriteria:\n" + criteria)
    (tmp_path / "r.samples.jsonl").write_text(
        "".join(json.dumps({"id": f"s{i}", "output": f"hello {i}"}) + "\n" for i in range(10))
    )
    with FakeLLM() as server:

        def grade(user: str, **env: str) -> dict:
            return grade_as(tmp_path / user, tmp_path, server, monkeypatch, **env)

        yield tmp_path, server, grade


def test_without_a_shared_secret_another_user_re_judges_everything(project):
    _, _, grade = project
    assert grade("alice")["judge_calls"] == 20
    assert grade("bob")["judge_calls"] == 20  # per-user fences differ


def test_a_shared_secret_makes_the_cache_hit_for_everyone(project):
    folder, server, grade = project
    assert grade("alice", RUBRIC_STUDIO_SECRET=SECRET)["judge_calls"] == 20
    usage = grade("ci", RUBRIC_STUDIO_SECRET=SECRET)
    assert usage["judge_calls"] == 0 and usage["cache_hits"] == 20  # before: 20 of 20 re-judged
    shared = secret_file(folder, SECRET)
    usage = grade("carol", RUBRIC_STUDIO_SECRET_FILE=str(shared))
    assert usage["judge_calls"] == 0 and server.calls() == 20


def test_the_secret_value_comes_before_the_secret_file(project):
    folder, _, grade = project
    grade("alice", RUBRIC_STUDIO_SECRET=SECRET)
    other = str(secret_file(folder, OTHER))
    usage = grade("bob", RUBRIC_STUDIO_SECRET=SECRET, RUBRIC_STUDIO_SECRET_FILE=other)
    assert usage["judge_calls"] == 0
    assert grade("bob", RUBRIC_STUDIO_SECRET_FILE=other)["judge_calls"] == 20


def test_a_secret_file_that_changes_is_read_again(project):
    folder, _, grade = project
    path = secret_file(folder, SECRET)
    grade("alice", RUBRIC_STUDIO_SECRET_FILE=str(path))
    secret_file(folder, OTHER)
    stamp = path.stat().st_mtime_ns + 10**9  # a new version even where clocks are coarse
    os.utime(path, ns=(stamp, stamp))
    assert grade("alice", RUBRIC_STUDIO_SECRET_FILE=str(path))["judge_calls"] == 20


def test_a_weak_or_unreadable_secret_falls_back_with_one_warning(project, capsys):
    folder, _, grade = project
    usage = grade("dave", RUBRIC_STUDIO_SECRET="short")
    assert usage["judge_calls"] == 20
    err = capsys.readouterr().err
    assert "warning: RUBRIC_STUDIO_SECRET is shorter than 32 characters; using the per-user secret\n" in err
    assert err.count("shorter than 32") == 1  # not once per sample, nor twice through logging
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    usage = grade("dave", RUBRIC_STUDIO_SECRET_FILE=str(fifo))  # never blocks
    assert usage["cache_hits"] == 20
    assert f"SECRET_FILE {fifo}: expected a secret file, got a named pipe" in capsys.readouterr().err
    (folder / "big").write_bytes(b"x" * 100_000)
    usage = grade("dave", RUBRIC_STUDIO_SECRET_FILE=str(folder / "big"))
    assert usage["cache_hits"] == 20 and "longer than 4096 bytes" in capsys.readouterr().err


def test_an_empty_secret_is_named_not_silently_ignored(project, capsys):
    _, _, grade = project  # what a CI run gets where the secret is withheld (pull requests from forks)
    assert grade("ci", RUBRIC_STUDIO_SECRET="")["judge_calls"] == 20
    err = capsys.readouterr().err
    assert "warning: RUBRIC_STUDIO_SECRET is set but empty; using the per-user secret" in err


def test_a_weak_value_gives_way_to_a_good_secret_file_and_says_so(project, capsys):
    folder, _, grade = project
    grade("alice", RUBRIC_STUDIO_SECRET=SECRET)
    shared = str(secret_file(folder, SECRET))
    usage = grade("bob", RUBRIC_STUDIO_SECRET="short", RUBRIC_STUDIO_SECRET_FILE=shared)
    assert usage["judge_calls"] == 0
    err = capsys.readouterr().err
    assert f"shorter than 32 characters; using RUBRIC_STUDIO_SECRET_FILE {shared}\n" in err


def test_a_secret_file_every_user_can_read_is_used_with_a_warning(project, capsys):
    folder, _, grade = project
    shared = secret_file(folder, SECRET, mode=0o644)
    assert grade("alice", RUBRIC_STUDIO_SECRET_FILE=str(shared))["judge_calls"] == 20
    assert "is readable by every user of this machine (chmod o-r" in capsys.readouterr().err
    shared.chmod(0o640)
    assert grade("bob", RUBRIC_STUDIO_SECRET_FILE=str(shared))["judge_calls"] == 0
    assert "readable by every user" not in capsys.readouterr().err


def test_cache_stats_names_the_secret_source_never_the_value(project, monkeypatch, capsys):
    folder, _, _ = project
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(folder / "eve"))
    monkeypatch.delenv("RUBRIC_STUDIO_SECRET", raising=False)
    monkeypatch.delenv("RUBRIC_STUDIO_SECRET_FILE", raising=False)
    stats = ["cache", "stats", "--cache-path", str(folder / "x.sqlite")]
    assert main(stats) == 0
    assert f"fence secret: per-user {folder / 'eve' / 'secret'}\n" in capsys.readouterr().out
    monkeypatch.setenv("RUBRIC_STUDIO_SECRET", SECRET)
    assert main(stats) == 0
    out = capsys.readouterr().out
    assert "fence secret: RUBRIC_STUDIO_SECRET (shared)" in out and SECRET not in out
    monkeypatch.setenv("RUBRIC_STUDIO_SECRET", "too-short-to-use")
    assert main(stats) == 0
    captured = capsys.readouterr()
    assert "(ignored: RUBRIC_STUDIO_SECRET is shorter than 32 characters)" in captured.out
    assert "too-short-to-use" not in captured.out + captured.err
