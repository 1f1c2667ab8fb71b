"""Versions of a studio session: what each graded state was, what changed it, what it changed.

Every completed ordinary run is a version of the session (:mod:`rubric_studio.engine.versions._versions`),
fingerprinted by what it was graded against — the rubric text, the samples, the judge — and a
change of the labels is a version of its own. So "fixed N / broke M" is credited to the right
cause: an outside edit of the samples file after a saved rubric edit is a *samples change*,
never "that rubric edit broke …".

The flips the table marks, the run header counts and the new-version notification describes
are one tally (:class:`FlipTally`), taken from the results model against one baseline: the
results of the version this run is compared with (the latest version, or the one before it
when the run only re-grades the latest). A threshold change that flips verdicts without
flipping any cell is counted the same way everywhere.

Versions are also written to the run history beside the cache
(:mod:`rubric_studio.engine.versions._history`), so a reopened rubric compares with yesterday's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rubric_studio.core.agreement import AgreementReport, agreement
from rubric_studio.engine.versions import (
    Version,
    VersionDiff,
    VersionHistory,
    annotators_key_of,
    grader_key_of,
    text_hash,
)
from rubric_studio.session.results_model import UP

if TYPE_CHECKING:
    from pathlib import Path

    from rubric_studio.core.labels import Label
    from rubric_studio.core.results import SampleResult
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.grader import Grader
    from rubric_studio.engine.report import Report
    from rubric_studio.engine.versions import RunHistory
    from rubric_studio.session.calibration import Calibration
    from rubric_studio.session.results_model import ResultsModel

KEPT_REPORTS = 4  # results of the latest versions kept as flip baselines


@dataclass(frozen=True)
class FlipTally:
    """Flips of the results shown against their baseline: cells met↔unmet, verdicts pass↔fail."""

    cells_up: int = 0
    cells_down: int = 0
    to_pass: int = 0
    to_fail: int = 0

    @property
    def any(self) -> bool:
        return bool(self.cells_up or self.cells_down or self.to_pass or self.to_fail)

    def describe(self) -> str:
        """"2 fail→pass, 1 pass→fail · cells 3↑ 1↓" (or "no flips")."""
        parts = []
        verdicts = [f"{n} {what}" for n, what in ((self.to_pass, "fail→pass"), (self.to_fail, "pass→fail")) if n]
        if verdicts:
            parts.append(", ".join(verdicts))
        if self.cells_up or self.cells_down:
            parts.append(f"cells {self.cells_up}↑ {self.cells_down}↓")
        return " · ".join(parts) or "no flips"


@dataclass(frozen=True)
class RunOutcome:
    """What a finished run means for the user: at most one line each, or None."""

    version_line: str | None = None  # a new version: "v3 → v4 (samples change): fixed 0, broke 1 · 1 pass→fail"
    consistency_line: str | None = None
    consistency_flipped: bool = False
    judge_stopped: str | None = None
    fit_now: bool = False  # a fit was asked for this rubric text: open it now
    #: What the grader found worth saying once (a setting its provider is not sent, a cache
    #: that cannot be written): each is handed out by the first run that meets it.
    warnings: list[str] = field(default_factory=list)
    #: Judge panel members that failed on some cells: (what to say, True when on every cell it judged).
    member_failures: list[tuple[str, bool]] = field(default_factory=list)


class BackgroundStore:
    """A run-history store whose appends happen in one background thread, in order.

    Writing a version of 10,000 samples takes about 0.1 s (JSON and a file append): the studio
    hands it over rather than stalling the screen after every run. A version updated in place
    meanwhile is written as it is when its turn comes (the last line of a number wins).
    """

    def __init__(self, store: RunHistory) -> None:
        import threading
        from concurrent.futures import ThreadPoolExecutor

        self.store = store
        self.warnings = store.warnings  # the same list: the history takes them as they come
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="run-history")
        self._closed = False
        self._lock = threading.Lock()

    def load(self) -> list[Version]:
        return self.store.load()

    def append(self, version: Version) -> bool:
        with self._lock:
            if not self._closed:
                self._writer.submit(self.store.append, version)
                return True
        self._writer.shutdown(wait=True)  # closed: after what was queued, written here
        return bool(self.store.append(version))

    def flush(self) -> None:
        """Wait until every append so far is written."""
        if not self._closed:
            self._writer.submit(lambda: None).result()

    def close(self) -> None:
        """Write what is queued and end the writing thread.

        A thread left running keeps everything it refers to alive (the ``sys.stderr`` of its
        start, in the studio the app and its whole screen), session after session.
        """
        with self._lock:
            self._closed = True
        self._writer.shutdown(wait=True)


class VersionsContext(Protocol):
    """What recording versions reads of a session: the rubric and its file, the samples' fingerprint,
    the labels, the judge and the options it was built with, the results shown, the calibration."""

    @property
    def rubric(self) -> Rubric | None: ...

    @property
    def rubric_path(self) -> Path: ...

    @property
    def samples_fingerprint(self) -> str: ...

    @property
    def labels(self) -> dict[str, Label]: ...

    @property
    def by_annotator(self) -> dict[str, dict[str, Label]]: ...

    @property
    def grader(self) -> Grader | None: ...

    @property
    def grader_options(self) -> dict[str, Any]: ...

    @property
    def report(self) -> Report | None: ...

    @property
    def running(self) -> bool: ...

    @property
    def model(self) -> ResultsModel: ...

    @property
    def calibration(self) -> Calibration: ...


class SessionVersions:
    """The versions of one session, their baselines and their history file."""

    def __init__(self, session: VersionsContext, *, persist: bool = True) -> None:
        self.session = session
        store = None
        if persist:
            from rubric_studio.engine.versions import RunHistory

            store = BackgroundStore(RunHistory.for_rubric(session.rubric_path,
                                                          cache_path=session.grader_options.get("cache_path")))
        self.history = VersionHistory(store=store)
        self.latest_diff: VersionDiff | None = None
        self._reports: dict[int, dict[str, SampleResult]] = {}
        #: The version whose results the shown flips are counted against (None: no flips to count).
        self.compared_with: int | None = None
        self._unwritten: Version | None = None  # a labels version updated in memory only

    def flush(self) -> None:
        """Wait until every version recorded so far is in the history file (blocking)."""
        self._write_unwritten()
        flush = getattr(self.history.store, "flush", None)
        if flush is not None:
            flush()

    def close(self) -> None:
        """Flush, then end the history's writing thread (later versions are written directly)."""
        self.flush()
        close = getattr(self.history.store, "close", None)
        if close is not None:
            close()

    def load_past(self) -> int:
        """Read the versions of earlier sessions (blocking: a file read; call it in a thread
        before the first run finishes). How many were read."""
        return self.history.load_past()

    # -- fingerprints of what a run grades against ------------------------------------------
    def _basis(self) -> dict[str, str | None]:
        """The samples, the judge (or panel) and the annotators a run now grades against."""
        session = self.session
        return {
            "samples_fingerprint": session.samples_fingerprint,
            "judge_key": grader_key_of(session.grader),
            "annotators_key": annotators_key_of(getattr(session, "by_annotator", None) or {}),
        }

    # -- what the session tells us -----------------------------------------------------------
    def labels_changed(self, by: str | None = None) -> None:
        """The labels changed (``by`` that annotator's edit; None: the file changed on disk): a version
        of kind "labels change", or "annotator change" when someone's labels joined or left (same
        results, new labels).

        Consecutive label edits by one person (a labelling run) update that one version rather than
        adding one per key.
        """
        session = self.session
        latest = self.history.latest
        results = self._reports.get(latest.number) if latest is not None else None
        if latest is None or results is None or session.rubric is None or session.running:
            return  # nothing graded in this session yet, or a run will record the new labels
        # No agreement report: a version with a labels snapshot derives its figures from it when asked.
        # A key pressed in a labelling run updates the version in memory; it is written once, when the
        # next version is recorded or the session closes (not a full line of every cell per key).
        coalesce = self.history.coalesces_with(by)
        version = self.history.record_labels(session.labels, coalesce=coalesce, persist=not coalesce, by=by,
                                             annotators_key=self._basis()["annotators_key"])
        if version is not None:
            self._keep(version.number, results)
            self._unwritten = version if coalesce else None
        self.latest_diff = self.history.diff_latest()

    def _write_unwritten(self) -> None:
        if self._unwritten is not None:
            self.history.persist(self._unwritten)
            self._unwritten = None

    # -- runs ---------------------------------------------------------------------------------
    def baseline(self, *, consistency: bool) -> dict[str, SampleResult]:
        """The results a run starting now is compared with (flip marks, counts, notification)."""
        latest = self.history.latest
        if latest is None:
            return {}
        if not consistency and self._same_inputs(latest) and len(self.history.versions) > 1:
            latest = self.history.versions[-2]
        self.compared_with = latest.number if latest.number in self._reports else None
        return self._reports.get(latest.number, {})

    def _same_inputs(self, version: Version) -> bool:
        rubric = self.session.rubric
        basis = self._basis()
        return (rubric is not None and version.text_hash == text_hash(rubric)
                and version.samples_fingerprint == basis["samples_fingerprint"]
                and version.judge_key == basis["judge_key"])

    def tally(self) -> FlipTally:
        """The flips of the results shown, as the table marks them."""
        model = self.session.model
        up = sum(1 for cells in model.flips.values() for d in cells.values() if d == UP)
        down = sum(len(cells) for cells in model.flips.values()) - up
        to_pass = sum(1 for d in model.verdict_flips.values() if d == UP)
        return FlipTally(up, down, to_pass, len(model.verdict_flips) - to_pass)

    def graded(self, report: Report, *, consistency: int | None) -> RunOutcome:
        """A run finished: record its version (not for a consistency run) and say what changed."""
        from rubric_studio.session.calibration import flip_summary

        session = self.session
        rubric = session.rubric
        if rubric is None:
            return RunOutcome()
        report_now = agreement(report.samples, session.labels, rubric)
        line = None
        if consistency is None:
            self._write_unwritten()
            before = self.history.latest
            version = self.history.record(rubric, report.samples, report_now, labels=session.labels, **self._basis())
            self._keep(version.number, report.by_id())
            self.latest_diff = self.history.diff_latest()
            if before is not None and version is not before and self.latest_diff is not None:
                line = self.blame_line(self.latest_diff)
        flips = flip_summary(report) if consistency is not None else (None, False)
        return RunOutcome(version_line=line, consistency_line=flips[0], consistency_flipped=flips[1],
                          judge_stopped=report.judge_stopped, fit_now=session.calibration.take_pending_fit())

    def blame_line(self, diff: VersionDiff) -> str:
        """The notification of a new version: its cause, fixes and breaks, and the flips shown."""
        return f"{diff.title}: {diff.fixes_text()} · {self.tally().describe()}"

    @property
    def version_line(self) -> str | None:
        """The latest version diff in short (for the run header): "v3 → v4 (rubric edit): fixed 3, broke 1"."""
        diff = self.latest_diff
        if diff is None:
            return None
        return f"{diff.title}: fixed {len(diff.overall.fixed)}, broke {len(diff.overall.broken)}"

    def agreement_now(self) -> AgreementReport | None:
        session = self.session
        if session.report is None or session.rubric is None:
            return None
        return agreement(session.report.samples, session.labels, session.rubric)

    # -- keeping ------------------------------------------------------------------------------
    def _keep(self, number: int, results: dict[str, SampleResult]) -> None:
        self._reports[number] = results
        for old in sorted(self._reports)[:-KEPT_REPORTS]:
            del self._reports[old]
