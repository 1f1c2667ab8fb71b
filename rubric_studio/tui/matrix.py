"""The live results matrix: one line per sample, one column per criterion.

A Line-API widget (like Textual's DataTable, but rendering only the visible lines
from a :class:`~rubric_studio.session.results_model.ResultsModel`): no widget per cell and no
per-cell measuring, so 10,000 samples open, scroll and filter at once. The header
and the sample columns stay put; criterion columns scroll sideways by column.

Cells are compact so that a rubric's criteria fit beside the editor: ``✓`` / ``✗``
(met / unmet; green when that is good, red when bad — a penalty met is red), ``✓ 8``
(an analytic raw score), ``✗.29`` (a check's partial score), ``⚠`` (error), ``·``
(unjudged), ``⋯`` (pending), ``≠`` (differs from the human label) and a reversed
``↑`` / ``↓`` (flipped since the last save). Criterion titles are cut to the column
with ``…``; the full id of the column under the cursor is in the cell hint under the
table, and in the inspector. When rows leave room, a legend shows at the bottom.

Attributes down: the app sets :attr:`ResultsMatrix.model` and calls
:meth:`ResultsMatrix.rows_changed` / :meth:`ResultsMatrix.reset`. Messages up:
:class:`ResultsMatrix.Highlighted` (cursor moved), :class:`ResultsMatrix.Selected`
(enter / click), :class:`ResultsMatrix.ViewChanged` (filter or sort changed).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rubric_studio.core.labels import Label
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict, score_label
from rubric_studio.core.results import cell_mark as status_mark
from rubric_studio.core.rubric import Criterion
from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.results_model import FILTERS, SORTS, ResultsModel, cell_disagrees, label_verdict_disagrees

ID_MIN, ID_MAX = 8, 16
ID_COMPACT = 12  # the id column gives up to this much width when that shows another criterion
CRIT_MIN, CRIT_MAX = 5, 12  # criterion columns: compact, and as wide as a title may make them (room allowing)
SCORE_W, VERDICT_W, HUMAN_W = 4, 7, 5  # "0.56", "✗ fail↓", "pass≠" (a partial "[.56]" takes the gap before)
GAP = 1
SEPARATOR = "│ "  # between the sample columns and the criteria ("‹ " in the header when scrolled sideways)
STALE = Style(dim=True, italic=True)
REBUILD_INTERVAL = 0.1  # seconds between re-sorts/re-filters while results stream in


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells (with …) and padded; terminal-safe (every string the
    matrix draws goes through here, so a control character in an id cannot reach the terminal)."""
    if width <= 0:
        return ""
    text = terminal_safe(text)
    length = cell_len(text)
    if length > width:
        out = ""
        for char in text:
            if cell_len(out + char) > width - 1:
                break
            out += char
        return out + "…" + " " * (width - cell_len(out) - 1)
    return text + " " * (width - length)


def cell_text(criterion: Criterion, cell: CriterionResult | None) -> tuple[str, str]:
    """A cell in words (the inspector and the cell hint), and its style name."""
    mark, style = cell_mark(criterion, cell)
    if cell is None or cell.status is Status.PENDING:
        return mark, style
    if cell.status is Status.ERROR:
        return "⚠ error", style
    if cell.status is Status.UNJUDGED:
        return "unjudged", style
    if mark in ("✓", "✗"):
        return mark + (" met" if cell.status is Status.MET else " unmet"), style
    return mark.replace("✓.", "✓ .").replace("✗.", "✗ ."), style


def cell_mark(criterion: Criterion, cell: CriterionResult | None) -> tuple[str, str]:
    """What a criterion cell of the matrix shows (``✓``, ``✗ 4``, ``✗.29``, ``⚠`` ...), and its style name."""
    mark = status_mark(criterion.kind, cell)
    if cell is None or cell.status is Status.PENDING:
        return mark, "pending"
    if cell.status is Status.ERROR:
        return mark, "error"
    if cell.status is Status.UNJUDGED:
        return mark, "unjudged"
    return mark, "good" if (cell.status is Status.MET) != criterion.is_penalty else "bad"


