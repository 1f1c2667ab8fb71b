"""A samples file or folder named on the command line that is a link into a hidden or
credentials folder is read — the user named it — with one warning saying where it really points.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parent.parent
RUBRIC = "name: r\ncriteria:\n  - {id: a, outcome: Mentions the word topic0}\n"
LINES = '{"id": "s0", "output": "about topic0"}\n{"id": "s1", "output": "nothing"}\n'


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    (home / "project" / "r.yaml").write_text(RUBRIC)
    return home


def grade(home: Path, samples: str, server: FakeLLM) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "AZURE", "XDG"))}
    env.update(HOME=str(home), OPENAI_API_KEY="k", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "rubric_studio", "grade", "r.yaml", samples, "--judge",
                           "openai:gpt-4o-mini", "--base-url", server.base_url_openai, "--no-cache", "--format",
                           "json"], capture_output=True, text=True, cwd=home / "project", env=env, timeout=90)


def warnings_of(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("warning:")]


@pytest.mark.parametrize(("secret", "why"), [
    (".ssh", "in .ssh, where credentials are kept"),
    (".aws", "in .aws, where credentials are kept"),
    (".private", "in the hidden folder {home}/.private"),
])
def test_a_named_file_linked_into_a_hidden_folder_is_read_with_one_warning(home, secret, why):
    (home / secret).mkdir()
    real = home / secret / "notes.jsonl"
    real.write_text(LINES)
    (home / "project" / "s.jsonl").symlink_to(real)
    with FakeLLM() as server:
        done = grade(home, "s.jsonl", server)
        assert server.calls() == 2  # read and judged: the user named it
    assert done.returncode in (0, 1), done.stderr
    assert [s["id"] for s in json.loads(done.stdout)["samples"]] == ["s0", "s1"]
    assert warnings_of(done) == [f"warning: s.jsonl is a link to {real}, {why.format(home=home)}; it is read "
                                 "because it was named on the command line"]


def test_a_named_folder_linked_into_a_hidden_folder_is_read_with_one_warning(home):
    (home / ".cache" / "dump").mkdir(parents=True)
    (home / ".cache" / "dump" / "one.txt").write_text("about topic0\n")
    (home / ".cache" / "dump" / "two.md").write_text("nothing\n")
    (home / "project" / "data").symlink_to(home / ".cache" / "dump", target_is_directory=True)
    with FakeLLM() as server:
        done = grade(home, "data", server)
        assert server.calls() == 2
    warned = warnings_of(done)
    assert len(warned) == 1 and f"data is a link to {home}/.cache/dump, in the hidden folder {home}/.cache" in warned[0]


def test_a_plain_file_or_a_link_inside_the_project_says_nothing(home):
    (home / "project" / "v2.jsonl").write_text(LINES)
    (home / "project" / "s.jsonl").symlink_to(home / "project" / "v2.jsonl")
    with FakeLLM() as server:
        for named in ("v2.jsonl", "s.jsonl"):
            done = grade(home, named, server)
            assert done.returncode in (0, 1) and warnings_of(done) == [], done.stderr
        assert server.calls() == 4
