"""The studio's message handlers: each hands a worker's or widget's message to the session,
then redraws what changed.

:class:`SessionEvents` is a mixin of :class:`~rubric_studio.tui.app.StudioApp`. Grading
messages carry their run number; the session ignores those of a superseded run (its
command returns None/False) and the handler then draws nothing.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from textual.css.query import NoMatches
from textual.widgets import TabbedContent

from rubric_studio.tui import improve_edits, interop_actions
from rubric_studio.tui.matrix import ResultsMatrix
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

if TYPE_CHECKING:
    from rubric_studio.session.studio import StudioSession


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


def _parses(text: str, file: str) -> bool:
    """Whether ``text`` is YAML the editor's form can show (within the usual limits)."""
    from rubric_studio.core.problems import RubricError
    from rubric_studio.core.yamlpos import safe_load

    try:
        safe_load(text, file)
    except RubricError:
        return False
    return True


def _widgets_gone(app: Any) -> bool:
    """True while the app is closing: its message loop stopped or its screen unmounted."""
    try:
        return not app.is_running or not app.screen.is_mounted
    except Exception:  # no screen left at all
        return True


class SessionEvents:
    """Message handlers of the studio app (mixed into StudioApp)."""

    session: StudioSession
    selection: tuple[str | None, str | None]

    # -- files --------------------------------------------------------------------------
    def on_samples_loaded(self, message: SamplesLoaded) -> None:
        session = self.session
        taken = session.take_samples(message.read, initial=message.initial)
        self.show_problems()
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

    def on_labels_loaded(self, message: LabelsLoaded) -> None:
        if not self.session.take_labels(message.read):
            self.show_problems()
            return
        self.query_one(ResultsMatrix).reset()
        self.show_problems()
        self.calibration.publish()

    async def on_files_changed(self, message: FilesChanged) -> None:
        if "rubric" in message.kinds:
            await self._rubric_changed_on_disk()
        rest = message.kinds & {"samples", "labels"}
        if "labels" in rest and self.session.label_writer.is_own_write():
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
                self.show_problems()
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

    def _outside_edit_meets_edits(self, disk: str, state: Any) -> None:
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
    def on_editor_pane_changed(self, message: Any) -> None:
        self.refresh_bars()

    def on_editor_pane_saved(self, message: Any) -> None:
        self.save_flow.declined = None
        self.apply_saved_rubric()

    def on_editor_pane_save_refused(self, message: Any) -> None:
        self.save_flow.refused(message.error)  # the file changed on disk: ask, write nothing yet

    def on_editor_pane_selection_changed(self, message: Any) -> None:
        criterion_id = getattr(message, "criterion_id", None)
        if criterion_id:
            self.query_one(ResultsMatrix).select_criterion(criterion_id)

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
            self.show_problems()

    @_tolerate_shutdown
    def on_samples_graded(self, message: SamplesGraded) -> None:
        changed = self.session.rows_graded(message.run, message.samples)
        if changed is None:
            return
        self.query_one(ResultsMatrix).rows_changed(changed)
        if not self._editor_mounted:
            self.call_after_refresh(self.ensure_editor)
        if self._document_reload_pending:
            self.call_after_refresh(self._reload_document)
        self.refresh_bars()
        if self.selection[0] in set(changed):
            self.refresh_inspector()
            self.refresh_hint()

    @_tolerate_shutdown
    def on_grade_progress(self, message: GradeProgress) -> None:
        if self.session.run_progress(message.run, message.done, message.total, message.in_flight):
            self.refresh_bars()

    @_tolerate_shutdown
    def on_grade_finished(self, message: GradeFinished) -> None:
        outcome = self.session.run_finished(message.run, message.report)
        if outcome is None:
            return
        self.refresh_bars()
        self.calibration.graded(outcome)
        if outcome.judge_stopped:  # said once here; the cells carry it for the inspector
            self.notify(outcome.judge_stopped, title="Judging stopped", severity="warning", timeout=12)
        for warning in outcome.warnings:
            self.notify(warning, title="Judge", severity="warning", timeout=12)
        if len(self.screen_stack) == 1:  # never on top of another prompt; the next run asks
            self.trust_flow.offer()

    def on_grade_failed(self, message: GradeFailed) -> None:
        if self.session.run_failed(message.run, message.error):
            self.call_later(self._reload_document)
            self.show_problems()

    # -- calibration and interop workers ---------------------------------------------------
    def on_label_written(self, message: LabelWritten) -> None:
        """Our own label write landed: update the human column, marks and agreement at once."""
        self.session.label_written(message.sample_id, message.label, message.annotator)
        self.query_one(ResultsMatrix).rows_changed([message.sample_id])
        self.refresh_bars()
        self.refresh_hint()
        self.refresh_inspector()
        self.calibration.publish()
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
        self.select_sample(message.sample_id)
        self.action_show("results")

    # -- widgets ----------------------------------------------------------------------------
    # Named handlers (not ``@on``): a mixin's decorated handlers are not collected by Textual.
    def on_results_matrix_highlighted(self, message: ResultsMatrix.Highlighted) -> None:
        if isinstance(message, ResultsMatrix.Selected):
            return
        previous = self.selection[1]
        self.selection = (message.sample_id, message.criterion_id)
        self.refresh_hint()
        self.refresh_inspector()
        if message.criterion_id and message.criterion_id != previous and self.editor is not None:
            self.editor.select_criterion(message.criterion_id)

    def on_results_matrix_selected(self, message: ResultsMatrix.Selected) -> None:
        self.selection = (message.sample_id, message.criterion_id)
        self.query_one("#tabs", TabbedContent).active = "inspector"
        self.refresh_inspector()

    @_tolerate_shutdown
    def on_results_matrix_view_changed(self, message: ResultsMatrix.ViewChanged) -> None:
        self.refresh_bars()

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        if message.tabbed_content.id == "tabs":
            self.refresh_inspector()
