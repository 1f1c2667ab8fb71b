"""Criterion examples travel with exports: written into the rubric text where the target has no
field (so its judge reads them), restored on import, and warned about where they cannot go."""

from __future__ import annotations

import json

import pytest

from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import export_rubric, import_rubric

RUBRIC = Rubric.model_validate({"name": "support", "pass_threshold": 0.7, "criteria": [
    {"id": "resolves", "outcome": "Gives a concrete next step", "weight": 2, "required": True, "examples": [
        {"sample": 'Refunded: "5-7 days".\nThanks!', "verdict": "met", "note": "A refund issued is a step."},
        {"sample": "Please contact billing.", "verdict": "unmet", "id": "s07"},
    ]},
    {"id": "tone", "outcome": "Warm tone", "score_ranges": {0: "Cold", 7: "Warm"}, "examples": [
        {"sample": "Hi! Happy to help.", "score": 8, "note": "friendly"},
    ]},
    {"id": "plain", "outcome": "Mentions the order number"},
]})


@pytest.mark.parametrize("target, options", [("agentv", {}), ("agentv", {"agentv_version": 4}),
                                             ("promptfoo", {}), ("letta", {}), ("docent", {})])
def test_examples_reach_the_targets_judge_text_and_come_back(target, options):
    result = export_rubric(RUBRIC, target, **options)
    assert "Please contact billing." in result.text and "A refund issued is a step." in result.text
    back = {c.key: c for c in import_rubric(result.text, target).rubric.criteria}
    for criterion in RUBRIC.criteria:
        assert back[criterion.key].examples == criterion.examples, (target, criterion.key)
        assert back[criterion.key].outcome.strip() == criterion.outcome


def test_healthbench_warns_that_examples_are_dropped():
    result = export_rubric(RUBRIC, "healthbench")
    texts = [json.loads(line)["criterion"] for line in result.text.splitlines()]
    assert not any("contact billing" in t for t in texts)
    assert any("'resolves'" in w and "2 graded example(s) dropped" in w for w in result.warnings)
    assert any("'tone'" in w and "1 graded example(s) dropped" in w for w in result.warnings)


def test_markdown_lists_examples_per_criterion():
    text = export_rubric(RUBRIC, "markdown").text
    assert "### Examples for `resolves`" in text and "| Please contact billing. | unmet |" in text
    assert "### Examples for `plain`" not in text


def test_outcome_text_that_only_resembles_an_examples_block_is_left_alone():
    text = ("tests:\n  - id: t\n    assert:\n      - type: llm-rubric\n        value: |-\n          Is polite\n\n"
            "          Graded examples (apply the criterion the same way):\n          - not json\n")
    rubric = import_rubric(text, "promptfoo").rubric
    assert rubric.criteria[0].examples == [] and "- not json" in rubric.criteria[0].outcome
