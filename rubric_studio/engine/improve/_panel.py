"""``improve`` candidates for a judge panel: drop the member that disagrees with the labels.

A panel pools its members' verdicts, so one member that disagrees with the people far more than
the others pulls the pooled verdict away from them on every split cell. When the rubric's panel
has three or more members and, on the fitting labels of the criterion, one member's kappa is
clearly below the others' mean (by :data:`MARGIN`), the panel without that member is a candidate.
Checklist and analytic criteria alike: an analytic member's verdict is its own score against the
criterion's min_score (what the people label met / unmet), and the panel without it is pooled
again by the panel's analytic rule from the members' raw scores.

Dropping a member costs no judge call: its verdicts are pooled again from the other members'
cells the baseline already holds (the same pooling rule, :func:`rubric_studio.core.panel.pool_cell`),
and the candidate is evaluated like any other on the fitting part and the holdout. A single judge
gets no such candidate: there is nothing to compare it with on the same cells.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from rubric_studio.core.agreement import Agreement
from rubric_studio.core.panel import pool_cell
from rubric_studio.core.results import CriterionResult, SampleResult, Status
from rubric_studio.core.rubric import DEFAULT_TIE_RULE, Criterion, Rubric
from rubric_studio.engine.improve._improve import Candidate

#: How far below the other members' mean kappa a member must be to be offered for dropping.
MARGIN = 0.2
_JUDGED = ("met", "unmet")


def member_verdicts(results: Sequence[SampleResult], criterion_id: str) -> dict[str, dict[str, bool]]:
    """member label → sample id → met (True) / unmet (False), from the panel cells' members (in the
    panel's order, a member that never answered included)."""
    out: dict[str, dict[str, bool]] = {}
    for sample in results:
        cell = sample.cell(criterion_id)
        for entry in (cell.members or []) if cell is not None else []:
            verdicts = out.setdefault(entry["judge"], {})
            if entry.get("status") in _JUDGED:
                verdicts[sample.id] = entry["status"] == "met"
    return out


def member_kappas(results: Sequence[SampleResult], criterion_id: str, human: Mapping[str, bool],
                  ids: Sequence[str]) -> dict[str, float | None]:
    """Each member's kappa against the labels over ``ids`` (None when it cannot be computed)."""
    kappas = {}
    for label, verdicts in member_verdicts(results, criterion_id).items():
        pairs = [(human[sid], verdicts[sid]) for sid in ids if sid in verdicts and sid in human]
        kappas[label] = Agreement.of(pairs).kappa if pairs else None
    return kappas


def outliers(kappas: Mapping[str, float | None]) -> list[str]:
    """The members whose kappa is at least :data:`MARGIN` below the mean of the others' (worst first)."""
    known = {label: k for label, k in kappas.items() if k is not None}
    if len(known) < 3:
        return []
    out = []
    for label, kappa in known.items():
        others = [k for other, k in known.items() if other != label]
        if kappa <= statistics.fmean(others) - MARGIN:
            out.append(label)
    return sorted(out, key=lambda label: known[label])


def repooled(rubric: Rubric, criterion: Criterion, results: Sequence[SampleResult], drop: str) -> dict[str, bool]:
    """sample id → the panel's met/unmet on ``criterion`` without member ``drop`` (no judge call)."""
    rules = rubric.judge.aggregate if rubric.judge is not None else None
    ties = rubric.judge.ties if rubric.judge is not None else DEFAULT_TIE_RULE
    out = {}
    for sample in results:
        cell = sample.cell(criterion.key)
        if cell is None or not cell.members:
            continue
        kept = [(entry["judge"], _cell(criterion, entry)) for entry in cell.members if entry["judge"] != drop]
        pooled = pool_cell(criterion, kept, rules, ties)
        if pooled.status in (Status.MET, Status.UNMET):
            out[sample.id] = pooled.status is Status.MET
    return out


def _cell(criterion: Criterion, entry: Mapping[str, Any]) -> CriterionResult:
    return CriterionResult(criterion.key, Status(entry["status"]), score=entry.get("score"),
                           raw_score=entry.get("raw_score"), source=entry.get("source") or "judge",
                           error=entry.get("error"))


def drop_member_candidates(rubric: Rubric, criterion: Criterion, results: Sequence[SampleResult],
                           human: Mapping[str, bool], fit_ids: Sequence[str]) -> list[tuple[Candidate, dict[str, bool]]]:
    """(candidate, its verdicts on ``criterion``) for each member clearly worse than the others on the
    fitting labels; none unless the rubric itself has a panel of three or more."""
    panel = rubric.judge.panel if rubric.judge is not None else None
    if not panel or len(panel) < 3:
        return []
    kappas = member_kappas(results, criterion.key, human, fit_ids)
    labels = list(kappas)
    if len(labels) != len(panel):
        return []  # the run's panel is not the rubric's (e.g. --judge A,B,C): nothing to write
    made = []
    for label in outliers(kappas):
        index = labels.index(label)
        data = rubric.model_dump(mode="json", exclude_unset=True, by_alias=True)
        data["judge"]["panel"] = [m for n, m in enumerate(data["judge"]["panel"]) if n != index]
        changed = Rubric.model_validate(data)
        changed._path = rubric.path
        others = statistics.fmean(k for other, k in kappas.items() if other != label and k is not None)
        description = (f"drop panel member {label} (kappa {kappas[label]:.2f} on {criterion.key}'s fitting labels, "
                       f"the others {others:.2f}); pooled again from the other members, no judge call")
        change = {"drop_member": label, "index": index, "panel": data["judge"]["panel"]}
        made.append((Candidate("panel", change, description, changed), repooled(rubric, criterion, results, label)))
    return made
