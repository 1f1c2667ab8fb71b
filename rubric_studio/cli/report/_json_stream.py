"""``grade --format json`` and ``--format jsonl`` written as the samples are graded, in
constant memory.

The text is byte for byte what ``json.dumps(report.to_dict(), indent=2, ensure_ascii=False)``
would print for the whole run (docs/reference/reports.md#grade), but no part of it holds more than one
chunk of samples: the header goes out with the first chunk, each sample as it is graded,
and summary, usage and the run's notes once the last chunk is done.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from rubric_studio.cli.report._run import jsonl_tail
from rubric_studio.core.safe_text import json_safe
from rubric_studio.engine.report import Summary
from rubric_studio.engine.usage import Usage


def _dumped(value: Any) -> str:
    return json_safe(json.dumps(value, indent=2, ensure_ascii=False))


def indented_sample(data: dict[str, Any]) -> str:
    """One sample of the ``samples`` list, at its place in the report (four spaces in). A JSON
    string never holds a raw newline, so re-indenting the lines gives the whole report's bytes."""
    return json_safe("    " + json.dumps(data, indent=2, ensure_ascii=False).replace("\n", "\n    "))


class FlipTally:
    """Per-criterion flip counts of a repeated run, folded in chunk by chunk
    (``Report.flip_rates`` of the whole run, without keeping the run)."""

    def __init__(self) -> None:
        self.rates: dict[str, dict[str, Any]] = {}

    def add(self, chunk_rates: dict[str, dict[str, Any]]) -> None:
        for criterion_id, rate in chunk_rates.items():
            entry = self.rates.setdefault(criterion_id, {"cells": 0, "flipped": 0, "samples": []})
            entry["cells"] += rate["cells"]
            entry["flipped"] += rate["flipped"]
            entry["samples"].extend(rate["samples"])

    def to_dict(self) -> dict[str, Any]:
        """The ``flip_rates`` object of the JSON report."""
        return {
            key: {"flip_rate": round(entry["flipped"] / entry["cells"] if entry["cells"] else 0.0, 4),
                  "cells": entry["cells"], "flipped_samples": entry["samples"]}
            for key, entry in self.rates.items()
        }


class JsonReportWriter:
    """Writes one JSON report to ``out`` piece by piece: :meth:`samples` per graded chunk,
    then :meth:`finish` with the tail. Nothing is written until the first sample."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._started = False

    @property
    def started(self) -> bool:
        return self._started

    def samples(self, header: dict[str, Any], sample_dicts: list[dict[str, Any]]) -> None:
        """Write ``sample_dicts`` (each a ``SampleResult.to_dict()``), the header first time."""
        pieces = []
        for data in sample_dicts:
            if self._started:
                pieces.append(",\n")
            else:
                pieces.append(_dumped(header)[: -len("\n}")] + ',\n  "samples": [\n')
                self._started = True
            pieces.append(indented_sample(data))
        self._out.write("".join(pieces))

    def finish(self, tail: dict[str, Any]) -> None:
        """Close the samples list and write the keys after it (summary, usage, notes)."""
        text = _dumped(tail)
        self._out.write("\n  ],\n" + text[len("{\n"):] + "\n")


def report_tail(summary, usage, *, judge_note: str | None, judge_stopped: str | None, repeat: int,
                flips: FlipTally | None, batch_jobs: list[str] | None = None) -> dict[str, Any]:
    """The keys after ``samples`` in ``Report.to_dict`` order, plus the Batch API jobs."""
    tail: dict[str, Any] = {"summary": summary.to_dict(), "usage": usage.to_dict()}
    if judge_note:
        tail["judge_note"] = judge_note
    if judge_stopped:
        tail["judge_stopped"] = judge_stopped
    if repeat > 1:
        tail["repeat"] = repeat
        tail["flip_rates"] = flips.to_dict() if flips else {}
    if batch_jobs:
        tail["batch_jobs"] = batch_jobs
    return tail


class _Sink:
    """What both streamed formats keep across chunks: totals, usage, errored cells, and why
    judging stopped. ``add`` takes each chunk's report, ``finish`` closes the output."""

    def __init__(self, out, rubric, rates=None) -> None:
        self.out = out
        self.rubric = rubric
        #: A :class:`~rubric_studio.cli.report._pass_rate.StreamedRateLabels`, or None.
        self.rates = rates
        self.summary = Summary()
        self.usage = Usage()
        self.chunks = 0
        self.errored = 0
        self.stopped: str | None = None

    def add(self, report, stopped: str | None) -> None:
        assert report.summary is not None
        self.chunks += 1
        self.summary.add(report.summary)
        self.usage.merge(report.usage)
        self.errored += report.errored_cells
        self.stopped = self.stopped or stopped
        if self.rates is not None:
            self.rates.add(report.samples)
        self.write(report)

    def settle_pass_rate(self) -> None:
        """Before the summary is written: the raw and corrected pass rate, when labels are in play."""
        if self.rates is None or not self.chunks:
            return
        self.summary.pass_rate = self.rates.finish()

    def write(self, report) -> None:
        raise NotImplementedError

    def exit_code(self) -> int:
        """2 nothing graded, 3 some cells errored, 0 every sample passed, else 1."""
        if self.summary.samples == 0:
            return 2
        if self.errored or self.usage.failed_members():
            return 3
        return 0 if self.summary.passed == self.summary.samples else 1


class JsonlSink(_Sink):
    """One line per sample, then a closing line with summary and usage."""

    def write(self, report) -> None:
        self.out.write("".join(json_safe(json.dumps(s.to_dict(), ensure_ascii=False)) + "\n" for s in report.samples))

    def finish(self) -> None:
        self.settle_pass_rate()
        summary, usage = (self.summary, self.usage) if self.chunks else (None, None)
        self.out.write(jsonl_tail(self.rubric, summary, usage, self.stopped) + "\n")
        self.out.complete = True


class JsonSink(_Sink):
    """The object of docs/reference/reports.md#grade; nothing is written when no sample was graded."""

    def __init__(self, out, rubric, rates=None) -> None:
        super().__init__(out, rubric, rates)
        self.writer = JsonReportWriter(out)
        self.flips = FlipTally()
        self.judge_note: str | None = None
        self.repeat = 1

    def write(self, report) -> None:
        self.judge_note = self.judge_note or report.judge_note
        self.repeat = report.repeat
        if report.repeat > 1:
            self.flips.add(report.flip_rates())
        self.writer.samples(report.header(), [s.to_dict() for s in report.samples])

    def finish(self) -> None:
        if not self.writer.started:
            return
        self.settle_pass_rate()
        self.writer.finish(report_tail(self.summary, self.usage, judge_note=self.judge_note,
                                       judge_stopped=self.stopped, repeat=self.repeat, flips=self.flips))
        self.out.complete = True
