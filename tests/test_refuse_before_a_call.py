"""What cannot work is refused before any call: exit 2, one line on stderr, nothing sent.

Each case runs the real command in a subprocess against the fake server and asserts what the
server received (its request count), not only the exit code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parent.parent
RUBRIC = "name: r\ncriteria:\n  - {id: a, outcome: Mentions the word topic0}\n"


def cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "AZURE"))}
    clean.update(HOME=str(tmp_path), **env)
    return subprocess.run([sys.executable, "-m", "rubric_studio", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=clean, timeout=90)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "s.jsonl").write_text('{"id": "s0", "output": "about topic0"}\n{"id": "s1", "output": "no"}\n')
    return tmp_path


def refused(done: subprocess.CompletedProcess[str], server: FakeLLM, *words: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert all(word in lines[0] for word in words), lines[0]
    assert server.calls() == 0 and not server.requests


# -- an unknown provider is a validate error -------------------------------------------------


@pytest.mark.parametrize(("judge_block", "where", "guess"), [
    ("judge:\n  model: zzz:model\n", "r.yaml:3:10: judge.model", None),
    ("judge:\n  model: opnai:gpt-4o\n", "r.yaml:3:10: judge.model", "openai"),
    ("judge:\n  panel: [openai:gpt-4o, antropic:claude]\n", "r.yaml:3:26: judge.panel[1].model", "anthropic"),
])
def test_an_unknown_provider_is_a_validate_error_at_its_place(tmp_path, judge_block, where, guess):
    (tmp_path / "r.yaml").write_text("name: r\n" + judge_block + "criteria:\n  - {id: a, outcome: Mentions x}\n")
    done = cli(tmp_path, "validate", "r.yaml")
    assert done.returncode == 2
    message = (done.stdout + done.stderr).strip()
    assert message.startswith(where) and "unknown provider" in message, message
    assert "openai, ollama, openai-compatible, anthropic, azure" in message  # the providers it knows
    assert (f"did you mean {guess!r}?" in message) if guess else "did you mean" not in message


def test_grade_of_a_rubric_with_an_unknown_provider_sends_nothing(project):
    (project / "r.yaml").write_text("name: r\njudge: {model: zzz:model}\ncriteria:\n"
                                    "  - {id: a, outcome: Mentions the word topic0}\n")
    with FakeLLM() as server:
        done = cli(project, "grade", "r.yaml", "s.jsonl", "--base-url", server.base_url_openai, "--no-cache",
                   "--format", "json", OPENAI_API_KEY="k")
    assert done.returncode == 2 and "r.yaml:2:16" in done.stderr and "unknown provider 'zzz'" in done.stderr
    assert server.calls() == 0


# -- --judge entries are checked like panel entries --------------------------------------------


@pytest.mark.parametrize(("judge", "words"), [
    ("openai:", ("--judge", "'openai:' is not provider:model")),
    (":x", ("--judge", "':x' is not provider:model")),
    ("zzz:model", ("--judge", "'zzz:model'", "unknown provider 'zzz'")),
    ("opnai:gpt-4o", ("--judge", "did you mean 'openai'?")),
    (",".join(["openai:gpt-4o-mini"] * 1000), ("--judge", "1000 judges", "at most 16")),
    ("+".join(["openai:gpt-4o-mini"] * 17), ("--judge", "17 judges", "at most 16")),
])
def test_a_judge_flag_that_cannot_work_exits_2_naming_the_entry(project, judge, words):
    with FakeLLM() as server:
        done = cli(project, "grade", "r.yaml", "s.jsonl", "--judge", judge, "--base-url", server.base_url_openai,
                   "--no-cache", "--format", "json", OPENAI_API_KEY="k")
        refused(done, server, "rubric-studio: error:", *words)


def test_sixteen_judges_on_the_command_line_are_a_panel(project):
    with FakeLLM() as server:
        done = cli(project, "grade", "r.yaml", "s.jsonl", "--judge", ",".join(["openai:gpt-4o-mini"] * 16),
                   "--base-url", server.base_url_openai, "--no-cache", "--format", "json", OPENAI_API_KEY="k")
        assert done.returncode in (0, 1), done.stderr
        assert server.calls() == 16 * 2  # every member judges both samples


# -- a line break in an endpoint or API version -------------------------------------------------


@pytest.mark.parametrize(("endpoint", "version", "words"), [
    ("{url}\r\nX-Injected: 1", "2024-10-21", ("AZURE_OPENAI_ENDPOINT", "control character")),
    ("{url}", "2024-10-21\r\nX: 1", ("OPENAI_API_VERSION", "control character", "api_version")),
    ("{url}/open\nai", "2024-10-21", ("AZURE_OPENAI_ENDPOINT", "control character")),
])
def test_an_azure_setting_with_a_line_break_is_one_message_before_any_call(project, endpoint, version, words):
    with FakeLLM() as server:
        env = {"AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_ENDPOINT": endpoint.format(url=server.url),
               "OPENAI_API_VERSION": version}
        for fmt in ("json", "table"):
            done = cli(project, "grade", "r.yaml", "s.jsonl", "--judge", "azure:prod", "--no-cache", "--format", fmt,
                       **env)
            refused(done, server, "rubric-studio: error:", *words)


def test_a_base_url_flag_with_a_line_break_is_refused_for_a_panel_member_too(project):
    with FakeLLM() as server:
        done = cli(project, "grade", "r.yaml", "s.jsonl", "--judge", "openai:a,openai:b",
                   "--base-url", server.base_url_openai + "\nHost: elsewhere", "--no-cache", OPENAI_API_KEY="k")
        refused(done, server, "judge panel member 1", "control character")


def test_calibrate_refuses_an_unusable_endpoint_too(project):
    (project / "r.labels.yaml").write_text("s0: {verdict: pass}\ns1: {verdict: fail}\n")
    with FakeLLM() as server:
        done = cli(project, "calibrate", "r.yaml", "s.jsonl", "--labels", "r.labels.yaml", "--judge", "openai:m",
                   "--base-url", server.base_url_openai + "\r\nX: 1", "--no-cache", OPENAI_API_KEY="k")
        refused(done, server, "control character")