VERDICT_TEXT = {
    Verdict.PASS: ("✓ pass", "pass"),
    Verdict.FAIL: ("✗ fail", "fail"),
    Verdict.ERROR: ("⚠ error", "error"),
    Verdict.PENDING: ("⋯", "pending"),
    Verdict.UNJUDGED: ("unjudged", "unjudged"),
}
VERDICT_MARK = {
    Verdict.PASS: ("✓ pass", "pass"),
    Verdict.FAIL: ("✗ fail", "fail"),
    Verdict.ERROR: ("⚠ err", "error"),
    Verdict.PENDING: ("⋯", "pending"),
    Verdict.UNJUDGED: ("·", "unjudged"),
}


def verdict_text(result: SampleResult | None) -> tuple[str, str]:
    """A sample's verdict in words (the inspector), and its style name."""
    if result is None:
        return "⋯", "pending"
    return VERDICT_TEXT.get(result.verdict, (str(result.verdict), "pending"))


def verdict_mark(result: SampleResult | None) -> tuple[str, str]:
    """The matrix's verdict column: ``✓ pass`` / ``✗ fail`` / ``⚠ err`` / ``⋯`` / ``·``."""
    if result is None:
        return "⋯", "pending"
    return VERDICT_MARK.get(result.verdict, (str(result.verdict), "pending"))


def score_cell(result: SampleResult | None) -> str:
    """The score column with its gaps: `` 0.56 ``; a sample without a final verdict shows its
    partial figure bracketed, ``[.56] `` (the opening bracket in the gap before), never as a score."""
    if result is None or (result.score is None and result.partial_score is None):
        return " " * (GAP + SCORE_W + GAP)
    if result.score is not None:
        return " " * GAP + fit(f"{result.score:.2f}", SCORE_W) + " " * GAP
    partial = score_label(None, result.partial_score, digits=2, compact=True)
    return fit(partial, GAP + SCORE_W) + " " * GAP


def human_text(result: SampleResult | None, label: Label | None) -> tuple[str, str]:
    if label is None or label.verdict is None:
        return "·", "pending"
    if label_verdict_disagrees(result, label):
        return f"{label.verdict}≠", "disagree"
    return label.verdict, "human"


def squeeze(text: str, width: int) -> str:
    """``text`` in ``width`` cells: first without its space ("✓ 10" → "✓10"), then without "≠"."""
    if cell_len(text) > width:
        text = text.replace(" ", "", 1)
    if cell_len(text) > width:
        text = text.replace("≠", "")
    return text


def column_title(criterion: Criterion, width: int) -> str:
    """A criterion's id cut to ``width`` with …, keeping the ``*`` of a required one."""
    if not criterion.required:
        return fit(criterion.key, width)
    if cell_len(criterion.key) + 1 <= width:
        return fit(criterion.key + "*", width)
    return fit(criterion.key, width - 1).rstrip() + "*"


LEGEND: tuple[tuple[str, str, str], ...] = (
    ("✓", "good", "met"),
    ("✗", "bad", "unmet (red: bad for the sample)"),
    ("✓ 8", "good", "judge score 0-10"),
    ("✗.29", "bad", "check score"),
    ("⚠", "error", "error"),
    ("·", "unjudged", "unjudged"),
    ("⋯", "pending", "pending"),
    ("↑↓", "flip-up", "flipped by your last save"),
    ("≠", "disagree", "differs from your label"),
    ("*", "header", "required"),
)
LEGEND_LINES = 3  # at most


@dataclass
class Column:
    criterion: Criterion
    width: int
    title: str  # the full title: id, and * when required

    @property
    def natural(self) -> int:
        """As wide as the title (within CRIT_MIN..CRIT_MAX)."""
        return max(CRIT_MIN, min(CRIT_MAX, cell_len(self.title)))


