"""A panel in the rubric: trust applies to each member, and every export that carries no panel says so
(promptfoo writes it: tests/panels/test_panel_exports.py)."""

from __future__ import annotations

import pytest

from rubric_studio.core.loading import parse_rubric
from rubric_studio.engine.api import make_grader
from rubric_studio.interop import export_rubric

PANEL = """\
name: r
judge:
  panel:
    - openai:judge-a
    - {model: openai:judge-b, base_url: "http://elsewhere.example/v1"}
criteria:
  - {id: c, outcome: Says hello}
"""


def test_a_members_base_url_needs_trust_like_a_single_judges(tmp_path):
    rubric = parse_rubric(PANEL, str(tmp_path / "r.yaml"))
    grader = make_grader(rubric, env={"OPENAI_API_KEY": "k"}, use_cache=False)
    assert grader.judge is None
    assert "panel member 2" in grader.no_judge_reason and "judge.base_url" in grader.no_judge_reason
    trusted = make_grader(rubric, env={"OPENAI_API_KEY": "k"}, use_cache=False, allow_code=True)
    assert [label for label, _ in trusted.members] == ["openai:judge-a", "openai:judge-b"]
    assert trusted.members[1][1].config.base_url == "http://elsewhere.example/v1"


@pytest.mark.parametrize("target", ["letta", "docent", "healthbench"])
def test_every_export_names_the_panel_it_does_not_carry(target):
    rubric = parse_rubric(PANEL.replace(', base_url: "http://elsewhere.example/v1"', ""))
    warnings = export_rubric(rubric, target).warnings
    assert any("judge.panel openai:judge-a+openai:judge-b (checklist majority" in w for w in warnings), (
        warnings
    )


def test_markdown_lists_the_panel():
    rubric = parse_rubric(PANEL)
    text = export_rubric(rubric, "markdown").text
    assert "Judge panel: `openai:judge-a`, `openai:judge-b`; verdicts pooled by checklist majority" in text
