"""Scoring: from cells to a sample score and verdict (BRIEF §3, exactly).

score = clip(Σ wᵢ·sᵢ / Σ_{wᵢ>0} wᵢ, 0, 1) over criteria that have a result (met/unmet).
Verdict: ``error`` if a cell errored (unless ``on_error: ignore``); ``fail`` as soon
as a required criterion is unmet (certain whatever the missing cells say);
``pending`` / ``unjudged`` while judge cells are missing; otherwise ``pass`` iff
score ≥ pass_threshold and every required criterion is met.
Threshold comparisons allow float noise (6/7.5 passes 0.8).
"""

from __future__ import annotations

from collections.abc import Mapping

from rubric_studio.core.results import CriterionResult, SampleOutcome, Status, Verdict
from rubric_studio.core.rubric import Criterion, Rubric

EPSILON = 1e-9


def at_least(value: float, threshold: float) -> bool:
    """``value >= threshold``, tolerant of float noise."""
    return value >= threshold - EPSILON


def cell_status(criterion: Criterion, score: float) -> Status:
    """met/unmet for a cell with a score in [0, 1]."""
    if criterion.kind == "checklist":
        return Status.MET if score >= 0.5 else Status.UNMET
    return Status.MET if at_least(score, criterion.effective_min_score) else Status.UNMET


def score_sample(rubric: Rubric, results: Mapping[str, CriterionResult]) -> SampleOutcome:
    """Aggregate one sample's cells into its score and verdict."""
    cells: list[CriterionResult] = []
    positive = 0.0
    total = 0.0
    scored = 0
    errored: list[str] = []
    missing: list[Status] = []
    required_unmet: list[str] = []
    notes: list[str] = []
    met, unmet, error = Status.MET, Status.UNMET, Status.ERROR
    for key, weight, required in rubric.scoring_plan():
        result = results.get(key)
        if result is None:
            result = CriterionResult(id=key, status=Status.PENDING, source="none")
        cells.append(result)
        status = result.status
        if status is met or status is unmet:
            scored += 1
            if weight > 0:
                positive += weight
            total += weight * (result.score or 0.0)
            if required and status is unmet:
                required_unmet.append(key)
        elif status is error:
            errored.append(key)
        else:
            missing.append(status)

    score: float | None
    if not scored:
        score = None
    elif positive <= 0:
        # Only penalties have results: nothing earned, so any met penalty drives it to 0.
        score = 0.0 if total < 0 else 1.0
    else:
        score = min(1.0, max(0.0, total / positive))
    if errored:
        if rubric.on_error == "ignore":
            notes.append(f"ignored {len(errored)} errored criteria: {', '.join(errored)}")
        else:
            return SampleOutcome(score, Verdict.ERROR, cells, [f"errored: {', '.join(errored)}"])
    if required_unmet:
        notes.append(f"required criteria unmet: {', '.join(required_unmet)}")
        return SampleOutcome(score, Verdict.FAIL, cells, notes)
    if missing:
        verdict = Verdict.PENDING if Status.PENDING in missing else Verdict.UNJUDGED
        return SampleOutcome(score, verdict, cells, notes)
    if score is None:
        return SampleOutcome(None, Verdict.ERROR if errored else Verdict.UNJUDGED, cells, notes)
    verdict = Verdict.PASS if at_least(score, rubric.pass_threshold) else Verdict.FAIL
    return SampleOutcome(score, verdict, cells, notes)
