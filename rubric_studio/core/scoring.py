"""Scoring: from cells to a sample score and verdict (docs/concepts/scoring.md, exactly).

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
from dataclasses import dataclass

from rubric_studio.core.numbers import EPSILON
from rubric_studio.core.results import CriterionResult, SampleOutcome, Status, Verdict
from rubric_studio.core.rubric import Criterion, Rubric

__all__ = ["EPSILON", "FINAL_VERDICTS", "at_least", "cell_status", "outcome_of", "score_sample"]
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


@dataclass(slots=True)
class _Tally:
    """One sample's cells in the rubric's order, counted for its figure and verdict."""

    cells: list[CriterionResult]
    positive: float  # sum of the positive weights of criteria with a result
    total: float  # sum of weight × score over criteria with a result
    scored: int  # criteria with a result (met/unmet)
    any_positive: bool  # the rubric has a positive-weight criterion
    errored: list[str]
    missing: list[Status]
    required_unmet: list[str]
    required_errored: list[str]

    def figure(self) -> float | None:
        """The weighted figure clipped to [0, 1]; None when no criterion has a result."""
        if not self.scored:
            return None
        if self.positive <= 0:
            # Only penalties have results: nothing earned, so any met penalty drives it to 0.
            return 0.0 if self.total < 0 else 1.0
        return min(1.0, max(0.0, self.total / self.positive))


def _tally(rubric: Rubric, results: Mapping[str, CriterionResult]) -> _Tally:
    """Count the cells (a missing one is ``pending``); a hot loop, so plain locals."""
    cells: list[CriterionResult] = []
    positive = total = 0.0
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
    return _Tally(cells, positive, total, scored, any_positive, errored, missing, required_unmet, required_errored)


def score_sample(rubric: Rubric, results: Mapping[str, CriterionResult]) -> SampleOutcome:
    """Aggregate one sample's cells into its score and verdict."""
    tally = _tally(rubric, results)
    figure = tally.figure()
    cells, errored = tally.cells, tally.errored
    notes: list[str] = []
    if errored:
        if rubric.on_error != "ignore":
            return outcome_of(figure, Verdict.ERROR, cells, [f"errored: {', '.join(errored)}"])
        notes.append(f"ignored {len(errored)} errored criteria: {', '.join(errored)}")
    if tally.required_unmet:
        notes.append(f"required criteria unmet: {', '.join(tally.required_unmet)}")
        return outcome_of(figure, Verdict.FAIL, cells, notes, complete=not tally.missing)
    if tally.required_errored:
        notes.append(f"required criteria errored, so the sample cannot pass: {', '.join(tally.required_errored)}")
        return outcome_of(figure, Verdict.ERROR, cells, notes)
    if tally.missing:
        verdict = Verdict.PENDING if Status.PENDING in tally.missing else Verdict.UNJUDGED
        return outcome_of(figure, verdict, cells, notes)
    if errored and tally.any_positive and tally.positive <= 0:
        notes.append("no positive-weight criterion has a result: every one errored, so there is no score")
        return outcome_of(None, Verdict.ERROR, cells, notes)
    if figure is None:
        return outcome_of(None, Verdict.ERROR if errored else Verdict.UNJUDGED, cells, notes)
    verdict = Verdict.PASS if at_least(figure, rubric.pass_threshold) else Verdict.FAIL
    return outcome_of(figure, verdict, cells, notes)
