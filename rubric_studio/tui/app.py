"""StudioApp: the rubric on the left, the live results on the right (BRIEF §1, §7).

A thin Textual layer over one :class:`~rubric_studio.session.studio.StudioSession`, which owns
the document, samples, labels, judge, runs and versions:

* workers call one session function and post a message (:mod:`rubric_studio.tui.messages`):
  the grading worker (``group="grade"``, exclusive) turns each engine event into a message
  tagged with its run number; the load workers read samples / labels in a thread; the watch
  worker (``group="watch"``) posts :class:`~rubric_studio.tui.messages.FilesChanged`;
* each message handler hands the message to the session and redraws what it changed. Grading
  messages carry their run number; the session ignores those of a superseded run (its command
  returns None/False) and the handler then draws nothing;
* what several panes show is held in a few reactive values — :attr:`StudioApp.problems`,
  :attr:`StudioApp.report`, :attr:`StudioApp.graded`, :attr:`StudioApp.labels`,
  :attr:`StudioApp.selection` — whose watchers redraw every pane that shows them; a pane of
  its own subscribes with ``self.watch(self.app, "problems", …)``;
* flows that talk to the user — saving (:mod:`~rubric_studio.tui.save_flow`), labelling
  (:mod:`~rubric_studio.tui.calibration._labeling`), calibration (:mod:`~rubric_studio.tui.calibration._flow`),
  trust, interop, drafting, improving, comparing judges — get the app as a
  :class:`~rubric_studio.tui.host.StudioHost` and never import this module; the command palette's
  entries come from :mod:`~rubric_studio.tui.app_commands`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Static, TabbedContent, TabPane

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.studio import JUDGE_HELP, StudioSession, grader_key
from rubric_studio.tui import app_commands, card_actions, draft_screen, interop_actions
from rubric_studio.tui.calibration import CALIBRATION_KEYS, CalibrationFlow, Labeler, agreement_title
from rubric_studio.tui.conflict import DISCARD, SAVE, UnsavedScreen
from rubric_studio.tui.footer import KeysFooter
from rubric_studio.tui.help import HelpScreen
from rubric_studio.tui.improve import _edits as improve_edits
from rubric_studio.tui.improve import _screen as improve_screen
from rubric_studio.tui.key_order import focus_now, route_in_order
from rubric_studio.tui.messages import (
    ActionFailed,
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
from rubric_studio.tui.restyle import set_class_restyling
from rubric_studio.tui.results import Inspector, ProbeFindings, ResultsMatrix, ResultsPane, cell_text
from rubric_studio.tui.save_flow import SaveFlow
from rubric_studio.tui.statusbar import RunHeader, RunState, StatusBar, StatusState
from rubric_studio.tui.trust_prompt import TrustFlow

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.widget import Widget

    from rubric_studio.core.labels import Label
    from rubric_studio.core.problems import Problem
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.report import Report
    from rubric_studio.session.studio import GradingTicket
    from rubric_studio.tui.calibration import AgreementPanel
    from rubric_studio.tui.editor import EditorPane

EDITOR_DELAY = 0.3  # seconds after mount at the latest
#: The labels journal is folded into the sidecar once nobody labelled here for this long ...
LABELS_IDLE_SECONDS = 30.0
#: ... looked at this often.
LABELS_FOLD_CHECK_SECONDS = 10.0
EDITOR_MOUNT_WAIT_STEPS = 500  # quitting waits up to 500 × 20 ms for an editor still mounting
NO_SAMPLES_HELP = (
    "No samples yet. Put the outputs to grade beside the rubric as {stem}.samples.jsonl "
    '(one {{"id": ..., "output": ...}} per line), {stem}.samples.yaml / .csv, or a samples/ folder '
    "of .txt/.md files — the studio picks them up when they appear — or pass them: "
    "rubric-studio {name} SAMPLES"
)
BANNER_LINES = 3


def banner_text(session: StudioSession) -> tuple[Text, bool] | None:
    """The problems banner (at most three problems, errors first) and whether it shows errors."""
    problems = session.problems
    if not problems:
        return None
    errors = [p for p in problems if p.severity == "error"]
    shown = (errors or problems)[:BANNER_LINES]
    out = Text()
    for index, problem in enumerate(shown):
        if index:
            out.append("\n")
        out.append("✗ " if problem.severity == "error" else "! ", style="bold")
        out.append(terminal_safe(problem.location()), style="bold")
        out.append(f": {terminal_safe(problem.message, multiline=True)}")
    more = len(errors or problems) - len(shown)
    if more > 0:
        out.append(f"\n  … and {more} more", style="italic")
    if errors and session.model.results:
        out.append("\n  the last good results stay below, marked stale", style="italic")
    return out, bool(errors)


def _tolerate_shutdown(handler):
    """Messages from the engine, workers and the editor can still arrive while the app shuts down
    and its widgets are gone (a save finishing as the user quits): nothing left to show them on."""

    @functools.wraps(handler)
    def wrapper(self, *args, **kwargs):
        try:
            return handler(self, *args, **kwargs)
        except NoMatches:
            if not _widgets_gone(self):
                raise
            return None

    return wrapper


def _parses(text: str, file: str) -> bool:
    """Whether ``text`` is YAML the editor's form can show (within the usual limits)."""
    from rubric_studio.core.problems import RubricError
    from rubric_studio.core.yamlpos import safe_load

    try:
        safe_load(text, file)
    except RubricError:
        return False
    return True


