"""Agreement figures on small known data, every number worked out by hand here."""

from __future__ import annotations

import math

import pytest

from rubric_studio.core.agreement import AGREEMENT_KEYS, Agreement, agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.rubric import Rubric
from tests.calibration.calib_helpers import result

RUBRIC = Rubric.model_validate(
    {"name": "t", "criteria": [{"id": "tone", "outcome": "Warm"}, {"id": "short", "outcome": "Short"}]}
)

# human / rubric verdicts: 4 both pass, 3 both fail, 1 rubric-pass-human-fail, 2 rubric-fail-human-pass
PAIRS = {
    "s1": ("pass", "pass"), "s2": ("pass", "pass"), "s3": ("pass", "pass"), "s4": ("pass", "pass"),
    "s5": ("fail", "fail"), "s6": ("fail", "fail"), "s7": ("fail", "fail"),
    "s8": ("fail", "pass"),
    "s9": ("pass", "fail"), "s10": ("pass", "fail"),
}  # fmt: skip


def _data():
    # tone cells: s1 human unmet / rubric met (disagree), s2 met/met, s3 met/met, s5 unmet/unmet,
    # s6 human met but the cell errored (excluded), s7 rubric met but unlabelled (not compared)
    tone = {"s1": "met", "s2": "met", "s3": "met", "s5": "unmet", "s6": "error", "s7": "met"}
    tone_labels = {"s1": "unmet", "s2": "met", "s3": "met", "s5": "unmet", "s6": "met"}
    samples = [result(sid, rubric, {"tone": tone[sid]} if sid in tone else {}) for sid, (_, rubric) in PAIRS.items()]
    samples.append(result("s11", "unjudged"))  # labelled, excluded
    samples.append(result("s12", "error"))  # labelled, excluded
    samples.append(result("s13", "pass"))  # not labelled
    labels = {sid: Label(verdict=human) for sid, (human, _) in PAIRS.items()}
    for sid, state in tone_labels.items():
        labels[sid].criteria["tone"] = state
    labels["s11"] = Label(verdict="pass")
    labels["s12"] = Label(verdict="fail")
    labels["ghost"] = Label(verdict="pass")  # a sample not in the set
    return samples, labels


def test_overall_confusion_kappa_ci_and_rates_by_hand():
    samples, labels = _data()
    report = agreement(samples, labels, RUBRIC)
    o = report.overall
    assert (o.both_pass, o.both_fail, o.rubric_pass_human_fail, o.rubric_fail_human_pass) == (4, 3, 1, 2)
    assert o.n == 10  # s11 (unjudged) and s12 (error) excluded, s13 unlabelled
    # p_o = 7/10; rubric pass 5 fail 5, human pass 6 fail 4: p_e = (5*6 + 5*4)/100 = 0.5
    assert o.accuracy == pytest.approx(0.7)
    assert o.kappa == pytest.approx((0.7 - 0.5) / (1 - 0.5))  # 0.4
    # Wilson's interval of p_o = 7/10 (z² = 3.841459): centre (0.7 + 0.192073)/1.384146 = 0.644494,
    # half 1.959964·√(0.021 + 0.009604)/1.384146 = 0.247717 → [0.396777, 0.892211];
    # mapped through κ = (p_o − 0.5)/0.5 → [-0.206444, 0.784422]
    lo, hi = o.kappa_ci
    z2 = 1.959964**2
    centre, half = (0.7 + z2 / 20) / (1 + z2 / 10), 1.959964 * math.sqrt(0.021 + z2 / 400) / (1 + z2 / 10)
    assert lo == pytest.approx((centre - half - 0.5) / 0.5, abs=1e-5) == pytest.approx(-0.206444, abs=1e-5)
    assert hi == pytest.approx((centre + half - 0.5) / 0.5, abs=1e-5) == pytest.approx(0.784422, abs=1e-5)
    assert o.false_pass_rate == pytest.approx(1 / 4)  # s8 of the 4 human fails
    assert o.false_fail_rate == pytest.approx(2 / 6)  # s9, s10 of the 6 human passes
    assert o.coverage == pytest.approx(3 / 4)  # human fails the rubric also fails
    assert o.false_failure_rate == pytest.approx(2 / 6)
    # alignment = 2 * 0.75 * (2/3) / (0.75 + 2/3) = 1 / (17/12) = 12/17
    assert o.alignment == pytest.approx(12 / 17)


