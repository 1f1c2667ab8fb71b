"""Drawing the results matrix, one line at a time (Textual's Line API).

:class:`MatrixPainter` is the drawing half of :class:`~rubric_studio.tui.results._matrix.ResultsMatrix`
(mixed into it): line 0 names the focused sample and criterion in full (cells and headers
are cut to their columns, so this is where a long id can always be read), line 1 holds the
column titles, then one line per visible row, and the cell legend at the bottom when the
rows leave room. Only the lines on screen are built, so 10,000 rows cost nothing until seen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.results_model import cell_disagrees, filter_label, has_made_up_quote
from rubric_studio.tui.results._text import (
    GAP,
    HUMAN_W,
    LEGEND,
    LEGEND_LINES,
    MADE_UP,
    SCORE_W,
    SEPARATOR,
    VERDICT_W,
    cell_mark,
    column_title,
    fit,
    human_text,
    score_cell,
    squeeze,
    verdict_mark,
)

if TYPE_CHECKING:
    from rubric_studio.session.results_model import ResultsModel
    from rubric_studio.tui.results._layout import Column

HEADER_LINES = 2  # the focused line and the column titles
STALE = Style(dim=True, italic=True)


class MatrixPainter:
    """Builds the matrix's strips from the widget's state (rows, columns, cursor, styles)."""

    # Provided by the widget this is mixed into.
    model: ResultsModel
    rows: list[str]
    columns: list[Column]
    id_width: int
    cursor_row: int
    cursor_col: int
    col_offset: int
    filter_kind: str
    filter_criterion: str | None
    search: str
    _styles: dict[str, Style]
    _legend: dict[int, list[Strip]]

    def notify_style_update(self) -> None:
        super().notify_style_update()  # type: ignore[misc]
        self._styles.clear()
        self._legend.clear()

    def _style(self, name: str) -> Style:
        """A component's full Rich style (colours blended over the widget's background)."""
        style = self._styles.get(name)
        if style is None:
            style = self.get_component_rich_style(f"matrix--{name}")  # type: ignore[attr-defined]
            self._styles[name] = style
        return style

    def _background(self, name: str) -> Style:
        """Only the background (and text style) of a component, to lay over a cell's colour."""
        key = f"bg:{name}"
        style = self._styles.get(key)
        if style is None:
            full = self._style(name)
            style = Style(bgcolor=full.bgcolor, bold=full.bold, italic=full.italic, reverse=full.reverse)
            self._styles[key] = style
        return style

    def render_line(self, y: int) -> Strip:
        self._layout()  # type: ignore[attr-defined]
        width = self._width()  # type: ignore[attr-defined]
        base = self.rich_style  # type: ignore[attr-defined]
        if y == 0:
            strip = self._focus_strip(width)
        elif y == 1:
            strip = self._header_strip()
        else:
            top = int(self.scroll_y)  # type: ignore[attr-defined]
            row = top + y - HEADER_LINES
            if row < len(self.rows):
                strip = self._row_strip(row)
            elif row == 0 and not self.rows:
                strip = self._empty_strip()
            else:
                legend = self._legend_lines(width)
                first = self.scrollable_content_region.height - len(legend)  # type: ignore[attr-defined]
                # Only in room the rows leave free, one blank line below the last row.
                last = HEADER_LINES - 1 + max(len(self.rows), 1) - top  # the line of the last row
                if not (legend and y >= first and first >= last + 2):
                    return Strip.blank(width, base)
                strip = legend[y - first]
        return strip.crop_extend(0, width, base).apply_style(base)

    # -- the lines -----------------------------------------------------------------
    def _view_text(self) -> str:
        """The filter and the search in words ("" when showing every sample)."""
        parts = []
        if self.filter_kind != "all":
            parts.append("filter: " + filter_label(self.filter_kind, self.filter_criterion))
        if self.search.strip():
            parts.append(f"search: “{self.search}”")
        return terminal_safe(" · ".join(parts))

    def _focus_strip(self, width: int) -> Strip:
        """``focused  <sample id> · <criterion id>`` in full, and the filter / search when there is room."""
        plain, strong = self._style("focus"), self._style("focus") + Style(bold=True)
        sample_id, criterion_id = self.current  # type: ignore[attr-defined]
        segments = [Segment(" focused  ", plain)]
        if sample_id is None:
            segments.append(Segment("—", plain))
        else:
            segments.append(Segment(terminal_safe(sample_id), strong))
            segments.append(Segment(" · ", plain))
            if criterion_id is None:
                segments.append(Segment("every criterion", plain))
            else:
                column = self.columns[self.cursor_col - 1]
                segments.append(Segment(column.title, strong))
        view = self._view_text()
        used = sum(cell_len(s.text) for s in segments)
        if view and used + 2 + cell_len(view) + 1 <= width:
            segments.append(Segment(" " * (width - used - cell_len(view) - 1) + view + " ", plain))
        return Strip(segments)

    def _empty_strip(self) -> Strip:
        if not self.model.order:
            text = "  no samples"
        elif self.search.strip():
            text = f"  no samples match “{terminal_safe(self.search)}” — esc clears the search"
            if self.filter_kind != "all":
                text += f", f changes the filter “{filter_label(self.filter_kind, self.filter_criterion)}”"
        else:
            text = f"  no samples match the filter “{filter_label(self.filter_kind, self.filter_criterion)}” — press f to change it"
        return Strip([Segment(text, self._style("empty"))])

    def _legend_lines(self, width: int) -> list[Strip]:
        """The cell legend, wrapped to ``width`` (at most LEGEND_LINES lines; none if it does not fit)."""
        cached = self._legend.get(width)
        if cached is not None:
            return cached
        muted = self._style("pending")
        lines: list[list[Segment]] = [[]]
        used = 0
        for mark, style, meaning in LEGEND:
            length = cell_len(mark) + 1 + cell_len(meaning)
            gap = 2 if used else 1
            if used and used + gap + length > width:
                lines.append([])
                used = 0
                gap = 1
            if gap + length > width:
                lines = []
                break
            line = lines[-1]
            line.append(Segment(" " * gap, muted))
            if mark == "↑↓":
                line.append(Segment("↑", self._style("flip-up")))
                line.append(Segment("↓", self._style("flip-down")))
            else:
                line.append(Segment(mark, self._style(style)))
            line.append(Segment(" " + meaning, muted))
            used += gap + length
        strips = [Strip(line) for line in lines] if 0 < len(lines) <= LEGEND_LINES else []
        self._legend[width] = strips
        return strips

    def _header_strip(self) -> Strip:
        head = self._style("header")
        cursor_head = head + self._background("header-cursor")
        total = len(self.model.order)
        title = f"{total} samples" if len(self.rows) == total else f"{len(self.rows)}/{total} samples"
        # "score" starts one cell left of the scores (in the gap after the ids), so the
        # three headers keep a space between them in SCORE_W + VERDICT_W + HUMAN_W cells.
        segments = [
            Segment(fit(title, self.id_width - 1) + " ", cursor_head if self.cursor_col == 0 else head),
            Segment(fit("score", SCORE_W + GAP) + " " + fit("verdict", VERDICT_W) + " " + fit("human", HUMAN_W), head),
            Segment("‹ " if self.col_offset > 0 else SEPARATOR, head),
        ]
        shown = self._shown_columns()  # type: ignore[attr-defined]
        for index in shown:
            column = self.columns[index]
            style = cursor_head if index + 1 == self.cursor_col else head
            segments.append(Segment(column_title(column.criterion, column.width), style))
            segments.append(Segment(" " * GAP, head))
        if shown.stop < len(self.columns):
            segments.append(Segment(f"+{len(self.columns) - shown.stop}›", head))
        return Strip(segments)

    def _row_strip(self, row: int) -> Strip:
        self._layout()  # type: ignore[attr-defined]
        model = self.model
        sample_id = self.rows[row]
        result = model.results.get(sample_id)
        label = model.labels.get(sample_id)
        on_row = row == self.cursor_row
        paint = RowPaint(self, cursor_row=on_row, stale=model.stale)
        paint.add(fit(sample_id, self.id_width), "id", at_cursor=on_row and self.cursor_col == 0)
        vtext, vstyle = verdict_mark(result)
        paint.add(score_cell(result), vstyle)
        paint.cell(vtext, vstyle, VERDICT_W, paint.flip_mark(model.verdict_flips.get(sample_id, 0)))
        htext, hstyle = human_text(result, label)
        paint.add(" " + fit(htext, HUMAN_W), hstyle)
        paint.add(SEPARATOR, "id")
        flips = model.flips.get(sample_id, {})
        cells = {c.id: c for c in result.criteria} if result is not None else {}
        for index in self._shown_columns():  # type: ignore[attr-defined]
            column = self.columns[index]
            key = column.criterion.key
            cell = cells.get(key)
            text, style = cell_mark(column.criterion, cell)
            if cell_disagrees(cell, label):
                style, text = "disagree", text + "≠"
            marks = [(MADE_UP, "made-up")] if has_made_up_quote(cell) else []
            marks += paint.flip_mark(flips.get(key, 0))
            paint.cell(text, style, column.width, marks, at_cursor=on_row and self.cursor_col == index + 1)
            paint.add(" " * GAP, "id")
        return Strip(paint.segments)


