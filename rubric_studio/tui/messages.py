"""Textual messages of the studio: engine events and file changes, posted by workers.

Workers stay thin (BRIEF §7): the grading worker turns each
:mod:`rubric_studio.engine.events` event into one of these and posts it to the app;
the watch worker posts :class:`FilesChanged`. Every grading message carries the
``run`` number it belongs to, so the app can drop messages of a superseded run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from pathlib import Path

    from rubric_studio.core.labels import Label
    from rubric_studio.core.results import SampleResult
    from rubric_studio.engine.fit import FitResult
    from rubric_studio.engine.plan import Plan
    from rubric_studio.engine.report import Report
    from rubric_studio.interop import ImportResult
    from rubric_studio.session.studio import LabelsRead, SamplesRead


class GradeMessage(Message):
    """Base of the messages of one grading run."""

    def __init__(self, run: int) -> None:
        super().__init__()
        self.run = run


class GradeStarted(GradeMessage):
    """A run planned its work: ``to_send`` judge requests go out, ``stale_cells`` changed."""

    def __init__(self, run: int, total_requests: int, to_send: int, stale_cells: int, plan: Plan) -> None:
        super().__init__(run)
        self.total_requests = total_requests
        self.to_send = to_send
        self.stale_cells = stale_cells
        self.plan = plan


class SamplesGraded(GradeMessage):
    """New results for some samples; ``final`` when nothing of the run is pending."""

    def __init__(self, run: int, samples: list[SampleResult], final: bool) -> None:
        super().__init__(run)
        self.samples = samples
        self.final = final


class GradeProgress(GradeMessage):
    """Judge requests done out of total, and how many are in flight."""

    def __init__(self, run: int, done: int, total: int, in_flight: int) -> None:
        super().__init__(run)
        self.done = done
        self.total = total
        self.in_flight = in_flight


class GradeFinished(GradeMessage):
    """Every cell of the run is final; ``report`` is the run's report."""

    def __init__(self, run: int, report: Report) -> None:
        super().__init__(run)
        self.report = report


class GradeFailed(GradeMessage):
    """The run itself broke (a bug, not a judge error): shown, never a traceback."""

    def __init__(self, run: int, error: str) -> None:
        super().__init__(run)
        self.error = error


class FilesChanged(Message):
    """Files in use changed on disk: ``kinds`` ⊆ {"rubric", "samples", "labels"}."""

    def __init__(self, kinds: set[str]) -> None:
        super().__init__()
        self.kinds = set(kinds)


class GraderReady(Message):
    """The session's grader was built (judge resolved) off the UI thread."""

    def __init__(self, grader: object, judge_label: str, judge_note: str | None) -> None:
        super().__init__()
        self.grader = grader
        self.judge_label = judge_label
        self.judge_note = judge_note


class SamplesLoaded(Message):
    """The samples file was read off the UI thread (``read.failed``: it could not be used)."""

    def __init__(self, read: SamplesRead, initial: bool) -> None:
        super().__init__()
        self.read = read
        self.initial = initial


class LabelsLoaded(Message):
    """The labels sidecar was read off the UI thread (``read.failed``: it could not be used)."""

    def __init__(self, read: LabelsRead) -> None:
        super().__init__()
        self.read = read


# -- calibration and interop (posted by the workers of labeling / calibration_flow / interop_actions) --
class LabelWritten(Message):
    """The labels sidecar now holds ``label`` for ``sample_id`` (None: the entry is gone)."""

    def __init__(self, sample_id: str, label: Label | None, annotator: str | None = None) -> None:
        super().__init__()
        self.sample_id = sample_id
        self.label = label
        self.annotator = annotator  # whose label it is (None: the current annotator's)


class LabelWriteFailed(Message):
    """A label could not be written (bad YAML in the sidecar, permissions ...): shown, not raised."""

    def __init__(self, sample_id: str, error: str) -> None:
        super().__init__()
        self.sample_id = sample_id
        self.error = error


class FitReady(Message):
    """``fit(...)`` finished for the rubric whose content hash is ``fit.rubric_hash``."""

    def __init__(self, fit: FitResult) -> None:
        super().__init__()
        self.fit = fit


class ImportDone(Message):
    """A foreign rubric file was read (``result`` is an :class:`~rubric_studio.interop.ImportResult`)."""

    def __init__(self, source: Path, result: ImportResult) -> None:
        super().__init__()
        self.source = source
        self.result = result


class ActionFailed(Message):
    """A calibration or interop worker failed: ``what`` it was doing and why (a notification)."""

    def __init__(self, what: str, error: str) -> None:
        super().__init__()
        self.what = what
        self.error = error
