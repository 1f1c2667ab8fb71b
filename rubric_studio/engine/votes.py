"""Repeated judgements of one cell (``--repeat K``) folded into one: majority or median."""

from __future__ import annotations

import statistics

from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.rubric import Criterion
from rubric_studio.core.scoring import cell_status


def aggregate_votes(criterion: Criterion, votes: list[CriterionResult]) -> CriterionResult:
    """One cell from K repeated judgements: majority (checklist) or median (analytic)."""
    errors = [v for v in votes if v.status is Status.ERROR]
    if errors:
        return CriterionResult(
            criterion.key,
            Status.ERROR,
            source=errors[0].source,
            error=f"{len(errors)} of {len(votes)} repeats failed: {errors[0].error}",
            votes=[str(v.status) for v in votes],
        )
    source = "cache" if all(v.source == "cache" for v in votes) else "judge"
    if criterion.kind == "analytic":
        raws = [v.raw_score if v.raw_score is not None else (v.score or 0.0) * 10 for v in votes]
        median = float(statistics.median(raws))
        score = median / 10
        status = cell_status(criterion, score)
        statuses = [cell_status(criterion, r / 10) for r in raws]
        agreement = statuses.count(status) / len(statuses)
        representative = min(votes, key=lambda v: abs((v.raw_score or 0) - median))
        return CriterionResult(
            criterion.key, status, score=score, raw_score=median, rationale=representative.rationale,
            evidence=representative.evidence, source=source, votes=raws, agreement=agreement,
            tie=False, detail=representative.detail,
        )
    met = sum(1 for v in votes if v.status is Status.MET)
    unmet = len(votes) - met
    tie = met == unmet
    status = Status.MET if met > unmet else Status.UNMET
    representative = next(v for v in votes if v.status is status) if not tie else votes[0]
    rationale = representative.rationale
    if tie:
        rationale = f"[tie {met}–{unmet}: counted as unmet] {rationale}"
    return CriterionResult(
        criterion.key, status, score=1.0 if status is Status.MET else 0.0, raw_score=None, rationale=rationale,
        evidence=representative.evidence, source=source, votes=[str(v.status) for v in votes],
        agreement=max(met, unmet) / len(votes), tie=tie, detail=representative.detail,
    )
