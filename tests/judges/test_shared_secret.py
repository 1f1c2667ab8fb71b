"""A team's or CI's judge cache hits when they share the fence secret, and only then."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rubric_studio.cli import main
from tests.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(60)
SECRET = "0123456789abcdef" * 4


def grade_as(user_home: Path, folder: Path, server: FakeLLM, monkeypatch, **env: str) -> dict:
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(user_home))
    for name in ("RUBRIC_STUDIO_SECRET", "RUBRIC_STUDIO_SECRET_FILE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = folder / f"report-{user_home.name}.json"
    main(["grade", str(folder / "r.yaml"), "--base-url", server.base_url_openai, "--cache-path",
          str(folder / "shared.sqlite"), "--format", "json", "-o", str(out)])  # fmt: skip
    return json.loads(out.read_text())["usage"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (tmp_path / "r.yaml").write_text("name: r\ncriteria:\n  - {id: hi, outcome: Says hello}\n  - {id: bye, outcome: Says goodbye}\n")
    (tmp_path / "r.samples.jsonl").write_text(
        "".join(json.dumps({"id": f"s{i}", "output": f"hello {i}"}) + "\n" for i in range(10))
    )
    with FakeLLM() as server:
        yield tmp_path, server


def test_without_a_shared_secret_another_user_re_judges_everything(project, monkeypatch):
    folder, server = project
    assert grade_as(folder / "alice", folder, server, monkeypatch)["judge_calls"] == 20
    assert grade_as(folder / "bob", folder, server, monkeypatch)["judge_calls"] == 20  # per-user fences differ


def test_a_shared_secret_makes_the_cache_hit_for_everyone(project, monkeypatch):
    folder, server = project
    assert grade_as(folder / "alice", folder, server, monkeypatch, RUBRIC_STUDIO_SECRET=SECRET)["judge_calls"] == 20
    usage = grade_as(folder / "ci", folder, server, monkeypatch, RUBRIC_STUDIO_SECRET=SECRET)
    assert usage["judge_calls"] == 0 and usage["cache_hits"] == 20  # before: 20 of 20 re-judged
    secret_file = folder / "team-secret"
    secret_file.write_text(SECRET + "\n")
    usage = grade_as(folder / "carol", folder, server, monkeypatch, RUBRIC_STUDIO_SECRET_FILE=str(secret_file))
    assert usage["judge_calls"] == 0 and server.calls() == 20


def test_a_weak_or_unreadable_secret_falls_back_with_a_warning(project, monkeypatch, capsys):
    folder, server = project
    usage = grade_as(folder / "dave", folder, server, monkeypatch, RUBRIC_STUDIO_SECRET="short")
    assert usage["judge_calls"] == 20
    assert "RUBRIC_STUDIO_SECRET is shorter than 32 characters; using the per-user secret" in capsys.readouterr().err
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    usage = grade_as(folder / "dave", folder, server, monkeypatch, RUBRIC_STUDIO_SECRET_FILE=str(fifo))  # never blocks
    assert usage["cache_hits"] == 20 and "not a regular file" in capsys.readouterr().err


def test_cache_stats_names_the_secret_source_never_the_value(project, monkeypatch, capsys):
    folder, _ = project
    monkeypatch.setenv("RUBRIC_STUDIO_SECRET", SECRET)
    assert main(["cache", "stats", "--cache-path", str(folder / "x.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "fence secret: RUBRIC_STUDIO_SECRET (shared)" in out and SECRET not in out
