"""StudioSession: what one studio window works on, and the commands that change it.

The session owns the rubric document and its parsed rubric, the samples, the human labels
(sidecar merged over labels carried by the samples), the judge (a
:class:`~rubric_studio.engine.grader.Grader`), the grading runs and the live results
(:class:`~rubric_studio.session.results_model.ResultsModel`), the versions
(:class:`~rubric_studio.session.versions.SessionVersions`) and the problems of each file.

It never imports Textual and never waits on a screen. The app calls a command (``take_samples``,
``apply_rubric_text``, ``start_run``, ``rows_graded`` …) from a message handler or a worker and
renders what it returns; a test drives the same commands directly, and
:meth:`StudioSession.grade_to_end` runs a whole grading run without any UI.

Grading runs are numbered: every run-scoped command takes the run number and ignores a
superseded run, so results of an older rubric never land on the table of a newer one.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubric_studio.core.labels import (
    UNNAMED,
    Label,
    LabelStore,
    annotator_is_named,
    annotator_names,
    consensus,
    current_annotator,
    labels_from_samples,
    labels_path_for,
)
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.samples import Sample, load_samples
from rubric_studio.session.labels import LabelWriter, open_store
from rubric_studio.session.results_model import ResultsModel
from rubric_studio.session.trust import SessionTrust
from rubric_studio.session.versions import RunOutcome, SessionVersions

if TYPE_CHECKING:
    from rubric_studio.core.document import RubricDocument
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.grader import Grader
    from rubric_studio.engine.report import Report
    from rubric_studio.session.calibration import Calibration

REPORT_HISTORY = 20
JUDGE_HELP = (
    "Configure a judge: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or start with "
    "--judge ollama:llama3.1, or --base-url http://host:port/v1 (any OpenAI-compatible server)."
)


@dataclass(frozen=True)
class GradingTicket:
    """One grading run as started: what it grades, with which grader."""

    run: int
    grader: Grader
    rubric: Rubric
    samples: list[Sample]
    consistency: int | None


@dataclass(frozen=True)
class SamplesRead:
    """The outcome of reading the samples (in a worker thread): samples, or why not."""

    path: Path | None
    samples: list[Sample]
    problems: list[Problem]
    failed: bool = False
    fingerprint: str = ""  # of every sample, for versions: hashed here, off the event loop


@dataclass(frozen=True)
class LabelsRead:
    """The outcome of reading the labels sidecar: labels, or why not."""

    labels: dict[str, Label]
    problems: list[Problem]
    failed: bool = False
    #: sample id -> annotator -> label (the labels above are their consensus).
    by_annotator: dict[str, dict[str, Label]] = field(default_factory=dict)
    #: Whose labels changed since the last read (empty: the first read, or nobody's).
    changed_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class RubricApplied:
    """What parsing the saved rubric led to."""

    valid: bool
    columns_changed: bool = False
    needs_grader: bool = False


class StudioSession:
    """The rubric, samples, labels, judge, runs and versions of one studio window."""

    def __init__(self, rubric_path: str | Path, samples_path: str | Path | None = None,
                 labels_path: str | Path | None = None, *, grader_options: Mapping[str, Any] | None = None,
                 env: Mapping[str, str] | None = None, persist_history: bool = True,
                 annotator: str | None = None) -> None:
        from rubric_studio.core.document import RubricDocument
        from rubric_studio.engine.starter import create_starter_rubric

        self.rubric_path = Path(rubric_path)
        self.created_rubric = not self.rubric_path.exists()
        if self.created_rubric:
            create_starter_rubric(self.rubric_path)
        self.samples_given = samples_path is not None
        self.samples_path: Path | None = Path(samples_path) if samples_path is not None else self._discover_samples()
        self.labels_path = Path(labels_path) if labels_path is not None else labels_path_for(self.rubric_path)
        self.grader_options: dict[str, Any] = dict(grader_options or {})
        self.env = env
        self.document: RubricDocument = RubricDocument.load(self.rubric_path, allow_syntax_errors=True)
        self.rubric: Rubric | None = None
        self.samples: list[Sample] = []
        self.samples_by_id: dict[str, Sample] = {}
        self.samples_loaded = False
        self.samples_error = False
        self.samples_fingerprint = ""
        self.sidecar_labels: dict[str, Label] = {}
        self.labels: dict[str, Label] = {}
        self.grader: Grader | None = None
        self.judge_label = "resolving judge…"
        self.judge_note: str | None = None
        self.model = ResultsModel()
        self.run_number = 0
        self.running = False
        self.progress = (0, 0, 0)
        self.report: Report | None = None
        self.report_history: deque[Report] = deque(maxlen=REPORT_HISTORY)
        self.file_problems: dict[str, list[Problem]] = {}
        #: K while the current run / results shown are a consistency run (every judged cell judged K times).
        self.consistency_k: int | None = None
        self.grader_key: object = None
        self.by_annotator: dict[str, dict[str, Label]] = {}
        self._label_store: LabelStore | None = None
        self._label_store_guard = threading.Lock()
        self.label_writer = LabelWriter(self.labels_path, current_annotator(annotator, env), store=self.label_store)
        #: The annotator was named (``--annotator`` or the environment), not taken from the OS user.
        self.annotator_chosen = annotator_is_named(annotator, env)
        self.trust = SessionTrust(self)
        self.versions = SessionVersions(self, persist=persist_history)

    @cached_property
    def calibration(self) -> Calibration:
        """Fitting and consistency runs (made when first used: opening a rubric needs neither)."""
        from rubric_studio.session.calibration import Calibration

        return Calibration(self)

    # -- files -------------------------------------------------------------------------
    def _discover_samples(self) -> Path | None:
        from rubric_studio.core.discovery import find_samples_for

        return find_samples_for(self.rubric_path)

    def resolve_samples_path(self) -> Path | None:
        """The samples in use: as given, or (re)discovered beside the rubric."""
        return self.samples_path if self.samples_given else self._discover_samples()

    def read_samples(self) -> SamplesRead:
        """Read the samples file (blocking: call it in a thread)."""
        path = self.resolve_samples_path()
        if path is None:
            return SamplesRead(None, [], [])
        try:
            if not self.samples_given:
                from rubric_studio.core.discovery import refuse_found_elsewhere

                refuse_found_elsewhere(self.rubric_path, path)
            sample_set = load_samples(path)
        except RubricError as exc:
            return SamplesRead(path, [], exc.problems, failed=True)
        from rubric_studio.engine.versions import samples_fingerprint_of

        return SamplesRead(path, sample_set.samples, sample_set.problems,
                           fingerprint=samples_fingerprint_of(sample_set.samples))

    def label_store(self) -> LabelStore:
        """The labels sidecar and its journal, read once (blocking: call it in a thread).

        ValueError when the sidecar does not read (the message says how to fix it).
        """
        with self._label_store_guard:
            if self._label_store is None:
                self._label_store = open_store(self.labels_path)
            return self._label_store

    def read_labels(self) -> LabelsRead:
        """Read the labels (blocking: call it in a thread): all of them the first time, then only what
        changed (another studio's or the web labeller's labels, an edit of the sidecar)."""
        changed: set[tuple[str, str]] = set()
        try:
            with self._label_store_guard:
                store = self._label_store
                if store is None:
                    store = self._label_store = LabelStore(self.labels_path)
                else:
                    changed = store.refresh()
            label_set = store.label_set()
        except RubricError as exc:
            return LabelsRead({}, exc.problems, failed=True)
        except (OSError, UnicodeDecodeError) as exc:  # unreadable: permissions, encoding
            return LabelsRead({}, [Problem(str(self.labels_path), None, None, str(exc))], failed=True)
        return LabelsRead(label_set.labels, label_set.problems, by_annotator=label_set.by_annotator,
                          changed_by=tuple(sorted({name for _, name in changed})))

    def fold_labels(self, idle_seconds: float = 0.0) -> int:
        """Fold the labels journal into the sidecar when nobody labelled here for ``idle_seconds``
        (blocking: call it in a thread); lines folded. Errors are for the caller to show."""
        store = self._label_store
        if store is None:
            return 0
        return store.fold_if_idle(idle_seconds) if idle_seconds else store.fold()

    def take_samples(self, read: SamplesRead, *, initial: bool) -> bool:
        """Use freshly read samples; False when they were refused (the last good ones stay)."""
        if read.failed:
            self.set_problems("samples", read.problems)
            if not self.samples_loaded:
                self.samples_error = True
            return False
        if read.problems and not initial:
            self.set_problems("samples", read.problems)  # a half-written file: keep the last good samples
            return False
        self.samples_path = read.path
        self.samples = read.samples
        self.samples_by_id = {s.id: s for s in read.samples}
        self.samples_fingerprint = read.fingerprint
        self.samples_loaded = True
        self.samples_error = False
        self.set_problems("samples", read.problems)
        self.model.set_samples(self.samples)
        self._merge_labels()
        return True

    def take_labels(self, read: LabelsRead) -> bool:
        """Use freshly read labels; False when the file was refused (the labels in memory stay)."""
        if read.failed:
            self.set_problems("labels", read.problems)
            return False
        self.sidecar_labels = dict(read.labels)
        self.by_annotator = {sid: dict(labels) for sid, labels in read.by_annotator.items()}
        self.set_problems("labels", [p for p in read.problems if p.severity == "error"])
        self._merge_labels()
        self.versions.labels_changed(by=read.changed_by[0] if len(read.changed_by) == 1 else None)
        writer = self.label_writer
        writer.claim_pending = not writer.claim_offered and self._unnamed_are_mine()
        return True

    def _unnamed_are_mine(self) -> bool:
        """The sidecar holds only unnamed labels (a file from before annotators) and the annotator was
        not named explicitly: the first label change claims them as the current annotator's."""
        return not self.annotator_chosen and annotator_names(self.by_annotator) == [UNNAMED]

    def claim_changed(self, step: Any, *, undo: bool = False) -> None:
        """The sidecar's unnamed labels were claimed as ``step.annotator``'s (or, undone, unnamed again):
        the labels in memory follow (the consensus does not change: one person's labels either way)."""
        old, new = (step.annotator, UNNAMED) if undo else (UNNAMED, step.annotator)
        for sample_id in step.sample_ids:
            labels = self.by_annotator.get(sample_id, {})
            if old in labels and new not in labels:
                labels[new] = labels.pop(old)
        self._merge_labels()
        self.versions.labels_changed(by=step.annotator)

    def label_written(self, sample_id: str, label: Label | None, annotator: str | None = None) -> None:
        """Our own label write (``annotator``'s label, by default the current one) landed: the labels
        in memory, and their consensus, follow at once."""
        mine = self.by_annotator.setdefault(sample_id, {})
        annotator = self.label_writer.annotator if annotator is None else annotator
        if label is None:
            mine.pop(annotator or UNNAMED, None)
        else:
            mine[annotator or UNNAMED] = label
        agreed = consensus(mine) if mine else None
        if agreed is None or agreed.is_empty:
            self.sidecar_labels.pop(sample_id, None)
        else:
            self.sidecar_labels[sample_id] = agreed
        self._merge_labels()
        self.versions.labels_changed(by=annotator or UNNAMED)

    def _merge_labels(self) -> None:
        from rubric_studio.core.human_agreement import human_disagreements

        self.labels = {**labels_from_samples(self.samples), **self.sidecar_labels}
        criteria = sorted({c for labels in self.by_annotator.values() for label in labels.values() for c in label.criteria})
        queue = human_disagreements(self.by_annotator, criteria)
        self.model.set_labels(self.labels, {item["id"] for item in queue if item["adjudicated"] is None})
        self.model.set_own_labels(self.own_labels())

    def own_labels(self) -> dict[str, Label]:
        """The current annotator's own labels by sample id (what the table shows with "my labels")."""
        who = self.label_writer.annotator or UNNAMED
        return {sid: labels[who] for sid, labels in self.by_annotator.items() if who in labels}

    def set_problems(self, kind: str, problems: list[Problem]) -> bool:
        """Record (or clear) the problems of ``kind``; True when the results' staleness changed."""
        if problems:
            self.file_problems[kind] = list(problems)
        else:
            self.file_problems.pop(kind, None)
        invalid = any(p.severity == "error" for k, ps in self.file_problems.items() if k != "grading" for p in ps)
        if self.model.stale == invalid:
            return False
        self.model.stale = invalid
        return True

    @property
    def problems(self) -> list[Problem]:
        return [p for ps in self.file_problems.values() for p in ps]

    # -- the rubric ----------------------------------------------------------------------
    def apply_rubric_text(self, text: str | None = None) -> RubricApplied:
        """Parse the rubric as saved (or ``text``) and make it the one graded."""
        from rubric_studio.core.loading import parse_rubric

        source = self.document.disk_text if text is None else text
        try:
            rubric = parse_rubric(source, self.document.file, base_dir=self.rubric_path.resolve().parent)
        except RubricError as exc:
            self.set_problems("rubric", exc.problems)
            return RubricApplied(valid=False)
        self.set_problems("rubric", [])
        previous, self.rubric = self.rubric, rubric
        columns = previous is None or column_signature(previous) != column_signature(rubric)
        if columns:
            self.model.set_criteria(rubric.criteria)
        key = grader_key(rubric)
        if self.grader is None or key != self.grader_key:
            self.grader_key = key
            return RubricApplied(valid=True, columns_changed=columns, needs_grader=True)
        self.grader.trust(self.trust.code_trusted(rubric))  # a new code check runs only once trusted
        return RubricApplied(valid=True, columns_changed=columns)

    def build_grader(self, rubric: Rubric) -> tuple[Grader, str, str | None]:
        """A grader for ``rubric`` with its label and why it has no judge (blocking: imports the SDK)."""
        grader = make_studio_grader(rubric, self.grader_options, self.env)
        config = getattr(grader, "config", None)
        if getattr(grader, "members", None):  # a judge panel
            label = f"panel {grader.label}"
        elif config is not None:
            label = f"{config.alias or config.provider}:{config.model}"
        else:  # the judge asked for (flag, then rubric) that could not be set up; the note says why
            named = self.grader_options.get("judge") or (rubric.judge.model if rubric.judge else None)
            label = f"{named} (not set up)" if named else "none"
        return grader, label, None if grader.judge is not None else grader.no_judge_reason

    def grader_ready(self, grader: Grader, label: str, note: str | None) -> Grader | None:
        """Use ``grader``; returns the previous one (to close) after handing over its calls in flight."""
        old, self.grader = self.grader, grader
        self.judge_label, self.judge_note = label, note
        if old is not None and old is not grader:
            old.hand_over(grader)  # calls in flight for unchanged requests are adopted, not re-sent
            return old
        return None

    # -- grading runs -----------------------------------------------------------------------
    def start_run(self, repeat: int | None = None) -> GradingTicket | None:
        """Begin a run of the current rubric over the current samples (None: not ready).

        ``repeat`` K makes it a consistency run (every judged cell judged K times).
        """
        if self.grader is None or self.rubric is None or not self.samples_loaded or self.file_problems.get("rubric"):
            return None
        self.run_number += 1
        self.running = True
        # Read by grader.run before its first await, so it holds for this run only.
        self.grader.repeat = repeat or int(self.grader_options.get("repeat") or 1)
        self.consistency_k = repeat
        self.model.stale = bool(self.file_problems.get("samples"))
        return GradingTicket(self.run_number, self.grader, self.rubric, list(self.samples), repeat)

    def is_current(self, run: int) -> bool:
        return run == self.run_number

    def run_started(self, run: int) -> bool:
        if not self.is_current(run):
            return False
        self.file_problems.pop("grading", None)
        self.model.start_run(self.versions.baseline(consistency=self.consistency_k is not None))
        self.progress = (0, 0, 0)
        return True

    def rows_graded(self, run: int, samples: list[Any]) -> list[str] | None:
        """New results of run ``run``: the sample ids whose row changed (None: superseded run)."""
        return self.model.update(samples) if self.is_current(run) else None

    def run_progress(self, run: int, done: int, total: int, in_flight: int) -> bool:
        if not self.is_current(run):
            return False
        self.progress = (done, total, in_flight)
        return True

    def run_finished(self, run: int, report: Report) -> RunOutcome | None:
        """Run ``run`` completed: keep its report, record the version, say what changed."""
        if not self.is_current(run):
            return None
        self.running = False
        self.report = report
        self.report_history.append(report)
        self.progress = (0, 0, 0)
        outcome = self.versions.graded(report, consistency=self.consistency_k)
        if self.grader is not None:
            outcome = dataclasses.replace(outcome, warnings=self.grader.take_warnings())
        return dataclasses.replace(outcome, member_failures=report.usage.member_failures())

    def run_failed(self, run: int, error: str) -> bool:
        if not self.is_current(run):
            return False
        self.running = False
        self.set_problems("grading", [Problem("grading", None, None, f"grading failed: {error}")])
        return True

    async def grade(self, ticket: GradingTicket, on_event: Callable[[object], None]) -> None:
        """Run ``ticket`` through the engine, reporting each engine event to ``on_event``."""
        await ticket.grader.run(ticket.rubric, ticket.samples, on_event)

    async def grade_to_end(self, repeat: int | None = None) -> RunOutcome | None:
        """Start a run and apply its events to this session as they come (no UI needed)."""
        from rubric_studio.engine.events import Progress, RunFinished, RunStarted, SamplesUpdated

        ticket = self.start_run(repeat)
        if ticket is None:
            return None
        outcome: list[RunOutcome | None] = [None]

        def on_event(event: object) -> None:
            if isinstance(event, RunStarted):
                self.run_started(ticket.run)
            elif isinstance(event, SamplesUpdated):
                self.rows_graded(ticket.run, event.samples)
            elif isinstance(event, Progress):
                self.run_progress(ticket.run, event.done, event.total, event.in_flight)
            elif isinstance(event, RunFinished):
                outcome[0] = self.run_finished(ticket.run, event.report)

        await self.grade(ticket, on_event)
        return outcome[0]

    async def open(self) -> RunOutcome | None:
        """Load everything and grade once, as the studio does when it starts (no UI needed)."""
        await asyncio.to_thread(self.versions.load_past)
        self.take_samples(await asyncio.to_thread(self.read_samples), initial=True)
        self.take_labels(await asyncio.to_thread(self.read_labels))
        applied = self.apply_rubric_text()
        if applied.valid and self.rubric is not None and (applied.needs_grader or self.grader is None):
            self.grader_ready(*await asyncio.to_thread(self.build_grader, self.rubric))
        return await self.grade_to_end()

    async def aclose(self) -> None:
        """Close the judge's connections, finish writing the run history and fold the labels written
        in this session into the sidecar (what a commit then holds)."""
        await asyncio.to_thread(self.versions.close)
        with contextlib.suppress(ValueError, OSError, RubricError):  # a sidecar being fixed: folded next time
            await asyncio.to_thread(self.fold_labels)
        if self.grader is not None:
            await self.grader.aclose()


