"""Repeated judgements of one cell (``--repeat K``) folded into one: majority or median.

An even split of a checklist cell's repeats (1–1, 2–2) is a tie, counted by the same rule as a
judge panel's (``judge.ties``, :func:`rubric_studio.core.panel.tie_counts_met`): by default the
verdict that does not help the sample pass - unmet on an ordinary criterion, met on a penalty
(a negative weight, where met means the bad thing is there). The rationale says how it counted.
"""

from __future__ import annotations

import statistics

from rubric_studio.core.panel import tie_counts_met
from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.rubric import DEFAULT_TIE_RULE, Criterion, TieRule
from rubric_studio.core.scoring import cell_status


def aggregate_votes(criterion: Criterion, votes: list[CriterionResult],
                    ties: TieRule = DEFAULT_TIE_RULE) -> CriterionResult:
    """One cell from K repeated judgements: majority (checklist) or median (analytic); a checklist
    tie counts as ``ties`` (the rubric's ``judge.ties``) says."""
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
    is_met = tie_counts_met(criterion, ties) if tie else met > unmet
    status = Status.MET if is_met else Status.UNMET
    # the rationale kept is one that gave the verdict counted, the tie's included
    representative = next((v for v in votes if v.status is status), votes[0])
    rationale = representative.rationale
    if tie:
        rationale = f"[{_tie_words(criterion, ties, met)}] {rationale}"
    return CriterionResult(
        criterion.key, status, score=1.0 if status is Status.MET else 0.0, raw_score=None, rationale=rationale,
        evidence=representative.evidence, source=source, votes=[str(v.status) for v in votes],
        agreement=max(met, unmet) / len(votes), tie=tie, detail=representative.detail,
    )


def _tie_words(criterion: Criterion, ties: TieRule, half: int) -> str:
    """How a tie of the repeats was counted: "tie 1–1: counted as met (penalty)"; a rule other than
    the default is named ("tie 1–1: counted as unmet (judge.ties: unmet)")."""
    counted = "met" if tie_counts_met(criterion, ties) else "unmet"
    if ties != DEFAULT_TIE_RULE:
        why = f" (judge.ties: {ties})"
    else:
        why = " (penalty)" if criterion.is_penalty else ""
    return f"tie {half}–{half}: counted as {counted}{why}"
