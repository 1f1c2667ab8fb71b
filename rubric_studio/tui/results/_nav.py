"""Moving around the results matrix: keys, paging, jumps, sideways scrolling and the mouse.

:class:`MatrixNavigation` is mixed into :class:`~rubric_studio.tui.results._matrix.ResultsMatrix`:
the cursor is a (row, column) pair (column 0 is the sample columns), the view scrolls to
keep it on screen, and every move posts ``Highlighted`` once the cell under the cursor
changed. Jumps (next flip, next sample without a label) go through the rows shown, wrapping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events

from rubric_studio.session.labels import next_unlabelled
from rubric_studio.session.results_model import FILTERS, SORTS
from rubric_studio.tui.results._render import HEADER_LINES
from rubric_studio.tui.results._text import GAP

if TYPE_CHECKING:
    from rubric_studio.session.results_model import ResultsModel
    from rubric_studio.tui.results._layout import Column


class MatrixNavigation:
    """The matrix's actions and cursor bookkeeping."""

    # Provided by the widget this is mixed into.
    model: ResultsModel
    rows: list[str]
    columns: list[Column]
    cursor_row: int
    cursor_col: int
    col_offset: int
    filter_kind: str
    sort_by: str
    reverse: bool
    _highlighted: tuple[str | None, str | None]
    _pressed: tuple[int | None, int | None] | None = None  # the cell a mouse button went down on

    # -- actions -----------------------------------------------------------------
    def action_cycle_filter(self) -> None:
        keys = list(FILTERS)
        self.filter_kind = keys[(keys.index(self.filter_kind) + 1) % len(keys)]

    def action_cycle_sort(self) -> None:
        keys = list(SORTS)
        self.sort_by = keys[(keys.index(self.sort_by) + 1) % len(keys)]

    def action_reverse_sort(self) -> None:
        self.reverse = not self.reverse

    def action_cursor(self, rows: int, cols: int) -> None:
        self._move(self.cursor_row + rows, self.cursor_col + cols)

    def action_page(self, direction: int) -> None:
        self._move(self.cursor_row + direction * max(1, self._page_height() - 1), self.cursor_col)

    def action_edge(self, direction: int) -> None:
        self._move(0 if direction < 0 else len(self.rows) - 1, self.cursor_col)

    def action_next_flip(self, direction: int) -> None:
        flips = self.model.flips
        count = len(self.rows)
        for step in range(1, count + 1):
            row = (self.cursor_row + direction * step) % count
            sample_id = self.rows[row]
            if sample_id in flips or sample_id in self.model.verdict_flips:
                cells = flips.get(sample_id, {})
                col = self.cursor_col
                for index, column in enumerate(self.columns):
                    if column.criterion.key in cells:
                        col = index + 1
                        break
                self._move(row, col)
                return

    def action_next_unlabelled(self, direction: int) -> None:
        """The next (1) / previous (−1) sample shown that has no human label yet, wrapping: a labelling queue."""
        target = next_unlabelled(self.model, self.rows, self.cursor_row, direction)
        if target is None:
            self.notify("Every sample shown has a label." if self.rows else "No samples shown.",  # type: ignore[attr-defined]
                        timeout=3)
            return
        self._move(self.rows.index(target), self.cursor_col)

    def action_inspect(self) -> None:
        sample_id, criterion_id = self.current  # type: ignore[attr-defined]
        if sample_id is not None:
            self.post_message(self.Selected(sample_id, criterion_id))  # type: ignore[attr-defined]

    # -- the cursor --------------------------------------------------------------
    def _page_height(self) -> int:
        """How many rows fit under the focused line and the titles."""
        return max(1, self.scrollable_content_region.height - HEADER_LINES)  # type: ignore[attr-defined]

    def _move(self, row: int, col: int) -> None:
        self.cursor_row = max(0, min(row, len(self.rows) - 1))
        self.cursor_col = max(0, min(col, len(self.columns)))
        self._scroll_to_cursor()
        self.refresh()  # type: ignore[attr-defined]
        self._maybe_highlight()

    def _maybe_highlight(self) -> None:
        current = self.current  # type: ignore[attr-defined]
        if current != self._highlighted:
            self._highlighted = current
            self.post_message(self.Highlighted(*current))  # type: ignore[attr-defined]

    def _scroll_to_cursor(self) -> None:
        height = self._page_height()
        top = int(self.scroll_y)  # type: ignore[attr-defined]
        if self.cursor_row < top:
            top = self.cursor_row
        elif self.cursor_row >= top + height:
            top = self.cursor_row - height + 1
        if top != int(self.scroll_y):  # type: ignore[attr-defined]
            self.scroll_to(y=top, animate=False, immediate=True)  # type: ignore[attr-defined]
        # Sideways: keep the cursor's criterion column on screen.
        fits = self._column_fits  # type: ignore[attr-defined]
        if self.cursor_col > 0:
            index = self.cursor_col - 1
            if index < self.col_offset:
                self.col_offset = index
            else:
                while self.col_offset < index and not fits(index):
                    self.col_offset += 1
        # Room on the left (the table got wider): scroll back as far as keeps the
        # cursor's column, or the last column shown, on screen.
        keep = self.cursor_col - 1 if self.cursor_col > 0 else self._shown_columns().stop - 1  # type: ignore[attr-defined]
        while self.col_offset > 0:
            self.col_offset -= 1
            if not fits(keep):
                self.col_offset += 1
                break

    # -- mouse -------------------------------------------------------------------
    def on_mouse_down(self, event: events.MouseDown) -> None:
        # The cell is taken where the button went down: focus moving here may widen the
        # table (the editor narrows) before the button comes up.
        self._pressed = self._cell_at(event.get_content_offset(self))  # type: ignore[arg-type]

    def on_click(self, event: events.Click) -> None:
        pressed, self._pressed = self._pressed, None
        cell = pressed if pressed is not None else self._cell_at(event.get_content_offset(self))  # type: ignore[arg-type]
        if cell is None:
            return
        self.focus()  # type: ignore[attr-defined]
        row, col = cell
        if row is None:  # the titles
            if col is not None and col > 0:
                self._move(self.cursor_row, col)
            return
        self._move(row, self.cursor_col if col is None else col)
        if event.chain >= 1:
            self.action_inspect()

    def _cell_at(self, offset: object) -> tuple[int | None, int | None] | None:
        """(row or None on the titles, column or None) at a content offset; None: nowhere to click."""
        if offset is None or offset.y < HEADER_LINES - 1:  # type: ignore[attr-defined]
            return None
        col = self._column_at(offset.x)  # type: ignore[attr-defined]
        if offset.y == HEADER_LINES - 1:  # type: ignore[attr-defined]
            return None, col
        row = int(self.scroll_y) + offset.y - HEADER_LINES  # type: ignore[attr-defined]
        return None if row >= len(self.rows) else (row, col)

    def _column_at(self, x: int) -> int | None:
        fixed = self._fixed_width()  # type: ignore[attr-defined]
        if x < fixed:
            return 0
        position = fixed
        for index in self._shown_columns():  # type: ignore[attr-defined]
            width = self.columns[index].width + GAP
            if position <= x < position + width:
                return index + 1
            position += width
        return None
