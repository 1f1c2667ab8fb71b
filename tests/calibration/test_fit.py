"""Threshold and weight fitting on toy sets worked out by hand; apply_fit edits only those values."""

from __future__ import annotations

import difflib

import pytest

from rubric_studio.core.agreement import agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.results import CriterionResult, SampleResult, Status
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.scoring import score_sample
from rubric_studio.engine.fit import (
    MIN_FOR_HOLDOUT,
    FitResult,
    apply_fit,
    cases_from,
    fit,
    fit_threshold,
    split,
)


def graded(rubric: Rubric, sample_id: str, met: set[str]) -> SampleResult:
    cells = {
        c.key: CriterionResult(c.key, Status.MET if c.key in met else Status.UNMET, score=1.0 if c.key in met else 0.0)
        for c in rubric.criteria
    }
    outcome = score_sample(rubric, cells)
    return SampleResult(sample_id, outcome.score, outcome.verdict, outcome.criteria)


TOY = Rubric.model_validate(
    {"name": "toy", "pass_threshold": 0.8,
     "criteria": [{"id": "a", "outcome": "A"}, {"id": "b", "outcome": "B"}, {"id": "c", "outcome": "C", "weight": 2}]}
)  # fmt: skip
# score = (a + b + 2c) / 4
TOY_SET = [
    ("t1", {"a", "b", "c"}, "pass"),  # 1.0
    ("t2", {"a", "c"}, "pass"),  # 0.75
    ("t3", {"b", "c"}, "pass"),  # 0.75
    ("t4", {"c"}, "fail"),  # 0.5
    ("t5", {"a", "b"}, "pass"),  # 0.5
    ("t6", {"a"}, "fail"),  # 0.25
    ("t7", set(), "fail"),  # 0.0
]


def _toy(rubric: Rubric = TOY):
    samples = [graded(rubric, sid, met) for sid, met, _ in TOY_SET]
    labels = {sid: Label(verdict=v) for sid, _, v in TOY_SET}
    return samples, labels


def test_threshold_fit_by_hand():
    samples, labels = _toy()
    cases = cases_from(samples, labels, TOY)
    threshold, best = fit_threshold(cases, [1, 1, 2], current=0.8)
    # Cuts (thresholds that give the same verdicts), with kappa = (p_o - p_e) / (1 - p_e):
    #   (0.75, 1]:  pass {t1}:             p_o 4/7
    #   (0.5, 0.75]: pass {t1,t2,t3}:      p_o 6/7, p_e = (3*4 + 4*3)/49 = 24/49 -> kappa 18/25 = 0.72
    #   (0.25, 0.5]: pass {t1..t5}:        p_o 6/7, p_e = (5*4 + 2*3)/49 = 26/49 -> kappa 16/23 = 0.696
    # Best cut (0.5, 0.75]; the current 0.8 is outside it; the roundest value in its middle half
    # [0.5625, 0.6875] is 0.6.
    assert threshold == 0.6
    assert best.kappa == pytest.approx(18 / 25)
    assert (best.both_pass, best.both_fail, best.rubric_pass_human_fail, best.rubric_fail_human_pass) == (3, 3, 0, 1)


def test_threshold_fit_keeps_the_current_value_when_it_is_in_the_best_cut():
    samples, labels = _toy()
    threshold, _ = fit_threshold(cases_from(samples, labels, TOY), [1, 1, 2], current=0.7)
    assert threshold == 0.7  # 0.7 lies in the best cut (0.5, 0.75]


def test_fitted_threshold_matches_real_scoring():
    samples, labels = _toy()
    result = fit(TOY, samples, labels, weights=False)
    assert result.threshold == 0.6 and result.holdout is None  # 7 labels < MIN_FOR_HOLDOUT
    assert any("no holdout" in w for w in result.warnings)
    rescored = [graded(result.fitted_rubric(TOY), sid, met) for sid, met, _ in TOY_SET]
    assert agreement(rescored, labels, TOY).overall.kappa == pytest.approx(18 / 25)
    assert result.all["fitted"].kappa == pytest.approx(18 / 25)
    # current threshold 0.8 passes only t1: p_o 4/7, p_e = (1*4 + 6*3)/49 = 22/49 -> kappa (28-22)/(49-22) = 6/27
    assert result.all["current"].kappa == pytest.approx(6 / 27)


