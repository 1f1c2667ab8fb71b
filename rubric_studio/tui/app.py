"""StudioApp: the rubric on the left, the live results on the right (BRIEF §1, §7).

A thin layer over the core and the engine:

* one :class:`~rubric_studio.engine.grader.Grader` lives for the session; it memoises
  cells, so a re-grade after a save recomputes only stale cells and cancels judge calls
  made stale by a newer edit;
* the grading worker (``group="grade"``, exclusive) calls ``grader.run`` and turns each
  engine event into a message (:mod:`rubric_studio.tui.messages`), tagged with a run
  number; handlers drop messages of superseded runs;
* the watch worker (``group="watch"``) watches the folders of the rubric, samples and
  labels and posts :class:`FilesChanged`; the handler reloads, re-grades, shows an
  invalid file's problems inline while the last good results stay (marked stale), and
  asks before replacing unsaved edits; saving never writes over a change made on disk
  since the file was read (:mod:`~rubric_studio.tui.save_flow` asks: merge, overwrite,
  load, cancel);
* widgets get data through attributes and methods (``matrix.model``,
  ``inspector.show(...)``) and report through messages.

Calibration plugs in through :meth:`StudioApp.reports` / :meth:`StudioApp.publish_report`
(see the Agreement tab in :meth:`compose`). The calibration keys and the export/import
commands live in their own modules, which the app's thin action methods call:
:mod:`~rubric_studio.tui.labeling` (label keys, disagreement jumps),
:mod:`~rubric_studio.tui.calibration_flow` (versions, fit, consistency runs),
:mod:`~rubric_studio.tui.improve_screen` / :mod:`~rubric_studio.tui.improve_edits` (improve a
criterion, few-shot examples), :mod:`~rubric_studio.tui.judges_screen` (compare judges) and
:mod:`~rubric_studio.tui.interop_actions` (export / import).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from rubric_studio.core.labels import Label, labels_from_samples, labels_path_for, load_labels
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.core.samples import Sample, load_samples
from rubric_studio.tui import (
    calibration_flow,
    draft_screen,
    improve_edits,
    improve_screen,
    interop_actions,
    judges_screen,
    labeling,
)
from rubric_studio.tui.calibration_flow import CalibrationFlow
from rubric_studio.tui.calibration_view import CALIBRATION_KEYS
from rubric_studio.tui.conflict import DISCARD, SAVE, UnsavedScreen
from rubric_studio.tui.help import JUDGE_HELP, HelpScreen
from rubric_studio.tui.inspector import Inspector
from rubric_studio.tui.labeling import Labeler
from rubric_studio.tui.matrix import ResultsMatrix, cell_text
from rubric_studio.tui.messages import (
    ActionFailed,
    FileInvalid,
    FilesChanged,
    FitReady,
    GradeFailed,
    GradeFinished,
    GradeProgress,
    GraderReady,
    GradeStarted,
    ImportDone,
    LabelsLoaded,
    LabelWriteFailed,
    LabelWritten,
    SamplesGraded,
    SamplesLoaded,
)
from rubric_studio.session.results_model import FILTERS, SORTS, ResultsModel
from rubric_studio.tui.save_flow import SaveFlow
from rubric_studio.tui.statusbar import RunHeader, RunState, StatusBar, StatusState
from rubric_studio.tui.trust_prompt import TrustFlow

if TYPE_CHECKING:
    from rubric_studio.core.document import RubricDocument
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.grader import Grader
    from rubric_studio.engine.report import Report

REPORT_HISTORY = 20
EDITOR_DELAY = 0.3  # seconds after mount at the latest
STARTER_RUBRIC = """\
# {name}: a rubric drafted in rubric-studio.
# Each criterion is judged (outcome: what a good answer does) or a deterministic
# check (check: {{type: length, max_words: 150}}). Save (ctrl+s) to re-grade.
name: {name}
description: ""
pass_threshold: 0.8
criteria:
  - id: answers-the-question
    outcome: Directly answers the user's question with a correct, concrete answer
    weight: 1
