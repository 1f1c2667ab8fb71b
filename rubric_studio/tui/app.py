"""StudioApp: the rubric on the left, the live results on the right (BRIEF §1, §7).

A thin Textual layer over one :class:`~rubric_studio.session.studio.StudioSession`, which owns
the document, samples, labels, judge, runs and versions:

* workers call one session function and post a message (:mod:`rubric_studio.tui.messages`):
  the grading worker (``group="grade"``, exclusive) turns each engine event into a message
  tagged with its run number; the load workers read samples / labels in a thread; the watch
  worker (``group="watch"``) posts :class:`FilesChanged`;
* each message handler hands the message to the session and redraws what it changed
  (:class:`~rubric_studio.tui.app_view.SessionView`);
* flows that talk to the user — saving (:mod:`~rubric_studio.tui.save_flow`), labelling
  (:mod:`~rubric_studio.tui.labeling`), calibration (:mod:`~rubric_studio.tui.calibration_flow`),
  trust, interop, drafting, improving, comparing judges — get the app as a
  :class:`~rubric_studio.tui.host.StudioHost` and never import this module.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.studio import StudioSession, grader_key
from rubric_studio.tui import app_commands, draft_screen, improve_edits, improve_screen
from rubric_studio.tui.annotators import agreement_title
from rubric_studio.tui.app_events import SessionEvents
from rubric_studio.tui.app_view import SessionView
from rubric_studio.tui.calibration_flow import CalibrationFlow
from rubric_studio.tui.calibration_view import CALIBRATION_KEYS
from rubric_studio.tui.conflict import DISCARD, SAVE, UnsavedScreen
from rubric_studio.tui.help import HelpScreen
from rubric_studio.tui.inspector import Inspector
from rubric_studio.tui.key_order import route_in_order
from rubric_studio.tui.labeling import Labeler
from rubric_studio.tui.matrix import ResultsMatrix
from rubric_studio.tui.results_pane import ResultsPane
from rubric_studio.tui.save_flow import SaveFlow
from rubric_studio.tui.statusbar import RunHeader, StatusBar
from rubric_studio.tui.trust_prompt import TrustFlow

EDITOR_DELAY = 0.3  # seconds after mount at the latest


class StudioApp(SessionEvents, SessionView, App[int]):
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
        Binding("f7", "toggle_editor", "Wide table", show=False),
    ]
    # No letters: label and calibration keys are the results table's (and the Agreement panel's),
    # so a letter typed anywhere else is never taken for a label (tui/calibration_keys.py).
    BINDINGS = STUDIO_BINDINGS

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
        self.selection: tuple[str | None, str | None] = (None, None)
        #: A rubric the user asked to open next ("New rubric…"); the command line opens it after this app.
        self.next_rubric: Path | None = None
        self._watch_stop: asyncio.Event | None = None
        self._watched_samples: Path | None = None
        self._editor_mounted = False
        self._document_reload_pending = False
        self._graded_disk: tuple[str, Any] = ("", None)
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
                        yield ResultsPane(self.session.model, id="results-pane")
                        yield Static(id="cell-hint")
                    with TabPane("Inspector", id="inspector"):
                        yield Inspector(id="inspector-view")
                    with TabPane(agreement_title(self.session), id="agreement"):
                        yield self._agreement_widget()
        yield StatusBar(id="status")
        yield Footer(compact=True)

    def _agreement_widget(self) -> Any:
        """The calibration panel (fed by ``calibration.publish``), or a note if it cannot load."""
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
        from rubric_studio.tui.messages import LabelsLoaded, SamplesLoaded

        if initial:  # the versions of earlier sessions, before the first run can record one
            await asyncio.to_thread(self.session.versions.load_past)
            self.say_history_warnings()
        # Labels first: the first run (started by the samples) then records them with its version.
        if "labels" in kinds:
            self.post_message(LabelsLoaded(await asyncio.to_thread(self.session.read_labels)))
        if "samples" in kinds:
            self.post_message(SamplesLoaded(await asyncio.to_thread(self.session.read_samples), initial))

    @work(group="grader", exclusive=True, exit_on_error=False)
    async def _build_grader(self, rubric: Any) -> None:
        """Resolve the judge (imports its SDK) off the UI thread."""
        from rubric_studio.tui.messages import GraderReady

        self.post_message(GraderReady(*await asyncio.to_thread(self.session.build_grader, rubric)))

    @work(group="grade", exclusive=True, exit_on_error=False)
    async def _grade(self, ticket: Any) -> None:
        from rubric_studio.tui.messages import GradeFailed

        try:
            await self.session.grade(ticket, lambda event: self.post_engine_event(ticket.run, event))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must show as a message, not a traceback
            self.post_message(GradeFailed(ticket.run, f"{type(exc).__name__}: {exc}"))

    @work(group="watch", exclusive=True, exit_on_error=False)
    async def _watch(self) -> None:
        from rubric_studio.tui.messages import FilesChanged
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

    # -- commands to the session ---------------------------------------------------
    def apply_saved_rubric(self, text: str | None = None, *, initial: bool = False) -> bool:
        """Parse the rubric as saved (or ``text``); re-grade if valid, else show why and mark
        the results stale. True when a re-grade started."""
        applied = self.session.apply_rubric_text(text)
        self.show_problems()
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

    # -- actions ---------------------------------------------------------------------
    async def action_quit(self) -> None:
        """Quit; with unsaved edits, ask first (nothing is lost silently)."""
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

