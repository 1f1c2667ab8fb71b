"""AgentV: export shape, import of files written like AgentV's docs, round trip, same verdicts."""

from __future__ import annotations

import pytest
import yaml

from rubric_studio.core.problems import RubricError
from rubric_studio.core.results import Verdict
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.scoring import score_sample
from rubric_studio.interop import export_rubric, import_rubric

ROUND_TRIP_FIELDS = ("outcome", "check", "weight", "required", "operator", "score_ranges", "min_score")


def _export(rubric):
    result = export_rubric(rubric, "agentv")
    return yaml.safe_load(result.text), result


def _items(data):
    return [item for entry in data["assert"] if entry["type"] == "llm-rubric" for item in entry["value"]]


def test_export_writes_every_item_field_explicitly(support_reply):
    data, result = _export(support_reply)
    assert result.suggested_suffix == ".eval.yaml"
    items = {item["id"]: item for item in _items(data)}
    assert set(items) == {"resolves-issue", "policy-accurate", "tone", "asks-for-credentials"}
    for item in items.values():
        assert {"id", "outcome", "weight", "required"} <= set(item)
    assert items["resolves-issue"] == {
        "id": "resolves-issue",
        "outcome": support_reply.criterion("resolves-issue").outcome,
        "weight": 3,
        "required": True,
    }
    assert items["policy-accurate"]["operator"] == "contradiction"
    assert items["tone"]["required"] is False


def test_score_ranges_become_ranges_covering_0_to_10(support_reply):
    data, _ = _export(support_reply)
    tone = next(item for item in _items(data) if item["id"] == "tone")
    ranges = [band["score_range"] for band in tone["score_ranges"]]
    assert ranges == [[0, 3], [4, 6], [7, 9], [10, 10]]
    assert tone["score_ranges"][0]["outcome"] == "Rude, dismissive, or blames the customer"
    covered = sorted(n for low, high in ranges for n in range(low, high + 1))
    assert covered == list(range(11))


def test_required_criteria_also_gate_at_assertion_level(support_reply):
    data, _ = _export(support_reply)
    required = next(entry for entry in data["assert"] if entry.get("metric") == "required")
    assert required["required"] is True and required["min_score"] == 1
    assert required["weight"] == 5  # 3 + 2: the assertion weighs what its items weigh
    assert {item["id"] for item in required["value"]} == {"resolves-issue", "policy-accurate"}


def test_penalties_become_a_negated_assertion_and_the_threshold_is_restated(support_reply):
    data, result = _export(support_reply)
    penalties = next(entry for entry in data["assert"] if entry.get("negate"))
    assert [item["id"] for item in penalties["value"]] == ["asks-for-credentials"]
    assert penalties["value"][0]["weight"] == 3
    # P = 9 positive, W = 3 penalty: (0.8 * 9 + 3) / 12
    assert data["default_test"]["threshold"] == pytest.approx(0.85)
    assert any("asks-for-credentials" in w and "negate" in w for w in result.warnings)


def test_checks_use_agentv_assertions(support_reply):
    data, result = _export(support_reply)
    by_metric = {}
    for entry in data["assert"]:
        by_metric.setdefault(entry.get("metric"), []).append(entry)
    words = by_metric["no-boilerplate"]
    assert [w["type"] for w in words] == ["icontains"] * 3 and all(w["negate"] for w in words)
    assert sum(w["weight"] for w in words) == pytest.approx(1)
    regex_entry = by_metric["no-internal-links"][0]
    assert regex_entry["type"] == "regex" and regex_entry["flags"] == "i" and regex_entry["negate"] is True
    assert by_metric["short"][0]["type"] == "javascript"
    assert any("no-boilerplate" in w and "fraction" in w for w in result.warnings)


def test_suite_name_is_an_agentv_slug():
    rubric = Rubric.model_validate({"name": "Support Reply (v2)", "criteria": ["Is polite"]})
    data, _ = _export(rubric)
    assert data["name"] == "support-reply-v2"
    assert "tests" in data and data["assert"]


def test_round_trip_keeps_every_field_agentv_expresses(sample_rubric, compare):
    result = export_rubric(sample_rubric, "agentv")
    imported = import_rubric(result.text, "agentv")
    assert imported.detected == "agentv"
    assert compare(sample_rubric, imported.rubric, ROUND_TRIP_FIELDS) == []
    assert imported.rubric.pass_threshold == pytest.approx(sample_rubric.pass_threshold)
    assert imported.rubric.name == sample_rubric.name
    assert imported.rubric.judge.model == sample_rubric.judge.model
    if any(c.tags for c in sample_rubric.criteria):  # tags are what AgentV cannot hold, and it says so
        assert any("tags" in w for w in result.warnings)


def test_import_applies_agentv_defaults(fixtures):
    result = import_rubric(fixtures / "agentv" / "rubric-features.eval.yaml")
    rubric = result.rubric
    assert result.detected == "agentv" and rubric.name == "api-docs-rubric"
    plain = rubric.criterion("rubric-1")  # plain strings: required, weight 1
    assert plain.outcome.startswith("Defines idempotency") and plain.required and plain.weight == 1
    assert rubric.criterion("cursor-concept").weight == 2 and rubric.criterion("cursor-concept").required
    assert rubric.criterion("compares-offset").required  # object items default to required
    assert rubric.criterion("example-request").required is False
    assert rubric.criterion("no-breaking-claims").operator == "contradiction"
    accuracy = rubric.criterion("accuracy")
    assert accuracy.score_ranges == {0: "Misstates most changes", 4: "Gets some changes right but misses important ones",
                                     7: "Correct with minor omissions", 10: "Every change described correctly"}
    assert accuracy.min_score == 0.8 and accuracy.required
    assert rubric.criterion("has_code_block").check.required == ["```"]
    assert any("script" in w and "skipped" in w for w in result.warnings)
    assert any("merged" in w for w in result.warnings)


