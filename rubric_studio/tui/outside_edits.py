"""The rubric file changed on disk while the studio has it open (another editor, a ``git pull``).

Without unsaved edits, the new text is graded at once and the editor takes it once its verdicts
are drawn (re-reading the YAML style costs tens of ms, the verdicts come first). With unsaved
edits or typing under way, an outside edit that touches other lines and not the field being typed
in is merged around them; otherwise nothing is merged and the user decides
(:class:`~rubric_studio.tui.save_flow.SaveFlow`: a dialog, or while typing a notice, since a
dialog would take their keys). An outside edit that breaks the rubric shows its error and keeps
the last results, marked stale. Our own save is recognised and ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rubric_studio.tui.host import StudioHost


def parses(text: str, file: str) -> bool:
    """Whether ``text`` is YAML the editor's form can show (within the usual limits)."""
    from rubric_studio.core.problems import RubricError
    from rubric_studio.core.yamlpos import safe_load

    try:
        safe_load(text, file)
    except RubricError:
        return False
    return True


class OutsideEdits:
    """Follows outside edits of one studio's rubric."""

    def __init__(self, app: StudioHost) -> None:
        self.app = app
        #: The disk text being graded is to be taken into the editor once its verdicts are drawn ...
        self.reload_pending = False
        #: ... that text and its disk state.
        self._graded_disk: tuple[str, object] = ("", None)

    async def rubric_changed(self) -> None:
        """The watcher saw the rubric file change: grade the new text, merge it or ask."""
        from rubric_studio.core.problems import RubricError

        app = self.app
        session = app.session
        document = session.document
        try:
            disk, state = document.read_disk_state()
        except RubricError as exc:
            if session.rubric_path.exists():  # unreadable (not UTF-8, too large ...): say why, keep the results
                session.set_problems("rubric", exc.problems)
                app.problems = session.problems
            return  # else removed or being replaced: wait for the file to come back
        if disk == document.disk_text:
            return  # our own save
        editor = app.editor
        if editor is not None:
            await editor.flush()  # typing still waiting for its pause is part of the user's edits
        if document.dirty or (editor is not None and editor.typing_in() is not None):
            self._meets_edits(disk, state)
            return
        # The new verdicts first: grade the disk text now, and let the editor take it
        # (reload_from_disk re-detects the YAML style, tens of ms) once they are drawn.
        self.reload_pending = True
        self._graded_disk = (disk, state)
        if not app.apply_saved_rubric(disk):
            await self.reload_document()

    def _meets_edits(self, disk: str, state: object) -> None:
        """An outside edit while the user has unsaved edits or is typing: it merges around them
        when it touches other lines and not the field being typed in; else nothing is merged and
        the user decides (a dialog, or while typing a notice: a dialog would take their keys)."""
        app = self.app
        document, editor = app.session.document, app.editor
        typing = editor is not None and editor.typing_in() is not None
        touched = editor.outside_edit_meets_typing(disk) if editor is not None else None
        why = f" in {touched}, which you are editing" if touched else " in lines you changed"
        merged = document.merge_disk(disk)
        if merged.clean and not parses(merged.text, document.file):
            # The outside edit breaks the rubric: its error shows (the results stay, marked stale),
            # and nothing is merged into the editor, whose form would give way to the error.
            app.apply_saved_rubric(disk)
            touched, why = touched or "the file", " and no longer parses (its error is shown)"
        if touched is None and merged.clean:
            selected = editor.selected_id() if editor is not None else None
            base = document.disk_text
            document.take_disk(disk, state, merged.text)
            if editor is not None:
                editor.took_outside_edit(selected, base)
            app.apply_saved_rubric(disk)
            app.save_flow.merged_outside_edit()
        elif typing:
            app.save_flow.kept_typing(disk, why)
        else:
            app.save_flow.changed_on_disk(disk, state)  # asks, unless the user already declined this version

    def verdicts_shown(self) -> None:
        """A run drew new verdicts: a disk text graded ahead of the editor goes into it next."""
        if self.reload_pending:
            self.app.call_after_refresh(self.reload_document)

    async def reload_document(self) -> None:
        """Bring the editor's document up to the file on disk (after an outside edit)."""
        if not self.reload_pending:
            return
        self.reload_pending = False
        app = self.app
        document, editor = app.session.document, app.editor
        if editor is not None:
            await editor.flush()
        graded, state = self._graded_disk
        if document.dirty:  # the user typed in the moment between: merge or ask, as for any outside edit
            await self.rubric_changed()
            return
        # Take exactly the text that was graded: a newer version written meanwhile must be
        # graded too, not slipped into the editor (its own change event would then see no change).
        if graded != document.disk_text:
            selected = editor.selected_id() if editor is not None else None
            base = document.disk_text
            document.take_disk(graded, state)
            if editor is not None:
                editor.took_outside_edit(selected, base)
        await self.rubric_changed()