def _widgets_gone(app: App[int]) -> bool:
    """True while the app is closing: its message loop stopped or its screen unmounted."""
    try:
        return not app.is_running or not app.screen.is_mounted
    except Exception:  # no screen left at all
        return True


def screenshot_folder(path: str | None) -> tuple[Path | None, str | None]:
    """(the folder a screenshot goes to, a note on why it is not the one asked for) - or
    (None, why nothing can be written). Without ``path``: the Downloads folder, made when missing."""
    import os

    from platformdirs import user_downloads_path  # where Textual itself saves them

    wanted = Path(path) if path is not None else user_downloads_path()
    try:
        wanted.mkdir(parents=True, exist_ok=True)
        if os.access(wanted, os.W_OK):
            return wanted, None
        problem = "it is not writable"
    except OSError as exc:
        problem = exc.strerror or str(exc)
    fallback = Path.cwd()
    if os.access(fallback, os.W_OK):
        return fallback, f"{wanted} cannot be used ({problem}); saving the screenshot in {fallback} instead"
    return None, f"{wanted} cannot be used ({problem}) and {fallback} is not writable"


class StudioApp(App[int]):
    """The rubric studio."""

    CSS_PATH = "studio.tcss"
    TITLE = "rubric-studio"

    STUDIO_BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f1", "help", "Help"),
        Binding("ctrl+s", "save", "Save", priority=True),
        # the keys that move the focus act as they arrive: keys typed after them go where they lead
        # (a letter typed right after F2 is no label in the table; tui/key_order.py)
        Binding("f2", "show('editor')", "Editor", show=False, priority=True),
        Binding("f3", "show('results')", "Results", show=False, priority=True),
        Binding("f4", "show('inspector')", "Inspector", show=False, priority=True),
        Binding("f5", "regrade", "Re-grade"),
        Binding("f6", "show('agreement')", "Agreement", show=False, priority=True),
        Binding("f7", "toggle_editor", "Wide table", show=False),
    ]
    # No letters: label and calibration keys are the results table's (and the Agreement panel's),
    # so a letter typed anywhere else is never taken for a label (tui/calibration_keys.py).
    BINDINGS = STUDIO_BINDINGS

    # What several panes show. Each watcher redraws every pane that shows the value; a pane of
    # its own subscribes with ``self.watch(self.app, name, callback)`` instead of being added
    # to a list here. They always notify: the session updates results and labels in place,
    # so setting a value again means "it changed".
    #: The problems of the rubric, samples, labels and the last run (the session's): the banner, the
    #: table (its rows drawn stale while a file is invalid), the run header, status bar and inspector.
    problems: reactive[Sequence[Problem]] = reactive(tuple, init=False, always_update=True)
    #: The samples whose results just came in while a run streams: their rows, the bars, and the
    #: hint and inspector when the cursor's sample is among them.
    graded: reactive[Sequence[str]] = reactive(tuple, init=False, always_update=True)
    #: (sample, criterion) under the results cursor: the hint line and the inspector follow it.
    selection: reactive[tuple[str | None, str | None]] = reactive((None, None), init=False, always_update=True)
    #: The report of the last finished run: the table, run header, status bar, inspector and Agreement panel.
    report: reactive[Report | None] = reactive(None, init=False, always_update=True)
    #: The labels in use (the sidecar's over the samples' own): the human column, marks and agreement.
    labels: reactive[Mapping[str, Label]] = reactive(dict, init=False, always_update=True)

    def __init__(self, rubric_path: str | Path, samples_path: str | Path | None = None,
                 labels_path: str | Path | None = None, *, judge: str | None = None, base_url: str | None = None,
                 concurrency: int | None = None, repeat: int = 1, use_cache: bool = True, batch: bool = False,
                 allow_code: bool = False, cache_path: str | Path | None = None,
                 env: Mapping[str, str] | None = None, watch: bool = True, annotator: str | None = None) -> None:
        super().__init__()
        options = {"judge": judge, "base_url": base_url, "concurrency": concurrency, "repeat": repeat,
                   "use_cache": use_cache, "batch": batch, "allow_code": allow_code, "cache_path": cache_path}
        self.session = StudioSession(rubric_path, samples_path, labels_path, grader_options=options, env=env,
                                     annotator=annotator)
        self.watching = watch
        #: A rubric the user asked to open next ("New rubric…"); the command line opens it after this app.
        self.next_rubric: Path | None = None
        self._watch_stop: asyncio.Event | None = None
        self._watched_samples: Path | None = None
        self._editor_mounted = False
        self._quitting = False
        self._document_reload_pending = False
        self._graded_disk: tuple[str, object] = ("", None)  # the disk text graded, and its state
        self.labeler = Labeler(self)
        #: The flipped cells of the bias probes run in this window (shown in the inspector).
        self.probe_findings = ProbeFindings()
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
                        yield ResultsPane(self.session.model, id="results-pane")
                        yield Static(id="cell-hint")
                    with TabPane("Inspector", id="inspector"):
                        yield Inspector(id="inspector-view")
                    with TabPane(agreement_title(self.session), id="agreement"):
                        yield self._agreement_widget()
        yield StatusBar(id="status")
        yield KeysFooter(compact=True)

    def _agreement_widget(self) -> Widget:
        """The calibration panel (fed by ``calibration.publish``), or a note if it cannot load."""
        try:
            from rubric_studio.tui.calibration import AgreementPanel
        except ImportError as exc:
            return Static(f"Agreement panel unavailable: {exc}", id="agreement-view", markup=False)
        return AgreementPanel(id="agreement-view")

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Show a notification with its text as it is.

        Messages carry file names, sample ids and errors from files and servers: they are
        never read as markup (``x[/]`` would crash it, ``q[a]`` lose its ``[a]``) and their
        control characters never reach the terminal. Widgets' ``notify`` lands here too.
        """
        super().notify(terminal_safe(message, multiline=True), title=terminal_safe(title), severity=severity,
                       timeout=timeout, markup=False)

    def on_mount(self) -> None:
        self.apply_saved_rubric(initial=True)
        self._show_empty()
        self.refresh_bars()
        self.query_one("#banner").display = False
        self.query_one("#judge-note").display = False
        self.query_one(ResultsMatrix).focus()
        # Samples and labels are read in a thread, the judge resolved in another: the
        # first paint waits for neither.
        self._watched_samples = self.session.samples_path
        self._load_files(initial=True, kinds={"samples", "labels"})
        if self.watching:
            self._watch()
        # The editor is the heaviest widget: it is mounted once the results are on
        # screen (or after a moment), so the first screen does not wait for it.
        self.set_timer(EDITOR_DELAY, self.ensure_editor)
        self.set_interval(LABELS_FOLD_CHECK_SECONDS, self._fold_labels)

    @work(group="fold-labels", exclusive=True, exit_on_error=False)
    async def _fold_labels(self) -> None:
        """Fold this session's labels into the sidecar once nobody labelled here for a while (the
        sidecar is then what a commit holds); a sidecar being fixed by hand is folded later."""
        from rubric_studio.core.problems import RubricStudioError

        with contextlib.suppress(ValueError, OSError, RubricStudioError):
            await asyncio.to_thread(self.session.fold_labels, LABELS_IDLE_SECONDS)

    @property
    def editor(self) -> EditorPane | None:
        """The EditorPane, or None while it is not mounted yet."""
        return self.query("#editor").first() if self._editor_mounted else None  # type: ignore[return-value]

    def ensure_editor(self) -> None:
        """Mount the editor (once; never once the studio is quitting: its tabs would mount into a
        tree being torn down, and Textual's tabs fail their own mount with a traceback)."""
        if self._editor_mounted or not self.is_mounted or self._quitting:
            return
        from rubric_studio.tui.editor import EditorPane

        self._editor_mounted = True
        left = self.query_one("#left")
        left.query("#editor-loading").remove()
        editor = EditorPane(self.session.document, id="editor")
        left.mount(editor)
        if self.session.created_rubric:
            editor.call_after_refresh(editor.focus)  # once the editor has composed its fields
        self.call_after_refresh(draft_screen.offer_on_new, self)  # a new or empty rubric: "Draft criteria…" first

    def refresh_editor(self) -> None:
        if self.editor is not None:
            self.editor.refresh_from_document()

    async def on_event(self, event: events.Event) -> None:
        """Keys bound by the focused text control take effect in typing order (:mod:`.key_order`)."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            if await self._check_bindings(event.key, priority=True):
                return
            if route_in_order(self, event):
                return
        await super().on_event(event)

    async def on_unmount(self) -> None:
        if self._watch_stop is not None:
            self._watch_stop.set()
        with contextlib.suppress(Exception):
            await self.session.aclose()

    # -- workers: each calls the session and posts a message -------------------------
    @work(group="load", exit_on_error=False)
    async def _load_files(self, initial: bool, kinds: set[str]) -> None:
        """Read samples and/or labels in a thread; post what was read."""
        if initial:  # the versions of earlier sessions, before the first run can record one
            await asyncio.to_thread(self.session.versions.load_past)
            self.say_history_warnings()
        # Labels first: the first run (started by the samples) then records them with its version.
        if "labels" in kinds:
            self.post_message(LabelsLoaded(await asyncio.to_thread(self.session.read_labels)))
        if "samples" in kinds:
            self.post_message(SamplesLoaded(await asyncio.to_thread(self.session.read_samples), initial))

    @work(group="grader", exclusive=True, exit_on_error=False)
    async def _build_grader(self, rubric: Rubric) -> None:
        """Resolve the judge (imports its SDK) off the UI thread."""
        self.post_message(GraderReady(*await asyncio.to_thread(self.session.build_grader, rubric)))

    @work(group="grade", exclusive=True, exit_on_error=False)
    async def _grade(self, ticket: GradingTicket) -> None:
        try:
            await self.session.grade(ticket, lambda event: self.post_engine_event(ticket.run, event))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must show as a message, not a traceback
            self.post_message(GradeFailed(ticket.run, f"{type(exc).__name__}: {exc}"))

    @work(group="watch", exclusive=True, exit_on_error=False)
    async def _watch(self) -> None:
        from rubric_studio.tui.watch import WatchTargets, watch_targets

        if self._watch_stop is not None:
            self._watch_stop.set()
        stop = asyncio.Event()
        self._watch_stop = stop
        session = self.session
        targets = WatchTargets(session.rubric_path, session.samples_path, session.labels_path,
                               discover=not session.samples_given)
        async for kinds in watch_targets(targets, stop):
            self.post_message(FilesChanged(kinds))

    # -- files --------------------------------------------------------------------------
    @_tolerate_shutdown
    def on_samples_loaded(self, message: SamplesLoaded) -> None:
        session = self.session
        taken = session.take_samples(message.read, initial=message.initial)
        self.problems = session.problems
        self._show_empty()
        if not taken:
            if not session.samples_loaded:
                self.call_after_refresh(self.ensure_editor)
            return
        self.query_one(ResultsMatrix).reset()
        if not session.samples:
            self.call_after_refresh(self.ensure_editor)
        if session.samples_path != self._watched_samples and self.watching and not message.initial:
            self._watch()
        self._watched_samples = session.samples_path
        self.regrade()

    @_tolerate_shutdown
    def on_labels_loaded(self, message: LabelsLoaded) -> None:
        if not self.session.take_labels(message.read):
            self.problems = self.session.problems
            return
        self.query_one(ResultsMatrix).reset()
        self.problems = self.session.problems
        self.labels = self.session.labels

    async def on_files_changed(self, message: FilesChanged) -> None:
        if "card" in message.kinds:
            card_actions.card_changed(self)
        if "rubric" in message.kinds:
            await self._rubric_changed_on_disk()
        rest = message.kinds & {"samples", "labels"}
        if "labels" in rest:
            await self.session.label_writer.settled()  # a write being fsync'd is ours, not someone else's
            if self.session.label_writer.is_own_write():
                rest.discard("labels")  # our own write: the labels in memory are already current
        if rest:
            self._load_files(initial=False, kinds=rest)

    async def _rubric_changed_on_disk(self) -> None:
        from rubric_studio.core.problems import RubricError

        session = self.session
        document = session.document
        try:
            disk, state = document.read_disk_state()
        except RubricError as exc:
            if session.rubric_path.exists():  # unreadable (not UTF-8, too large ...): say why, keep the results
                session.set_problems("rubric", exc.problems)
                self.problems = session.problems
            return  # else removed or being replaced: wait for the file to come back
        if disk == document.disk_text:
            return  # our own save
        editor = self.editor
        if editor is not None:
            await editor.flush()  # typing still waiting for its pause is part of the user's edits
        if document.dirty or (editor is not None and editor.typing_in() is not None):
            self._outside_edit_meets_edits(disk, state)
            return
        # The new verdicts first: grade the disk text now, and let the editor take it
        # (reload_from_disk re-detects the YAML style, tens of ms) once they are drawn.
        self._document_reload_pending = True
        self._graded_disk = (disk, state)
        if not self.apply_saved_rubric(disk):
            await self._reload_document()

    def _outside_edit_meets_edits(self, disk: str, state: object) -> None:
        """An outside edit while the user has unsaved edits or is typing: it merges around them
        when it touches other lines and not the field being typed in; else nothing is merged and
        the user decides (a dialog, or while typing a notice: a dialog would take their keys)."""
        document, editor = self.session.document, self.editor
        typing = editor is not None and editor.typing_in() is not None
        touched = editor.outside_edit_meets_typing(disk) if editor is not None else None
        why = f" in {touched}, which you are editing" if touched else " in lines you changed"
        merged = document.merge_disk(disk)
        if merged.clean and not _parses(merged.text, document.file):
            # The outside edit breaks the rubric: its error shows (the results stay, marked stale),
            # and nothing is merged into the editor, whose form would give way to the error.
            self.apply_saved_rubric(disk)
            touched, why = touched or "the file", " and no longer parses (its error is shown)"
        if touched is None and merged.clean:
            selected = editor.selected_id() if editor is not None else None
            base = document.disk_text
            document.take_disk(disk, state, merged.text)
            if editor is not None:
                editor.took_outside_edit(selected, base)
            self.apply_saved_rubric(disk)
            self.save_flow.merged_outside_edit()
        elif typing:
            self.save_flow.kept_typing(disk, why)
        else:
            self.save_flow.changed_on_disk(disk, state)  # asks, unless the user already declined this version

    async def _reload_document(self) -> None:
        """Bring the editor's document up to the file on disk (after an outside edit)."""
        if not self._document_reload_pending:
            return
        self._document_reload_pending = False
        document, editor = self.session.document, self.editor
        if editor is not None:
            await editor.flush()
        graded, state = self._graded_disk
        if document.dirty:  # the user typed in the moment between: merge or ask, as for any outside edit
            await self._rubric_changed_on_disk()
            return
        # Take exactly the text that was graded: a newer version written meanwhile must be
        # graded too, not slipped into the editor (its own change event would then see no change).
        if graded != document.disk_text:
            selected = editor.selected_id() if editor is not None else None
            base = document.disk_text
            document.take_disk(graded, state)
            if editor is not None:
                editor.took_outside_edit(selected, base)
        await self._rubric_changed_on_disk()

    # -- the editor --------------------------------------------------------------------
    @_tolerate_shutdown
    def on_editor_pane_changed(self, message: EditorPane.Changed) -> None:
        self.refresh_bars()

    @_tolerate_shutdown
    def on_editor_pane_saved(self, message: EditorPane.Saved) -> None:
        self.save_flow.declined = None
        self.apply_saved_rubric()

    @_tolerate_shutdown
    def on_editor_pane_save_refused(self, message: EditorPane.SaveRefused) -> None:
        self.save_flow.refused(message.error)  # the file changed on disk: ask, write nothing yet

    @_tolerate_shutdown
    def on_editor_pane_selection_changed(self, message: EditorPane.SelectionChanged) -> None:
        criterion_id = message.criterion_id
        if criterion_id:
            self.query_one(ResultsMatrix).select_criterion(criterion_id, following=True)

    # -- grading --------------------------------------------------------------------------
    def post_engine_event(self, run: int, event: object) -> None:
        """Turn one engine event of run ``run`` into its message (called by the grading worker)."""
        from rubric_studio.engine.events import Progress, RunFinished, RunStarted, SamplesUpdated

        if isinstance(event, SamplesUpdated):
            self.post_message(SamplesGraded(run, event.samples, event.final))
        elif isinstance(event, Progress):
            self.post_message(GradeProgress(run, event.done, event.total, event.in_flight))
        elif isinstance(event, RunStarted):
            self.post_message(GradeStarted(run, event.total_requests, event.to_send, event.stale_cells, event.plan))
        elif isinstance(event, RunFinished):
            self.post_message(GradeFinished(run, event.report))

    @_tolerate_shutdown
    def on_grader_ready(self, message: GraderReady) -> None:
        old = self.session.grader_ready(message.grader, message.judge_label, message.judge_note)
        if old is not None:
            self.run_worker(old.aclose(), group="close", exit_on_error=False)
        self._show_judge_note()
        self.regrade()

    @_tolerate_shutdown
    def on_grade_started(self, message: GradeStarted) -> None:
        if self.session.run_started(message.run):
            self.session.progress = (0, message.to_send, 0)
            self.problems = self.session.problems  # the grading problem of the run before goes

    @_tolerate_shutdown
    def on_samples_graded(self, message: SamplesGraded) -> None:
        changed = self.session.rows_graded(message.run, message.samples)
        if changed is None:
            return
        self.graded = changed
        if not self._editor_mounted:
            self.call_after_refresh(self.ensure_editor)
        if self._document_reload_pending:
            self.call_after_refresh(self._reload_document)

    @_tolerate_shutdown
    def on_grade_progress(self, message: GradeProgress) -> None:
        if self.session.run_progress(message.run, message.done, message.total, message.in_flight):
            self.refresh_bars()

    @_tolerate_shutdown
    def on_grade_finished(self, message: GradeFinished) -> None:
        outcome = self.session.run_finished(message.run, message.report)
        if outcome is None:
            return
        self.report = self.session.report
        self.calibration.graded(outcome)
        if outcome.judge_stopped:  # said once here; the cells carry it for the inspector
            self.notify(outcome.judge_stopped, title="Judging stopped", severity="warning", timeout=12)
        for warning in outcome.warnings:
            self.notify(warning, title="Judge", severity="warning", timeout=12)
        for line, every_cell in outcome.member_failures:  # the others' pooled verdicts would hide it
            self.notify(line, title="Judge panel", severity="error" if every_cell else "warning", timeout=12)
        if len(self.screen_stack) == 1:  # never on top of another prompt; the next run asks
            self.trust_flow.offer()

    @_tolerate_shutdown
    def on_grade_failed(self, message: GradeFailed) -> None:
        if self.session.run_failed(message.run, message.error):
            self.call_later(self._reload_document)
            self.problems = self.session.problems

    # -- calibration and interop workers ---------------------------------------------------
    @_tolerate_shutdown
    def on_label_written(self, message: LabelWritten) -> None:
        """Our own label write landed: update the human column, marks and agreement at once."""
        self.session.label_written(message.sample_id, message.label, message.annotator)
        self.labels = self.session.labels
        improve_edits.offer_example(self, message.sample_id)  # "press e": a noted cell the judge gets wrong

    @_tolerate_shutdown
    def on_label_write_failed(self, message: LabelWriteFailed) -> None:
        self.notify(f"Could not label {message.sample_id}: {message.error}", title="Label not saved",
                    severity="error", timeout=8)

    @_tolerate_shutdown
    def on_fit_ready(self, message: FitReady) -> None:
        self.calibration.fit_ready(message.fit)

    @_tolerate_shutdown
    def on_import_done(self, message: ImportDone) -> None:
        interop_actions.imported(self, message.source, message.result)

    @_tolerate_shutdown
    def on_action_failed(self, message: ActionFailed) -> None:
        self.notify(f"{message.what} failed: {message.error}", severity="error", timeout=10)

    @_tolerate_shutdown
    def on_agreement_panel_jump_to_sample(self, message: AgreementPanel.JumpToSample) -> None:
        self.select_sample(message.sample_id)
        self.action_show("results")

    # -- widgets ----------------------------------------------------------------------------
    @_tolerate_shutdown
    def on_results_matrix_highlighted(self, message: ResultsMatrix.Highlighted) -> None:
        if isinstance(message, ResultsMatrix.Selected):
            return
        previous = self.selection[1]
        self.selection = (message.sample_id, message.criterion_id)
        if message.following:
            # The cursor followed the editor's list, which may have moved on since (keys a few ms
            # apart): answering with this column would send the list back and lose those keys.
            return
        if message.criterion_id and message.criterion_id != previous and self.editor is not None:
            self.editor.select_criterion(message.criterion_id)

    @_tolerate_shutdown
    def on_results_matrix_selected(self, message: ResultsMatrix.Selected) -> None:
        self.query_one("#tabs", TabbedContent).active = "inspector"
        self.selection = (message.sample_id, message.criterion_id)

    @_tolerate_shutdown
    def on_results_matrix_view_changed(self, message: ResultsMatrix.ViewChanged) -> None:
        self.refresh_bars()

    # -- screenshots (the palette's Screenshot) --------------------------------------------
    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """Save a screenshot to ``path`` or the Downloads folder, created when missing; where it
        cannot be, to the current folder, saying why; when nothing can be written, say why."""
        folder, why = screenshot_folder(path)
        if folder is None:
            self.notify(f"Cannot save a screenshot: {why}", title="Screenshot", severity="error", timeout=10)
            return None
        if why:
            self.notify(why, title="Screenshot", severity="warning", timeout=10)
        return super().deliver_screenshot(filename, str(folder), time_format)

    def on_delivery_failed(self, event: events.DeliveryFailed) -> None:
        if event.name == "screenshot":
            reason = getattr(event.exception, "strerror", None) or event.exception
            self.notify(f"The screenshot could not be written: {reason}", title="Screenshot", severity="error",
                        timeout=10)

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        if message.tabbed_content.id == "tabs":
            self.refresh_inspector()
            # a click on the Results tab leaves focus on the tab bar, where the table's keys
            # (f, p, x, ...) do nothing: give it to the table
            if message.pane.id == "results" and self.focused is message.tabbed_content.query_one("Tabs"):
                self.call_after_refresh(self._focus_matrix)

    def _focus_matrix(self) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one(ResultsMatrix).focus()

    # -- commands to the session ---------------------------------------------------
    def apply_saved_rubric(self, text: str | None = None, *, initial: bool = False) -> bool:
        """Parse the rubric as saved (or ``text``); re-grade if valid, else show why and mark
        the results stale. True when a re-grade started."""
        applied = self.session.apply_rubric_text(text)
        self.problems = self.session.problems
        if applied.columns_changed and self.is_mounted:
            self.query_one(ResultsMatrix).reset()
        if not applied.valid:
            return False
        if applied.needs_grader:
            self._build_grader(self.session.rubric)
            return False
        return False if initial else self.regrade()

    def rebuild_grader(self) -> None:
        """Build the judge again (after the rubric was trusted); the new grader re-grades when ready."""
        session = self.session
        if session.rubric is not None:
            session.grader_key = grader_key(session.rubric)
            self._build_grader(session.rubric)

    def regrade(self, repeat: int | None = None) -> bool:
        """Start a grading run (True if started); ``repeat`` K makes it a consistency run."""
        ticket = self.session.start_run(repeat)
        if ticket is not None:
            self._grade(ticket)
        return ticket is not None

    def consistency_run(self, k: int) -> bool:
        """Re-grade judging every judged cell ``k`` times (the results say so until the next run)."""
        started = self.regrade(repeat=k)
        if started:
            self.notify(f"Judging every judged cell {k} times…", title="Consistency run", timeout=4)
            self.refresh_bars()
        return started

    def select_sample(self, sample_id: str, criterion_id: str | None = None) -> None:
        """Put the results cursor on ``sample_id`` (showing it even if filtered out)."""
        matrix = self.query_one(ResultsMatrix)
        matrix.reveal_sample(sample_id)  # clears a filter or search that hides it
        if criterion_id is not None and matrix.current[1] != criterion_id:
            matrix.select_criterion(criterion_id)

    # -- what several panes show: each watcher redraws the panes that show it ------------
    @_tolerate_shutdown
    def watch_problems(self) -> None:
        if not self.is_mounted:
            return
        self._show_banner()
        self.query_one(ResultsMatrix).refresh()
        self.refresh_bars()
        self.refresh_inspector()

    @_tolerate_shutdown
    def watch_graded(self, changed: Sequence[str]) -> None:
        self.query_one(ResultsMatrix).rows_changed(changed)
        self.refresh_bars()
        if self.selection[0] in set(changed):
            self.refresh_inspector()
            self.refresh_hint()

    def watch_selection(self) -> None:
        self.refresh_hint()
        self.refresh_inspector()

    @_tolerate_shutdown
    def watch_report(self) -> None:
        if not self.is_mounted:
            return
        self.query_one(ResultsMatrix).refresh()
        self.refresh_bars()
        self.refresh_inspector()
        self.calibration.publish()

    @_tolerate_shutdown
    def watch_labels(self, old: Mapping[str, Label], new: Mapping[str, Label]) -> None:
        if not self.is_mounted:
            return
        matrix = self.query_one(ResultsMatrix)
        if self.session.model.show_own:  # the human column shows one person's labels: any write may change it
            matrix.reset()
        else:
            matrix.rows_changed([key for key in old.keys() | new.keys() if old.get(key) != new.get(key)])
        self.refresh_bars()
        self.refresh_hint()
        self.refresh_inspector()
        self.calibration.publish()

    # -- drawing the session ---------------------------------------------------------
    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self._mark_focused_pane()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self._mark_focused_pane()

    def _mark_focused_pane(self) -> None:
        """The pane that holds the focus is marked (studio.tcss), neither when nothing has it (the
        Inspector tab shown); the results take the width while they have focus, the editor takes
        it back with focus. (A click on a cell is resolved where it was pressed, so the table may
        widen under it.) Only the nodes the marks change are restyled (:mod:`.restyle`)."""
        if _widgets_gone(self):  # a blur as the studio closes
            return
        screen = self.screen_stack[0]
        focused = screen.focused
        panes = {node.id for node in focused.ancestors_with_self} & {"left", "right"} if focused else set()
        if panes:
            set_class_restyling(screen.query_one("#main"), "right" in panes, "-results-focused")
        for pane in ("left", "right"):
            set_class_restyling(screen.query_one(f"#{pane}"), pane in panes, "-focused")

    def say_history_warnings(self) -> None:
        """A damaged run-history file was read around: say so once, the studio goes on."""
        warnings = self.session.versions.history.warnings
        if warnings:
            more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
            self.notify(warnings[0] + more, title="Run history", severity="warning", timeout=20)

    def _show_banner(self) -> None:
        banner = self.query_one("#banner", Static)
        shown = banner_text(self.session)
        banner.display = shown is not None
        if shown is not None:
            banner.update(shown[0])
            banner.set_class(shown[1], "-error")
            banner.set_class(not shown[1], "-warning")

    def _show_judge_note(self) -> None:
        session = self.session
        note = self.query_one("#judge-note", Static)
        needs = session.rubric is not None and bool(session.rubric.judge_criteria)
        if session.judge_note and needs:
            note.update(Text.assemble(("unjudged: ", "bold"), terminal_safe(session.judge_note, multiline=True)))
            note.tooltip = JUDGE_HELP
        note.display = bool(session.judge_note and needs)
        self.refresh_bars()

    def _show_empty(self) -> None:
        session = self.session
        empty = self.query_one("#empty", Static)
        pane = self.query_one(ResultsPane)
        if session.samples_loaded and not session.samples:
            path = session.rubric_path
            empty.update(NO_SAMPLES_HELP.format(stem=path.stem, name=path.name))
        elif not session.samples_loaded:
            empty.update("The samples could not be loaded (see above); the studio reloads them when the file changes."
                         if session.samples_error else "loading samples…")
        showing = session.samples_loaded and bool(session.samples)
        empty.display = not showing
        pane.display = showing

    def refresh_bars(self) -> None:
        if not self.is_mounted:
            return
        session = self.session
        matrix = self.query_one(ResultsMatrix)
        tally = session.versions.tally()
        done, total, in_flight = session.progress
        self.query_one(RunHeader).show(RunState(
            rubric=session.rubric.name if session.rubric is not None else session.rubric_path.name,
            counts=session.model.counts() if session.samples else None,
            running=session.running, done=done, total=total, in_flight=in_flight,
            flips=tally, has_baseline=bool(session.model.baseline), compared_with=session.versions.compared_with,
            stale=session.model.stale, filter_kind=matrix.filter_kind, filter_label=matrix.filter_label,
            search=matrix.search, sort_by=matrix.sort_by,
            reverse=matrix.reverse, consistency=session.consistency_k, version_line=session.versions.version_line,
        ))
        grader = session.grader
        config = getattr(grader, "config", None)
        card_state, card_text = card_actions.card_status(self)
        self.query_one(StatusBar).show(StatusState(
            judge=session.judge_label, judge_ready=getattr(grader, "judge", None) is not None,
            in_flight=in_flight, concurrency=getattr(grader, "concurrency_now", None) or getattr(config, "concurrency", None),
            concurrency_text=getattr(grader, "concurrency_text", None),
            run_calls=done if session.running else 0, usage=grader.session_usage if grader is not None else None,
            dirty=session.document.dirty, file=session.rubric_path.name, card_state=card_state, card=card_text,
        ))

    def refresh_hint(self) -> None:
        hint = self.query_one("#cell-hint", Static)
        hint.update(self._hint_text())

    def _hint_text(self) -> Text | str:
        session = self.session
        sample_id, criterion_id = self.selection
        if sample_id is None:
            return ""
        result = session.model.results.get(sample_id)
        if criterion_id is None or session.rubric is None:
            notes = "; ".join(result.notes) if result is not None else ""
            return Text.assemble((terminal_safe(sample_id), "bold"), "  ", (terminal_safe(notes), "dim"),
                                 ("  enter: inspect · p / x: label pass / fail", "dim italic"))
        try:
            criterion = session.rubric.criterion(criterion_id)
        except KeyError:
            return ""
        cell = result.cell(criterion_id) if result is not None else None
        text, _ = cell_text(criterion, cell)
        why = (cell.error or cell.rationale or "").strip() if cell is not None else ""
        first = why.splitlines()[0] if why else ""
        return Text.assemble((terminal_safe(criterion_id), "bold"), " ", (text, ""), "  ", (terminal_safe(first), "dim"))

    def refresh_inspector(self) -> None:
        if not self.is_mounted or self.query_one("#tabs", TabbedContent).active != "inspector":
            return
        session = self.session
        sample_id, criterion_id = self.selection
        criterion = None
        if criterion_id and session.rubric is not None:
            with contextlib.suppress(KeyError):
                criterion = session.rubric.criterion(criterion_id)
        self.query_one(Inspector).show(
            session.samples_by_id.get(sample_id) if sample_id else None,
            session.model.results.get(sample_id) if sample_id else None,
            criterion,
            session.labels.get(sample_id) if sample_id else None,
            criteria=session.rubric.criteria if session.rubric is not None else [],
            stale=session.model.stale,
            probes=self.probe_findings.of(session.samples_by_id.get(sample_id) if sample_id else None, criterion_id),
        )

    # -- actions ---------------------------------------------------------------------
    def exit(self, *args: Any, **kwargs: Any) -> None:
        """Quit (see :meth:`App.exit`); nothing mounts from here on (:meth:`ensure_editor`)."""
        self._quitting = True
        super().exit(*args, **kwargs)

    async def _editor_mounted_fully(self) -> None:
        """Wait (a bounded while) for an editor still mounting: quitting in the middle of its mount
        (it mounts just after the first screen) tore its tabs down under them, and Textual's tabs
        then failed their own mount with a traceback on the way out."""
        for _ in range(EDITOR_MOUNT_WAIT_STEPS):
            editor = self.editor if self._editor_mounted else None
            if editor is None or getattr(editor, "ready", True):
                return
            await asyncio.sleep(0.02)

    async def action_quit(self) -> None:
        """Quit; with unsaved edits, ask first (nothing is lost silently)."""
        await self._editor_mounted_fully()
        if self.editor is not None and not isinstance(self.screen, UnsavedScreen):
            with contextlib.suppress(Exception):
                await self.editor.flush()  # typing still waiting for its pause counts as an edit
        if not self.session.document.dirty or isinstance(self.screen, UnsavedScreen):
            self.exit()
            return

        def chosen(choice: str | None) -> None:
            if choice == SAVE:
                self.save_flow.save(then=self.exit)  # a change on disk asks first; quits once written
            elif choice == DISCARD:
                self.exit()
            else:
                self.next_rubric = None

        self.push_screen(UnsavedScreen(self.session.rubric_path.name), chosen)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        self.push_screen(HelpScreen(self.STUDIO_BINDINGS, ResultsMatrix.NAVIGATION_BINDINGS, CALIBRATION_KEYS))

    def action_label_verdict(self, verdict: str) -> None:
        self.labeler.verdict(verdict)

    def action_toggle_own_labels(self) -> None:
        from rubric_studio.tui.calibration._annotators import toggle_own_labels

        toggle_own_labels(self)

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

    def action_label_undo(self, redo: bool = False) -> None:
        (self.labeler.redo if redo else self.labeler.undo)()

    def action_disagreement(self, step: int) -> None:
        self.labeler.step_disagreement(step)

    def action_recheck(self, step: int = 1) -> None:
        self.labeler.step_recheck(step)

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

    def action_save(self) -> None:
        if self.editor is not None:
            self.editor.save()  # posts EditorPane.Saved (re-grades) or SaveRefused (asks)
        else:
            self.save_flow.save()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "show":  # a priority key: not from a dialog (the key is the dialog's then)
            return self.screen is self.screen_stack[0]
        return True

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
            focus_now(self.query_one(target))
        else:
            with contextlib.suppress(Exception):
                self.query_one("#agreement-view").focus()  # the panel gives it to its table at once

    def action_regrade(self) -> None:
        """Re-grade now, retrying cells that ended in error."""
        if self.session.grader is not None:
            self.session.grader.forget_errors()
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

    def action_new_rubric(self) -> None:
        """Ask for a file name, create a starter rubric there and open it (after this rubric is closed)."""
        from rubric_studio.tui.new_rubric import NewRubricScreen

        async def chosen(path: Path | None) -> None:
            if path is not None:
                self.next_rubric = path
                await self.action_quit()  # unsaved edits of this rubric are asked about first

        self.push_screen(NewRubricScreen(self.session.rubric_path.parent), chosen)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from app_commands.palette(self)
        yield from super().get_system_commands(screen)

