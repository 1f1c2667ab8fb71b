"""Results of grading: one :class:`CriterionResult` per (sample, criterion) cell.

A cell's ``status`` is met | unmet | error | pending | unjudged; ``score`` is in
[0, 1] only for met/unmet. A judge error is an ``error`` status with a reason,
never a score of 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    MET = "met"
    UNMET = "unmet"
    ERROR = "error"
    PENDING = "pending"
    UNJUDGED = "unjudged"


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    PENDING = "pending"
    UNJUDGED = "unjudged"


#: One-character marks for cell statuses, shared by the studio and the ``grade`` table.
STATUS_MARKS = {
    Status.MET: "✓",
    Status.UNMET: "✗",
    Status.ERROR: "⚠",
    Status.PENDING: "⋯",
    Status.UNJUDGED: "·",
}


def cell_mark(kind: str, cell: CriterionResult | None) -> str:
    """A cell in a few characters: ``✓``, ``✗``, ``✓ 8`` (analytic 0–10), ``✗.29`` (a check's partial score), ``⚠``, ``⋯``, ``·``;
    a judge panel's cell adds its split (``✓ 2–1``), ``tie`` when the split was even (``✗ 1–1 tie``), and
    ``⚠1`` when members errored and the cell was pooled without them (``✓ 2–0 ⚠1``)."""
    if cell is None:
        return STATUS_MARKS[Status.PENDING]
    mark = STATUS_MARKS[cell.status]
    if cell.status in (Status.MET, Status.UNMET):
        if kind == "analytic" and cell.raw_score is not None:
            mark += f" {raw_text(cell.raw_score)}"
        elif kind == "check" and cell.score is not None and 0 < cell.score < 1:
            mark += f"{cell.score:.2f}".lstrip("0")
        if cell.panel and "agree" in cell.panel:  # a judge panel's split: agreeing–disagreeing members
            mark += f" {cell.panel['agree']}–{cell.panel['disagree']}"
            if cell.tie:  # an even split, counted as judge.ties says (✗ unmet, or ✓ met on a penalty)
                mark += " tie"
            if cell.panel.get("errors"):  # members that errored, left out of the pool: ``✓ 2–0 ⚠1``
                mark += f" {pooled_mark(cell)}"
    return mark


def pooled_without(cell: CriterionResult | None) -> int:
    """How many judge panel members that errored a cell's verdict was pooled without (0: none, or the
    cell has no verdict - one where every member errored is an error cell of its own)."""
    if cell is None or not cell.panel or cell.status not in (Status.MET, Status.UNMET):
        return 0
    return int(cell.panel.get("errors") or 0)


def pooled_mark(cell: CriterionResult | None) -> str:
    """The mark of a cell pooled without members that errored, ``⚠1`` (``""`` for any other cell):
    :func:`cell_mark` ends with it; the studio's matrix keeps it whole when it squeezes the rest."""
    errors = pooled_without(cell)
    return f"{STATUS_MARKS[Status.ERROR]}{errors}" if errors else ""


def raw_text(raw: float) -> str:
    """A 0–10 score for people: ``8``, ``7.5``, ``6.333`` (a pooled mean, at most three decimals)."""
    return f"{raw:.3f}".rstrip("0").rstrip(".")


def score_label(score: float | None, partial: float | None = None, *, digits: int = 3,
                compact: bool = False, none: str = "—") -> str:
    """A sample's score for people: ``0.750``; ``[0.750]`` when only a partial figure exists
    (the verdict is not final, so it is not the sample's score); ``none`` when neither.

    ``compact`` drops the leading digit of a bracketed figure (``[.75]``, ``[1.0]``) so it
    is as narrow as a final one plus the brackets' one extra cell.
    """
    if score is not None:
        return f"{score:.{digits}f}"
    if partial is None:
        return none
    text = f"{partial:.{digits}f}"
    if compact and digits > 0:
        text = text[1:] if text.startswith("0.") else text[:-1]
    return f"[{text}]"


@dataclass(slots=True)
class Evidence:
    """A quote the judge relied on, and whether it occurs in the sample.

    ``found`` is about the graded text (the output). A quote not found there but found in
    what the judge was also shown (the sample's input or its reference answer) names that
    text in ``quoted_from``: the judge quoted the wrong text, it did not make the quote up.
    """

    quote: str
    found: bool
    start: int | None = None
    end: int | None = None
    #: Why a quote was not found (e.g. too short to be evidence); None when found.
    reason: str | None = None
    #: "input" or "reference" when the quote is not in the output but is in that text.
    quoted_from: str | None = None

    @property
    def made_up(self) -> bool:
        """Not in the output, nor in the input or reference: nothing the judge saw says it."""
        return not self.found and self.quoted_from is None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"quote": self.quote, "found": self.found}
        if self.reason is not None:
            data["reason"] = self.reason
        if self.quoted_from is not None:
            data["quoted_from"] = self.quoted_from
        return data