SIGNAL = Rubric.model_validate(
    {"name": "signal", "pass_threshold": 0.8,
     "criteria": [{"id": "good", "outcome": "G"}, {"id": "noise", "outcome": "N"},
                  {"id": "must", "outcome": "M", "required": True, "weight": 1},
                  {"id": "bad", "outcome": "B", "weight": -1}]}
)  # fmt: skip


def _signal_set(copies: int = 4):
    """The human follows `good` only; `noise` carries equal weight, so 0.8 misjudges."""
    samples, labels = [], {}
    kinds = [({"good", "must"}, "pass"), ({"noise", "must"}, "fail"), ({"good", "noise", "must"}, "pass"),
             ({"must"}, "fail")]  # fmt: skip
    for k in range(copies):
        for index, (met, verdict) in enumerate(kinds):
            sid = f"k{index}-{k}"
            samples.append(graded(SIGNAL, sid, met))
            labels[sid] = Label(verdict=verdict)
    return samples, labels


def test_weight_fit_improves_train_agreement_and_reports_holdout():
    samples, labels = _signal_set()
    result = fit(SIGNAL, samples, labels, seed=1)
    # With weights good 1, noise 1, must 1: {good,must} = 2/3 and {noise,must} = 2/3 cannot be told apart.
    # Coordinate search tries good = 0.5 (worse), then good = 1.5: {good,must} = 2.5/3.5 = 0.714,
    # {noise,must} = 2/3.5 = 0.571, all three = 1, {must} = 0.286 -> perfect; larger weights only tie
    # and are further from the current ones.
    assert result.weights == {"good": 1.5, "noise": 1.0, "must": 1.0, "bad": -1.0}
    # best cut (4/7, 5/7] = (0.571, 0.714], middle 9/14 = 0.643; its middle half [0.607, 0.679] holds no
    # 1-decimal value, and of 0.61 .. 0.67 the nearest to 0.643 is 0.64
    assert result.threshold == 0.64
    assert result.train["fitted"].accuracy == 1.0
    assert result.train["fitted"].kappa > result.train["current"].kappa
    assert result.holdout is not None and result.holdout["fitted"].n == len(result.holdout_ids) > 0
    assert set(result.train_ids).isdisjoint(result.holdout_ids)
    assert len(result.train_ids) + len(result.holdout_ids) == 16
    assert result.weights["bad"] < 0  # penalties keep their sign
    fitted = result.fitted_rubric(SIGNAL)
    assert [c.required for c in fitted.criteria] == [c.required for c in SIGNAL.criteria]
    data = result.to_dict()
    assert data["weights"]["good"] == {"current": 1.0, "fitted": 1.5}
    assert data["holdout"]["fitted"]["n"] == len(result.holdout_ids)
    assert data["changed"] is True and data["overfit"] is False and data["unconfirmed"] is False


def test_split_is_seeded_and_stratified():
    samples, labels = _signal_set()
    cases = cases_from(samples, labels, SIGNAL)
    train_a, hold_a = split(cases, 0.25, seed=3)
    train_b, hold_b = split(cases, 0.25, seed=3)
    assert [c.id for c in hold_a] == [c.id for c in hold_b]
    # 8 human passes and 8 fails: 25% of each class = 2 + 2
    assert sum(c.human_pass for c in hold_a) == 2 and sum(not c.human_pass for c in hold_a) == 2
    assert split(cases[: MIN_FOR_HOLDOUT - 1], 0.25, seed=3)[1] == []


def test_overfitting_is_flagged():
    samples, labels = _signal_set()
    result = fit(SIGNAL, samples, labels, seed=1)
    assert not result.overfit and not result.unconfirmed  # holdout already perfect: nothing to confirm
    perfect, imperfect = result.train["fitted"], result.train["current"]
    result.holdout = {"current": perfect, "fitted": imperfect}  # the holdout got worse
    assert result.overfit and not result.unconfirmed
    result.holdout = {"current": imperfect, "fitted": imperfect}  # train improved, holdout flat
    assert result.unconfirmed and not result.overfit