class ResultsMatrix(ScrollView, can_focus=True):
    """Samples × criteria, virtualised."""

    COMPONENT_CLASSES = {
        "matrix--header",
        "matrix--header-cursor",
        "matrix--id",
        "matrix--cursor",
        "matrix--cursor-row",
        "matrix--good",
        "matrix--bad",
        "matrix--pass",
        "matrix--fail",
        "matrix--error",
        "matrix--pending",
        "matrix--unjudged",
        "matrix--human",
        "matrix--disagree",
        "matrix--flip-up",
        "matrix--flip-down",
        "matrix--empty",
    }

    BINDINGS = [
        Binding("enter", "inspect", "Inspect"),
        Binding("f", "cycle_filter", "Filter"),
        Binding("s", "cycle_sort", "Sort"),
        Binding("r", "reverse_sort", "Reverse", show=False),
        Binding("question_mark", "app.help", "Help", key_display="?", show=False),
        Binding("up,k", "cursor(-1, 0)", "Up", show=False),
        Binding("down,j", "cursor(1, 0)", "Down", show=False),
        Binding("left,h", "cursor(0, -1)", "Left", show=False),
        Binding("right,l", "cursor(0, 1)", "Right", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(-1)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
        Binding("n", "next_flip(1)", "Next flip", show=False),
        Binding("N", "next_flip(-1)", "Previous flip", show=False),
    ]

    filter_kind: reactive[str] = reactive("all")
    sort_by: reactive[str] = reactive("file")
    reverse: reactive[bool] = reactive(False)

    class Highlighted(Message):
        """The cursor is on ``sample_id`` × ``criterion_id`` (None: the sample columns)."""

        def __init__(self, sample_id: str | None, criterion_id: str | None) -> None:
            super().__init__()
            self.sample_id = sample_id
            self.criterion_id = criterion_id

    class Selected(Highlighted):
        """Enter or a click on a cell: inspect it."""

    class ViewChanged(Message):
        def __init__(self, filter_kind: str, sort_by: str, reverse: bool, shown: int, total: int) -> None:
            super().__init__()
            self.filter_kind = filter_kind
            self.sort_by = sort_by
            self.reverse = reverse
            self.shown = shown
            self.total = total

    def __init__(self, model: ResultsModel | None = None, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.model = model or ResultsModel()
        self.rows: list[str] = []
        self.columns: list[Column] = []
        self.id_width = ID_MIN
        self.cursor_row = 0
        self.cursor_col = 0  # 0: the sample columns; i > 0: criterion column i - 1
        self.col_offset = 0  # first criterion column shown
        self._last_rebuild = 0.0
        self._rebuild_timer = None
        self._styles: dict[str, Style] = {}
        self._legend: dict[int, list[Strip]] = {}
        self._highlighted: tuple[str | None, str | None] = (None, None)
        self._id_wanted = ID_MIN  # the id column's width when there is room
        self._layout_key: tuple[int, int] | None = None
        self._columns_version = 0

    # -- attributes down ---------------------------------------------------------
    def reset(self) -> None:
        """Criteria, samples or labels changed: rebuild columns and rows."""
        self._build_columns()
        self._rebuild()

    def rows_changed(self, ids: Iterable[str]) -> None:
        """These samples have new results: redraw them (re-filter/re-sort if needed)."""
        if self.filter_kind == "all" and self.sort_by == "file":
            index = self._index
            for sample_id in ids:
                row = index.get(sample_id)
                if row is not None:
                    self.refresh_line(row + 1)
            self._maybe_highlight()
            return
        now = time.monotonic()
        if now - self._last_rebuild >= REBUILD_INTERVAL:
            self._rebuild()
        elif self._rebuild_timer is None:
            self._rebuild_timer = self.set_timer(REBUILD_INTERVAL, self._timed_rebuild)

    def select_criterion(self, criterion_id: str | None) -> None:
        """Put the cursor on ``criterion_id``'s column (from the editor's selection).

        A column the cursor is already on changes nothing: the editor and the matrix follow
        each other, and neither may answer a selection it already has.
        """
        if criterion_id is None or self.current[1] == criterion_id:
            return
        for index, column in enumerate(self.columns):
            if column.criterion.key == criterion_id:
                self._move(self.cursor_row, index + 1)
                return

    def select_sample(self, sample_id: str) -> bool:
        row = self._index.get(sample_id)
        if row is None:
            return False
        self._move(row, self.cursor_col)
        return True

    @property
    def current(self) -> tuple[str | None, str | None]:
        """(sample id, criterion id) under the cursor."""
        sample_id = self.rows[self.cursor_row] if 0 <= self.cursor_row < len(self.rows) else None
        criterion_id = self.columns[self.cursor_col - 1].criterion.key if 0 < self.cursor_col <= len(self.columns) else None
        return sample_id, criterion_id

    # -- building ----------------------------------------------------------------
    def _build_columns(self) -> None:
        model = self.model
        columns = []
        for criterion in model.criteria:
            title = criterion.key + ("*" if criterion.required else "")
            columns.append(Column(criterion, CRIT_MIN, title))
        self.columns = columns
        longest = max((cell_len(terminal_safe(i)) for i in model.order), default=ID_MIN)
        self._id_wanted = self.id_width = max(ID_MIN, min(ID_MAX, longest))
        self._columns_version += 1
        self._layout_key = None
        self.cursor_col = min(self.cursor_col, len(columns))
        self.col_offset = min(self.col_offset, max(0, len(columns) - 1))

    # -- column widths -------------------------------------------------------------
    def _width(self) -> int:
        return self.scrollable_content_region.width or self.size.width

    def _layout(self) -> None:
        """Fit the columns to the width: titles as long as there is room for, compact
        columns when not, and a shorter id column when that shows another criterion."""
        width = self._width()
        key = (width, self._columns_version)
        if key == self._layout_key:
            return
        self._layout_key = key
        columns = self.columns
        room = width - self._other_fixed_width()
        wanted = self._id_wanted
        compact = len(columns) * (CRIT_MIN + GAP)
        if wanted + compact <= room:  # everything fits: share what is left up to the titles' length
            widths = [CRIT_MIN] * len(columns)
            spare = room - wanted - compact
            grew = True
            while spare > 0 and grew:
                grew = False
                for index, column in enumerate(columns):
                    if spare > 0 and widths[index] < column.natural:
                        widths[index] += 1
                        spare -= 1
                        grew = True
            id_width = wanted
        else:
            widths = [CRIT_MIN] * len(columns)
            id_width, best = wanted, self._count_fitting(room - wanted)
            for candidate in range(wanted - 1, min(wanted, ID_COMPACT) - 1, -1):
                count = self._count_fitting(room - candidate)
                if count > best:
                    id_width, best = candidate, count
        for column, column_width in zip(columns, widths, strict=True):
            column.width = column_width
        self.id_width = id_width

    def _count_fitting(self, room: int) -> int:
        """How many compact criterion columns fit in ``room`` (from the first, with "+N›" if not all)."""
        total = len(self.columns)
        if total * (CRIT_MIN + GAP) <= room:
            return total
        room -= cell_len(f"+{total}›")
        return max(0, room // (CRIT_MIN + GAP))

    @property
    def _index(self) -> dict[str, int]:
        index = getattr(self, "_index_cache", None)
        if index is None or index[0] is not self.rows:
            index = (self.rows, {sample_id: i for i, sample_id in enumerate(self.rows)})
            self._index_cache = index
        return index[1]

    def _timed_rebuild(self) -> None:
        self._rebuild_timer = None
        self._rebuild()

    def _rebuild(self) -> None:
        if self._rebuild_timer is not None:
            self._rebuild_timer.stop()
            self._rebuild_timer = None
        keep = self.rows[self.cursor_row] if 0 <= self.cursor_row < len(self.rows) else None
        self.rows = self.model.visible(self.filter_kind, self.sort_by, self.reverse)
        self._last_rebuild = time.monotonic()
        row = self._index.get(keep, None) if keep is not None else None
        self.cursor_row = row if row is not None else min(self.cursor_row, max(0, len(self.rows) - 1))
        self._update_virtual_size()
        self._scroll_to_cursor()
        self.refresh()
        self._maybe_highlight()
        self.post_message(self.ViewChanged(self.filter_kind, self.sort_by, self.reverse, len(self.rows), len(self.model.order)))

    def _update_virtual_size(self) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width or self.size.width, len(self.rows) + 1)

    def on_resize(self, event: events.Resize) -> None:
        self._update_virtual_size()
        self._scroll_to_cursor()

    def on_mount(self) -> None:
        self.reset()

    # -- reactives ---------------------------------------------------------------
    def watch_filter_kind(self) -> None:
        if self.is_mounted:
            self._rebuild()

    def watch_sort_by(self) -> None:
        if self.is_mounted:
            self._rebuild()

    def watch_reverse(self) -> None:
        if self.is_mounted:
            self._rebuild()

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
        self._move(self.cursor_row + direction * max(1, self.scrollable_content_region.height - 2), self.cursor_col)

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

    def action_inspect(self) -> None:
        sample_id, criterion_id = self.current
        if sample_id is not None:
            self.post_message(self.Selected(sample_id, criterion_id))

    def _move(self, row: int, col: int) -> None:
        self.cursor_row = max(0, min(row, len(self.rows) - 1))
        self.cursor_col = max(0, min(col, len(self.columns)))
        self._scroll_to_cursor()
        self.refresh()
        self._maybe_highlight()

    def _maybe_highlight(self) -> None:
        current = self.current
        if current != self._highlighted:
            self._highlighted = current
            self.post_message(self.Highlighted(*current))

    def _scroll_to_cursor(self) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        top = int(self.scroll_y)
        if self.cursor_row < top:
            top = self.cursor_row
        elif self.cursor_row >= top + height:
            top = self.cursor_row - height + 1
        if top != int(self.scroll_y):
            self.scroll_to(y=top, animate=False, immediate=True)
        # Sideways: keep the cursor's criterion column on screen.
        if self.cursor_col > 0:
            index = self.cursor_col - 1
            if index < self.col_offset:
                self.col_offset = index
            else:
                while self.col_offset < index and not self._column_fits(index):
                    self.col_offset += 1
        # Room on the left (the table got wider): scroll back as far as keeps the
        # cursor's column, or the last column shown, on screen.
        keep = self.cursor_col - 1 if self.cursor_col > 0 else self._shown_columns().stop - 1
        while self.col_offset > 0:
            self.col_offset -= 1
            if not self._column_fits(keep):
                self.col_offset += 1
                break

    @staticmethod
    def _other_fixed_width() -> int:
        """The sample columns but the id: score, verdict, human and the separator."""
        return GAP + SCORE_W + GAP + VERDICT_W + GAP + HUMAN_W + cell_len(SEPARATOR)

    def _fixed_width(self) -> int:
        self._layout()
        return self.id_width + self._other_fixed_width()

    def _shown_columns(self) -> range:
        """Criterion columns that fit entirely, from :attr:`col_offset` (room kept for "+N›")."""
        room = self._width() - self._fixed_width()
        rest = self.columns[self.col_offset :]
        total = sum(c.width + GAP for c in rest)
        if total > room:
            room -= cell_len(f"+{len(rest)}›")
        end = self.col_offset
        used = 0
        while end < len(self.columns) and used + self.columns[end].width + GAP <= room:
            used += self.columns[end].width + GAP
            end += 1
        return range(self.col_offset, max(end, min(self.col_offset + 1, len(self.columns))))

    def _column_fits(self, index: int) -> bool:
        return index < self._shown_columns().stop

    # -- mouse -------------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        self.focus()
        if offset.y == 0:
            col = self._column_at(offset.x)
            if col is not None and col > 0:
                self._move(self.cursor_row, col)
            return
        row = int(self.scroll_y) + offset.y - 1
        if row >= len(self.rows):
            return
        col = self._column_at(offset.x)
        self._move(row, self.cursor_col if col is None else col)
        if event.chain >= 1:
            self.action_inspect()

    def _column_at(self, x: int) -> int | None:
        fixed = self._fixed_width()
        if x < fixed:
            return 0
        position = fixed
        for index in self._shown_columns():
            width = self.columns[index].width + GAP
            if position <= x < position + width:
                return index + 1
            position += width
        return None

    # -- rendering ---------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._legend.clear()

    def _style(self, name: str) -> Style:
        """A component's full Rich style (colours blended over the widget's background)."""
        style = self._styles.get(name)
        if style is None:
            style = self.get_component_rich_style(f"matrix--{name}")
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
        self._layout()
        width = self._width()
        base = self.rich_style
        if y == 0:
            strip = self._header_strip()
        else:
            row = int(self.scroll_y) + y - 1
            if row < len(self.rows):
                strip = self._row_strip(row)
            elif row == 0 and not self.rows:
                strip = self._empty_strip()
            else:
                legend = self._legend_lines(width)
                first = self.scrollable_content_region.height - len(legend)
                # Only in room the rows leave free, one blank line below the last row.
                last = max(len(self.rows), 1) - int(self.scroll_y)  # the line of the last row
                if legend and y >= first and first >= last + 2:
                    strip = legend[y - first]
                else:
                    return Strip.blank(width, base)
        return strip.crop_extend(0, width, base).apply_style(base)

    def _empty_strip(self) -> Strip:
        if self.model.order:
            text = f"  no samples match the filter “{FILTERS[self.filter_kind]}” — press f to change it"
        else:
            text = "  no samples"
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
        shown = self._shown_columns()
        for index in shown:
            column = self.columns[index]
            style = cursor_head if index + 1 == self.cursor_col else head
            segments.append(Segment(column_title(column.criterion, column.width), style))
            segments.append(Segment(" " * GAP, head))
        if shown.stop < len(self.columns):
            segments.append(Segment(f"+{len(self.columns) - shown.stop}›", head))
        return Strip(segments)

    def _row_strip(self, row: int) -> Strip:
        self._layout()
        model = self.model
        sample_id = self.rows[row]
        result = model.results.get(sample_id)
        label = model.labels.get(sample_id)
        is_cursor_row = row == self.cursor_row
        stale = model.stale
        cursor = self._background("cursor")
        row_style = self._background("cursor-row") if is_cursor_row else Style()
        stale_style = STALE if stale else Style()

        def seg(text: str, name: str, *, at_cursor: bool = False) -> Segment:
            style = self._style(name) + row_style
            if at_cursor:
                style = style + cursor
            return Segment(text, style + stale_style)

        def marked(text: str, name: str, width: int, flip: int, *, at_cursor: bool = False) -> None:
            """``text`` in ``width`` cells, with a reversed ↑ / ↓ after it when it flipped."""
            if not flip:
                segments.append(seg(fit(squeeze(text, width), width), name, at_cursor=at_cursor))
                return
            text = squeeze(text, width - 1)
            if cell_len(text) > width - 1:
                text = fit(text, width - 1)
            segments.append(seg(text, name, at_cursor=at_cursor))
            segments.append(seg("↑" if flip > 0 else "↓", "flip-up" if flip > 0 else "flip-down", at_cursor=at_cursor))
            rest = width - cell_len(text) - 1
            if rest > 0:
                segments.append(seg(" " * rest, name, at_cursor=at_cursor))

        vtext, vstyle = verdict_mark(result)
        segments = [
            seg(fit(sample_id, self.id_width), "id", at_cursor=is_cursor_row and self.cursor_col == 0),
            seg(score_cell(result), vstyle),
        ]
        marked(vtext, vstyle, VERDICT_W, model.verdict_flips.get(sample_id, 0))
        htext, hstyle = human_text(result, label)
        segments.append(seg(" " + fit(htext, HUMAN_W), hstyle))
        segments.append(seg(SEPARATOR, "id"))
        flips = model.flips.get(sample_id, {})
        cells = {c.id: c for c in result.criteria} if result is not None else {}
        for index in self._shown_columns():
            column = self.columns[index]
            key = column.criterion.key
            cell = cells.get(key)
            text, style = cell_mark(column.criterion, cell)
            if cell_disagrees(cell, label):
                style = "disagree"
                text += "≠"
            at_cursor = is_cursor_row and self.cursor_col == index + 1
            marked(text, style, column.width, flips.get(key, 0), at_cursor=at_cursor)
            segments.append(seg(" " * GAP, "id"))
        return Strip(segments)
