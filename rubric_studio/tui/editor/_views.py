"""How the editor pane shows its document: the YAML view, the list, both forms, the status line.

:class:`DocumentViews` is part of :class:`~rubric_studio.tui.editor._editor.EditorPane`. Showing
only reads the document: the fields are filled in without posting edits, and the fields
the user is typing in (or whose edit still waits) keep their text unless a refresh is
forced (undo, another criterion). It also follows the list's selection.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import OptionList, Static

from rubric_studio.core.document import RubricDocument
from rubric_studio.tui.editor._apply import EditBursts
from rubric_studio.tui.editor._criterion_form import CriterionForm
from rubric_studio.tui.editor._list import CriteriaList
from rubric_studio.tui.editor._rubric_form import RubricForm
from rubric_studio.tui.editor._widgets import FieldControl, FieldEdited, show_fields
from rubric_studio.tui.editor._yaml import YamlView, status_markup, yaml_note

__all__ = ["DocumentViews"]

if TYPE_CHECKING:
    from textual.message import Message

    _PaneBase = Widget
else:
    _PaneBase = object


class DocumentViews(_PaneBase):
    """The editor pane's views of its document, and its criterion selection."""

    document: RubricDocument
    selected: int | None
    _pending: dict[str, FieldEdited]
    _quiet_highlight: int | None
    _bursts: EditBursts
    _released_field: str | None

    if TYPE_CHECKING:
        async def _flush(self) -> bool: ...  # applies the field edits waiting
        def SelectionChanged(self, criterion_id: str | None, index: int | None = None) -> Message: ...  # noqa: N802

    # -- showing the document ---------------------------------------------------------
    async def _sync(self, force: bool = False, reset_yaml: bool = False) -> None:
        """Bring every view in line with the document (values of focused fields kept unless forced).

        Only shows: never writes to the document. Does nothing once the pane has left
        the app (the app may close while the editor is still being mounted).
        """
        if not self.is_attached:
            return
        try:
            await self._sync_views(force, reset_yaml)
        except NoMatches:
            if self.is_attached and self.app.is_running:
                raise  # a missing view while the app runs is a bug; while it shuts down, expected

    async def _sync_views(self, force: bool, reset_yaml: bool) -> None:
        document = self.document
        self.query_one("#ed-yaml", YamlView).show_text(document.text, reset=reset_yaml)
        self._sync_yaml_note()
        count = document.criteria_count
        if document.structure_problem is not None:
            pass  # keep the selection for when the YAML parses again
        elif count == 0:
            self.selected = None
        elif self.selected is None or self.selected >= count:
            self.selected = min(self.selected or 0, count - 1)
        self._sync_list()
        await self._sync_form(force=force)
        self.query_one("#ed-rubric", RubricForm).show_document(document, keep=self._kept_fields(), force=force)
        self._released_field = None
        self._sync_status()

    def _sync_yaml_note(self) -> None:
        note = self.query_one("#ed-yaml-problem", Static)
        text, state = yaml_note(self.document)
        note.update(text)
        note.set_class(state == "error", "-error")
        note.set_class(state == "ok", "-ok")
        note.display = state != "ok"

    def _sync_list(self) -> None:
        listing = self.query_one("#ed-list", CriteriaList)
        listing.show_document(self.document)
        if self._quiet_highlight is not None and listing.highlighted == self._quiet_highlight:
            return  # a selection asked for (select_criterion) is on its way: keep it
        if self.selected is not None and listing.highlighted != self.selected:
            self._quiet_highlight = self.selected
            listing.highlighted = self.selected

    async def _sync_form(self, force: bool = False) -> None:
        form = self.query_one("#ed-form", CriterionForm)
        form.show_criterion(self.document, self.selected)
        focused = self.app.focused
        focus_id = focused.id if focused is not None and form in focused.ancestors else None
        await form.apply_layout()
        if not self.is_attached:
            return
        if focus_id and self.app.focused is None:  # its row was rebuilt (score ranges)
            with contextlib.suppress(NoMatches):
                self.query_one(f"#{focus_id}").focus()
        force = force or form.index_changed
        show_fields(form.fields(), form.data or {}, keep=set() if force else self._kept_fields(), clear_errors=force)
        self._sync_form_problems(form.index)

    def _kept_fields(self) -> set[str]:
        """The fields a refresh leaves alone: the one being typed in, and those with an edit waiting
        (a focused field an outside edit changed before the user typed in it shows that value)."""
        keep = set(self._pending)
        focused = self.app.focused
        released = focused is not None and focused.id == self._released_field
        if isinstance(focused, FieldControl) and focused.id and not (released and focused.shows_document()):
            keep.add(focused.id)
        return keep

    def _sync_form_problems(self, index: int | None) -> None:
        with contextlib.suppress(NoMatches):
            widget = self.query_one("#ed-form-problems", Static)
            if index is None:
                widget.update("")
                return
            prefix = f"criteria[{index}]"
            mine = [p for p in self.document.problems() if prefix in p.message]
            widget.update("\n".join(f"{'✗' if p.severity == 'error' else '!'} {p}" for p in mine))
            widget.display = bool(mine)

    def _sync_status(self) -> None:
        self.query_one("#ed-status", Static).update(status_markup(self.document))

    # -- selection --------------------------------------------------------------------
    def _select(self, index: int, *, quiet: bool = False) -> None:
        """Select ``index``; a selection the list already has changes nothing (and echoes nothing)."""
        listing = self.query_one("#ed-list", CriteriaList)
        if listing.highlighted == index:
            if index != self.selected or not quiet:
                self.call_later(self._selection_made, index, quiet)
            return
        if quiet:
            self._quiet_highlight = index
        listing.highlighted = index

    async def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id != "ed-list":
            return
        event.stop()
        if event.option_index != event.option_list.highlighted:
            # Stale: the list moved on before this arrived (keys pressed quickly, or the results
            # cursor crossing several columns). Taking it for a pick would send the results
            # cursor back and start a ping-pong; the event for where the list is now follows.
            return
        quiet = self._quiet_highlight == event.option_index
        self._quiet_highlight = None
        await self._selection_made(event.option_index, quiet)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "ed-list":
            event.stop()

    async def _selection_made(self, index: int, quiet: bool) -> None:
        if index != self.selected:
            await self._flush()
            self.selected = index
            self._bursts.end()
            await self._sync_form()
        if not quiet:
            self._post_selection()

    def _post_selection(self) -> None:
        ids = self.document.criterion_ids()
        index = self.selected
        self.post_message(self.SelectionChanged(ids[index] if index is not None and index < len(ids) else None, index))
