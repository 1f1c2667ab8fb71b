"""``validate`` warns, at the value, where a rubric sets ``reasoning_effort`` to one the judge it is
sent to is known to refuse (GPT-6 models on api.openai.com: ``none`` and ``minimal``) — a warning,
never an error; models that take the value, and endpoints that decide for themselves, are left be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main

CRITERIA = "criteria:\n  - id: polite\n    outcome: Polite\n"


def _validate(tmp_path: Path, text: str, capsys) -> tuple[int, list[dict], str]:
    """(exit code, the JSON problems, the text output on stderr) of ``validate`` on ``text``."""
    path = tmp_path / "r.yaml"
    path.write_text(text + CRITERIA, encoding="utf-8")
    code = main(["validate", str(path), "--format", "json"])
    problems = json.loads(capsys.readouterr().out)["files"][0]["problems"]
    assert main(["validate", str(path)]) == code
    return code, problems, capsys.readouterr().err


def test_minimal_effort_for_a_gpt6_judge_is_a_warning_at_the_value(tmp_path, capsys):
    code, problems, err = _validate(tmp_path, "name: r\njudge:\n  model: openai:gpt-6-luna\n"
                                              "  reasoning_effort: minimal   # the cheapest\n", capsys)
    assert code == 0  # a warning: the rubric stays valid
    assert [(p["line"], p["column"], p["severity"]) for p in problems] == [(4, 21, "warning")]
    message = problems[0]["message"]
    assert message.startswith("judge.reasoning_effort: openai:gpt-6-luna does not take reasoning_effort minimal")
    assert "OpenAI GPT-6 models refuse none and minimal" in message
    assert f"{tmp_path / 'r.yaml'}:4:21: warning: judge.reasoning_effort: openai:gpt-6-luna" in err


@pytest.mark.parametrize("judge", [
    "  model: openai:gpt-5-mini\n  reasoning_effort: minimal\n",  # GPT-5 takes minimal
    "  model: openai:gpt-6-luna\n  reasoning_effort: low\n",
    "  model: openai:gpt-6-luna\n",
    "  model: openai:gpt-6-luna\n  reasoning_effort: minimal\n  base_url: http://localhost:8000/v1\n",
    "  model: ollama:gpt-6-luna\n  reasoning_effort: minimal\n",  # a local server decides for itself
    "  model: anthropic:claude-haiku-5-5\n  reasoning_effort: minimal\n",  # not sent at all (said when grading)
], ids=["gpt5-minimal", "gpt6-low", "gpt6-unset", "gpt6-elsewhere", "ollama", "anthropic"])
def test_values_a_judge_takes_or_decides_on_bring_no_warning(tmp_path, capsys, judge):
    code, problems, _ = _validate(tmp_path, f"name: r\njudge:\n{judge}", capsys)
    assert code == 0 and [p for p in problems if "reasoning_effort" in p["message"]] == []


def test_each_panel_member_is_warned_where_its_effort_is_written(tmp_path, capsys):
    text = ("name: r\njudge:\n  reasoning_effort: minimal\n  aggregate: mean\n  panel:\n"
            "    - openai:gpt-5-mini\n"
            "    - openai:gpt-6.1-terra\n"
            "    - {model: openai:gpt-6-sol, reasoning_effort: low}\n"
            "    - {model: openai:gpt-6-astra, reasoning_effort: minimal}\n")
    code, problems, _ = _validate(tmp_path, text, capsys)
    assert code == 0
    found = [(p["line"], p["column"], p["message"].split(" does not take")[0]) for p in problems]
    assert found == [(3, 21, "judge.reasoning_effort: openai:gpt-6.1-terra"),  # inherited from the judge block
                     (9, 53, "judge.panel.3.reasoning_effort: openai:gpt-6-astra")]
