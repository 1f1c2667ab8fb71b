"""The corrected pass rate: prediction-powered inference (PPI++) from counts, checked against the
``ppi-python`` reference implementation, against arithmetic done by hand here, and through the
commands that report it (``grade`` in every streamed and whole format, ``calibrate``)."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.agreement import Agreement
from rubric_studio.core.intervals import Z95, wilson_interval
from rubric_studio.core.labels import Label
from rubric_studio.core.pass_rate import (
    MIN_LABELLED,
    PassRateTally,
    corrected_rate,
    pass_rates,
    power_tuned_lambda,
    ppi_estimate,
    tally,
)
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict
from rubric_studio.engine.report import Summary


def _arrays(labelled: Agreement, unlabelled_positive: int, unlabelled_total: int):
    """(Y, Ŷ, Ŷᵘ) as ppi_py takes them, from the counts."""
    import numpy as np  # imported by the tests that use it: collecting the suite stays light

    y = [1.0] * labelled.both_pass + [1.0] * labelled.rubric_fail_human_pass + [0.0] * labelled.rubric_pass_human_fail \
        + [0.0] * labelled.both_fail
    yhat = [1.0] * labelled.both_pass + [0.0] * labelled.rubric_fail_human_pass + [1.0] * labelled.rubric_pass_human_fail \
        + [0.0] * labelled.both_fail
    unlabelled = [1.0] * unlabelled_positive + [0.0] * (unlabelled_total - unlabelled_positive)
    return np.array(y), np.array(yhat), np.array(unlabelled)


def _reference(labelled: Agreement, unlabelled_positive: int, unlabelled_total: int) -> tuple[float, float, float]:
    """``ppi_py``'s PPI++ point estimate and 95% interval (λ tuned, ``lam=None``) on the same data."""
    import numpy as np
    import ppi_py

    y, yhat, unlabelled = _arrays(labelled, unlabelled_positive, unlabelled_total)
    point = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled))[0])
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05)
    return point, float(np.ravel(low)[0]), float(np.ravel(high)[0])


def _random_datasets(count: int) -> list[tuple[Agreement, int, int]]:
    """Labelled 2×2s and unlabelled judge counts of simulated judges (seeded)."""
    rng = random.Random(40)
    out = []
    while len(out) < count:
        n, big_n = rng.randrange(10, 300), rng.randrange(5, 3000)
        rate, sensitivity, specificity = rng.uniform(0.1, 0.9), rng.uniform(0.5, 1), rng.uniform(0.5, 1)
        cells = [0, 0, 0, 0]  # both pass, both fail, judge pass / human fail, judge fail / human pass
        for _ in range(n):
            human = rng.random() < rate
            judge = rng.random() < (sensitivity if human else 1 - specificity)
            cells[0 if human and judge else 1 if not (human or judge) else 2 if judge else 3] += 1
        judge_rate = rate * sensitivity + (1 - rate) * (1 - specificity)
        positive = sum(rng.random() < judge_rate for _ in range(big_n))
        labelled = Agreement(*cells)
        if labelled.human_pass and labelled.human_fail and 0 < labelled.rubric_pass + positive < n + big_n:
            out.append((labelled, positive, big_n))
    return out


# λ clipped at 0: the judge's verdicts run against the labels (negative covariance).
AGAINST_THE_LABELS = (Agreement(both_pass=2, both_fail=3, rubric_pass_human_fail=9, rubric_fail_human_pass=8), 40, 100)
# λ clipped at 1: a judge that agrees with every label, whose verdicts over all samples are far
# less spread than the labels (it passes 198 of 200 unlabelled; the unclipped λ is about 4.4).
PERFECT_JUDGE = (Agreement(both_pass=10, both_fail=10, rubric_pass_human_fail=0, rubric_fail_human_pass=0), 198, 200)
NAMED = {"against the labels": AGAINST_THE_LABELS, "perfect judge": PERFECT_JUDGE}


@pytest.mark.parametrize("data", [*_random_datasets(12), *NAMED.values()],
                         ids=[*(f"random-{i}" for i in range(12)), *NAMED])
def test_unadjusted_estimate_and_interval_equal_ppi_python(data):
    labelled, positive, big_n = data
    ours = ppi_estimate(labelled, positive, big_n, adjust=False)
    point, low, high = _reference(labelled, positive, big_n)
    assert ours.value == pytest.approx(point, abs=1e-9)
    assert ours.lo == pytest.approx(low, abs=1e-9)
    assert ours.hi == pytest.approx(high, abs=1e-9)


