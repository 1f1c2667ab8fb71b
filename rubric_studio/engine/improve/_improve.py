"""Suggested fixes for a criterion the judge and the human disagree on, each proven before it is shown.

``improve`` takes a rubric, its samples and the human labels, picks a judge criterion (the
one named, else the one with most disagreeing labelled cells) and makes candidates of four
kinds:

- ``reword``   — new outcome wordings, written by the assistant model from the disagreeing
  samples, the judge's rationales and the human's notes;
- ``examples`` — the disagreeing labelled cells as few-shot corrections (``examples:``);
- ``check``    — a deterministic rule that separates the labels, replacing the judge criterion;
- ``required`` — a criterion made (or no longer) required, where the person's sample verdicts
  point at it (:mod:`.improve_verdicts`);
- ``scoring``  — weights and threshold fitted to the sample verdicts (:mod:`.fit`).

Every candidate is evaluated before it is shown. The labelled cells are split (seeded,
stratified by the human's met/unmet) into a fitting part — the only one suggestions are
made from — and a holdout. The candidate rubric is re-graded through the normal grader, so
only the cells it changes are judged and everything else comes from the cache, and each
part reports ``fixed`` (disagreed before, agree after), ``broke`` (the reverse) and kappa
before → after. A candidate "improves holdout" only when the gain there is evidence — enough
held-out cells and an exact McNemar test on fixed vs broken cells (:mod:`.improve_evidence`)
— and the fitting part is not worse; a smaller gain is ``inconclusive``. Candidates are ranked
by that: one that worsens the fitting part never ranks above one that does not, then shown
gains, then what they do on the holdout; one that improves only the part it was made from is
labelled ``over-fits``. Nothing is hidden.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.agreement import Agreement, agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.results import SampleResult
from rubric_studio.core.rubric import Rubric
from rubric_studio.engine.improve._evidence import Evidence

HOLDOUT = 0.3
MIN_FOR_HOLDOUT = 6
MAX_EXAMPLES = 3


@dataclass
class Delta:
    """What a candidate does to one part of the labelled cells (or sample verdicts for ``scoring``)."""

    n: int
    fixed: int
    broke: int
    kappa_before: float | None
    kappa_after: float | None

    @property
    def net(self) -> int:
        return self.fixed - self.broke

    def gain(self) -> tuple[int, float]:
        before = -1.0 if self.kappa_before is None else self.kappa_before
        after = -1.0 if self.kappa_after is None else self.kappa_after
        return self.net, round(after - before, 6)

    def to_dict(self) -> dict[str, Any]:
        def r(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return {"n": self.n, "fixed": self.fixed, "broke": self.broke, "kappa_before": r(self.kappa_before),
                "kappa_after": r(self.kappa_after)}


@dataclass
class Candidate:
    """One suggested change: its kind, the change itself, a one-line description and its evaluation."""

    kind: str
    change: dict[str, Any]
    description: str
    rubric: Rubric
    fit: Delta | None = None
    holdout: Delta | None = None
    calls: int = 0
    error: str | None = None
    #: For ``scoring``: the :class:`~rubric_studio.engine.fit._fit.FitResult` that applying it writes.
    fit_result: Any = None

    @property
    def evidence(self) -> Evidence | None:
        """The paired test on the holdout (None without one)."""
        if self.holdout is None or self.holdout.n == 0:
            return None
        return Evidence.of(self.holdout.n, self.holdout.fixed, self.holdout.broke)

    @property
    def worsens_fit(self) -> bool:
        """More verdicts broken than fixed on the part it was made from (or, as many, a lower kappa)."""
        return self.fit is not None and self.fit.gain() < (0, 0.0)

    @property
    def confirmed(self) -> bool:
        """Shown better on the holdout (:mod:`.improve_evidence`) without losing on the fitting part."""
        return self.status == "improves holdout"

    @property
    def status(self) -> str:
        """``improves holdout`` (a gain the paired test shows, the fitting part not worse);
        ``worse on fitting labels``; ``over-fits`` (better on the fitting part, worse on the holdout);
        ``worse on holdout``; ``inconclusive`` (better on the holdout, but too few cells or p ≥ 0.05);
        ``unconfirmed on holdout`` (better on the fitting part, the holdout unchanged); ``no gain``;
        ``unconfirmed (no holdout)``; ``not evaluated``."""
        if self.error or self.fit is None:
            return "not evaluated"
        if self.worsens_fit:
            return "worse on fitting labels"
        evidence = self.evidence
        if self.holdout is None or evidence is None:
            return "unconfirmed (no holdout)"
        if evidence.shows_gain:
            return "improves holdout"
        gain, fit_gain = self.holdout.gain(), self.fit.gain()
        if gain > (0, 0.0):
            return "inconclusive"
        if gain < (0, 0.0):
            return "over-fits" if fit_gain > (0, 0.0) else "worse on holdout"
        return "unconfirmed on holdout" if fit_gain > (0, 0.0) else "no gain"

    def rank_key(self) -> tuple:
        """Evaluated first, then never one that worsens the fitting part above one that does not,
        then shown gains, then the holdout's and the fitting part's gains, then the cheaper."""
        holdout = self.holdout.gain() if self.holdout and self.holdout.n else (0, 0.0)
        fit = self.fit.gain() if self.fit else (-10**9, -1.0)
        return (self.error is None, not self.worsens_fit, self.confirmed, holdout, fit, -self.calls)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "change": self.change, "description": self.description, "status": self.status,
                "fit": self.fit.to_dict() if self.fit else None,
                "holdout": self.holdout.to_dict() if self.holdout else None,
                "evidence": self.evidence.to_dict() if self.evidence else None, "confirmed": self.confirmed,
                "calls": self.calls,
                **({"error": self.error} if self.error else {})}


@dataclass
class ImproveReport:
    """The candidates for one criterion, best first, and how the labels were split."""

    criterion: str | None
    rubric_hash: str
    candidates: list[Candidate] = field(default_factory=list)
    fit_ids: list[str] = field(default_factory=list)
    holdout_ids: list[str] = field(default_factory=list)
    seed: int = 0
    warnings: list[str] = field(default_factory=list)
    calls: int = 0
    #: Proposals not offered, each ``{"kind", "outcome", "reason"}`` (e.g. a rewording that is not a sentence).
    dropped: list[dict[str, str]] = field(default_factory=list)
    #: Criteria that side with the person's sample verdicts where the rubric disagrees (:mod:`.improve_verdicts`).
    blame: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "candidates": [c.to_dict() for c in self.candidates],
                "split": {"seed": self.seed, "fit": len(self.fit_ids), "holdout": len(self.holdout_ids),
                          "holdout_ids": list(self.holdout_ids)},
                "calls": self.calls, "dropped": list(self.dropped), "blame": list(self.blame), "warnings": list(self.warnings)}


# -- choosing and splitting -----------------------------------------------------------
def cell_labels(labels: Mapping[str, Label], criterion_id: str) -> dict[str, bool]:
    """sample id → the human's met (True) / unmet (False) for one criterion."""
    return {sid: label.criteria[criterion_id] == "met" for sid, label in labels.items()
            if criterion_id in label.criteria}


