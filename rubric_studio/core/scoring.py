"""Scoring: from cells to a sample score and verdict (BRIEF §3 and §8, exactly).

figure = clip(Σ wᵢ·sᵢ / Σ_{wᵢ>0} wᵢ, 0, 1) over criteria that have a result (met/unmet).
Verdict: ``error`` if a cell errored (unless ``on_error: ignore``); ``fail`` as soon
as a required criterion is unmet (certain whatever the missing cells say);
``pending`` / ``unjudged`` while judge cells are missing; otherwise ``pass`` iff
figure ≥ pass_threshold and every required criterion is met.

A score never claims what was not judged: the figure is the sample's ``score`` only
when the verdict is pass/fail and every criterion it counts has a result; otherwise
it is the ``partial_score`` and ``score`` is None. A required criterion that errored
or is missing can never let the sample pass, even with ``on_error: ignore``, and
ignoring errors that leave no positive-weight criterion with a result is an error,
not a perfect score.
Threshold comparisons allow float noise (6/7.5 passes 0.8).
"""

from __future__ import annotations

from collections.abc import Mapping

from rubric_studio.core.results import CriterionResult, SampleOutcome, Status, Verdict
from rubric_studio.core.rubric import Criterion, Rubric

EPSILON = 1e-9
FINAL_VERDICTS = frozenset({Verdict.PASS, Verdict.FAIL})


def at_least(value: float, threshold: float) -> bool:
    """``value >= threshold``, tolerant of float noise."""
    return value >= threshold - EPSILON


def cell_status(criterion: Criterion, score: float) -> Status:
    """met/unmet for a cell with a score in [0, 1]."""
    if criterion.kind == "checklist":
        return Status.MET if score >= 0.5 else Status.UNMET
    return Status.MET if at_least(score, criterion.effective_min_score) else Status.UNMET


def outcome_of(figure: float | None, verdict: Verdict, cells: list[CriterionResult], notes: list[str],
               *, complete: bool = True) -> SampleOutcome:
    """The outcome, with ``figure`` as the score only when it is final (else as the partial score)."""
    if complete and verdict in FINAL_VERDICTS:
        return SampleOutcome(figure, verdict, cells, notes)
    return SampleOutcome(None, verdict, cells, notes, partial_score=figure)


def score_sample(rubric: Rubric, results: Mapping[str, CriterionResult]) -> SampleOutcome:
    """Aggregate one sample's cells into its score and verdict."""
    cells: list[CriterionResult] = []
    positive = 0.0
    total = 0.0
    scored = 0
    any_positive = False
    errored: list[str] = []
    missing: list[Status] = []
    required_unmet: list[str] = []
    required_errored: list[str] = []
    met, unmet, error = Status.MET, Status.UNMET, Status.ERROR
    for key, weight, required in rubric.scoring_plan():
        result = results.get(key)
        if result is None:
            result = CriterionResult(id=key, status=Status.PENDING, source="none")
        cells.append(result)
        status = result.status
        if weight > 0:
            any_positive = True
        if status is met or status is unmet:
            scored += 1
            if weight > 0:
                positive += weight
            total += weight * (result.score or 0.0)
            if required and status is unmet:
                required_unmet.append(key)
        elif status is error:
            errored.append(key)
            if required:
                required_errored.append(key)
        else:
            missing.append(status)

    figure: float | None
    if not scored:
        figure = None
    elif positive <= 0:
        # Only penalties have results: nothing earned, so any met penalty drives it to 0.
        figure = 0.0 if total < 0 else 1.0
    else:
        figure = min(1.0, max(0.0, total / positive))
    notes: list[str] = []
    if errored:
        if rubric.on_error != "ignore":
            return outcome_of(figure, Verdict.ERROR, cells, [f"errored: {', '.join(errored)}"])
        notes.append(f"ignored {len(errored)} errored criteria: {', '.join(errored)}")
    if required_unmet:
        notes.append(f"required criteria unmet: {', '.join(required_unmet)}")
        return outcome_of(figure, Verdict.FAIL, cells, notes, complete=not missing)
    if required_errored:
        notes.append(f"required criteria errored, so the sample cannot pass: {', '.join(required_errored)}")
        return outcome_of(figure, Verdict.ERROR, cells, notes)
    if missing:
        verdict = Verdict.PENDING if Status.PENDING in missing else Verdict.UNJUDGED
        return outcome_of(figure, verdict, cells, notes)
    if errored and any_positive and positive <= 0:
        notes.append("no positive-weight criterion has a result: every one errored, so there is no score")
        return outcome_of(None, Verdict.ERROR, cells, notes)
    if figure is None:
        return outcome_of(None, Verdict.ERROR if errored else Verdict.UNJUDGED, cells, notes)
    verdict = Verdict.PASS if at_least(figure, rubric.pass_threshold) else Verdict.FAIL
    return outcome_of(figure, verdict, cells, notes)