def test_lambda_is_clipped_at_0_and_at_1_as_ppi_python_clips_it():
    assert power_tuned_lambda(*AGAINST_THE_LABELS) == 0.0
    assert power_tuned_lambda(*PERFECT_JUDGE) == 1.0
    # at 0 the estimate is the labelled share, at 1 plain PPI: the judge's unlabelled rate rectified
    assert ppi_estimate(*AGAINST_THE_LABELS, adjust=False).value == pytest.approx(10 / 22)
    assert ppi_estimate(*PERFECT_JUDGE, adjust=False).value == pytest.approx(198 / 200)


def test_the_arithmetic_by_hand():
    """n = 12 labelled (6 both pass, 2 judge fail / human pass, 1 judge pass / human fail, 3 both
    fail), N = 28 unlabelled of which the judge passes 18."""
    labelled = Agreement(both_pass=6, both_fail=3, rubric_pass_human_fail=1, rubric_fail_human_pass=2)
    n, big_n, positive = 12, 28, 18
    mean_y, mean_yhat = Fraction(8, 12), Fraction(7, 12)
    covariance = Fraction(6, 12) - mean_y * mean_yhat  # 1/9
    q = Fraction(7 + 18, 40)
    variance = q * (1 - q) * Fraction(40, 39)
    lam = covariance / ((1 + Fraction(n, big_n)) * variance)
    assert covariance == Fraction(1, 9) and 0 < lam < 1
    theta = lam * Fraction(positive, big_n) + mean_y - lam * mean_yhat
    rectifier = [1 - lam] * 6 + [Fraction(1)] * 2 + [-lam] * 1 + [Fraction(0)] * 3
    rectifier_mean = sum(rectifier) / n
    rectifier_variance = sum((r - rectifier_mean) ** 2 for r in rectifier) / n
    share = Fraction(positive, big_n)
    se = math.sqrt(lam * lam * share * (1 - share) / big_n + rectifier_variance / n)

    ours = ppi_estimate(labelled, positive, big_n, adjust=False)
    assert ours.lam == pytest.approx(float(lam), abs=1e-12)
    assert ours.value == pytest.approx(float(theta), abs=1e-12)
    assert (ours.lo, ours.hi) == pytest.approx((float(theta) - Z95 * se, float(theta) + Z95 * se), abs=1e-12)
    rate = corrected_rate(labelled, positive + labelled.rubric_pass, n + big_n)
    assert (rate.n_labelled, rate.n_unlabelled) == (12, 28)
    assert rate.value == pytest.approx(float(theta), abs=1e-12)


def _variance_at(rate: float, lam: float, sensitivity: float, fail_judged_pass: float) -> float:
    """Var(Y − λŶ) when a share ``rate`` pass for a human (the judge passing ``sensitivity`` of
    them) and a share ``fail_judged_pass`` fail for a human but pass for the judge."""
    probabilities = [rate * sensitivity, rate * (1 - sensitivity), fail_judged_pass, 1 - rate - fail_judged_pass]
    values = [1 - lam, 1.0, -lam, 0.0]
    mean = sum(p * v for p, v in zip(probabilities, values, strict=True))
    return sum(p * (v - mean) ** 2 for p, v in zip(probabilities, values, strict=True))


def test_adjusted_interval_bounds_are_where_the_score_statistic_reaches_z():
    """Each bound t solves (θ − t)² = z²·(λ²·q_u(1 − q_u)/N + V(t)/n), V the average of the
    rectifier's variance with the labels' smoothed false-pass share and with the one the judge's
    overall pass rate implies (docs/concepts/statistics.md)."""
    labelled = Agreement(both_pass=15, both_fail=3, rubric_pass_human_fail=0, rubric_fail_human_pass=1)
    positive, big_n = 800, 1000
    estimate = ppi_estimate(labelled, positive, big_n)
    n, lam = labelled.n, estimate.lam
    sensitivity = (15 + 0.25) / (16 + 0.5)
    false_pass = (0 + 0.25) / (3 + 0.5)
    judge_rate = (15 + 800) / (n + big_n)
    imputed = lam * lam * 0.8 * 0.2 / big_n

    def gap(t: float) -> float:
        implied = min(max(judge_rate - t * sensitivity, 0.0), 1 - t)
        variance = (_variance_at(t, lam, sensitivity, (1 - t) * false_pass)
                    + _variance_at(t, lam, sensitivity, implied)) / 2
        return (estimate.value - t) ** 2 - Z95 * Z95 * (imputed + variance / n)

    assert estimate.lo < estimate.value < estimate.hi
    assert gap(estimate.lo) == pytest.approx(0, abs=1e-12) and gap(estimate.hi) == pytest.approx(0, abs=1e-12)
    plain = ppi_estimate(labelled, positive, big_n, adjust=False)
    assert plain.value == estimate.value  # the adjustment moves the interval, never the estimate
    # no false pass among 3 failing labels: the plain interval trusts that; the adjusted one does not
    assert estimate.lo < plain.lo - 0.02


