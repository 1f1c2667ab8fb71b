"""The live results matrix: one line per sample, one column per criterion.

A Line-API widget (like Textual's DataTable, but rendering only the visible lines
from a :class:`~rubric_studio.session.results_model.ResultsModel`): no widget per cell and no
per-cell measuring, so 10,000 samples open, scroll and filter at once. The header
and the sample columns stay put; criterion columns scroll sideways by column.

Cells are compact so that a rubric's criteria fit beside the editor: ``✓`` / ``✗``
(met / unmet; green when that is good, red when bad — a penalty met is red), ``✓ 8``
(an analytic raw score), ``✗.29`` (a check's partial score), ``⚠`` (error), ``·``
(unjudged), ``⋯`` (pending), ``≠`` (differs from the human label), ``?`` (the judge
quoted something no text it saw says) and a reversed ``↑`` / ``↓`` (flipped since the
last save). Columns take the width the terminal gives (:mod:`~rubric_studio.tui.results._layout`);
what is still cut is written in full on the focused line above the titles. When rows
leave room, a legend shows at the bottom. Texts: :mod:`~rubric_studio.tui.results._text`;
drawing: :mod:`~rubric_studio.tui.results._render`; keys and the mouse:
:mod:`~rubric_studio.tui.results._nav`.

Attributes down: the app sets :attr:`ResultsMatrix.model` and calls
:meth:`ResultsMatrix.rows_changed` / :meth:`ResultsMatrix.reset`; a search box sets
:attr:`ResultsMatrix.search`. Messages up: :class:`ResultsMatrix.Highlighted` (cursor moved),
:class:`ResultsMatrix.Selected` (enter / click), :class:`ResultsMatrix.ViewChanged` (filter,
search or sort changed).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass

from rich.cells import cell_len
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.results_model import CRITERION_FILTERS, ResultsModel
from rubric_studio.session.results_model import filter_label as describe_filter
from rubric_studio.tui.calibration import table_bindings
from rubric_studio.tui.results._layout import Column, other_fixed_width, plan_layout, shown_columns
from rubric_studio.tui.results._nav import MatrixNavigation
from rubric_studio.tui.results._render import HEADER_LINES, MatrixPainter
from rubric_studio.tui.results._text import (
    CRIT_MAX,
    CRIT_MIN,
    ID_COMPACT,
    ID_MAX,
    ID_MIN,
    cell_mark,
    cell_text,
    column_title,
    fit,
    squeeze,
    verdict_mark,
    verdict_text,
)

__all__ = [
    "CRIT_MAX", "CRIT_MIN", "ID_COMPACT", "ID_MAX", "ID_MIN", "Column", "ResultsMatrix", "cell_mark", "cell_text",
    "column_title", "fit", "squeeze", "verdict_mark", "verdict_text",
]  # fmt: skip

REBUILD_INTERVAL = 0.1  # seconds between re-sorts/re-filters while results stream in


class ResultsMatrix(MatrixNavigation, MatrixPainter, ScrollView, can_focus=True):
    """Samples × criteria, virtualised."""

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
        "matrix--made-up",
        "matrix--flip-up",
        "matrix--flip-down",
        "matrix--empty",
    }

    #: Moving, filtering and sorting (the help lists these as the table's own keys).
    NAVIGATION_BINDINGS = [
        Binding("enter", "inspect", "Inspect", show=False),  # the cell hint says so; the footer fits 80 columns
        Binding("f", "cycle_filter", "Filter"),
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
    #: where the user looks (:mod:`~rubric_studio.tui.calibration._keys`).
    BINDINGS = [*NAVIGATION_BINDINGS, *table_bindings()]

    # always_update: picking a criterion filter again on another column re-pins it there.
    filter_kind: reactive[str] = reactive("all", always_update=True)
    sort_by: reactive[str] = reactive("file")
    reverse: reactive[bool] = reactive(False)
    search: reactive[str] = reactive("")

    @dataclass
    class Highlighted(Message):
        """The cursor is on ``sample_id`` × ``criterion_id`` (None: the sample columns)."""

        sample_id: str | None
        criterion_id: str | None

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
        self._legend: dict[int, list[Strip]] = {}
        self._highlighted: tuple[str | None, str | None] = (None, None)
        self._longest_id = ID_MIN
        self._layout_key: tuple[int, int] | None = None
        self._columns_version = 0
        self._index_cache: tuple[list[str], dict[str, int]] | None = None

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
                    self.refresh_line(row + HEADER_LINES)
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
        self.columns = [Column.of(criterion) for criterion in self.model.criteria]
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
        self.virtual_size = Size(self._width(), len(self.rows) + HEADER_LINES)

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

    def watch_sort_by(self) -> None:
        if self.is_mounted:
            self._rebuild()

    def watch_reverse(self) -> None:
        if self.is_mounted:
            self._rebuild()

    def watch_search(self) -> None:
        if self.is_mounted:
            self._rebuild()