"""
NO_SAMPLES_HELP = (
    "No samples yet. Put the outputs to grade beside the rubric as {stem}.samples.jsonl "
    '(one {{"id": ..., "output": ...}} per line), {stem}.samples.yaml / .csv, or a samples/ folder '
    "of .txt/.md files — the studio picks them up when they appear — or pass them: "
    "rubric-studio {name} SAMPLES"
)


def create_starter_rubric(path: Path) -> None:
    """Write a small valid rubric named after the file, so ``rubric-studio new.yaml`` works.

    Only creates (a file that appeared meanwhile is never replaced), with the user's umask;
    RubricError naming the path when it cannot be written.
    """
    from rubric_studio.core.atomic import ABSENT, write_text_safely

    name = path.stem or "rubric"
    if any(ch in name for ch in ":#{}[]&*!|>'\"%@`,?"):
        name = json.dumps(name)  # a JSON string is a valid YAML double-quoted scalar
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_safely(path, STARTER_RUBRIC.format(name=name), expect=ABSENT)
    except OSError as exc:
        raise RubricError([Problem(str(path), None, None, f"cannot create the rubric: {exc.strerror or exc}")]) from None


def _tolerate_shutdown(handler):
    """Engine messages can still arrive while the app shuts down and its widgets are gone."""

    @functools.wraps(handler)
    def wrapper(self, *args, **kwargs):
        try:
            return handler(self, *args, **kwargs)
        except NoMatches:
            if not _widgets_gone(self):
                raise
            return None

    return wrapper


def _widgets_gone(app: App) -> bool:
    """True while the app is closing: its message loop stopped or its screen unmounted."""
    try:
        return not app.is_running or not app.screen.is_mounted
    except Exception:  # no screen left at all
        return True


class StudioApp(App[int]):
    """The rubric studio."""

    CSS_PATH = "studio.tcss"
    TITLE = "rubric-studio"

    STUDIO_BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f1", "help", "Help"),
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("f2", "show('editor')", "Editor", show=False),
        Binding("f3", "show('results')", "Results", show=False),
        Binding("f4", "show('inspector')", "Inspector", show=False),
        Binding("f5", "regrade", "Re-grade"),
        Binding("f6", "show('agreement')", "Agreement", show=False),
        Binding("f7", "toggle_editor", "Wide table"),
    ]
    # Calibration keys (p, x, S, m, u, a, c, C, ], [, F, V, K, I, e) are single letters: they act
    # only while the results table (F, V, K, I, ] and [ also the Agreement panel) has focus,
    # see check_action, so typing in the editor is never taken for a label.
    BINDINGS = [*STUDIO_BINDINGS, *labeling.calibration_bindings()]

    def __init__(
        self,
        rubric_path: str | Path,
        samples_path: str | Path | None = None,
        labels_path: str | Path | None = None,
        *,
        judge: str | None = None,
        base_url: str | None = None,
        concurrency: int | None = None,
        repeat: int = 1,
        use_cache: bool = True,
        batch: bool = False,
        allow_code: bool = False,
        cache_path: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        watch: bool = True,
    ) -> None:
        super().__init__()
        from rubric_studio.core.document import RubricDocument

        self.rubric_path = Path(rubric_path)
        if not self.rubric_path.exists():
            create_starter_rubric(self.rubric_path)
            self.created_rubric = True
        else:
            self.created_rubric = False
        self.samples_given = samples_path is not None
        self.samples_path: Path | None = Path(samples_path) if samples_path is not None else None
        if self.samples_path is None:
            from rubric_studio.core.discovery import find_samples_for

            self.samples_path = find_samples_for(self.rubric_path)
        self.labels_path = Path(labels_path) if labels_path is not None else labels_path_for(self.rubric_path)
        self.grader_options: dict[str, Any] = {
            "judge": judge, "base_url": base_url, "concurrency": concurrency, "repeat": repeat,
            "use_cache": use_cache, "batch": batch, "allow_code": allow_code, "cache_path": cache_path,
        }
        self.env = env
        self.watching = watch

        self.document: RubricDocument = RubricDocument.load(self.rubric_path, allow_syntax_errors=True)
        self.rubric: Rubric | None = None
        self.samples: list[Sample] = []
        self.samples_by_id: dict[str, Sample] = {}
        self.samples_loaded = False
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
        self.selection: tuple[str | None, str | None] = (None, None)
        self._watch_stop: asyncio.Event | None = None
        self._grader_key: object = None
        self._watched_samples: Path | None = None
        self._editor_mounted = False
        self._samples_error = False
        self._document_reload_pending = False
        self._graded_disk: tuple[str, Any] = ("", None)
        #: K while the current run / results shown are a consistency run (every judged cell judged K times).
        self.consistency_k: int | None = None
        self.labeler = Labeler(self)
        self.save_flow = SaveFlow(self)
        self.calibration = CalibrationFlow(self)
        self.trust_flow = TrustFlow(self)

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Static("loading the editor…", id="editor-loading")
            with Vertical(id="right"):
                yield RunHeader(id="run-header")
                yield Static(id="banner")
                yield Static(id="judge-note")
                with TabbedContent(id="tabs", initial="results"):
                    with TabPane("Results", id="results"):
                        yield Static(id="empty")
                        yield ResultsMatrix(self.model, id="matrix")
                        yield Static(id="cell-hint")
                    with TabPane("Inspector", id="inspector"):
                        yield Inspector(id="inspector-view")
                    with TabPane("Agreement", id="agreement"):
                        yield self._agreement_widget()
        yield StatusBar(id="status")
        yield Footer()

    def _agreement_widget(self) -> Any:
        """The calibration panel (fed by :meth:`publish_report`), or a note if it cannot load."""
        try:
            from rubric_studio.tui.calibration_view import AgreementPanel
        except ImportError as exc:
            return Static(f"Agreement panel unavailable: {exc}", id="agreement-view", markup=False)
        return AgreementPanel(id="agreement-view")

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Show a notification with its text as it is.

        Messages carry file names, sample ids and errors from files and servers: they are
        never read as markup (``x[/]`` would crash it, ``q[a]`` lose its ``[a]``) and their
        control characters never reach the terminal. Widgets' ``notify`` lands here too.
        """
        super().notify(terminal_safe(message, multiline=True), title=terminal_safe(title), severity=severity,
                       timeout=timeout, markup=False)

    def on_mount(self) -> None:
        self._apply_rubric_text(initial=True)
        self._show_empty()
        self._refresh_bars()
        self.query_one("#banner").display = False
        self.query_one("#judge-note").display = False
        self.query_one(ResultsMatrix).focus()
        # Samples and labels are read in a thread, the judge resolved in another: the
        # first paint waits for neither.
        self._watched_samples = self.samples_path
        self._load_files(initial=True, kinds={"samples", "labels"})
        if self.watching:
            self._watch()
        # The editor is the heaviest widget: it is mounted once the results are on
        # screen (or after a moment), so the first screen does not wait for it.
        self.set_timer(EDITOR_DELAY, self.ensure_editor)

    @property
    def editor(self) -> Any:
        """The EditorPane, or None while it is not mounted yet."""
        return self.query("#editor").first() if self._editor_mounted else None

    def ensure_editor(self) -> None:
        """Mount the editor (once)."""
        if self._editor_mounted or not self.is_mounted:
            return
        from rubric_studio.tui.editor import EditorPane

        self._editor_mounted = True
        left = self.query_one("#left")
        left.query("#editor-loading").remove()
        editor = EditorPane(self.document, id="editor")
        left.mount(editor)
        if self.created_rubric:
            editor.call_after_refresh(editor.focus)  # once the editor has composed its fields
        self.call_after_refresh(draft_screen.offer_on_new, self)  # a new or empty rubric: "Draft criteria…" first

    async def on_unmount(self) -> None:
        if self._watch_stop is not None:
            self._watch_stop.set()
        if self.grader is not None:
            with contextlib.suppress(Exception):
                await self.grader.aclose()

    # -- loading -----------------------------------------------------------------
    def _resolve_samples_path(self) -> Path | None:
        """The samples in use: as given, or (re)discovered beside the rubric."""
        if self.samples_given:
            return self.samples_path
        from rubric_studio.core.discovery import find_samples_for

        return find_samples_for(self.rubric_path)

    @work(group="load", exit_on_error=False)
    async def _load_files(self, initial: bool, kinds: set[str]) -> None:
        """Load samples and/or labels in a thread; post what was found."""
        if "samples" in kinds:
            path = self._resolve_samples_path()
            if path is None:
                self.post_message(SamplesLoaded(None, [], [], initial))
            else:
                try:
                    sample_set = await asyncio.to_thread(load_samples, path)
                except RubricError as exc:
                    self.post_message(FileInvalid("samples", exc.problems))
                else:
                    self.post_message(SamplesLoaded(path, sample_set.samples, sample_set.problems, initial))
        if "labels" in kinds:
            try:
                label_set = await asyncio.to_thread(load_labels, self.labels_path)
            except RubricError as exc:
                self.post_message(FileInvalid("labels", exc.problems))
            except (OSError, UnicodeDecodeError) as exc:  # unreadable: permissions, encoding
                self.post_message(FileInvalid("labels", [Problem(str(self.labels_path), None, None, str(exc))]))
            else:
                self.post_message(LabelsLoaded(label_set.labels, label_set.problems))

    @work(group="grader", exclusive=True, exit_on_error=False)
    async def _build_grader(self, rubric: Rubric) -> None:
        """Resolve the judge (imports its SDK) off the UI thread."""
        grader = await asyncio.to_thread(make_studio_grader, rubric, self.grader_options, self.env)
        config = getattr(grader, "config", None)
        label = f"{config.alias or config.provider}:{config.model}" if config else "none"
        note = None if grader.judge is not None else grader.no_judge_reason
        self.post_message(GraderReady(grader, label, note))

    # -- messages: files -----------------------------------------------------------
    def on_samples_loaded(self, message: SamplesLoaded) -> None:
        if message.problems and not message.initial:
            # A half-written samples file: keep the last good samples and results.
            self._set_problems("samples", message.problems)
            return
        self.samples_path = message.path
        self.samples = message.samples
        self.samples_by_id = {s.id: s for s in message.samples}
        self.samples_loaded = True
        self._samples_error = False
        self._set_problems("samples", message.problems)
        self.model.set_samples(s.id for s in self.samples)
        self._merge_labels()
        self.query_one(ResultsMatrix).reset()
        self._show_empty()
        if not self.samples:
            self.call_after_refresh(self.ensure_editor)
        if message.path != self._watched_samples and self.watching and not message.initial:
            self._watch()
        self._watched_samples = message.path
        self.regrade()

    def on_labels_loaded(self, message: LabelsLoaded) -> None:
        self.sidecar_labels = message.labels
        self._set_problems("labels", [p for p in message.problems if p.severity == "error"])
        self._merge_labels()
        self.query_one(ResultsMatrix).reset()
        self._refresh_bars()
        self._refresh_inspector()
        self.publish_report()

    def _merge_labels(self) -> None:
        self.labels = {**labels_from_samples(self.samples), **self.sidecar_labels}
        self.model.set_labels(self.labels)

    def on_file_invalid(self, message: FileInvalid) -> None:
        self._set_problems(message.kind, message.problems)
        if message.kind == "samples" and not self.samples_loaded:
            self._samples_error = True
            self._show_empty()
            self.call_after_refresh(self.ensure_editor)

    def on_files_changed(self, message: FilesChanged) -> None:
        if "rubric" in message.kinds:
            self._rubric_changed_on_disk()
        rest = message.kinds & {"samples", "labels"}
        if "labels" in rest and self.labeler.is_own_write():
            rest.discard("labels")  # our own write: the labels in memory are already current
        if rest:
            self._load_files(initial=False, kinds=rest)

    def _rubric_changed_on_disk(self) -> None:
        document = self.document
        try:
            disk, state = document.read_disk_state()
        except RubricError as exc:
            if self.rubric_path.exists():  # unreadable (not UTF-8, too large ...): say why, keep the results
                self._set_problems("rubric", exc.problems)
            return  # else removed or being replaced: wait for the file to come back
        if disk == document.disk_text:
            return  # our own save
        if document.dirty:
            self.save_flow.changed_on_disk(disk, state)  # asks, unless the user already declined this version
            return
        # The new verdicts first: grade the disk text now, and let the editor take it
        # (reload_from_disk re-detects the YAML style, tens of ms) once they are drawn.
        self._document_reload_pending = True
        self._graded_disk = (disk, state)
        if not self._apply_rubric_text(disk):
            self._reload_document()

    def _reload_document(self) -> None:
        """Bring the editor's document up to the file on disk (after an outside edit)."""
        if not self._document_reload_pending:
            return
        self._document_reload_pending = False
        document = self.document
        graded, state = self._graded_disk
        if document.dirty:  # the user typed in the moment between: ask, as for any conflict
            self._rubric_changed_on_disk()
            return
        # Take exactly the text that was graded: a newer version written meanwhile must be
        # graded too, not slipped into the editor (its own change event would then see no change).
        if graded != document.disk_text:
            document.take_disk(graded, state)
            self._editor_refresh()
        self._rubric_changed_on_disk()

    def _editor_refresh(self) -> None:
        if self.editor is not None:
            self.editor.refresh_from_document()

    # -- messages: editor ----------------------------------------------------------
    def on_editor_pane_changed(self, message: Any) -> None:
        self._refresh_bars()

    def on_editor_pane_saved(self, message: Any) -> None:
        self.save_flow.declined = None
        self._apply_rubric_text()

    def on_editor_pane_save_refused(self, message: Any) -> None:
        self.save_flow.refused(message.error)  # the file changed on disk: ask, write nothing yet

    def on_editor_pane_selection_changed(self, message: Any) -> None:
        criterion_id = getattr(message, "criterion_id", None)
        if criterion_id:
            self.query_one(ResultsMatrix).select_criterion(criterion_id)

    # -- rubric -> grading ---------------------------------------------------------
    def _apply_rubric_text(self, text: str | None = None, *, initial: bool = False) -> bool:
        """Parse the rubric as saved (or ``text``); re-grade if valid, else show why and mark
        the results stale. True when a re-grade started."""
        from rubric_studio.core.loading import parse_rubric

        source = self.document.disk_text if text is None else text
        try:
            rubric = parse_rubric(source, self.document.file, base_dir=self.rubric_path.resolve().parent)
        except RubricError as exc:
            self._set_problems("rubric", exc.problems)
            return False
        self._set_problems("rubric", [])
        previous = self.rubric
        self.rubric = rubric
        if previous is None or _column_signature(previous) != _column_signature(rubric):
            self.model.set_criteria(rubric.criteria)
            if self.is_mounted:
                self.query_one(ResultsMatrix).reset()
        key = _grader_key(rubric)
        if self.grader is None or key != self._grader_key:
            self._grader_key = key
            self._build_grader(rubric)
            return False
        self.grader.trust(self.trust_flow.code_trusted(rubric))  # a new code check runs only once trusted
        if initial:
            return False
        return self.regrade()

    def rebuild_grader(self) -> None:
        """Build the judge again (after the rubric was trusted); the new grader re-grades when ready."""
        if self.rubric is not None:
            self._grader_key = _grader_key(self.rubric)
            self._build_grader(self.rubric)

    def on_grader_ready(self, message: GraderReady) -> None:
        old = self.grader
        self.grader = message.grader  # type: ignore[assignment]
        if old is not None and old is not self.grader:
            old.hand_over(self.grader)  # calls in flight for unchanged requests are adopted, not re-sent
            self.run_worker(old.aclose(), group="close", exit_on_error=False)
        self.judge_label = message.judge_label
        self.judge_note = message.judge_note
        self._show_judge_note()
        self.regrade()

    def regrade(self, repeat: int | None = None) -> bool:
        """Start a grading run of the current rubric over the current samples (True if started).

        ``repeat`` K makes it a consistency run (every judged cell judged K times); any
        other run judges with the session's repeat again.
        """
        if self.grader is None or self.rubric is None or not self.samples_loaded or self.file_problems.get("rubric"):
            return False
        self.run_number += 1
        self.running = True
        # Read by grader.run before its first await, so it holds for this run only.
        self.grader.repeat = repeat or int(self.grader_options.get("repeat") or 1)
        self.consistency_k = repeat
        self.model.stale = bool(self.file_problems.get("samples"))
        self._grade(self.run_number, self.grader, self.rubric, list(self.samples))
        return True

    @work(group="grade", exclusive=True, exit_on_error=False)
    async def _grade(self, run: int, grader: Grader, rubric: Rubric, samples: list[Sample]) -> None:
        from rubric_studio.engine.events import Progress, RunFinished, RunStarted, SamplesUpdated

        def on_event(event: object) -> None:
            if isinstance(event, SamplesUpdated):
                self.post_message(SamplesGraded(run, event.samples, event.final))
            elif isinstance(event, Progress):
                self.post_message(GradeProgress(run, event.done, event.total, event.in_flight))
            elif isinstance(event, RunStarted):
                self.post_message(GradeStarted(run, event.total_requests, event.to_send, event.stale_cells, event.plan))
            elif isinstance(event, RunFinished):
                self.post_message(GradeFinished(run, event.report))

        try:
            await grader.run(rubric, samples, on_event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must show as a message, not a traceback
            self.post_message(GradeFailed(run, f"{type(exc).__name__}: {exc}"))

    @_tolerate_shutdown
    def on_grade_started(self, message: GradeStarted) -> None:
        if message.run != self.run_number:
            return
        if "grading" in self.file_problems:
            self._set_problems("grading", [])
        baseline = self.report.by_id() if self.report is not None else None
        self.model.start_run(baseline)
        self.progress = (0, message.to_send, 0)
        self._refresh_bars()

    @_tolerate_shutdown
    def on_samples_graded(self, message: SamplesGraded) -> None:
        if message.run != self.run_number:
            return
        changed = self.model.update(message.samples)
        self.query_one(ResultsMatrix).rows_changed(changed)
        if not self._editor_mounted:
            self.call_after_refresh(self.ensure_editor)
        if self._document_reload_pending:
            self.call_after_refresh(self._reload_document)
        self._refresh_bars()
        if self.selection[0] in set(changed):
            self._refresh_inspector()
            self._refresh_hint()

    @_tolerate_shutdown
    def on_grade_progress(self, message: GradeProgress) -> None:
        if message.run != self.run_number:
            return
        self.progress = (message.done, message.total, message.in_flight)
        self._refresh_bars()

    @_tolerate_shutdown
    def on_grade_finished(self, message: GradeFinished) -> None:
        if message.run != self.run_number:
            return
        self.running = False
        self.report = message.report
        self.report_history.append(message.report)
        self.progress = (0, 0, 0)
        self.calibration.graded(message.report, consistency=self.consistency_k)
        self._refresh_bars()
        if message.report.judge_stopped:  # said once here; the cells carry it for the inspector
            self.notify(message.report.judge_stopped, title="Judging stopped", severity="warning", timeout=12)
        self._offer_trust()

    def _offer_trust(self) -> None:
        """Ask once whether to trust the rubric's untrusted settings (code checks, judge endpoint ...)."""
        if len(self.screen_stack) == 1:  # never on top of another prompt; the next run asks
            self.trust_flow.offer()

    def on_grade_failed(self, message: GradeFailed) -> None:
        if message.run != self.run_number:
            return
        self.running = False
        self._reload_document()
        self._set_problems("grading", [Problem("grading", None, None, f"grading failed: {message.error}")])

    # -- calibration hook ------------------------------------------------------------
    @property
    def reports(self) -> list[Report]:
        """Completed reports, oldest first (one per save/re-grade; the last ``REPORT_HISTORY``)."""
        return list(self.report_history)

    def publish_report(self) -> None:
        """Hand the latest completed report, labels, version diff and flip rates to the Agreement panel."""
        self.calibration.publish()

    # -- messages: calibration and interop workers -------------------------------------
    def on_label_written(self, message: LabelWritten) -> None:
        """Our own label write landed: update the human column, marks and agreement at once."""
        if message.label is None:
            self.sidecar_labels.pop(message.sample_id, None)
        else:
            self.sidecar_labels[message.sample_id] = message.label
        self._merge_labels()
        self.query_one(ResultsMatrix).rows_changed([message.sample_id])
        self._refresh_bars()
        self._refresh_hint()
        self._refresh_inspector()
        self.publish_report()
        improve_edits.offer_example(self, message.sample_id)  # "press e": a noted cell the judge gets wrong

    def on_label_write_failed(self, message: LabelWriteFailed) -> None:
        self.notify(f"Could not label {message.sample_id}: {message.error}", title="Label not saved",
                    severity="error", timeout=8)

    def on_fit_ready(self, message: FitReady) -> None:
        self.calibration.fit_ready(message.fit)

    def on_import_done(self, message: ImportDone) -> None:
        interop_actions.imported(self, message.source, message.result)

    def on_action_failed(self, message: ActionFailed) -> None:
        self.notify(f"{message.what} failed: {message.error}", severity="error", timeout=10)

    def on_agreement_panel_jump_to_sample(self, message: Any) -> None:
        matrix = self.query_one(ResultsMatrix)
        if not matrix.select_sample(message.sample_id):
            matrix.filter_kind = "all"
            matrix.select_sample(message.sample_id)
        self.action_show("results")

    # -- messages: widgets ---------------------------------------------------------
    @on(ResultsMatrix.Highlighted)
    def _highlighted(self, message: ResultsMatrix.Highlighted) -> None:
        if isinstance(message, ResultsMatrix.Selected):
            return
        previous = self.selection[1]
        self.selection = (message.sample_id, message.criterion_id)
        self._refresh_hint()
        self._refresh_inspector()
        if message.criterion_id and message.criterion_id != previous and self.editor is not None:
            self.editor.select_criterion(message.criterion_id)

    @on(ResultsMatrix.Selected)
    def _selected(self, message: ResultsMatrix.Selected) -> None:
        self.selection = (message.sample_id, message.criterion_id)
        self.query_one("#tabs", TabbedContent).active = "inspector"
        self._refresh_inspector()

    @on(ResultsMatrix.ViewChanged)
    def _view_changed(self, message: ResultsMatrix.ViewChanged) -> None:
        self._refresh_bars()

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, message: TabbedContent.TabActivated) -> None:
        self._refresh_inspector()

    # -- actions ---------------------------------------------------------------------
    async def action_quit(self) -> None:
        """Quit; with unsaved edits, ask first (nothing is lost silently)."""
        if self.editor is not None and not isinstance(self.screen, UnsavedScreen):
            with contextlib.suppress(Exception):
                await self.editor.flush()  # typing still waiting for its pause counts as an edit
        if not self.document.dirty or isinstance(self.screen, UnsavedScreen):
            self.exit()
            return

        def chosen(choice: str | None) -> None:
            if choice == SAVE:
                self.save_flow.save(then=self.exit)  # a change on disk asks first; quits once written
            elif choice == DISCARD:
                self.exit()

        self.push_screen(UnsavedScreen(self.rubric_path.name), chosen)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        self.push_screen(HelpScreen(self.STUDIO_BINDINGS, ResultsMatrix.BINDINGS, CALIBRATION_KEYS))

    # -- calibration actions (keys: labeling.calibration_bindings; logic: labeling, calibration_flow)
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return labeling.key_allowed(self, action)

    def action_label_verdict(self, verdict: str) -> None:
        self.labeler.verdict(verdict)

    def action_label_score(self) -> None:
        self.labeler.score()

    def action_label_cell(self, state: str) -> None:
        self.labeler.cell(state)

    def action_label_note(self) -> None:
        self.labeler.note()

    def action_label_clear(self) -> None:
        self.labeler.clear()

    def action_label_clear_all(self) -> None:
        self.labeler.clear_all()

    def action_disagreement(self, step: int) -> None:
        self.labeler.step_disagreement(step)

    def action_fit(self) -> None:
        self.calibration.start_fit()

    def action_versions(self) -> None:
        self.calibration.show_versions()

    def action_consistency_run(self) -> None:
        self.calibration.ask_consistency()

    def action_improve(self) -> None:
        improve_screen.open_improve(self)

    async def action_add_example(self) -> None:
        await improve_edits.add_cell_example(self)

    def consistency_run(self, k: int) -> bool:
        """Re-grade judging every judged cell ``k`` times (the results say so until the next run)."""
        started = self.regrade(repeat=k)
        if started:
            self.notify(f"Judging every judged cell {k} times…", title="Consistency run", timeout=4)
            self._refresh_bars()
        return started

    def action_save(self) -> None:
        if self.editor is not None:
            self.editor.save()  # posts EditorPane.Saved (re-grades) or SaveRefused (asks)
        else:
            self.save_flow.save()

    def action_show(self, where: str) -> None:
        if where == "editor":
            self.ensure_editor()
            self.query_one("#left").display = True
            if self.editor is not None:
                self.editor.focus()
            return
        self.query_one("#tabs", TabbedContent).active = where
        target = {"results": ResultsMatrix, "inspector": Inspector}.get(where)
        if target is not None:
            self.query_one(target).focus()
        else:
            with contextlib.suppress(Exception):
                self.query_one("#agreement-view").focus()

    def action_regrade(self) -> None:
        """Re-grade now, retrying cells that ended in error."""
        if self.grader is not None:
            self.grader.forget_errors()
        self.regrade()

    def action_toggle_editor(self) -> None:
        left = self.query_one("#left")
        left.display = not left.display
        if not left.display:
            self.query_one(ResultsMatrix).focus()

    def action_set_filter(self, kind: str) -> None:
        self.query_one(ResultsMatrix).filter_kind = kind
        self.action_show("results")

    def action_set_sort(self, kind: str) -> None:
        self.query_one(ResultsMatrix).sort_by = kind
        self.action_show("results")

    def action_trust(self) -> None:
        self.trust_flow.offer(again=True)  # lists what trusting turns on; Trust remembers it

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("Save rubric", "Write the rubric (ctrl+s) and re-grade", self.action_save)
        yield SystemCommand("Re-grade now", "Grade again, retrying errored cells (F5)", self.action_regrade)
        for key, label in FILTERS.items():
            yield SystemCommand(f"Filter: {label}", f"Show {label} in Results", lambda k=key: self.action_set_filter(k))
        for key, label in SORTS.items():
            yield SystemCommand(f"Sort by {label}", f"Order Results by {label}", lambda k=key: self.action_set_sort(k))
        yield SystemCommand("Reverse sort", "Reverse the order of Results (r)",
                            lambda: self.query_one(ResultsMatrix).action_reverse_sort())
        yield SystemCommand("Next flipped row", "Jump to the next cell that flipped since the last save (n)",
                            lambda: self.query_one(ResultsMatrix).action_next_flip(1))
        yield SystemCommand("Show editor", "Focus the rubric editor (F2)", lambda: self.action_show("editor"))
        yield SystemCommand("Show results", "The live samples × criteria matrix (F3)", lambda: self.action_show("results"))
        yield SystemCommand("Show inspector", "Details of the selected cell (F4)", lambda: self.action_show("inspector"))
        yield SystemCommand("Show agreement", "Judge vs human agreement (F6)", lambda: self.action_show("agreement"))
        yield SystemCommand("Toggle editor", "Hide or show the editor for a wide results table (F7)",
                            self.action_toggle_editor)
        yield from labeling.commands(self)
        yield from calibration_flow.commands(self)
        yield from interop_actions.commands(self)
        yield from draft_screen.commands(self)
        yield from improve_screen.commands(self)
        yield from judges_screen.commands(self)
        if self.trust_flow.pending():
            yield SystemCommand("Trust this rubric", "Use its code checks and judge settings (only for rubrics you trust)",
                                self.action_trust)
        yield SystemCommand("Help", "Keys, cell legend, judge setup (F1 / ?)", self.action_help)
        yield from super().get_system_commands(screen)

    # -- watching --------------------------------------------------------------------
    @work(group="watch", exclusive=True, exit_on_error=False)
    async def _watch(self) -> None:
        from rubric_studio.tui.watch import WatchTargets, watch_targets

        if self._watch_stop is not None:
            self._watch_stop.set()
        stop = asyncio.Event()
        self._watch_stop = stop
        targets = WatchTargets(self.rubric_path, self.samples_path, self.labels_path,
                               discover=not self.samples_given)
        async for kinds in watch_targets(targets, stop):
            self.post_message(FilesChanged(kinds))

    # -- view refresh ----------------------------------------------------------------
    def _set_problems(self, kind: str, problems: list[Problem]) -> None:
        if problems:
            self.file_problems[kind] = list(problems)
        else:
            self.file_problems.pop(kind, None)
        invalid = any(p.severity == "error" for k, ps in self.file_problems.items() if k != "grading" for p in ps)
        if self.model.stale != invalid:
            self.model.stale = invalid
            if self.is_mounted:
                self.query_one(ResultsMatrix).refresh()
        if self.is_mounted:
            self._show_banner()
            self._refresh_bars()
            self._refresh_inspector()

    @_tolerate_shutdown
    def _show_banner(self) -> None:
        banner = self.query_one("#banner", Static)
        problems = [p for ps in self.file_problems.values() for p in ps]
        if not problems:
            banner.display = False
            return
        errors = [p for p in problems if p.severity == "error"]
        out = Text()
        shown = (errors or problems)[:3]
        for index, problem in enumerate(shown):
            if index:
                out.append("\n")
            out.append("✗ " if problem.severity == "error" else "! ", style="bold")
            out.append(terminal_safe(problem.location()), style="bold")
            out.append(f": {terminal_safe(problem.message, multiline=True)}")
        more = len(errors or problems) - len(shown)
        if more > 0:
            out.append(f"\n  … and {more} more", style="italic")
        if errors and self.model.results:
            out.append("\n  the last good results stay below, marked stale", style="italic")
        banner.update(out)
        banner.set_class(bool(errors), "-error")
        banner.set_class(not errors, "-warning")
        banner.display = True

    def _show_judge_note(self) -> None:
        note = self.query_one("#judge-note", Static)
        needs = self.rubric is not None and bool(self.rubric.judge_criteria)
        if self.judge_note and needs:
            note.update(Text.assemble(("unjudged: ", "bold"), terminal_safe(self.judge_note, multiline=True)))
            note.tooltip = JUDGE_HELP
            note.display = True
        else:
            note.display = False
        self._refresh_bars()

    def _show_empty(self) -> None:
        empty = self.query_one("#empty", Static)
        matrix = self.query_one(ResultsMatrix)
        if self.samples_loaded and not self.samples:
            empty.update(NO_SAMPLES_HELP.format(stem=self.rubric_path.stem, name=self.rubric_path.name))
            empty.display = True
            matrix.display = False
        elif not self.samples_loaded:
            empty.update("The samples could not be loaded (see above); the studio reloads them when the file changes."
                         if self._samples_error else "loading samples…")
            empty.display = True
            matrix.display = False
        else:
            empty.display = False
            matrix.display = True

    def _refresh_bars(self) -> None:
        if not self.is_mounted:
            return
        matrix = self.query_one(ResultsMatrix)
        up, down = self.model.flip_counts()
        done, total, in_flight = self.progress
        state = RunState(
            rubric=self.rubric.name if self.rubric is not None else self.rubric_path.name,
            counts=self.model.counts() if self.samples else None,
            running=self.running, done=done, total=total, in_flight=in_flight,
            flips_up=up, flips_down=down, has_baseline=bool(self.model.baseline),
            stale=self.model.stale, filter_kind=matrix.filter_kind, sort_by=matrix.sort_by,
            reverse=matrix.reverse, consistency=self.consistency_k, version_line=self.calibration.version_line,
        )
        self.query_one(RunHeader).show(state)
        usage = self.grader.session_usage if self.grader is not None else None
        config = getattr(self.grader, "config", None)
        self.query_one(StatusBar).show(StatusState(
            judge=self.judge_label, in_flight=in_flight, concurrency=getattr(config, "concurrency", None),
            run_calls=done if self.running else 0, usage=usage, dirty=self.document.dirty,
            file=self.rubric_path.name,
        ))

    def _refresh_hint(self) -> None:
        hint = self.query_one("#cell-hint", Static)
        sample_id, criterion_id = self.selection
        if sample_id is None:
            hint.update("")
            return
        result = self.model.results.get(sample_id)
        if criterion_id is None or self.rubric is None:
            notes = "; ".join(result.notes) if result is not None else ""
            hint.update(Text.assemble((terminal_safe(sample_id), "bold"), "  ", (terminal_safe(notes), "dim"),
                                      ("  enter: inspect · p / x: label pass / fail", "dim italic")))
            return
        try:
            criterion = self.rubric.criterion(criterion_id)
        except KeyError:
            hint.update("")
            return
        cell = result.cell(criterion_id) if result is not None else None
        text, _ = cell_text(criterion, cell)
        why = ""
        if cell is not None:
            why = (cell.error or cell.rationale or "").strip().splitlines()[0] if (cell.error or cell.rationale or "").strip() else ""
        hint.update(Text.assemble((terminal_safe(criterion_id), "bold"), " ", (text, ""), "  ", (terminal_safe(why), "dim")))

    def _refresh_inspector(self) -> None:
        if not self.is_mounted or self.query_one("#tabs", TabbedContent).active != "inspector":
            return
        sample_id, criterion_id = self.selection
        sample = self.samples_by_id.get(sample_id) if sample_id else None
        criterion = None
        if criterion_id and self.rubric is not None:
            with contextlib.suppress(KeyError):
                criterion = self.rubric.criterion(criterion_id)
        self.query_one(Inspector).show(
            sample,
            self.model.results.get(sample_id) if sample_id else None,
            criterion,
            self.labels.get(sample_id) if sample_id else None,
            criteria=self.rubric.criteria if self.rubric is not None else [],
            stale=self.model.stale,
        )


def _column_signature(rubric: Rubric) -> tuple[tuple[str, bool, float, str], ...]:
    return tuple((c.key, c.required, c.weight, c.kind) for c in rubric.criteria)


def _grader_key(rubric: Rubric) -> object:
    """What decides the judge: the rubric's judge block (CLI flags are fixed for a session)."""
    return rubric.judge.model_dump_json() if rubric.judge is not None else None


def make_studio_grader(rubric: Rubric, options: Mapping[str, Any], env: Mapping[str, str] | None) -> Grader:
    """The session's grader: the judge from the rubric, flags and environment.

    Falls back to a judge-less grader (checks only, judge cells ``unjudged``) when the
    judges package cannot be imported or the judge cannot be built.
    """
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