def test_without_unlabelled_samples_it_is_the_labelled_share_with_wilsons_interval():
    labelled = Agreement(both_pass=9, both_fail=4, rubric_pass_human_fail=2, rubric_fail_human_pass=3)
    rate = corrected_rate(labelled, labelled.rubric_pass, labelled.n)
    assert rate.n_unlabelled == 0
    assert rate.value == pytest.approx(12 / 18)
    assert rate.ci == pytest.approx(wilson_interval(12, 18), abs=1e-12)


@pytest.mark.parametrize(("labelled", "why"), [
    (Agreement(), "no labelled graded sample"),
    (Agreement(both_pass=4, both_fail=3, rubric_pass_human_fail=1, rubric_fail_human_pass=1),
     f"9 labelled samples; need at least {MIN_LABELLED}"),
    (Agreement(both_pass=12, rubric_fail_human_pass=3), "every label is pass"),
    (Agreement(both_fail=10, rubric_pass_human_fail=2), "every label is fail"),
])
def test_cant_tell_says_why(labelled, why):
    rate = corrected_rate(labelled, labelled.rubric_pass + 20, labelled.n + 50)
    assert rate.cant_tell == why and rate.value is None and rate.ci is None
    assert rate.to_dict() == {"cant_tell": why, "n_labelled": labelled.n, "n_unlabelled": 50}


def test_ten_labels_of_both_classes_carry_a_rate_and_its_dict():
    labelled = Agreement(both_pass=5, both_fail=3, rubric_pass_human_fail=1, rubric_fail_human_pass=1)
    data = corrected_rate(labelled, 6 + 30, 10 + 40).to_dict()
    assert set(data) == {"value", "ci", "n_labelled", "n_unlabelled"}
    assert (data["n_labelled"], data["n_unlabelled"]) == (10, 40)
    assert 0 <= data["ci"][0] <= data["value"] <= data["ci"][1] <= 1


def test_judge_counts_that_leave_out_the_labelled_samples_are_refused():
    labelled = Agreement(both_pass=8, both_fail=4)
    with pytest.raises(ValueError, match="do not include the 12 labelled"):
        corrected_rate(labelled, 5, 30)  # the judge passed 8 labelled samples alone


# -- per criterion, streaming ---------------------------------------------------------------
class _Criterion:
    def __init__(self, key: str) -> None:
        self.key = key


class _Rubric:
    criteria = [_Criterion("tone"), _Criterion("facts")]


def _sample(index: int, verdict: Verdict, tone: Status, facts: Status) -> SampleResult:
    return SampleResult(f"s{index}", None, verdict, [CriterionResult("tone", tone), CriterionResult("facts", facts)])


def _run() -> tuple[list[SampleResult], dict[str, Label]]:
    """40 graded samples; the first 14 labelled (verdict and tone), facts labelled on 12 of them
    all met (one class)."""
    samples, labels = [], {}
    for i in range(40):
        judge_pass = i % 3 != 0
        tone = Status.MET if i % 4 else Status.UNMET
        samples.append(_sample(i, Verdict.PASS if judge_pass else Verdict.FAIL, tone, Status.MET))
        if i < 14:
            human_pass = judge_pass != (i in (2, 5))
            human_tone = "met" if (tone is Status.MET) != (i == 7) else "unmet"
            criteria = {"tone": human_tone, **({"facts": "met"} if i < 12 else {})}
            labels[f"s{i}"] = Label(verdict="pass" if human_pass else "fail", criteria=criteria)
    samples.append(SampleResult("errored", None, Verdict.ERROR, [CriterionResult("tone", Status.ERROR)]))
    return samples, labels


