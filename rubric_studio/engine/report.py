"""A grading report: every sample's result, a summary and usage, in the JSON shape of
docs/reference/reports.md#grade."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rubric_studio.core.results import SampleResult, Status, Verdict
from rubric_studio.engine.usage import Usage

if TYPE_CHECKING:
    from rubric_studio.core.pass_rate import PassRateTally


@dataclass
class Summary:
    samples: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    unjudged: int = 0
    pending: int = 0
    score_sum: float = 0.0
    scored: int = 0
    cells: dict[str, int] = field(default_factory=dict)
    #: The counts behind the raw and corrected pass rate, when human labels are in play (else None).
    pass_rate: PassRateTally | None = None

    @property
    def mean_score(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None

    @classmethod
    def of(cls, results: list[SampleResult]) -> Summary:
        summary = cls(samples=len(results))
        for result in results:
            summary.count(result.verdict)
            # Only final verdicts: an errored or unjudged sample's score covers some criteria.
            if result.score is not None and result.verdict in (Verdict.PASS, Verdict.FAIL):
                summary.score_sum += result.score
                summary.scored += 1
            for cell in result.criteria:
                summary.cells[str(cell.status)] = summary.cells.get(str(cell.status), 0) + 1
        return summary

    def count(self, verdict: Verdict) -> None:
        """Tally one sample's verdict (``samples`` is set by the caller)."""
        if verdict is Verdict.PASS:
            self.passed += 1
        elif verdict is Verdict.FAIL:
            self.failed += 1
        elif verdict is Verdict.ERROR:
            self.errors += 1
        elif verdict is Verdict.UNJUDGED:
            self.unjudged += 1
        else:
            self.pending += 1

    def add(self, other: Summary) -> None:
        """Fold another chunk's summary in (streaming)."""
        self.samples += other.samples
        self.passed += other.passed
        self.failed += other.failed
        self.errors += other.errors
        self.unjudged += other.unjudged
        self.pending += other.pending
        self.score_sum += other.score_sum
        self.scored += other.scored
        for key, count in other.cells.items():
            self.cells[key] = self.cells.get(key, 0) + count
        if other.pass_rate is not None:
            if self.pass_rate is None:
                from rubric_studio.core.pass_rate import PassRateTally

                self.pass_rate = PassRateTally()
            self.pass_rate.add(other.pass_rate)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "samples": self.samples,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "mean_score": None if self.mean_score is None else round(self.mean_score, 6),
        }
        if self.unjudged:
            data["unjudged"] = self.unjudged
        if self.pending:
            data["pending"] = self.pending
        data["cells"] = dict(sorted(self.cells.items()))
        if self.pass_rate is not None:
            data["pass_rate"] = self.pass_rate.to_dict()
        return data


@dataclass(repr=False)
class Report:
    """What a grading run produced."""

    rubric_name: str
    rubric_path: str | None
    rubric_hash: str
    judge: dict[str, str] | None
    samples: list[SampleResult]
    usage: Usage = field(default_factory=Usage)
    summary: Summary | None = None
    judge_note: str | None = None  # e.g. why judge criteria are unjudged
    #: Why judging stopped before every call was sent (circuit breaker, deadline), said once.
    judge_stopped: str | None = None
    repeat: int = 1
    problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.summary is None:
            self.summary = Summary.of(self.samples)

    def __repr__(self) -> str:
        # Short on purpose: asyncio formats a finished task's result (this report) when
        # asyncio.run() restores its SIGINT handler; a full repr of 10,000 samples took 0.7 s.
        return f"<Report {self.rubric_name!r}: {len(self.samples)} samples, {self.summary}>"

    def by_id(self) -> dict[str, SampleResult]:
        return {s.id: s for s in self.samples}

    def flip_rates(self) -> dict[str, dict[str, Any]]:
        """Per criterion, with repeats: share of cells whose K verdicts were not unanimous."""
        rates: dict[str, dict[str, Any]] = {}
        for sample in self.samples:
            for cell in sample.criteria:
                if not cell.votes or len(cell.votes) < 2:
                    continue
                entry = rates.setdefault(cell.id, {"cells": 0, "flipped": 0, "samples": []})
                entry["cells"] += 1
                if cell.agreement is not None and cell.agreement < 1.0:
                    entry["flipped"] += 1
                    entry["samples"].append(sample.id)
        for entry in rates.values():
            entry["flip_rate"] = entry["flipped"] / entry["cells"] if entry["cells"] else 0.0
        return rates

    @property
    def passed(self) -> bool:
        """Every sample passes and no cell errored (what exit code 0 means): ``assert report.passed``."""
        return self.exit_code() == 0

    @property
    def failed(self) -> list[SampleResult]:
        """The samples that did not pass: failed, or without a final verdict (error, unjudged, pending)."""
        return [s for s in self.samples if s.verdict is not Verdict.PASS]

    def to_json(self, indent: int | None = 2) -> str:
        """The JSON text ``grade --format json`` writes for this report (without its final newline)."""
        import json

        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @property
    def errored_cells(self) -> int:
        return sum(1 for s in self.samples for c in s.criteria if c.status is Status.ERROR)

    def exit_code(self) -> int:
        """0 all pass, 1 some fail or not graded, 3 some cells errored or a panel member errored on
        some cell (the others' pooled verdicts do not hide a judge that did not answer)."""
        if self.errored_cells or self.usage.failed_members():
            return 3
        assert self.summary is not None
        return 0 if self.summary.passed == self.summary.samples else 1

    def header(self) -> dict[str, Any]:
        return {
            "rubric": {"name": self.rubric_name, "path": self.rubric_path, "hash": self.rubric_hash},
            "judge": self.judge,
        }

    def to_dict(self) -> dict[str, Any]:
        assert self.summary is not None
        data: dict[str, Any] = {
            **self.header(),
            "samples": [s.to_dict() for s in self.samples],
            "summary": self.summary.to_dict(),
            "usage": self.usage.to_dict(),
        }
        if self.judge_note:
            data["judge_note"] = self.judge_note
        if self.judge_stopped:
            data["judge_stopped"] = self.judge_stopped
        if self.repeat > 1:
            data["repeat"] = self.repeat
            data["flip_rates"] = {
                k: {"flip_rate": round(v["flip_rate"], 4), "cells": v["cells"], "flipped_samples": v["samples"]}
                for k, v in self.flip_rates().items()
            }
        return data