def column_signature(rubric: Rubric) -> tuple[tuple[str, bool, float, str], ...]:
    return tuple((c.key, c.required, c.weight, c.kind) for c in rubric.criteria)


def grader_key(rubric: Rubric) -> object:
    """What decides the judge: the rubric's judge block (command-line flags are fixed for a session)."""
    return rubric.judge.model_dump_json() if rubric.judge is not None else None


def make_studio_grader(rubric: Rubric, options: Mapping[str, Any], env: Mapping[str, str] | None) -> Grader:
    """The session's grader: the judge from the rubric, flags and environment.

    Falls back to a judge-less grader (checks only, judge cells ``unjudged``) when the
    judges package cannot be imported or the judge cannot be built.
    """
    import os

    from rubric_studio.engine.grader import Grader

    try:
        from rubric_studio.engine.api import make_grader

        return make_grader(rubric, env=os.environ if env is None else env, **options)
    except ImportError as exc:
        reason = f"judges unavailable ({exc}); {JUDGE_HELP}"
    except Exception as exc:  # e.g. the SDK rejects the configuration
        reason = f"judge not usable: {exc}"
    return Grader(judge=None, no_judge_reason=reason, allow_code=bool(options.get("allow_code")),
                  repeat=int(options.get("repeat") or 1))