def _fit_result(rubric: Rubric, threshold: float, **weights: float) -> FitResult:
    current = {c.key: c.weight for c in rubric.criteria}
    return FitResult(rubric.content_hash(), rubric.pass_threshold, threshold, current, {**current, **weights},
                     rubric.pass_threshold, 0, 0.3, [], [], {}, None, {})  # fmt: skip


def test_apply_fit_changes_only_threshold_and_weight_lines(bundled):
    path = bundled / "support_reply" / "support_reply.yaml"
    before = path.read_text()
    rubric = load_rubric(path)
    result = _fit_result(rubric, 0.65, tone=2.0, short=1.5, **{"asks-for-credentials": -2.0})
    changes = apply_fit(path, result)
    assert changes == ["pass_threshold 0.8 → 0.65", "tone.weight 1 → 2", "asks-for-credentials.weight -3 → -2",
                       "short.weight 1 → 1.5"]  # fmt: skip
    after = path.read_text()
    diff = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]
    assert diff == [
        "- pass_threshold: 0.8",
        "+ pass_threshold: 0.65",
        "+     weight: 2",
        '-     weight: -3        # penalty: "met" means the reply does the bad thing',
        '+     weight: -2        # penalty: "met" means the reply does the bad thing',
        "+     weight: 1.5",
    ]
    reloaded = load_rubric(path)
    assert reloaded.criterion("short").weight == 1.5 and reloaded.pass_threshold == 0.65
    # the weight of `short` went in right below its check, above the blank line that separates criteria
    assert 'too long"\n    weight: 1.5\n\n  - id: no-boilerplate' in after


def test_apply_fit_refuses_a_rubric_changed_since_the_fit(bundled):
    path = bundled / "support_reply" / "support_reply.yaml"
    result = _fit_result(load_rubric(path), 0.5)
    path.write_text(path.read_text().replace("pass_threshold: 0.8", "pass_threshold: 0.7"))
    with pytest.raises(ValueError, match="changed since the fit"):
        apply_fit(path, result)
    assert "pass_threshold: 0.7" in path.read_text()


def test_apply_fit_never_writes_over_an_edit_saved_while_it_runs(bundled, monkeypatch):
    import rubric_studio.core.loading as loading

    path = bundled / "support_reply" / "support_reply.yaml"
    result = _fit_result(load_rubric(path), 0.65)
    real_parse, calls = loading.parse_rubric, []

    def parse_then_edit_outside(*args, **kwargs):  # the edited text is checked: an editor saves just then
        calls.append(1)
        if len(calls) == 2:
            path.write_text(path.read_text() + "# saved in vim meanwhile\n")
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(loading, "parse_rubric", parse_then_edit_outside)
    with pytest.raises(OSError, match="changed on disk"):
        apply_fit(path, result)
    text = path.read_text()
    assert "# saved in vim meanwhile" in text and "pass_threshold: 0.8" in text


def test_apply_fit_turns_a_plain_string_criterion_into_a_mapping(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("name: x\ncriteria:\n- Be nice   # plain\n- id: b\n  outcome: y\n")
    result = _fit_result(load_rubric(path), 0.8, c1=2.0)
    assert apply_fit(path, result) == ["c1.weight 1 → 2"]
    assert path.read_text() == "name: x\ncriteria:\n- outcome: Be nice # plain\n  weight: 2\n- id: b\n  outcome: y\n"


def test_nothing_to_apply_leaves_the_file_alone(bundled):
    path = bundled / "support_reply" / "support_reply.yaml"
    stamp = path.stat().st_mtime_ns
    assert apply_fit(path, _fit_result(load_rubric(path), 0.8)) == []
    assert path.stat().st_mtime_ns == stamp


def test_fitted_rubric_scores_with_the_fitted_weights_even_after_the_original_was_scored():
    samples, labels = _signal_set()
    result = fit(SIGNAL, samples, labels, holdout=0.25, seed=1)
    SIGNAL.scoring_plan()  # the original has scored samples (its plan is cached) before the fit is applied
    fitted = result.fitted_rubric(SIGNAL)
    assert [w for _, w, _ in fitted.scoring_plan()] == [c.weight for c in fitted.criteria]
    assert any(c.weight != o.weight for c, o in zip(fitted.criteria, SIGNAL.criteria, strict=True))