@dataclass(slots=True)
class CriterionResult:
    """The outcome of one cell."""

    id: str
    status: Status
    score: float | None = None
    raw_score: float | None = None
    rationale: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    source: str = "check"  # "judge" | "check" | "cache" | "none"
    error: str | None = None
    #: With repeats: one entry per run ("met"/"unmet" or a raw score), and how many agree.
    votes: list[Any] | None = None
    agreement: float | None = None
    tie: bool = False
    #: Request/reply, tokens, latency: what the inspector shows. Not part of the JSON report.
    detail: dict[str, Any] = field(default_factory=dict)
    #: Which judge call gave the verdict: {"mode": "single"} (a call for this criterion) or
    #: {"mode": "batch", "criteria": N, "ids": [...]} (one call judging N criteria); None for checks
    #: and verdicts whose origin was not recorded.
    provenance: dict[str, Any] | None = None
    #: With a judge panel: each member's cell (``{judge, status, score, raw_score, rationale, evidence,
    #: source, error}``) and the tally (``{rule, agree, disagree, errors, split}``); see core.panel.
    members: list[dict[str, Any]] | None = None
    panel: dict[str, Any] | None = None

    @property
    def has_score(self) -> bool:
        return self.status in (Status.MET, Status.UNMET) and self.score is not None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "status": str(self.status),
            "score": self.score,
            "raw_score": self.raw_score,
            "rationale": self.rationale,
            "evidence": [e.to_dict() for e in self.evidence],
            "source": self.source,
            "error": self.error,
        }
        if self.provenance is not None:
            data["provenance"] = dict(self.provenance)
        if self.votes is not None:
            data["votes"] = list(self.votes)
            data["agreement"] = self.agreement
            data["tie"] = self.tie
        if self.members is not None:
            data["members"] = [dict(member) for member in self.members]
            data["panel"] = dict(self.panel or {})
            data["tie"] = self.tie
        return data


@dataclass(slots=True)
class SampleOutcome:
    """Aggregate of one sample's cells (see :func:`rubric_studio.core.scoring.score_sample`).

    ``score`` is set only for a final verdict (pass/fail over every criterion it counts);
    otherwise it is None and ``partial_score`` holds the figure over the criteria that
    have a result, so nothing can show it as if it were the sample's score.
    """

    score: float | None
    verdict: Verdict
    criteria: list[CriterionResult]
    notes: list[str] = field(default_factory=list)
    partial_score: float | None = None


@dataclass(slots=True)
class SampleResult:
    """One graded sample: its id, score, verdict and cells (``score`` / ``partial_score`` as in
    :class:`SampleOutcome`)."""

    id: str
    score: float | None
    verdict: Verdict
    criteria: list[CriterionResult]
    notes: list[str] = field(default_factory=list)
    partial_score: float | None = None

    @classmethod
    def from_outcome(cls, sample_id: str, outcome: SampleOutcome) -> SampleResult:
        return cls(sample_id, outcome.score, outcome.verdict, outcome.criteria, outcome.notes, outcome.partial_score)

    def cell(self, criterion_id: str) -> CriterionResult | None:
        for result in self.criteria:
            if result.id == criterion_id:
                return result
        return None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "score": None if self.score is None else round(self.score, 6),
            "verdict": str(self.verdict),
            "criteria": [c.to_dict() for c in self.criteria],
        }
        if self.score is None:
            partial = self.partial_score
            data["partial_score"] = None if partial is None else round(partial, 6)
        if self.notes:
            data["notes"] = list(self.notes)
        return data


@dataclass(slots=True)
class ScoreResult:
    """What :func:`~rubric_studio.core.grading.score_text` returns for one text."""

    total: float | None
    passed: bool
    verdict: Verdict
    details: dict[str, CriterionResult]
    notes: list[str] = field(default_factory=list)
    #: The figure over the criteria that have a result, when ``total`` is None (e.g. judge criteria unjudged).
    partial_total: float | None = None

    @classmethod
    def from_outcome(cls, outcome: SampleOutcome) -> ScoreResult:
        return cls(
            total=outcome.score,
            passed=outcome.verdict is Verdict.PASS,
            verdict=outcome.verdict,
            details={c.id: c for c in outcome.criteria},
            notes=list(outcome.notes),
            partial_total=outcome.partial_score,
        )
