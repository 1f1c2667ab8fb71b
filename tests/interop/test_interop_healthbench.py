"""HealthBench: {criterion, points, tags} JSONL; penalties as negative points; same scores."""

from __future__ import annotations

import itertools
import json

import pytest

from rubric_studio.core.problems import RubricError
from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.scoring import score_sample
from rubric_studio.interop import export_rubric, import_rubric


def _lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_export_items_and_negative_points(support_reply):
    result = export_rubric(support_reply, "healthbench")
    items = _lines(result.text)
    assert result.suggested_suffix == ".healthbench.jsonl"
    assert all(set(item) == {"criterion", "points", "tags"} for item in items)
    assert [item["points"] for item in items] == [3, 2, 1, -3]
    assert items[3]["criterion"].startswith("Asks the customer to send their password")
    assert items[0]["tags"] == ["axis:completeness"]
    assert items[1]["criterion"].startswith("Does not contradict the following")
    for expected in ("'resolves-issue': required", "'tone': score_ranges and min_score dropped", "'short': deterministic",
                     "ids are not part"):
        assert any(expected in w for w in result.warnings), expected


def test_round_trip_keeps_text_points_tags_and_operator(sample_rubric):
    result = export_rubric(sample_rubric, "healthbench")
    imported = import_rubric(result.text, "healthbench").rubric
    judged = sample_rubric.judge_criteria
    assert [(c.outcome, c.weight, c.tags, c.operator) for c in imported.criteria] == \
        [(c.outcome, c.weight, c.tags, c.operator) for c in judged]


def test_scores_match_healthbench_rule(fixtures):
    rubric = import_rubric(fixtures / "healthbench" / "items.jsonl").rubric
    items = [json.loads(line) for line in (fixtures / "healthbench" / "items.jsonl").read_text().splitlines()]
    positive = sum(i["points"] for i in items if i["points"] > 0)
    for met in itertools.product([True, False], repeat=len(items)):
        theirs = sum(i["points"] for i, m in zip(items, met, strict=True) if m) / positive
        results = {c.key: CriterionResult(c.key, Status.MET if m else Status.UNMET, score=1.0 if m else 0.0)
                   for c, m in zip(rubric.criteria, met, strict=True)}
        ours = score_sample(rubric, results).score
        assert ours == pytest.approx(min(1.0, max(0.0, theirs)))


def test_import_example_rows(fixtures):
    result = import_rubric(fixtures / "healthbench" / "examples.jsonl")
    rubric = result.rubric
    assert result.detected == "healthbench"
    assert rubric.name == "a1b2c3d4-headache"
    assert [c.weight for c in rubric.criteria] == [8, 4, 3, -9, -3]
    assert rubric.criteria[0].key == "advises-seeking-urgent-care-if"
    assert rubric.criteria[3].tags == ["level:example", "axis:accuracy"]
    assert any("2 HealthBench examples" in w for w in result.warnings)


def test_bad_line_reports_its_position(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"criterion": "Is kind", "points": 2, "tags": []}\n{"criterion": "Is short", "points": }\n')
    with pytest.raises(RubricError) as caught:
        import_rubric(path, "healthbench")
    problem = caught.value.problems[0]
    assert (problem.line, problem.column) == (2, 37) and "invalid JSON" in problem.message