def test_per_criterion_met_share_raw_and_corrected():
    samples, labels = _run()
    data = pass_rates(samples, labels, _Rubric())
    assert list(data) == ["raw", "corrected", "criteria"] and list(data["criteria"]) == ["tone", "facts"]
    graded = [s for s in samples if s.verdict in (Verdict.PASS, Verdict.FAIL)]
    assert data["raw"] == round(sum(s.verdict is Verdict.PASS for s in graded) / len(graded), 4)
    overall = Agreement.of((labels[s.id].verdict == "pass", s.verdict is Verdict.PASS) for s in graded if s.id in labels)
    assert data["corrected"] == corrected_rate(overall, sum(s.verdict is Verdict.PASS for s in graded), 40).to_dict()
    tone_cells = [(s.id, s.cell("tone").status is Status.MET) for s in graded]
    tone = Agreement.of((labels[i].criteria["tone"] == "met", met) for i, met in tone_cells if i in labels)
    assert data["criteria"]["tone"] == {
        "raw": round(sum(met for _, met in tone_cells) / 40, 4),
        "corrected": corrected_rate(tone, sum(met for _, met in tone_cells), 40).to_dict(),
    }
    assert data["criteria"]["facts"]["corrected"] == {"cant_tell": "every label is met", "n_labelled": 12,
                                                      "n_unlabelled": 28}


def test_chunks_folded_give_the_whole_runs_figures():
    """A streamed grade folds each chunk's summary (``Summary.add``): the same counts, the same
    pass_rate object as the whole run's."""
    samples, labels = _run()
    whole = tally(samples, labels, ("tone", "facts")).to_dict()
    folded = Summary()
    for start in range(0, len(samples), 7):
        chunk = Summary.of(samples[start:start + 7])
        chunk.pass_rate = tally(samples[start:start + 7], labels, ("tone", "facts"))
        folded.add(chunk)
    assert folded.to_dict()["pass_rate"] == whole
    assert "pass_rate" not in Summary.of(samples).to_dict()  # no labels in play: no key
    assert PassRateTally().to_dict()["corrected"]["cant_tell"] == "no labelled graded sample"


