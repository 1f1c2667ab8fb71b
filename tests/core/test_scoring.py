"""Scoring semantics: the worked examples of docs/concepts/scoring.md#worked-examples, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rubric_studio.core.results import CriterionResult, Status, Verdict
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.scoring import score_sample


def rubric_of(*criteria: dict, threshold: float = 0.8, on_error: str = "error") -> Rubric:
    return Rubric.model_validate(
        {"name": "t", "pass_threshold": threshold, "on_error": on_error, "criteria": list(criteria)}
    )


def cell(cid: str, status: str, score: float | None = None, raw: float | None = None) -> CriterionResult:
    if score is None and status in ("met", "unmet"):
        score = 1.0 if status == "met" else 0.0
    return CriterionResult(cid, Status(status), score=score, raw_score=raw, source="judge")


def test_required_met_other_unmet_is_half_and_fails():
    r = rubric_of({"id": "r1", "outcome": "a", "required": True}, {"id": "r2", "outcome": "b"})
    out = score_sample(r, {"r1": cell("r1", "met"), "r2": cell("r2", "unmet")})
    assert out.score == pytest.approx(0.5)
    assert out.verdict is Verdict.FAIL


def _five():
    return rubric_of(
        {"id": "a", "outcome": "a", "weight": 1, "required": True},
        {"id": "b", "outcome": "b", "weight": 2, "required": True},
        {"id": "c", "outcome": "c", "weight": 2, "required": True},
        {"id": "d", "outcome": "d", "weight": 1.5},
        {"id": "e", "outcome": "e", "weight": 1},
    )


def test_six_over_seven_and_a_half_passes_exactly_at_threshold():
    r = _five()
    cells = {k: cell(k, "met") for k in "abce"} | {"d": cell("d", "unmet")}
    out = score_sample(r, cells)
    assert out.score == pytest.approx(6 / 7.5)
    assert out.verdict is Verdict.PASS


def test_float_noise_below_the_threshold_still_passes():
    r = rubric_of({"id": "a", "outcome": "a", "weight": 0.7}, {"id": "b", "outcome": "b", "weight": 0.1},
                  {"id": "c", "outcome": "c", "weight": 0.2})
    assert 0.7 + 0.1 < 0.8  # the noise this guards against
    out = score_sample(r, {"a": cell("a", "met"), "b": cell("b", "met"), "c": cell("c", "unmet")})
    assert out.verdict is Verdict.PASS


def test_required_unmet_fails_despite_high_score():
    r = _five()
    cells = {k: cell(k, "met") for k in "bcde"} | {"a": cell("a", "unmet")}
    out = score_sample(r, cells)
    assert out.score == pytest.approx(6.5 / 7.5)
    assert out.verdict is Verdict.FAIL


def _analytic():
    return rubric_of(
        {"id": "x", "outcome": "x", "weight": 2, "required": True, "min_score": 0.8, "score_ranges": {0: "bad", 8: "good"}},
        {"id": "y", "outcome": "y", "weight": 1, "score_ranges": {0: "bad", 10: "great"}},
    )


def test_analytic_raw_8_and_10_passes():
    r = _analytic()
    out = score_sample(r, {"x": cell("x", "met", 0.8, 8), "y": cell("y", "met", 1.0, 10)})
    assert out.score == pytest.approx((2 * 0.8 + 1.0) / 3)
    assert out.verdict is Verdict.PASS


def test_analytic_raw_7_fails_required_min_score():
    from rubric_studio.core.scoring import cell_status

    r = _analytic()
    status = cell_status(r.criterion("x"), 0.7)
    assert status is Status.UNMET
    out = score_sample(r, {"x": cell("x", str(status), 0.7, 7), "y": cell("y", "met", 1.0, 10)})
    assert out.score == pytest.approx(0.8)
    assert out.verdict is Verdict.FAIL


def test_penalty_points_follow_healthbench():
    r = rubric_of(
        {"id": "p1", "outcome": "a", "weight": 5},
        {"id": "p2", "outcome": "b", "weight": 5},
        {"id": "bad", "outcome": "c", "weight": -3},
        threshold=0.5,
    )
    out = score_sample(r, {"p1": cell("p1", "met"), "p2": cell("p2", "unmet"), "bad": cell("bad", "met")})
    assert out.score == pytest.approx(0.2)
    assert out.verdict is Verdict.FAIL


def test_penalties_clip_at_zero():
    r = rubric_of({"id": "p", "outcome": "a", "weight": 1}, {"id": "bad", "outcome": "c", "weight": -3})
    out = score_sample(r, {"p": cell("p", "met"), "bad": cell("bad", "met")})
    assert out.score == 0.0


def test_error_cell_makes_error_verdict_not_fail():
    r = rubric_of({"id": "a", "outcome": "a"}, {"id": "b", "outcome": "b"})
    err = CriterionResult("b", Status.ERROR, source="judge", error="timeout")
    out = score_sample(r, {"a": cell("a", "met"), "b": err})
    assert out.verdict is Verdict.ERROR
    assert out.score is None  # no final verdict: the figure is only partial
    assert out.partial_score == pytest.approx(1.0)  # and the error is never counted as 0


def test_on_error_ignore_drops_errored_from_both_sides_and_says_so():
    r = rubric_of({"id": "a", "outcome": "a"}, {"id": "b", "outcome": "b", "weight": 3}, on_error="ignore")
    err = CriterionResult("b", Status.ERROR, source="judge", error="timeout")
    out = score_sample(r, {"a": cell("a", "met"), "b": err})
    assert out.verdict is Verdict.PASS
    assert out.score == pytest.approx(1.0)
    assert any("ignored 1 errored" in n for n in out.notes)


def test_on_error_ignore_with_every_positive_criterion_errored_has_no_score():
    r = rubric_of({"id": "a", "outcome": "a"}, {"id": "b", "outcome": "b", "weight": 2},
                  {"id": "bad", "outcome": "c", "weight": -3}, on_error="ignore")
    errors = {k: CriterionResult(k, Status.ERROR, source="judge", error="timeout") for k in "ab"}
    out = score_sample(r, errors | {"bad": cell("bad", "unmet")})
    assert out.verdict is Verdict.ERROR
    assert out.score is None and out.partial_score is None
    assert any("no positive-weight criterion has a result" in n for n in out.notes)


def test_on_error_ignore_never_passes_a_sample_whose_required_criterion_errored():
    r = rubric_of({"id": "a", "outcome": "a", "required": True}, {"id": "b", "outcome": "b"},
                  threshold=0.5, on_error="ignore")
    err = CriterionResult("a", Status.ERROR, source="judge", error="timeout")
    out = score_sample(r, {"a": err, "b": cell("b", "met")})
    assert out.verdict is Verdict.ERROR
    assert out.score is None and out.partial_score == pytest.approx(1.0)
    assert any("required criteria errored" in n and "a" in n for n in out.notes)


def test_a_required_unmet_fail_with_missing_cells_has_only_a_partial_score():
    r = rubric_of({"id": "a", "outcome": "a", "required": True}, {"id": "b", "outcome": "b"})
    unj = CriterionResult("b", Status.UNJUDGED, source="none")
    out = score_sample(r, {"a": cell("a", "unmet"), "b": unj})
    assert out.verdict is Verdict.FAIL
    assert out.score is None and out.partial_score == 0.0


@pytest.mark.parametrize("missing", ["pending", "unjudged"])
def test_a_sample_without_a_final_verdict_has_no_score(missing):
    r = rubric_of({"id": "a", "outcome": "a", "weight": 3}, {"id": "b", "outcome": "b"})
    out = score_sample(r, {"a": cell("a", "met"), "b": CriterionResult("b", Status(missing), source="none")})
    assert out.verdict is Verdict(missing)
    assert out.score is None and out.partial_score == pytest.approx(1.0)


def test_a_final_verdict_has_a_score_and_no_partial_score():
    r = rubric_of({"id": "a", "outcome": "a"}, {"id": "b", "outcome": "b"}, threshold=0.5)
    out = score_sample(r, {"a": cell("a", "met"), "b": cell("b", "unmet")})
    assert out.verdict is Verdict.PASS
    assert out.score == pytest.approx(0.5) and out.partial_score is None


def test_missing_cells_are_pending_and_unjudged():
    r = rubric_of({"id": "a", "outcome": "a"}, {"id": "b", "outcome": "b"})
    assert score_sample(r, {"a": cell("a", "met")}).verdict is Verdict.PENDING
    unj = CriterionResult("b", Status.UNJUDGED, source="none")
    assert score_sample(r, {"a": cell("a", "met"), "b": unj}).verdict is Verdict.UNJUDGED


def test_required_unmet_is_a_certain_fail_even_with_pending_cells():
    r = rubric_of({"id": "a", "outcome": "a", "required": True}, {"id": "b", "outcome": "b"})
    assert score_sample(r, {"a": cell("a", "unmet")}).verdict is Verdict.FAIL


# -- properties ---------------------------------------------------------------

weights = st.lists(st.sampled_from([-3.0, -1.0, 0.5, 1.0, 1.5, 2.0, 5.0]), min_size=1, max_size=8)


@given(weights, st.data())
def test_score_is_always_within_unit_interval(ws, data):
    if not any(w > 0 for w in ws):
        ws = [*ws, 1.0]
    r = rubric_of(*({"id": f"c{i}", "outcome": "x", "weight": w} for i, w in enumerate(ws)))
    statuses = data.draw(st.lists(st.booleans(), min_size=len(ws), max_size=len(ws)))
    out = score_sample(r, {f"c{i}": cell(f"c{i}", "met" if m else "unmet") for i, m in enumerate(statuses)})
    assert out.score is not None and 0.0 <= out.score <= 1.0


@given(weights, st.data())
def test_meeting_one_more_positive_criterion_never_lowers_the_score(ws, data):
    if not any(w > 0 for w in ws):
        ws = [*ws, 1.0]
    r = rubric_of(*({"id": f"c{i}", "outcome": "x", "weight": w} for i, w in enumerate(ws)))
    statuses = data.draw(st.lists(st.booleans(), min_size=len(ws), max_size=len(ws)))
    positive_unmet = [i for i, (w, m) in enumerate(zip(ws, statuses, strict=True)) if w > 0 and not m]
    if not positive_unmet:
        return
    flip = data.draw(st.sampled_from(positive_unmet))
    before = score_sample(r, {f"c{i}": cell(f"c{i}", "met" if m else "unmet") for i, m in enumerate(statuses)})
    after_statuses = list(statuses)
    after_statuses[flip] = True
    after = score_sample(r, {f"c{i}": cell(f"c{i}", "met" if m else "unmet") for i, m in enumerate(after_statuses)})
    assert after.score >= before.score - 1e-12


@given(st.integers(min_value=1, max_value=12), st.integers(min_value=1, max_value=12))
def test_a_score_equal_to_the_threshold_passes(met, total):
    if met > total:
        met, total = total, met
    threshold = met / total  # computed the same way users write it: a fraction
    r = rubric_of(*({"id": f"c{i}", "outcome": "x"} for i in range(total)), threshold=round(threshold, 12))
    out = score_sample(r, {f"c{i}": cell(f"c{i}", "met" if i < met else "unmet") for i in range(total)})
    assert out.verdict is Verdict.PASS
    if met > 0:
        below = score_sample(r, {f"c{i}": cell(f"c{i}", "met" if i < met - 1 else "unmet") for i in range(total)})
        assert below.verdict is Verdict.FAIL
