"""StudioApp: the rubric on the left, the live results on the right.

A thin Textual layer over one :class:`~rubric_studio.session.studio.StudioSession`, which owns
the document, samples, labels, judge, runs and versions. The app composes the panes, routes
keys and messages, and holds what several panes show; every flow lives in a module of its own,
gets the app as a :class:`~rubric_studio.tui.host.StudioHost` and never imports this module:

* what several panes show is held in a few reactive values — :attr:`StudioApp.problems`,
  :attr:`StudioApp.report`, :attr:`StudioApp.graded`, :attr:`StudioApp.labels`,
  :attr:`StudioApp.selection` — whose watchers have :mod:`~rubric_studio.tui.live_view` redraw
  every pane that shows them; a pane of its own subscribes with ``self.watch(self.app, "problems", …)``;
* workers call one session function and post a message (:mod:`rubric_studio.tui.messages`); each
  message handler here hands it to its flow: grading runs and the judge
  (:mod:`~rubric_studio.tui.grading`), samples, labels and the file watcher
  (:mod:`~rubric_studio.tui.files_flow`), the rubric edited outside
  (:mod:`~rubric_studio.tui.outside_edits`), labelling (:mod:`~rubric_studio.tui.calibration._labeling`);
* the keys' ``action_*`` methods are one line into their flow: saving (:mod:`~rubric_studio.tui.save_flow`),
  calibration (:mod:`~rubric_studio.tui.calibration._flow`), improving (:mod:`~rubric_studio.tui.improve`),
  trust (:mod:`~rubric_studio.tui.trust_prompt`), quitting (:mod:`~rubric_studio.tui.quit_flow`);
  the command palette's entries come from :mod:`~rubric_studio.tui.app_commands`, which gathers
  those of drafting, interop, probes, judges and the card. A flow needed only after the first
  frame (on a key, from the palette) is imported when first used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Static, TabbedContent, TabPane

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.studio import StudioSession
from rubric_studio.tui.calibration import CalibrationFlow, Labeler, agreement_title
from rubric_studio.tui.closing import tolerate_shutdown
from rubric_studio.tui.files_flow import FilesFlow
from rubric_studio.tui.footer import KeysFooter
from rubric_studio.tui.grading import GradingFlow
from rubric_studio.tui.key_order import focus_now, route_in_order
from rubric_studio.tui.live_view import LiveView
from rubric_studio.tui.outside_edits import OutsideEdits
from rubric_studio.tui.results import Inspector, ProbeFindings, ResultsMatrix, ResultsPane
from rubric_studio.tui.save_flow import SaveFlow
from rubric_studio.tui.statusbar import RunHeader, StatusBar
from rubric_studio.tui.trust_prompt import TrustFlow

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.widget import Widget

    from rubric_studio.core.labels import Label
    from rubric_studio.core.problems import Problem
    from rubric_studio.engine.report import Report
    from rubric_studio.tui.calibration import AgreementPanel
    from rubric_studio.tui.editor import EditorPane
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

EDITOR_DELAY = 0.3  # seconds after mount at the latest


class StudioApp(App[int]):
    """The rubric studio: composes the panes, routes keys and messages to the flows, and holds
    the values several panes show."""

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
    # so a letter typed anywhere else is never taken for a label (tui/label_keys.py).
    BINDINGS = STUDIO_BINDINGS

    # What several panes show. Each watcher redraws every pane that shows the value (live_view.py); a
    # pane of its own subscribes with ``self.watch(self.app, name, callback)`` instead of being added
    # there. They always notify: the session updates results and labels in place,
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
        #: A rubric the user asked to open next ("New rubric…"); the command line opens it after this app.
        self.next_rubric: Path | None = None
        self._editor_mounted = False
        self._agreement_mounted = False
        self._quitting = False
        #: The flipped cells of the bias probes run in this window (shown in the inspector).
        self.probe_findings = ProbeFindings()
        self.live = LiveView(self)
        self.grading = GradingFlow(self)
        self.files = FilesFlow(self, watching=watch)
        self.outside_edits = OutsideEdits(self)
        self.labeler = Labeler(self)
        self.save_flow = SaveFlow(self)
        self.calibration = CalibrationFlow(self)
        self.trust_flow = TrustFlow(self)

    # -- composition ---------------------------------------------------------------------
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
                        yield Static("", id="agreement-loading")  # the panel comes after the first screen
        yield StatusBar(id="status")
        yield KeysFooter(compact=True)

    def ensure_agreement(self) -> None:
        """Mount the Agreement panel (once, after the first screen: it is the heaviest widget not shown
        at start) and hand it the figures of the run already graded."""
        if self._agreement_mounted or not self.is_mounted or self._quitting:
            return
        self._agreement_mounted = True
        pane = self.query_one("#agreement", TabPane)
        pane.query("#agreement-loading").remove()
        panel = self._agreement_widget()
        pane.mount(panel)
        panel.call_after_refresh(self.calibration.publish)  # once the panel has composed its table

    def _agreement_widget(self) -> Widget:
        """The calibration panel (fed by ``calibration.publish``), or a note if it cannot load."""
        try:
            from rubric_studio.tui.calibration import AgreementPanel
        except ImportError as exc:
            return Static(f"Agreement panel unavailable: {exc}", id="agreement-view", markup=False)
        return AgreementPanel(id="agreement-view")

    def on_mount(self) -> None:
        self.apply_saved_rubric(initial=True)
        self.live.show_empty()
        self.refresh_bars()
        self.query_one("#banner").display = False
        self.query_one("#judge-note").display = False
        self.query_one(ResultsMatrix).focus()
        # Samples and labels are read in a thread, the judge resolved in another: the
        # first paint waits for neither.
        self.files.start()
        # The editor is the heaviest widget: it is mounted once the results are on
        # screen (or after a moment), so the first screen does not wait for it.
        self.set_timer(EDITOR_DELAY, self.ensure_editor)

    @property
    def editor(self) -> EditorPane | None:
        """The EditorPane, or None while it is not mounted yet."""
        return self.query("#editor").first() if self._editor_mounted else None  # type: ignore[return-value]

    def ensure_editor(self) -> None:
        """Mount the editor (once; never once the studio is quitting: its tabs would mount into a
        tree being torn down, and Textual's tabs fail their own mount with a traceback)."""
        if self._editor_mounted or not self.is_mounted or self._quitting:
            return
        from rubric_studio.tui import draft_screen
        from rubric_studio.tui.editor import EditorPane

        self.ensure_agreement()

        self._editor_mounted = True
        left = self.query_one("#left")
        left.query("#editor-loading").remove()
        editor = EditorPane(self.session.document, id="editor")
        left.mount(editor)
        if self.session.created_rubric:
            editor.call_after_refresh(editor.focus)  # once the editor has composed its fields
        self.call_after_refresh(draft_screen.offer_on_new, self)  # a new or empty rubric: "Draft criteria…" first

    def ensure_editor_soon(self) -> None:
        """Mount the editor once this frame is drawn (the first results are on screen)."""
        if not self._editor_mounted:
            self.call_after_refresh(self.ensure_editor)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Show a notification with its text as it is.

        Messages carry file names, sample ids and errors from files and servers: they are
        never read as markup (``x[/]`` would crash it, ``q[a]`` lose its ``[a]``) and their
        control characters never reach the terminal. Widgets' ``notify`` lands here too.
        """
        super().notify(terminal_safe(message, multiline=True), title=terminal_safe(title), severity=severity,
                       timeout=timeout, markup=False)

    async def on_unmount(self) -> None:
        self.files.stop()
        with contextlib.suppress(Exception):
            await self.session.aclose()

    def exit(self, *args: Any, **kwargs: Any) -> None:
        """Quit (see :meth:`App.exit`); nothing mounts from here on (:meth:`ensure_editor`)."""
        self._quitting = True
        super().exit(*args, **kwargs)

    # -- what several panes show: each watcher redraws the panes that show it ------------
    def watch_problems(self) -> None:
        self.live.problems_changed()

    def watch_graded(self, changed: Sequence[str]) -> None:
        self.live.rows_graded(changed)

    def watch_selection(self) -> None:
        self.live.selection_changed()

    def watch_report(self) -> None:
        self.live.report_changed()

    def watch_labels(self, old: Mapping[str, Label], new: Mapping[str, Label]) -> None:
        self.live.labels_changed(old, new)

    # -- what flows ask of the app (tui/host.py) ----------------------------------------------
    def apply_saved_rubric(self, text: str | None = None, *, initial: bool = False) -> bool:
        """Parse the rubric as saved (or ``text``); re-grade if valid. True when a re-grade started."""
        return self.grading.apply_saved_rubric(text, initial=initial)

    def rebuild_grader(self) -> None:
        self.grading.rebuild_grader()

    def consistency_run(self, k: int) -> bool:
        return self.grading.consistency_run(k)

    def select_sample(self, sample_id: str, criterion_id: str | None = None) -> None:
        self.live.select_sample(sample_id, criterion_id)

    def refresh_bars(self) -> None:
        self.live.refresh_bars()

    def refresh_inspector(self) -> None:
        self.live.refresh_inspector()

    def refresh_editor(self) -> None:
        if self.editor is not None:
            self.editor.refresh_from_document()

    async def _rubric_changed_on_disk(self) -> None:
        """As when the watcher reports the rubric changed (:mod:`~rubric_studio.tui.outside_edits`)."""
        await self.outside_edits.rubric_changed()

    # -- messages: each goes to its flow -----------------------------------------------------
    def on_samples_loaded(self, message: SamplesLoaded) -> None:
        self.files.samples_loaded(message)

    def on_labels_loaded(self, message: LabelsLoaded) -> None:
        self.files.labels_loaded(message)

    async def on_files_changed(self, message: FilesChanged) -> None:
        await self.files.changed(message.kinds)

    def on_grader_ready(self, message: GraderReady) -> None:
        self.grading.grader_ready(message)

    def on_grade_started(self, message: GradeStarted) -> None:
        self.grading.started(message)

    def on_samples_graded(self, message: SamplesGraded) -> None:
        self.grading.rows_graded(message)

    def on_grade_progress(self, message: GradeProgress) -> None:
        self.grading.progress(message)

    def on_grade_finished(self, message: GradeFinished) -> None:
        self.grading.finished(message)

    def on_grade_failed(self, message: GradeFailed) -> None:
        self.grading.failed(message)

    def on_label_written(self, message: LabelWritten) -> None:
        self.labeler.written(message)

    def on_label_write_failed(self, message: LabelWriteFailed) -> None:
        self.labeler.write_failed(message)

    @tolerate_shutdown
    def on_fit_ready(self, message: FitReady) -> None:
        self.calibration.fit_ready(message.fit)

    @tolerate_shutdown
    def on_import_done(self, message: ImportDone) -> None:
        from rubric_studio.tui import interop_actions

        interop_actions.imported(self, message.source, message.result)

    @tolerate_shutdown
    def on_action_failed(self, message: ActionFailed) -> None:
        self.notify(f"{message.what} failed: {message.error}", severity="error", timeout=10)

    @tolerate_shutdown
    def on_agreement_panel_jump_to_sample(self, message: AgreementPanel.JumpToSample) -> None:
        self.select_sample(message.sample_id)
        self.action_show("results")

    @tolerate_shutdown
    def on_editor_pane_changed(self, message: EditorPane.Changed) -> None:
        self.refresh_bars()

    @tolerate_shutdown
    def on_editor_pane_saved(self, message: EditorPane.Saved) -> None:
        self.save_flow.declined = None
        self.apply_saved_rubric()

    @tolerate_shutdown
    def on_editor_pane_save_refused(self, message: EditorPane.SaveRefused) -> None:
        self.save_flow.refused(message.error)  # the file changed on disk: ask, write nothing yet

    def on_editor_pane_selection_changed(self, message: EditorPane.SelectionChanged) -> None:
        self.live.editor_selected(message.criterion_id)

    def on_results_matrix_highlighted(self, message: ResultsMatrix.Highlighted) -> None:
        self.live.cursor_moved(message)

    def on_results_matrix_selected(self, message: ResultsMatrix.Selected) -> None:
        self.live.cell_chosen(message)

    @tolerate_shutdown
    def on_results_matrix_view_changed(self, message: ResultsMatrix.ViewChanged) -> None:
        self.refresh_bars()

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        self.live.tab_activated(message)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.live.mark_focused_pane()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self.live.mark_focused_pane()

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """Save a screenshot to ``path`` or the Downloads folder, created when missing; where it
        cannot be, to the current folder, saying why; when nothing can be written, say why."""
        from rubric_studio.tui.screenshots import folder_for

        folder = folder_for(self, path)
        return None if folder is None else super().deliver_screenshot(filename, str(folder), time_format)

    def on_delivery_failed(self, event: events.DeliveryFailed) -> None:
        from rubric_studio.tui.screenshots import delivery_failed

        delivery_failed(self, event)

    # -- keys ------------------------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        """Keys bound by the focused text control take effect in typing order (:mod:`.key_order`)."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            if await self._check_bindings(event.key, priority=True):
                return
            if route_in_order(self, event):
                return
        await super().on_event(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "show":  # a priority key: not from a dialog (the key is the dialog's then)
            return self.screen is self.screen_stack[0]
        return True

    async def action_quit(self) -> None:
        """Quit; with unsaved edits, ask first (nothing is lost silently)."""
        from rubric_studio.tui.quit_flow import quit_studio

        await quit_studio(self)

    def action_new_rubric(self) -> None:
        """Ask for a file name, create a starter rubric there and open it (after this rubric is closed)."""
        from rubric_studio.tui.quit_flow import open_new_rubric

        open_new_rubric(self)

    def action_help(self) -> None:
        from rubric_studio.tui.calibration import CALIBRATION_KEYS
        from rubric_studio.tui.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        self.push_screen(HelpScreen(self.STUDIO_BINDINGS, ResultsMatrix.NAVIGATION_BINDINGS, CALIBRATION_KEYS))

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
            focus_now(self.query_one(target))
        else:
            self.ensure_agreement()
            with contextlib.suppress(Exception):
                panel = self.query_one("#agreement-view")
                if panel.is_mounted:
                    panel.focus()  # the panel gives it to its table at once
                else:  # mounted just now (F6 right at start): once it has composed its table
                    panel.call_after_refresh(panel.focus)

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

    def action_regrade(self) -> None:
        """Re-grade now, retrying cells that ended in error."""
        self.grading.regrade_retrying_errors()

    def action_trust(self) -> None:
        self.trust_flow.offer(again=True)  # lists what trusting turns on; Trust remembers it

    # the results table's and the Agreement panel's keys (tui/label_keys.py)
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

    def action_recheck(self, step: int = 1) -> None:
        self.labeler.step_recheck(step)

    def action_toggle_own_labels(self) -> None:
        from rubric_studio.tui.calibration._annotators import toggle_own_labels

        toggle_own_labels(self)

    def action_fit(self) -> None:
        self.calibration.start_fit()

    def action_versions(self) -> None:
        self.calibration.show_versions()

    def action_consistency_run(self) -> None:
        self.calibration.ask_consistency()

    def action_improve(self) -> None:
        from rubric_studio.tui.improve._screen import open_improve

        open_improve(self)

    async def action_add_example(self) -> None:
        from rubric_studio.tui.improve._edits import add_cell_example

        await add_cell_example(self)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        from rubric_studio.tui import app_commands

        yield from app_commands.palette(self)
        yield from super().get_system_commands(screen)
