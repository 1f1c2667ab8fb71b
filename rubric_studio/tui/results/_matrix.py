"""The live results matrix: one line per sample, one column per criterion.

A Line-API widget (like Textual's DataTable, but rendering only the visible lines
from a :class:`~rubric_studio.session.results_model.ResultsModel`): no widget per cell and no
per-cell measuring, so 10,000 samples open, scroll and filter at once. The header
and the sample columns stay put; criterion columns scroll sideways by column.

Cells are compact so that a rubric's criteria fit beside the editor: ``✓`` / ``✗``
(met / unmet; green when that is good, red when bad — a penalty met is red), ``✓ 8``
(an analytic raw score), ``✗.29`` (a check's partial score), ``⚠`` (error), ``·``
(unjudged), ``⋯`` (pending), ``≠`` (differs from the human label), ``⋈ tie`` in the human
column (annotators split evenly, not adjudicated: unlike ``·``, nobody labelled), ``?`` (the judge
quoted something no text it saw says), ``↺`` (the human label on the cell was given under an
older wording of its criterion: the outcome was edited since, see :mod:`rubric_studio.core.labels`)
and a reversed ``↑`` / ``↓`` (flipped since the last save). Columns take the width the terminal
gives (:mod:`~rubric_studio.tui.results._layout`); what is still cut is written in full on the focused line above the titles. When rows
leave room, a legend shows at the bottom. The texts of cells and titles are pure functions
(:mod:`~rubric_studio.tui.results._text`).

Drawing: line 0 names the focused sample and criterion in full (cells and headers are cut
to their columns, so this is where a long id can always be read), lines 1 to 3 hold the
column titles (a long title wraps at its hyphens; one that still does not fit keeps its start,
its end and the word where it parts from a like id), then one line per visible row, and the
cell legend at the bottom when the rows leave room. Only the lines on screen are built, so 10,000 rows cost nothing until seen.

Moving: the cursor is a (row, column) pair (column 0 is the sample columns), the view
scrolls to keep it on screen, and every move posts ``Highlighted`` once the cell under the
cursor changed. Jumps (next flip, next sample without a label) go through the rows shown,
wrapping.

The wording of each criterion now (what ``↺`` compares a label's ``given_under`` with) is that
of the rubric the studio grades, ``app.session.rubric``: an edited outcome leaves the columns,
and so the model's criteria, as they were. Under a host without a session, the model's criteria.

Attributes down: the app sets :attr:`ResultsMatrix.model` and calls
:meth:`ResultsMatrix.rows_changed` / :meth:`ResultsMatrix.reset`; a search box sets
:attr:`ResultsMatrix.search`. Messages up: :class:`ResultsMatrix.Highlighted` (cursor moved),
:class:`ResultsMatrix.Selected` (enter / click), :class:`ResultsMatrix.ViewChanged` (filter,
search or sort changed).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Offset, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rubric_studio.core.labels import OLDER_MARK, rubric_fingerprints
from rubric_studio.core.results import CriterionResult, pooled_mark
from rubric_studio.core.rubric import Criterion
from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.labels import next_unlabelled
from rubric_studio.session.results_model import (
    CRITERION_FILTERS,
    FILTERS,
    SORTS,
    ResultsModel,
    cell_disagrees,
    has_made_up_quote,
)
from rubric_studio.session.results_model import filter_label as describe_filter
from rubric_studio.tui.label_keys import table_bindings
from rubric_studio.tui.results._layout import Column, other_fixed_width, plan_layout, shown_columns
from rubric_studio.tui.results._text import (
    CRIT_MAX,
    CRIT_MIN,
    GAP,
    HUMAN_W,
    ID_COMPACT,
    ID_MAX,
    ID_MIN,
    LEGEND,
    LEGEND_LINES,
    MADE_UP,
    OLDER_LEGEND,
    SCORE_W,
    SEPARATOR,
    TIE_LEGEND,
    VERDICT_W,
    cell_mark,
    cell_text,
    column_title,
    fit,
    human_text,
    older_wording,
    score_cell,
    shared_prefix,
    squeeze,
    verdict_mark,
    verdict_text,
)

__all__ = [
    "CRIT_MAX", "CRIT_MIN", "HEADER_LINES", "ID_COMPACT", "ID_MAX", "ID_MIN", "Column", "ResultsMatrix", "cell_mark", "cell_text",
    "column_title", "fit", "squeeze", "verdict_mark", "verdict_text",
]  # fmt: skip

REBUILD_INTERVAL = 0.1  # seconds between re-sorts/re-filters while results stream in
HEADER_LINES = 2  # the focused line and the column titles (up to two more while a title takes more lines)
STALE = Style(dim=True, italic=True)


class ResultsMatrix(ScrollView, can_focus=True):
    """Samples × criteria, virtualised."""

    DEFAULT_CSS = """
    ResultsMatrix > .matrix--older {
        color: $text-warning;
    }
    """

    COMPONENT_CLASSES = {
        "matrix--focus",
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
        "matrix--tie",
        "matrix--made-up",
        "matrix--older",
        "matrix--flip-up",
        "matrix--flip-down",
        "matrix--empty",
    }

    #: Moving, filtering and sorting (the help lists these as the table's own keys).
    NAVIGATION_BINDINGS = [
        Binding("enter", "inspect", "Inspect", show=False),  # the cell hint says so; the footer fits 80 columns
        Binding("f", "cycle_filter", "Filter"),
        Binding("D", "toggle_filter('people')", "People disagree", show=False),
        Binding("s", "cycle_sort", "Sort", show=False),
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
        Binding("g", "next_unlabelled(1)", "Next unlabelled", show=False),
        Binding("G", "next_unlabelled(-1)", "Previous unlabelled", show=False),
    ]
    #: The label and calibration keys are the table's too: a letter labels a sample only here,
    #: where the user looks (:mod:`~rubric_studio.tui.label_keys`).
    BINDINGS = [*NAVIGATION_BINDINGS, *table_bindings()]

    # always_update: picking a criterion filter again on another column re-pins it there.
    filter_kind: reactive[str] = reactive("all", always_update=True)
    sort_by: reactive[str] = reactive("file")
    reverse: reactive[bool] = reactive(False)
    search: reactive[str] = reactive("")

    @dataclass
    class Highlighted(Message):
        """The cursor is on ``sample_id`` × ``criterion_id`` (None: the sample columns).

        ``following`` marks a move made to follow another pane's selection
        (``select_criterion(..., following=True)``): that pane has the selection already, or
        has moved on since, and must not be sent back to it.
        """

        sample_id: str | None
        criterion_id: str | None
        following: bool = False

    class Selected(Highlighted):
        """Enter or a click on a cell: inspect it."""

    @dataclass
    class ViewChanged(Message):
        """The rows shown changed: ``filter_label`` names the filter's criterion, ``search`` is the search text."""

        filter_kind: str
        sort_by: str
        reverse: bool
        shown: int
        total: int
        _: KW_ONLY
        filter_label: str = ""
        search: str = ""

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
        #: The criterion a criterion filter (:data:`CRITERION_FILTERS`) is about: the one focused when it was picked.
        self.filter_criterion: str | None = None
        self._last_rebuild = 0.0
        self._rebuild_timer = None
        self._styles: dict[str, Style] = {}
        self._legend: dict[tuple[int, bool, bool], list[Strip]] = {}
        self._wordings: tuple[Sequence[Criterion] | None, dict[str, str]] = (None, {})
        self._any_older: tuple[object, bool] = (None, False)
        self._highlighted: tuple[str | None, str | None] = (None, None)
        self._longest_id = ID_MIN
        self._layout_key: tuple[int, int] | None = None
        self._header_key: object = None  # (layout, column offset) that :attr:`header_lines` was worked out for
        self._header_lines = HEADER_LINES
        self._columns_version = 0
        self._index_cache: tuple[list[str], dict[str, int]] | None = None
        self._pressed: tuple[int | None, int | None] | None = None  # the cell a mouse button went down on

    # -- attributes down ---------------------------------------------------------
    def reset(self) -> None:
        """Criteria, samples or labels changed: rebuild columns and rows."""
        self._build_columns()
        self._rebuild()

    def rows_changed(self, ids: Iterable[str]) -> None:
        """These samples have new results: redraw them (re-filter/re-sort if needed)."""
        if self.filter_kind == "all" and self.sort_by == "file" and not self.search.strip():
            index = self._index
            for sample_id in ids:
                row = index.get(sample_id)
                if row is not None:
                    self.refresh_line(row + self.header_lines)
            self._maybe_highlight()
            return
        now = time.monotonic()
        if now - self._last_rebuild >= REBUILD_INTERVAL:
            self._rebuild()
        elif self._rebuild_timer is None:
            self._rebuild_timer = self.set_timer(REBUILD_INTERVAL, self._timed_rebuild)

    def select_criterion(self, criterion_id: str | None, *, following: bool = False) -> None:
        """Put the cursor on ``criterion_id``'s column; ``following``: to follow the editor's
        selection (the :class:`Highlighted` it posts says so).

        A column the cursor is already on changes nothing: the editor and the matrix follow
        each other, and neither may answer a selection it already has.
        """
        if criterion_id is None or self.current[1] == criterion_id:
            return
        for index, column in enumerate(self.columns):
            if column.criterion.key == criterion_id:
                self._move(self.cursor_row, index + 1, following=following)
                return

    def select_sample(self, sample_id: str) -> bool:
        """Put the cursor on ``sample_id``'s row; False when the filter or search hides it."""
        row = self._index.get(sample_id)
        if row is None:
            return False
        self._move(row, self.cursor_col)
        return True

    def reveal_sample(self, sample_id: str) -> bool:
        """Put the cursor on ``sample_id``, clearing the filter, then the search, if they hide it."""
        if self.select_sample(sample_id):
            return True
        if self.filter_kind != "all":
            self.filter_kind = "all"
            if self.select_sample(sample_id):
                return True
        self.search = ""
        return self.select_sample(sample_id)

    @property
    def current(self) -> tuple[str | None, str | None]:
        """(sample id, criterion id) under the cursor."""
        sample_id = self.rows[self.cursor_row] if 0 <= self.cursor_row < len(self.rows) else None
        criterion_id = self.columns[self.cursor_col - 1].criterion.key if 0 < self.cursor_col <= len(self.columns) else None
        return sample_id, criterion_id

    @property
    def filter_label(self) -> str:
        """The filter in words, naming its criterion ("unmet: tone")."""
        return describe_filter(self.filter_kind, self.filter_criterion)

    # -- building ----------------------------------------------------------------
    def _build_columns(self) -> None:
        keys = [criterion.key for criterion in self.model.criteria]
        self.columns = [Column.of(criterion, shared_prefix(criterion.key, keys)) for criterion in self.model.criteria]
        self._longest_id = max((cell_len(terminal_safe(i)) for i in self.model.order), default=ID_MIN)
        self.id_width = max(ID_MIN, min(ID_MAX, self._longest_id))
        self._columns_version += 1
        self._layout_key = None
        self.cursor_col = min(self.cursor_col, len(self.columns))
        self.col_offset = min(self.col_offset, max(0, len(self.columns) - 1))
        if self.filter_criterion not in {c.criterion.key for c in self.columns}:
            self.filter_criterion = None

    def _width(self) -> int:
        return self.scrollable_content_region.width or self.size.width

    def _layout(self) -> None:
        """Fit the columns to the width (see :func:`~rubric_studio.tui.results._layout.plan_layout`)."""
        key = (self._width(), self._columns_version)
        if key != self._layout_key:
            self._layout_key = key
            self.id_width = plan_layout(self.columns, self._longest_id, key[0] - other_fixed_width())

    @property
    def header_lines(self) -> int:
        """Lines above the rows: the focused line and the titles, which take a second or third line
        when a shown criterion's title is wider than its column (rather than being cut with …)."""
        self._layout()
        key = (self._layout_key, self.col_offset)
        if self._header_key != key:  # asked for every line drawn: worked out once per layout
            shown = self._shown_columns()
            tallest = max((len(self.columns[i].header) for i in shown), default=1)
            self._header_key, self._header_lines = key, HEADER_LINES + tallest - 1
        return self._header_lines

    def _fixed_width(self) -> int:
        self._layout()
        return self.id_width + other_fixed_width()

    def _shown_columns(self) -> range:
        """Criterion columns that fit entirely, from :attr:`col_offset` (room kept for "+N›")."""
        return shown_columns(self.columns, self.col_offset, self._width() - self._fixed_width())

    def _column_fits(self, index: int) -> bool:
        return index < self._shown_columns().stop

    @property
    def _index(self) -> dict[str, int]:
        index = self._index_cache
        if index is None or index[0] is not self.rows:
            index = self._index_cache = (self.rows, {sample_id: i for i, sample_id in enumerate(self.rows)})
        return index[1]

    def _timed_rebuild(self) -> None:
        self._rebuild_timer = None
        self._rebuild()

    def _rebuild(self) -> None:
        if self._rebuild_timer is not None:
            self._rebuild_timer.stop()
            self._rebuild_timer = None
        keep = self.rows[self.cursor_row] if 0 <= self.cursor_row < len(self.rows) else None
        self.rows = self.model.visible(self.filter_kind, self.sort_by, self.reverse,
                                       criterion=self.filter_criterion, search=self.search)
        self._last_rebuild = time.monotonic()
        row = self._index.get(keep, None) if keep is not None else None
        self.cursor_row = row if row is not None else min(self.cursor_row, max(0, len(self.rows) - 1))
        self._update_virtual_size()
        self._scroll_to_cursor()
        self.refresh()
        self._maybe_highlight()
        self.post_message(self.ViewChanged(self.filter_kind, self.sort_by, self.reverse, len(self.rows),
                                           len(self.model.order), filter_label=self.filter_label, search=self.search))

    def _update_virtual_size(self) -> None:
        self.virtual_size = Size(self._width(), len(self.rows) + self.header_lines)

    def on_resize(self, event: events.Resize) -> None:
        self._update_virtual_size()
        self._scroll_to_cursor()

    def on_mount(self) -> None:
        self.reset()

    # -- reactives ---------------------------------------------------------------
    def watch_filter_kind(self, kind: str) -> None:
        self.filter_criterion = self.current[1] if kind in CRITERION_FILTERS else None
        if self.is_mounted:
            self._rebuild()

    def _rebuild_when_mounted(self) -> None:
        """The rows again after the sort, its direction or the search changed."""
        if self.is_mounted:
            self._rebuild()

    watch_sort_by = watch_reverse = watch_search = _rebuild_when_mounted

    # -- actions -----------------------------------------------------------------
    def action_cycle_filter(self) -> None:
        keys = list(FILTERS)
        self.filter_kind = keys[(keys.index(self.filter_kind) + 1) % len(keys)]

    def action_toggle_filter(self, kind: str) -> None:
        """One filter at a key (``D``: people disagree); the same key again shows all samples."""
        self.filter_kind = "all" if self.filter_kind == kind else kind

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
            self.notify("Every sample shown has a label." if self.rows else "No samples shown.",
                        timeout=3)
            return
        self._move(self.rows.index(target), self.cursor_col)

    def action_inspect(self) -> None:
        sample_id, criterion_id = self.current
        if sample_id is not None:
            self.post_message(self.Selected(sample_id, criterion_id))

    # -- the cursor --------------------------------------------------------------
    def _page_height(self) -> int:
        """How many rows fit under the focused line and the titles."""
        return max(1, self.scrollable_content_region.height - self.header_lines)

    def _move(self, row: int, col: int, *, following: bool = False) -> None:
        self.cursor_row = max(0, min(row, len(self.rows) - 1))
        self.cursor_col = max(0, min(col, len(self.columns)))
        self._scroll_to_cursor()
        self.refresh()
        self._maybe_highlight(following=following)

    def _maybe_highlight(self, *, following: bool = False) -> None:
        current = self.current
        if current != self._highlighted:
            self._highlighted = current
            self.post_message(self.Highlighted(*current, following=following))

    def _scroll_to_cursor(self) -> None:
        height = self._page_height()
        top = int(self.scroll_y)
        if self.cursor_row < top:
            top = self.cursor_row
        elif self.cursor_row >= top + height:
            top = self.cursor_row - height + 1
        if top != int(self.scroll_y):
            self.scroll_to(y=top, animate=False, immediate=True)
        # Sideways: keep the cursor's criterion column on screen.
        fits = self._column_fits
        if self.cursor_col > 0:
            index = self.cursor_col - 1
            if index < self.col_offset:
                self.col_offset = index
            else:
                while self.col_offset < index and not fits(index):
                    self.col_offset += 1
        # Room on the left (the table got wider): scroll back as far as keeps the
        # cursor's column, or the last column shown, on screen.
        keep = self.cursor_col - 1 if self.cursor_col > 0 else self._shown_columns().stop - 1
        while self.col_offset > 0:
            self.col_offset -= 1
            if not fits(keep):
                self.col_offset += 1
                break

    # -- mouse -------------------------------------------------------------------
    def on_mouse_down(self, event: events.MouseDown) -> None:
        # The cell is taken where the button went down: focus moving here may widen the
        # table (the editor narrows) before the button comes up.
        self._pressed = self._cell_at(event.get_content_offset(self))

    def on_click(self, event: events.Click) -> None:
        pressed, self._pressed = self._pressed, None
        cell = pressed if pressed is not None else self._cell_at(event.get_content_offset(self))
        if cell is None:
            return
        self.focus()
        row, col = cell
        if row is None:  # the titles
            if col is not None and col > 0:
                self._move(self.cursor_row, col)
            return
        self._move(row, self.cursor_col if col is None else col)
        if event.chain >= 2:  # a double click opens the inspector; a single click only selects
            self.action_inspect()

    def _cell_at(self, offset: Offset | None) -> tuple[int | None, int | None] | None:
        """(row or None on the titles, column or None) at a content offset; None: nowhere to click."""
        header = self.header_lines
        if offset is None or offset.y < 1:
            return None
        col = self._column_at(offset.x)
        if offset.y < header:
            return None, col
        row = int(self.scroll_y) + offset.y - header
        return None if row >= len(self.rows) else (row, col)

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

    # -- drawing (the Line API) -----------------------------------------------------
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
        header = self.header_lines
        if y == 0:
            strip = self._focus_strip(width)
        elif y < header:
            strip = self._header_strip(y - 1, header - 1)
        else:
            top = int(self.scroll_y)
            row = top + y - header
            if row < len(self.rows):
                strip = self._row_strip(row)
            elif row == 0 and not self.rows:
                strip = self._empty_strip()
            else:
                legend = self._legend_lines(width)
                first = self.scrollable_content_region.height - len(legend)
                # Only in room the rows leave free, one blank line below the last row.
                last = header - 1 + max(len(self.rows), 1) - top  # the line of the last row
                if not (legend and y >= first and first >= last + 2):
                    return Strip.blank(width, base)
                strip = legend[y - first]
        return strip.crop_extend(0, width, base).apply_style(base)

    # -- the lines -----------------------------------------------------------------
    def _view_text(self) -> str:
        """The filter and the search in words ("" when showing every sample)."""
        parts = []
        if self.filter_kind != "all":
            parts.append("filter: " + describe_filter(self.filter_kind, self.filter_criterion))
        if self.search.strip():
            parts.append(f"search: “{self.search}”")
        return terminal_safe(" · ".join(parts))

    def _focus_strip(self, width: int) -> Strip:
        """``focused  <sample id> · <criterion id>`` in full, and the filter / search when there is room."""
        plain, strong = self._style("focus"), self._style("focus") + Style(bold=True)
        sample_id, criterion_id = self.current
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
                text += f", f changes the filter “{describe_filter(self.filter_kind, self.filter_criterion)}”"
        else:
            text = f"  no samples match the filter “{describe_filter(self.filter_kind, self.filter_criterion)}” — press f to change it"
        return Strip([Segment(text, self._style("empty"))])

    def _legend_lines(self, width: int) -> list[Strip]:
        """The cell legend, wrapped to ``width`` (at most LEGEND_LINES lines; none if it does not fit)."""
        ties = any(label.verdict_tied for label in self.model.shown_labels.values())
        older = self._some_label_older()
        cached = self._legend.get((width, ties, older))
        if cached is not None:
            return cached
        muted = self._style("pending")
        lines: list[list[Segment]] = [[]]
        used = 0
        entries = (*LEGEND, *((TIE_LEGEND,) if ties else ()), *((OLDER_LEGEND,) if older else ()))
        for mark, style, meaning in entries:
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
        self._legend[(width, ties, older)] = strips
        return strips

    # -- the wording of each criterion now ---------------------------------------------
    @property
    def wordings(self) -> dict[str, str]:
        """Criterion id -> the wording fingerprint of the criterion now (see the module docstring).
        Worked out once per rubric; when it changes, every line is drawn again (a row whose results
        did not change may still gain or lose its ``↺``)."""
        session = getattr(self.app, "session", None) if self.is_attached else None
        rubric = getattr(session, "rubric", None)
        criteria = rubric.criteria if rubric is not None else self.model.criteria
        known, fingerprints = self._wordings
        if criteria is not known:
            fingerprints = rubric_fingerprints(criteria)
            if known is not None and fingerprints != self._wordings[1]:
                self.refresh()
            self._wordings = (criteria, fingerprints)
        return fingerprints

    def _some_label_older(self) -> bool:
        """Whether some label shown has a cell given under an older wording (the legend then
        explains ``↺``); worked out again only when the labels or the wordings change."""
        labels, wordings = self.model.shown_labels, self.wordings
        key = (self.model.version, self.model.show_own, id(self._wordings[0]))
        if self._any_older[0] != key:
            older = any(older_wording(label, cid, wordings) for label in labels.values() for cid in label.criteria)
            self._any_older = (key, older)
        return self._any_older[1]

    def _header_strip(self, line: int, lines: int) -> Strip:
        """Line ``line`` of the ``lines`` title lines; the last, above the rows, holds the sample
        columns' titles and each criterion's title or its last line (titles sit on the rows)."""
        last = line == lines - 1
        head = self._style("header")
        cursor_head = head + self._background("header-cursor")
        total = len(self.model.order)
        title = f"{total} samples" if len(self.rows) == total else f"{len(self.rows)}/{total} samples"
        # "score" starts one cell left of the scores (in the gap after the ids), so the
        # three headers keep a space between them in SCORE_W + VERDICT_W + HUMAN_W cells.
        if last:
            segments = [
                Segment(fit(title, self.id_width - 1) + " ", cursor_head if self.cursor_col == 0 else head),
                Segment(fit("score", SCORE_W + GAP) + " " + fit("verdict", VERDICT_W) + " "
                        + fit("mine" if self.model.show_own else "human", HUMAN_W), head),
                Segment("‹ " if self.col_offset > 0 else SEPARATOR, head),
            ]
        else:
            segments = [Segment(" " * (self._fixed_width() - cell_len(SEPARATOR)), head), Segment(SEPARATOR, head)]
        shown = self._shown_columns()
        for index in shown:
            column = self.columns[index]
            style = cursor_head if index + 1 == self.cursor_col else head
            words = column.header
            at = line - (lines - len(words))
            text = words[at] if at >= 0 else ""
            segments.append(Segment(fit(text, column.width) if text else " " * column.width, style))
            segments.append(Segment(" " * GAP, head))
        if last and shown.stop < len(self.columns):
            segments.append(Segment(f"+{len(self.columns) - shown.stop}›", head))
        return Strip(segments)

    def _row_strip(self, row: int) -> Strip:
        self._layout()
        model = self.model
        sample_id = self.rows[row]
        result = model.results.get(sample_id)
        label = model.shown_labels.get(sample_id)
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
        wordings = self.wordings
        for index in self._shown_columns():
            column = self.columns[index]
            key = column.criterion.key
            cell = cells.get(key)
            text, style = cell_mark(column.criterion, cell)
            if cell_disagrees(cell, label):
                style, text = "disagree", text + "≠"
            marks = [(MADE_UP, "made-up")] if has_made_up_quote(cell) else []
            if older_wording(label, key, wordings):
                marks.append((OLDER_MARK, "older"))
            marks += paint.flip_mark(flips.get(key, 0))
            text, marks = _errored_last(text, cell, column.width, marks)
            paint.cell(text, style, column.width, marks, at_cursor=on_row and self.cursor_col == index + 1)
            paint.add(" " * GAP, "id")
        return Strip(paint.segments)