class RowPaint:
    """The segments of one row, styled for the cursor row, the cursor cell and stale results."""

    def __init__(self, painter: MatrixPainter, *, cursor_row: bool, stale: bool) -> None:
        self.painter = painter
        self.segments: list[Segment] = []
        self.row_style = painter._background("cursor-row") if cursor_row else Style()
        self.cursor = painter._background("cursor")
        self.stale = STALE if stale else Style()

    def add(self, text: str, name: str, *, at_cursor: bool = False) -> None:
        style = self.painter._style(name) + self.row_style
        if at_cursor:
            style = style + self.cursor
        self.segments.append(Segment(text, style + self.stale))

    @staticmethod
    def flip_mark(flip: int) -> list[tuple[str, str]]:
        """The reversed ↑ / ↓ of a cell or verdict that flipped (none when it did not)."""
        if not flip:
            return []
        return [("↑", "flip-up")] if flip > 0 else [("↓", "flip-down")]

    def cell(self, text: str, name: str, width: int, marks: list[tuple[str, str]], *, at_cursor: bool = False) -> None:
        """``text`` in ``width`` cells, squeezed to leave a cell for each mark after it (the
        made-up ``?`` gives way first when even the squeezed text needs the room)."""
        room = width - len(marks)
        if len(marks) > 1 and cell_len(squeeze(text, room)) > room:
            marks = marks[1:]
            room += 1
        text = squeeze(text, room)
        shown = text if cell_len(text) <= room else fit(text, room)
        self.add(shown, name, at_cursor=at_cursor)
        for mark, style in marks:
            self.add(mark, style, at_cursor=at_cursor)
        rest = width - cell_len(shown) - len(marks)
        if rest > 0:
            self.add(" " * rest, name, at_cursor=at_cursor)
