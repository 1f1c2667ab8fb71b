"""Textual messages of the studio that no widget posts: engine events and file changes, posted by workers.

Workers stay thin (docs/development.md#the-studios-code): the grading worker turns each
:mod:`rubric_studio.engine.events` event into one of these and posts it to the app;
the watch worker posts :class:`FilesChanged`. Every grading message carries the
``run`` number it belongs to, so the app can drop messages of a superseded run.
A message a widget posts is declared in that widget (``ResultsMatrix.Highlighted``).
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass
class GradeMessage(Message):
    """Base of the messages of one grading run."""

    run: int


@dataclass
class GradeStarted(GradeMessage):
    """A run planned its work: ``to_send`` judge requests go out, ``stale_cells`` changed."""

    total_requests: int
    to_send: int
    stale_cells: int
    plan: Plan


@dataclass
class SamplesGraded(GradeMessage):
    """New results for some samples; ``final`` when nothing of the run is pending."""

    samples: list[SampleResult]
    final: bool


@dataclass
class GradeProgress(GradeMessage):
    """Judge requests done out of total, and how many are in flight."""

    done: int
    total: int
    in_flight: int


@dataclass
class GradeFinished(GradeMessage):
    """Every cell of the run is final; ``report`` is the run's report."""

    report: Report


@dataclass
class GradeFailed(GradeMessage):
    """The run itself broke (a bug, not a judge error): shown, never a traceback."""

    error: str


@dataclass
class FilesChanged(Message):
    """Files in use changed on disk: ``kinds`` ⊆ {"rubric", "samples", "labels"}."""

    kinds: set[str]

    def __post_init__(self) -> None:
        super().__post_init__()
        self.kinds = set(self.kinds)  # the watcher's own set is never shared


@dataclass
class GraderReady(Message):
    """The session's grader was built (judge resolved) off the UI thread."""

    grader: object
    judge_label: str
    judge_note: str | None


@dataclass
class SamplesLoaded(Message):
    """The samples file was read off the UI thread (``read.failed``: it could not be used)."""

    read: SamplesRead
    initial: bool


@dataclass
class LabelsLoaded(Message):
    """The labels sidecar was read off the UI thread (``read.failed``: it could not be used)."""

    read: LabelsRead


# -- calibration and interop (posted by the workers of labeling / calibration_flow / interop_actions) --
@dataclass
class LabelWritten(Message):
    """The labels sidecar now holds ``label`` for ``sample_id`` (None: the entry is gone)."""

    sample_id: str
    label: Label | None
    annotator: str | None = None  # whose label it is (None: the current annotator's)


@dataclass
class LabelWriteFailed(Message):
    """A label could not be written (bad YAML in the sidecar, permissions ...): shown, not raised."""

    sample_id: str
    error: str


@dataclass
class FitReady(Message):
    """``fit(...)`` finished for the rubric whose content hash is ``fit.rubric_hash``."""

    fit: FitResult


@dataclass
class ImportDone(Message):
    """A foreign rubric file was read (``result`` is an :class:`~rubric_studio.interop.ImportResult`)."""

    source: Path
    result: ImportResult


@dataclass
class ActionFailed(Message):
    """A calibration or interop worker failed: ``what`` it was doing and why (a notification)."""

    what: str
    error: str
