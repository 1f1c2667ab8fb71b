"""The editor's structural edits: add, duplicate, delete and move criteria, add and remove bands.

:class:`StructureActions` is part of :class:`~rubric_studio.tui.editor._editor.EditorPane`: it
answers the criteria list's keys (:class:`CriteriaList.Command`) and the score-range
buttons. Each operation first applies the typing still waiting for its pause, then makes
one document edit (its own undo step), selects what it made, and posts ``Changed``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Button

from rubric_studio.core.document import EditError, RubricDocument
from rubric_studio.tui.editor._list import ConfirmDelete, CriteriaList
from rubric_studio.tui.editor._specs import next_band, range_keys
from rubric_studio.tui.editor._widgets import FieldArea, FieldInput

__all__ = ["StructureActions"]

if TYPE_CHECKING:
    _PaneBase = Widget
else:
    _PaneBase = object


class StructureActions(_PaneBase):
    """Criteria and band operations of the editor pane (which provides the attributes below)."""

    document: RubricDocument
    selected: int | None

    if TYPE_CHECKING:
        async def flush(self) -> None: ...  # applies typing still waiting for its pause
        async def _after_edit(self, *, force: bool = False) -> None: ...  # shows the edit, posts Changed
        def _post_selection(self) -> None: ...  # posts SelectionChanged for the selected criterion
        def focus_form(self) -> None: ...

    # -- messages from the list and the band buttons ------------------------------------
    async def on_criteria_list_command(self, event: CriteriaList.Command) -> None:
        event.stop()
        if event.command == "add":
            await self.add_criterion()
        elif event.command == "duplicate":
            await self.duplicate_criterion()
        elif event.command == "delete":
            self.confirm_delete()
        elif event.command == "move":
            await self.move_criterion(event.delta)
        elif event.command == "edit":
            self.focus_form()

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        button_id = event.button.id or ""
        if button_id == "ed-range-add":
            event.stop()
            await self.add_score_range()
        elif button_id.startswith("ed-range-del-"):
            event.stop()
            await self.remove_score_range(int(button_id.rsplit("-", 1)[1]))

    # -- criteria ------------------------------------------------------------------------
    async def _structural(self, operation: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
        """Run a list operation after applying pending typing; (ok, result)."""
        await self.flush()
        try:
            result = operation(*args)
        except (EditError, IndexError) as exc:
            self.notify(str(exc), severity="error", title="Editor")
            return False, None
        return True, result

    async def add_criterion(self) -> None:
        """Add a criterion after the selected one and put the cursor in its outcome, ready to type over."""
        index = 0 if self.selected is None else self.selected + 1
        ok, new = await self._structural(self.document.add_criterion, None, index)
        if not ok:
            return
        self.selected = new
        await self._after_edit()
        self._post_selection()
        area = self.query_one("#ed-f-outcome", FieldArea)
        area.focus()
        area.select_all()

    async def duplicate_criterion(self) -> None:
        if self.selected is None:
            return
        ok, new = await self._structural(self.document.duplicate_criterion, self.selected)
        if not ok:
            return
        self.selected = new
        await self._after_edit()
        self._post_selection()

    def confirm_delete(self) -> None:
        """Ask, then delete the selected criterion."""
        if self.selected is None:
            return
        ids = self.document.criterion_ids()
        index = self.selected
        if index >= len(ids):
            return

        async def done(answer: bool | None) -> None:
            if answer:
                await self.delete_criterion(index)

        self.app.push_screen(ConfirmDelete(ids[index]), done)

    async def delete_criterion(self, index: int | None = None) -> None:
        """Delete without asking (the list's ``d`` asks first)."""
        index = self.selected if index is None else index
        if index is None:
            return
        ok, _ = await self._structural(self.document.delete_criterion, index)
        if not ok:
            return
        count = self.document.criteria_count
        self.selected = min(index, count - 1) if count else None
        await self._after_edit()
        self._post_selection()
        with contextlib.suppress(NoMatches):
            self.query_one("#ed-list", CriteriaList).focus()

    async def move_criterion(self, delta: int) -> None:
        if self.selected is None:
            return
        ok, new = await self._structural(self.document.move_criterion, self.selected, delta)
        if not ok or new == self.selected:
            return
        self.selected = new
        await self._after_edit()

    # -- score ranges ---------------------------------------------------------------------
    async def add_score_range(self) -> None:
        """Add a band at the next free bound and put the cursor in its text (empty: the field's
        placeholder asks for it, so typing never mixes with a default)."""
        if self.selected is None:
            return
        await self.flush()
        lower = next_band(self.document.criterion_data(self.selected))
        if lower is None:
            return
        try:
            self.document.set_score_range(self.selected, lower, "")
        except EditError as exc:
            self.notify(str(exc), severity="error", title="Editor")
            return
        await self._after_edit()
        row = range_keys(self.document.criterion_data(self.selected)).index(lower)
        with contextlib.suppress(NoMatches):
            self.query_one(f"#ed-range-text-{row}", FieldInput).focus()

    async def remove_score_range(self, row: int) -> None:
        if self.selected is None:
            return
        await self.flush()
        keys = range_keys(self.document.criterion_data(self.selected))
        if not 0 <= row < len(keys):
            return
        self.document.remove_score_range(self.selected, keys[row])
        await self._after_edit()