def test_import_suite_level_asserts_canonical_ranges_and_criteria_alias(fixtures):
    result = import_rubric(fixtures / "agentv" / "suite-level.eval.yaml", "agentv")
    rubric = result.rubric
    assert rubric.pass_threshold == 0.75
    assert rubric.criterion("identifies-product").outcome == "Identifies which product the customer is asking about"
    assert rubric.criterion("clarity").score_ranges == {0: "Confusing or contradictory", 3: "Understandable but disorganized",
                                                        7: "Clear and well organized", 10: "Exceptionally clear and concise"}
    assert rubric.criterion("clarity").required is False
    assert rubric.criterion("regex-ticket-d").check.flags == "i"
    # AgentV weighs each assertion as a whole: the lone string and the regex each count as much as the rubric
    assert [c.weight for c in rubric.criteria] == [2, 1, 3, 3]
    assert any("restated" in w for w in result.warnings)


def test_import_legacy_test_level_fields(fixtures):
    result = import_rubric(fixtures / "agentv" / "legacy.yaml", "agentv")
    assert [c.key for c in result.rubric.criteria] == ["rubric-1", "rubric-2", "rubric-3"]
    assert result.rubric.criteria[0].outcome == "Says the list must be sorted first"
    assert all(c.required and c.weight == 1 for c in result.rubric.criteria)
    assert any("criteria text" in w for w in result.warnings)


def test_mixed_checklist_and_ranges_in_one_assertion_is_warned():
    text = """\
tests:
  - id: t
    assert:
      - type: llm-rubric
        value:
          - Mentions the deadline
          - id: tone
            outcome: Friendly
            score_ranges: {0: Cold, 6: Warm}
"""
    result = import_rubric(text, "agentv")
    assert result.rubric.criterion("rubric-1").required
    assert result.rubric.criterion("tone").score_ranges == {0: "Cold", 6: "Warm"}
    assert any("mixes checklist and score-range" in w for w in result.warnings)


def test_incomplete_score_ranges_are_an_error_with_position():
    text = """\
tests:
  - id: t
    assert:
      - type: llm-rubric
        value:
          - id: depth
            outcome: Goes deep
            score_ranges:
              - score_range: [0, 4]
                outcome: Shallow
              - score_range: [6, 10]
                outcome: Deep
"""
    with pytest.raises(RubricError) as caught:
        import_rubric(text, "agentv")
    problem = caught.value.problems[0]
    assert (problem.line, problem.column) == (9, 15)
    assert "cover 0-10" in problem.message


# -- same verdicts -------------------------------------------------------------
def _agentv_verdict(data, results, text, run_js_results, deterministic):
    """AgentV's aggregation (orchestrator + llm-grader), over our cell results."""
    scored = []
    gate_failed = False
    threshold = data["default_test"]["threshold"]
    for index, entry in enumerate(data["assert"]):
        kind = entry["type"]
        if kind == "llm-rubric":
            items = entry["value"]
            if any("score_ranges" in item for item in items):
                score = sum(results[i["id"]].raw_score / 10 * i["weight"] for i in items) / sum(i["weight"] for i in items)
            else:
                met = sum(i["weight"] for i in items if results[i["id"]].score >= 0.5)
                score = met / sum(i["weight"] for i in items)
        elif kind == "javascript":
            score = run_js_results[(index, text)]["score"]
        else:
            score = deterministic(kind, False, entry, text)[1]
        if entry.get("negate"):
            score = 1 - score
        if entry.get("required") and score < entry.get("min_score", threshold):
            gate_failed = True
        scored.append((entry.get("weight", 1), score))
    aggregate = 0 if gate_failed else sum(w * s for w, s in scored) / sum(w for w, _ in scored)
    return aggregate >= threshold


def test_agentv_export_gives_the_same_verdicts(graded_samples, run_js, deterministic):
    exports = {}
    js_pairs, js_keys = [], []
    for rubric, sample, _ in graded_samples:
        if rubric.name not in exports:
            exports[rubric.name] = _export(rubric)[0]
        for index, entry in enumerate(exports[rubric.name]["assert"]):
            if entry["type"] == "javascript" and (rubric.name, index, sample.output) not in js_keys:
                js_keys.append((rubric.name, index, sample.output))
                js_pairs.append((entry["value"], sample.output))
    js = dict(zip(js_keys, run_js(js_pairs), strict=True))
    verdicts = []
    for rubric, sample, results in graded_samples:
        ours = score_sample(rubric, results)
        data = exports[rubric.name]
        js_for_rubric = {(i, t): v for (name, i, t), v in js.items() if name == rubric.name}
        theirs = _agentv_verdict(data, results, sample.output, js_for_rubric, deterministic)
        assert theirs == (ours.verdict == Verdict.PASS), (rubric.name, sample.id, ours.score)
        verdicts.append(theirs)
    assert len(verdicts) > 50 and verdicts.count(True) > 5 and verdicts.count(False) > 5