def verdict_labels(labels: Mapping[str, Label]) -> dict[str, bool]:
    """sample id → the person's pass (True) / fail (False)."""
    return {sid: label.verdict == "pass" for sid, label in labels.items() if label.verdict in ("pass", "fail")}


def worst_criterion(rubric: Rubric, results: Sequence[SampleResult], labels: Mapping[str, Label]) -> str | None:
    """The judge criterion with most disagreeing labelled cells (ties: lowest kappa), or None."""
    report = agreement(results, labels, rubric)
    scored = []
    for criterion in rubric.judge_criteria:
        if criterion.key not in report.criteria:
            continue
        wrong = len(report.cell_disagreements(criterion.key))
        kappa = report.criteria[criterion.key].kappa
        scored.append((wrong, -(kappa if kappa is not None else -1.0), criterion.key))
    scored = [s for s in scored if s[0] > 0]
    return max(scored)[2] if scored else None


def stratified_split(human: Mapping[str, bool], seed: int, fraction: float = HOLDOUT) -> tuple[list[str], list[str]]:
    """(fitting ids, holdout ids): each class shuffled with ``seed`` and ``fraction`` of it held out."""
    if len(human) < MIN_FOR_HOLDOUT:
        return sorted(human), []
    rng = random.Random(seed)
    held: list[str] = []
    for value in (True, False):
        ids = sorted(sid for sid, met in human.items() if met is value)
        rng.shuffle(ids)
        take = round(len(ids) * fraction)
        held += ids[: max(take, 1) if len(ids) >= 2 else take]
    return sorted(set(human) - set(held)), sorted(held)


def cell_delta(before: Mapping[str, bool], after: Mapping[str, bool], human: Mapping[str, bool],
               ids: Sequence[str]) -> Delta:
    """fixed / broke / kappa over ``ids`` (cells without a met/unmet verdict on either side are left out)."""
    shared = [sid for sid in ids if sid in before and sid in after and sid in human]
    fixed = sum(before[s] != human[s] and after[s] == human[s] for s in shared)
    broke = sum(before[s] == human[s] and after[s] != human[s] for s in shared)
    kappa_before = Agreement.of((human[s], before[s]) for s in shared).kappa
    kappa_after = Agreement.of((human[s], after[s]) for s in shared).kappa
    return Delta(len(shared), fixed, broke, kappa_before, kappa_after)


def cell_verdicts(results: Sequence[SampleResult], criterion_id: str) -> dict[str, bool]:
    """sample id → met (True) / unmet (False) for the cells that reached a verdict."""
    out = {}
    for sample in results:
        cell = sample.cell(criterion_id)
        if cell is not None and str(cell.status) in ("met", "unmet"):
            out[sample.id] = str(cell.status) == "met"
    return out


def rubric_verdicts(results: Sequence[SampleResult]) -> dict[str, bool]:
    """sample id → the rubric's pass (True) / fail (False), for samples with a final verdict."""
    return {s.id: str(s.verdict) == "pass" for s in results if str(s.verdict) in ("pass", "fail")}