def _errored_last(text: str, cell: CriterionResult | None, width: int,
                  marks: list[tuple[str, str]]) -> tuple[str, list[tuple[str, str]]]:
    """A judge panel's cell pooled without members that errored ends in ``⚠1``
    (:func:`~rubric_studio.core.results.cell_mark`): that part becomes the last mark, kept whole
    after the squeezed rest (``✓ 2–0⚠1``), or ``⚠`` alone where the rest would not fit beside
    it (``✗1–1 tie⚠``; the inspector names the members)."""
    mark = pooled_mark(cell)
    if not mark or f" {mark}" not in text:
        return text, marks
    text = text.replace(f" {mark}", "", 1)
    room = width - sum(cell_len(m) for m, _ in marks) - cell_len(mark)
    if cell_len(squeeze(text, room)) > room:
        mark = mark[0]
    return text, [*marks, (mark, "error")]


class RowPaint:
    """The segments of one row, styled for the cursor row, the cursor cell and stale results."""

    def __init__(self, painter: ResultsMatrix, *, cursor_row: bool, stale: bool) -> None:
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
        room = width - sum(cell_len(mark) for mark, _ in marks)
        if len(marks) > 1 and cell_len(squeeze(text, room)) > room:
            room += cell_len(marks[0][0])
            marks = marks[1:]
        text = squeeze(text, room)
        shown = text if cell_len(text) <= room else fit(text, room)
        self.add(shown, name, at_cursor=at_cursor)
        for mark, style in marks:
            self.add(mark, style, at_cursor=at_cursor)
        rest = width - cell_len(shown) - sum(cell_len(mark) for mark, _ in marks)
        if rest > 0:
            self.add(" " * rest, name, at_cursor=at_cursor)
