"""Export then import never changes a rubric's meaning in silence, for every format that does both
(AgentV 4 and 5, promptfoo, Letta, Docent, HealthBench): ``pass_threshold``, the criteria ids,
weights, ``required``, ``min_score``, ``operator`` and ``score_ranges`` come back as they were, or a
warning (of the export or of the import) names what changed - the field, and the criterion by id."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.interop import ExportRefused, export_rubric, import_rubric

TARGETS = [("agentv", {"agentv_version": 5}), ("agentv", {"agentv_version": 4}), ("promptfoo", {}), ("letta", {}),
           ("docent", {}), ("healthbench", {})]
TARGET_IDS = ["agentv5", "agentv4", "promptfoo", "letta", "docent", "healthbench"]
FIELDS = ("weight", "required", "min_score", "operator", "score_ranges")


def _round_trip(rubric: Rubric, target: str, options: dict[str, Any]) -> tuple[Rubric, list[str]] | None:
    """(the rubric imported back, every warning of both directions); None when the export refuses."""
    try:
        exported = export_rubric(rubric, target, **options)
    except ExportRefused:
        return None
    imported = import_rubric(exported.text, target)
    return imported.rubric, exported.warnings + imported.warnings


def _named(warnings: list[str], *words: str) -> bool:
    """Does one warning name every word (a field and, for a criterion, its id)?"""
    return any(all(word in warning for word in words) for warning in warnings)


def _value(criterion: Criterion, field: str) -> Any:
    """What a field means: the pass mark a criterion is met at, not whether it was written out."""
    if field == "min_score" and criterion.kind != "checklist":
        return round(criterion.effective_min_score, 6)
    if field == "weight":
        return round(criterion.weight, 6)
    return getattr(criterion, field)


def unannounced_changes(before: Rubric, after: Rubric, warnings: list[str]) -> list[str]:
    """Every difference between ``before`` and ``after`` that no warning names."""
    silent = []
    if abs(before.pass_threshold - after.pass_threshold) > 1e-6 and not _named(warnings, "pass_threshold"):
        silent.append(f"pass_threshold {before.pass_threshold} -> {after.pass_threshold}")
    after_ids = [c.key for c in after.criteria]
    if set(after_ids) <= {c.key for c in before.criteria}:
        pairs = [(c, after.criterion(c.key)) for c in before.criteria if c.key in after_ids]
        dropped = [c.key for c in before.criteria if c.key not in after_ids]
    else:  # ids made from the text (said): the criteria that came back are those not dropped, in order
        if not _named(warnings, "ids"):
            silent.append(f"ids {[c.key for c in before.criteria]} -> {after_ids}")
        dropped = [c.key for c in before.criteria if _named(warnings, repr(c.key), "not exported")]
        kept = [c for c in before.criteria if c.key not in dropped]
        pairs = list(zip(kept, after.criteria, strict=True)) if len(kept) == len(after_ids) else []
        if not pairs:
            silent.append(f"{len(kept)} criteria exported, {len(after_ids)} imported")
    silent += [f"{key} dropped" for key in dropped if not _named(warnings, repr(key))]
    for old, new in pairs:
        for field in FIELDS:
            if _value(old, field) != _value(new, field) and not _named(warnings, repr(old.key), field):
                silent.append(f"{old.key}.{field}: {_value(old, field)!r} -> {_value(new, field)!r}")
    return silent


# -- the cases found by hand --------------------------------------------------------
ALL_REQUIRED = Rubric.model_validate({"name": "gates", "pass_threshold": 0.5, "criteria": [
    {"id": "a", "outcome": "Does A", "required": True}, {"id": "b", "outcome": "Does B", "required": True}]})
SCORED = Rubric.model_validate({"name": "scored", "pass_threshold": 0.5, "criteria": [
    {"id": "tone", "outcome": "Warm tone", "min_score": 0.6, "score_ranges": {0: "bad", 5: "ok", 10: "great"}},
    {"id": "facts", "outcome": "States the facts"}]})


@pytest.mark.parametrize("version", [4, 5])
def test_agentv_import_keeps_a_non_required_analytic_min_score(version):
    back, warnings = _round_trip(SCORED, "agentv", {"agentv_version": version})
    assert back.criterion("tone").min_score == 0.6
    assert not back.criterion("tone").required
    assert not any("tone" in w and "required" in w for w in warnings), warnings


def test_agentv_import_names_the_default_required_items_it_does_not_gate():
    text = """\
name: x
assert:
  - type: llm-rubric
    value:
      - {id: kept, outcome: Is kind, required: false, min_score: 0.6, score_ranges: {0: bad, 10: good}}
      - {id: gated, outcome: Is exact, min_score: 0.9, score_ranges: {0: bad, 10: good}}
      - {id: plain, outcome: Is short}
"""
    result = import_rubric(text, "agentv")
    assert result.rubric.criterion("kept").min_score == 0.6
    assert result.rubric.criterion("gated").min_score == 0.9
    (note,) = [w for w in result.warnings if "item-level required" in w]
    assert "gated" in note and "plain" in note and "kept" not in note


def test_agentv_import_names_an_item_min_score_its_required_assertion_replaces():
    text = """\
name: x
assert:
  - type: llm-rubric
    required: true
    min_score: 0.8
    value:
      - {id: exact, outcome: Is exact, min_score: 0.6, score_ranges: {0: bad, 10: good}}
  - type: llm-rubric
    value: [Is kind]