def test_per_criterion_uses_only_labelled_met_unmet_cells():
    samples, labels = _data()
    tone = agreement(samples, labels, RUBRIC).criteria["tone"]
    # compared: s1 (h unmet, r met), s2, s3 (met/met), s5 (unmet/unmet); s6 errored, s7 unlabelled
    assert (tone.both_pass, tone.both_fail, tone.rubric_pass_human_fail, tone.rubric_fail_human_pass) == (2, 1, 1, 0)
    # p_o = 3/4; rubric met 3 unmet 1, human met 2 unmet 2: p_e = (3*2 + 1*2)/16 = 0.5 -> kappa 0.5
    assert tone.kappa == pytest.approx(0.5)
    assert tone.false_pass_rate == pytest.approx(1 / 2)
    assert tone.false_fail_rate == pytest.approx(0.0)


def test_disagreements_list_verdicts_and_cells_in_sample_order():
    samples, labels = _data()
    report = agreement(samples, labels, RUBRIC)
    assert report.disagreements == [
        {"id": "s1", "human": "pass", "rubric": "pass", "criteria": ["tone"]},
        {"id": "s8", "human": "fail", "rubric": "pass", "criteria": []},
        {"id": "s9", "human": "pass", "rubric": "fail", "criteria": []},
        {"id": "s10", "human": "pass", "rubric": "fail", "criteria": []},
    ]
    assert report.verdict_disagreements() == {"s8", "s9", "s10"}
    assert report.cell_disagreements("tone") == {"s1"}


def test_warnings_count_exclusions_and_small_criteria():
    samples, labels = _data()
    warnings = agreement(samples, labels, RUBRIC).warnings
    text = "\n".join(warnings)
    assert "2 labelled samples excluded" in text and "1 error" in text and "1 unjudged" in text
    assert "1 labelled cells excluded" in text
    assert "criterion tone: only 4 labelled cells" in text
    assert "1 labels are for samples not in this set: ghost" in text
    assert not any("only 10 labelled samples" in w for w in warnings)  # 10 is enough
    assert not any("unbalanced" in w for w in warnings)  # 4 of 10 fail = 40%


def test_few_and_unbalanced_labels_warn():
    samples = [result(f"s{i}", "pass") for i in range(6)] + [result("f", "fail")]
    labels = {s.id: Label(verdict="pass") for s in samples[:6]} | {"f": Label(verdict="fail")}
    warnings = agreement(samples, labels, RUBRIC).warnings
    assert any("only 7 labelled samples" in w for w in warnings)
    assert any("unbalanced: 1 of 7 human verdicts are fail (14%)" in w for w in warnings)


def test_undefined_figures_are_none():
    # Everyone passes: p_e = (2*2)/4 = 1 -> kappa undefined; no human fails -> false pass / coverage undefined
    both = Agreement(both_pass=2)
    assert both.kappa is None and both.kappa_ci is None
    assert both.false_pass_rate is None and both.coverage is None and both.alignment is None
    assert both.false_fail_rate == 0.0 and both.accuracy == 1.0
    empty = Agreement()
    assert empty.n == 0 and empty.accuracy is None and empty.kappa is None
    assert empty.to_dict()["kappa_ci"] is None


def test_perfect_disagreement_kappa_minus_one_and_zero_alignment():
    worst = Agreement(rubric_pass_human_fail=2, rubric_fail_human_pass=2)
    # p_o = 0, p_e = (2*2 + 2*2)/16 = 0.5 -> kappa = -0.5/0.5 = -1; CI: Wilson of 0/4 is
    # [0, z²/(4 + z²)] = [0, 0.489899] -> kappa [-1, (0.489899 - 0.5)/0.5] = [-1, -0.020202]: a width, not a point
    assert worst.kappa == pytest.approx(-1.0)
    z2 = 1.959964**2
    assert worst.kappa_ci == (pytest.approx(-1.0), pytest.approx((z2 / (4 + z2) - 0.5) / 0.5, abs=1e-6))
    assert worst.coverage == 0.0 and worst.false_failure_rate == 1.0 and worst.alignment == 0.0


def test_to_dict_has_exactly_the_brief_shape():
    samples, labels = _data()
    data = agreement(samples, labels, RUBRIC).to_dict()
    assert list(data) == ["overall", "criteria", "disagreements", "warnings"]
    expected = {"n", "accuracy", "kappa", "kappa_ci", "both_pass", "both_fail", "rubric_pass_human_fail",
                "rubric_fail_human_pass", "false_pass_rate", "false_fail_rate", "coverage",
                "false_failure_rate", "alignment"}  # fmt: skip
    assert set(data["overall"]) == expected == set(AGREEMENT_KEYS)
    assert list(data["criteria"]) == ["tone"]  # "short" has no labels
    assert set(data["criteria"]["tone"]) == expected | {"labels_current", "labels_older_wording", "labels_unrecorded"}
    assert all(set(d) == {"id", "human", "rubric", "criteria"} for d in data["disagreements"])
    assert data["overall"]["kappa"] == 0.4 and data["overall"]["kappa_ci"] == [-0.2064, 0.7844]