# -- the commands ---------------------------------------------------------------------------
RUBRIC = """name: lengths
pass_threshold: 0.9
criteria:
  - id: short
    check: {type: length, max_words: 6}
  - id: polite
    check: {type: keywords, required: [thanks]}
"""


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """60 samples graded by checks alone; the sidecar labels 20 of them (a human who disagrees
    with the length check on 4)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lengths.yaml").write_text(RUBRIC, encoding="utf-8")
    lines, labels = [], []
    for i in range(60):
        words = 3 + i % 7
        polite = i % 5 != 0
        text = ("thanks " if polite else "ok ") + " ".join(["word"] * (words - 1))
        lines.append(json.dumps({"id": f"s{i}", "output": text}))
        if i < 20:
            judge_pass = words <= 6 and polite
            human_pass = judge_pass != (i in (1, 4, 9, 13))
            labels.append(f"s{i}:\n  verdict: {'pass' if human_pass else 'fail'}\n"
                          f"  criteria:\n    short: {'met' if (words <= 6) != (i in (4, 9)) else 'unmet'}\n")
    (tmp_path / "lengths.samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "lengths.labels.yaml").write_text("".join(labels), encoding="utf-8")
    return tmp_path


def test_grade_json_jsonl_and_table_carry_the_same_pass_rate(workspace, capsys):
    main(["grade", "lengths.yaml", "--format", "json"])
    streamed = json.loads(capsys.readouterr().out)["summary"]["pass_rate"]
    assert streamed["corrected"]["n_labelled"] == 20 and streamed["corrected"]["n_unlabelled"] == 40
    assert streamed["criteria"]["polite"]["corrected"] == {"cant_tell": "no labelled graded sample",
                                                           "n_labelled": 0, "n_unlabelled": 60}
    main(["grade", "lengths.yaml", "--format", "jsonl"])
    tail = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert tail["summary"]["pass_rate"] == streamed
    main(["grade", "lengths.yaml"])
    table = capsys.readouterr().out
    value, (low, high) = streamed["corrected"]["value"], streamed["corrected"]["ci"]
    assert (f"pass rate: raw {streamed['raw']:.1%} · corrected {value:.1%} (95% CI {low:.1%}–{high:.1%}) "
            "— corrected by 20 labelled samples, 40 unlabelled") in table
    assert "polite: raw 80.0% · corrected: can't tell (no labelled graded sample)" in table


def test_the_reports_page_shows_the_pass_rate_grade_prints_for_this_workspace(workspace, capsys):
    """docs/reference/reports.md's ``summary.pass_rate`` example is this workspace's, as printed."""
    import re

    page = (Path(__file__).resolve().parent.parent / "docs" / "reference" / "reports.md").read_text(encoding="utf-8")
    shown = re.search(r'```json\n("pass_rate": \{.*?\n\})\n```', page, re.S)
    assert shown is not None, "reports.md no longer shows summary.pass_rate"
    main(["grade", "lengths.yaml", "--format", "json"])
    assert json.loads("{" + shown.group(1) + "}")["pass_rate"] == json.loads(capsys.readouterr().out)["summary"]["pass_rate"]


def test_grade_html_and_markdown_show_it(workspace, capsys):
    main(["grade", "lengths.yaml", "--format", "html", "-o", "report.html"])
    page = (workspace / "report.html").read_text(encoding="utf-8")
    assert '<table class="pass-rate">' in page and "corrected by 20 labelled samples, 40 unlabelled" in page
    main(["grade", "lengths.yaml", "--format", "markdown"])
    assert "- pass rate: raw " in capsys.readouterr().out


def test_grade_without_any_label_has_no_pass_rate_key(workspace, capsys):
    (workspace / "lengths.labels.yaml").unlink()
    main(["grade", "lengths.yaml", "--format", "json"])
    assert "pass_rate" not in json.loads(capsys.readouterr().out)["summary"]
    main(["grade", "lengths.yaml"])
    assert "pass rate:" not in capsys.readouterr().out


def test_calibrate_reports_the_pass_rate_it_corrects(workspace, capsys):
    main(["calibrate", "lengths.yaml", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    main(["grade", "lengths.yaml", "--format", "json"])
    assert data["pass_rate"] == json.loads(capsys.readouterr().out)["summary"]["pass_rate"]
    main(["calibrate", "lengths.yaml"])
    assert "corrected by 20 labelled samples, 40 unlabelled" in capsys.readouterr().out


def test_inline_labels_count_with_the_sidecar_winning_field_by_field_as_in_calibrate(workspace, capsys):
    """Samples s20–s29 carry their own ``label``; the sidecar also gives s20–s24 a cell label only
    (their verdict stays the inline one) — ``grade`` and ``calibrate`` read the same labels."""
    path = workspace / "lengths.samples.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for i in range(20, 30):
        rows[i]["label"] = {"verdict": "pass" if i % 3 else "fail"}
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with (workspace / "lengths.labels.yaml").open("a", encoding="utf-8") as sidecar:
        sidecar.write("".join(f"s{i}:\n  criteria:\n    short: unmet\n" for i in range(20, 25)))
    main(["calibrate", "lengths.yaml", "--format", "json"])
    calibrated = json.loads(capsys.readouterr().out)["pass_rate"]
    for fmt in ("json", "table"):
        main(["grade", "lengths.yaml", "--format", fmt])
        out = capsys.readouterr().out
        if fmt == "json":
            assert json.loads(out)["summary"]["pass_rate"] == calibrated
        else:
            assert "corrected by 30 labelled samples, 30 unlabelled" in out
    assert calibrated["corrected"]["n_labelled"] == 30 and calibrated["criteria"]["short"]["corrected"]["n_labelled"] == 25


def test_a_sidecar_that_does_not_read_costs_the_correction_not_the_grade(workspace, capsys):
    (workspace / "lengths.labels.yaml").write_text("s1:\n  verdict: [oops\n", encoding="utf-8")
    code = main(["grade", "lengths.yaml", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 1  # some samples fail; graded all the same
    assert "pass_rate" not in json.loads(captured.out)["summary"]
    assert captured.err.startswith("lengths.labels.yaml:3:1: YAML syntax error")


def test_the_studio_header_shows_raw_and_corrected_once_labels_carry_it():
    from rubric_studio.session.results_model import ResultsModel
    from rubric_studio.tui.statusbar import pass_rate_text

    samples, labels = _run()
    model = ResultsModel()
    model.set_samples([s.id for s in samples])
    model.update(samples)
    assert pass_rate_text(model.counts()).plain == ""  # no labels: nothing to correct with
    model.set_labels(labels)
    counts = model.counts()
    graded = [s for s in samples if s.verdict in (Verdict.PASS, Verdict.FAIL)]
    overall = Agreement.of((labels[s.id].verdict == "pass", s.verdict is Verdict.PASS) for s in graded if s.id in labels)
    rate = corrected_rate(overall, sum(s.verdict is Verdict.PASS for s in graded), len(graded))
    assert rate.value is not None and rate.ci is not None
    raw = sum(s.verdict is Verdict.PASS for s in graded) / len(graded)
    assert pass_rate_text(counts).plain == (f"  pass {raw:.0%} · corrected {rate.value:.0%} "
                                           f"[{rate.ci[0]:.0%}–{rate.ci[1]:.0%}] by 14 labels")
    model.set_labels({sid: label for sid, label in labels.items() if sid in ("s0", "s1", "s2")})
    assert pass_rate_text(model.counts()).plain.endswith("· corrected: can't tell, 3 labels")