"""
    result = import_rubric(text, "agentv")
    assert result.rubric.criterion("exact").min_score == 0.8 and result.rubric.criterion("exact").required
    assert _named(result.warnings, "'exact'", "min_score 0.6", "0.8"), result.warnings


@pytest.mark.parametrize(("target", "options"), TARGETS, ids=TARGET_IDS)
def test_an_all_required_rubric_keeps_its_pass_threshold_or_says_so(target, options):
    back, warnings = _round_trip(ALL_REQUIRED, target, options)
    assert back.pass_threshold == 0.5 or _named(warnings, "pass_threshold"), (back.pass_threshold, warnings)


def test_promptfoo_carries_the_pass_threshold_of_a_rubric_of_gates():
    back, _ = _round_trip(ALL_REQUIRED, "promptfoo", {})
    assert back.pass_threshold == 0.5


def test_a_foreign_promptfoo_config_without_a_threshold_says_which_pass_threshold_it_got():
    text = "prompts: ['{{output}}']\ndefaultTest:\n  assert:\n    - {type: llm-rubric, value: Is kind}\n"
    result = import_rubric(text, "promptfoo")
    assert result.rubric.pass_threshold == 0.8
    assert _named(result.warnings, "pass_threshold", "0.8"), result.warnings


@pytest.mark.parametrize(("target", "options"), TARGETS, ids=TARGET_IDS)
def test_the_hand_found_rubrics_change_nothing_unannounced(target, options):
    for rubric in (ALL_REQUIRED, SCORED):
        found = _round_trip(rubric, target, options)
        assert found is not None
        assert unannounced_changes(rubric, *found) == []


# -- the property -------------------------------------------------------------------
_BANDS = st.sampled_from([{0: "poor", 4: "fair", 7: "good", 10: "great"}, {0: "no", 5: "partly", 10: "yes"},
                          {0: "bad", 3: "weak", 6: "fine", 9: "strong"}])
_MARKS = st.sampled_from([None, 0.3, 0.5, 0.6, 0.75, 0.9, 1.0])
_CHECKS = st.sampled_from([{"type": "length", "max_words": 40}, {"type": "keywords", "required": ["refund"]},
                           {"type": "keywords", "forbidden": ["sorry", "oops"]},
                           {"type": "regex", "pattern": r"\d{4}-\d{2}-\d{2}", "expect_match": False},
                           {"type": "regex", "pattern": "thanks", "flags": "i"}])


@st.composite
def _criterion(draw: st.DrawFn, index: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["checklist", "analytic", "check"]))
    penalty = index > 0 and draw(st.booleans()) and draw(st.booleans())  # the first scores: one must
    weight = draw(st.sampled_from([0.5, 1, 1.5, 2, 3]))
    data: dict[str, Any] = {"id": f"k{index}-{kind}", "weight": -weight if penalty else weight,
                            "required": not penalty and draw(st.booleans())}
    if kind == "check":
        data["check"] = draw(_CHECKS)
        if data["check"]["type"] == "length" or len(data["check"].get("forbidden", [])) > 1:
            data["min_score"] = draw(_MARKS)
    else:
        data["outcome"] = f"Criterion {index} holds"
        data["operator"] = draw(st.sampled_from([None, None, "correctness", "contradiction"]))
        if kind == "analytic":
            data["score_ranges"] = draw(_BANDS)
            data["min_score"] = draw(_MARKS)
    return {key: value for key, value in data.items() if value is not None}


@st.composite
def rubrics(draw: st.DrawFn) -> Rubric:
    count = draw(st.integers(min_value=1, max_value=5))
    criteria = [draw(_criterion(index)) for index in range(count)]
    threshold = draw(st.sampled_from([0.0, 0.3, 0.5, 0.65, 0.77, 0.8, 1.0]))
    return Rubric.model_validate({"name": "generated", "pass_threshold": threshold, "criteria": criteria})


@pytest.mark.parametrize(("target", "options"), TARGETS, ids=TARGET_IDS)
@settings(max_examples=60, deadline=None, derandomize=True)
@given(rubric=rubrics())
def test_export_then_import_changes_nothing_unannounced(target, options, rubric):
    found = _round_trip(rubric, target, options)
    if found is None:
        return  # refused, with the reason: nothing was written
    assert unannounced_changes(rubric, *found) == [], found[1]


@pytest.mark.parametrize(("target", "options"), TARGETS[:3], ids=TARGET_IDS[:3])
def test_an_export_in_which_only_penalties_would_score_is_refused_saying_why(target, options):
    rubric = Rubric.model_validate({"name": "left", "criteria": [
        {"id": "custom", "check": {"type": "python", "function": "checks:custom"}},
        {"id": "rude", "outcome": "Is rude", "weight": -1}]})
    with pytest.raises(ExportRefused) as refused:
        export_rubric(rubric, target, **options)
    message = str(refused.value)
    assert "'custom'" in message and "only penalties (rude)" in message and "nothing is written" in message


@pytest.mark.parametrize("target", ["letta", "docent", "healthbench"])
def test_a_judge_only_export_of_judged_penalties_and_checks_is_refused(target):
    rubric = Rubric.model_validate({"name": "left", "criteria": [
        {"id": "short", "check": {"type": "length", "max_words": 5}}, {"id": "rude", "outcome": "Is rude", "weight": -1}]})
    with pytest.raises(ExportRefused, match=r"judged penalties \(rude\) alone cannot score"):
        export_rubric(rubric, target)
