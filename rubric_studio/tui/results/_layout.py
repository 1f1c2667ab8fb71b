"""Column widths of the results matrix: as wide as the terminal allows, compact when it does not.

Pure functions over :class:`Column` (no widget), so the layout is tested without a screen:

* **Everything fits compact** (the id column at up to :data:`ID_MAX`, every criterion at
  :data:`CRIT_MIN`): spare width first makes criteria as wide as their whole title needs on
  :data:`TITLE_LINES` header lines (up to :data:`CRIT_WHOLE`, so an id of 48 characters
  reads whole), those that need the fewest cells first, so that as many titles as the width
  allows are whole (the id column gives up width, down to :data:`ID_COMPACT`, when that makes
  every title whole); then as wide as two lines need, up to :data:`CRIT_MAX`; then the id
  column as wide as the longest id up to :data:`ID_WIDE` (an id names its row on every line;
  the focused line shows a title whole); then what is left is shared, a cell at a time,
  between the id column (up to the longest id) and the criterion columns (up to their whole
  title on one line), so a wide terminal shows whole ids and whole titles.
* **Not everything fits**: criterion columns stay compact, the id column gives up width
  (down to :data:`ID_COMPACT`) when that shows another criterion, and the columns scroll
  sideways with ``+N›`` saying how many are off to the right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len

from rubric_studio.core.rubric import Criterion
from rubric_studio.tui.results._text import (
    CRIT_MAX,
    CRIT_MIN,
    CRIT_WHOLE,
    GAP,
    HUMAN_W,
    ID_COMPACT,
    ID_MAX,
    ID_MIN,
    SCORE_W,
    SEPARATOR,
    TITLE_LINES,
    VERDICT_W,
    full_title,
    header_title,
    lines_width,
)

ID_WIDE = 32  # the id column grows to this before the titles get past CRIT_MAX


@dataclass
class Column:
    """One criterion column: its criterion, its width now, and its whole title."""

    criterion: Criterion
    width: int
    title: str  # the full title: id, and * when required
    #: How many leading characters its id shares with the criterion most like it: its header
    #: keeps where the two part (:func:`~rubric_studio.tui.results._text.header_title`).
    shared: int = 0
    _lines: dict[int, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, criterion: Criterion, shared: int = 0) -> Column:
        return cls(criterion, CRIT_MIN, full_title(criterion), shared)

    @property
    def whole(self) -> int:
        """As wide as the title whole on TITLE_LINES lines broken at hyphens (within CRIT_MIN..CRIT_WHOLE)."""
        return max(CRIT_MIN, min(CRIT_WHOLE, lines_width(self.title, TITLE_LINES)))

    @property
    def natural(self) -> int:
        """As wide as the title on two lines broken at a hyphen (within CRIT_MIN..CRIT_MAX, or
        :attr:`whole` when that is wider)."""
        return max(self.whole, min(CRIT_MAX, lines_width(self.title, 2)))

    @property
    def full(self) -> int:
        """As wide as the whole title."""
        return max(CRIT_MIN, cell_len(self.title))

    @property
    def header(self) -> tuple[str, ...]:
        """The title's header lines at the column's width now, top first."""
        lines = self._lines.get(self.width)
        if lines is None:
            lines = self._lines[self.width] = header_title(self.criterion, self.width, self.shared)
        return lines


def other_fixed_width() -> int:
    """The sample columns but the id: score, verdict, human and the separator."""
    return GAP + SCORE_W + GAP + VERDICT_W + GAP + HUMAN_W + cell_len(SEPARATOR)


def share(widths: list[int], caps: Sequence[int], spare: int) -> int:
    """Give ``spare`` cells out one at a time, in turn, to the widths still below their cap;
    return what is left once every width reached its cap."""
    while spare > 0:
        grew = False
        for index, cap in enumerate(caps):
            if spare > 0 and widths[index] < cap:
                widths[index] += 1
                spare -= 1
                grew = True
        if not grew:
            break
    return spare


def count_fitting(total: int, room: int) -> int:
    """How many compact criterion columns of ``total`` fit in ``room`` (from the first, with "+N›" if not all)."""
    if total * (CRIT_MIN + GAP) <= room:
        return total
    room -= cell_len(f"+{total}›")
    return max(0, room // (CRIT_MIN + GAP))


def grow_to_whole(widths: list[int], caps: Sequence[int], spare: int) -> int:
    """Give ``spare`` cells to the widths below their cap, the one closest to it first, so that as
    many as ``spare`` allows reach it; what cannot make another whole is shared in turn. Return
    what is left once every width reached its cap."""
    for index in sorted(range(len(widths)), key=lambda i: caps[i] - widths[i]):
        need = caps[index] - widths[index]
        if 0 < need <= spare:
            widths[index] += need
            spare -= need
    return share(widths, caps, spare)


def plan_layout(columns: list[Column], longest_id: int, room: int) -> int:
    """Set each column's width for ``room`` cells beside the score, verdict and human columns
    (see the module docstring); return the id column's width."""
    wanted = max(ID_MIN, min(ID_MAX, longest_id))
    widths = [CRIT_MIN] * len(columns)
    compact = len(columns) * (CRIT_MIN + GAP)
    if wanted + compact <= room:
        wholes = [c.whole for c in columns]
        short = sum(wholes) - len(columns) * CRIT_MIN - (room - wanted - compact)
        if 0 < short <= wanted - min(wanted, ID_COMPACT):  # the id gives up what makes every title whole
            wanted -= short
        spare = grow_to_whole(widths, wholes, room - wanted - compact)
        spare = share(widths, [c.natural for c in columns], spare)
        sizes = [wanted, *widths]
        spare = share(sizes, [max(wanted, min(longest_id, ID_WIDE))], spare)
        share(sizes, [max(wanted, longest_id), *(c.full for c in columns)], spare)
        id_width, widths = sizes[0], sizes[1:]
    else:
        id_width, best = wanted, count_fitting(len(columns), room - wanted)
        for candidate in range(wanted - 1, min(wanted, ID_COMPACT) - 1, -1):
            count = count_fitting(len(columns), room - candidate)
            if count > best:
                id_width, best = candidate, count
    for column, width in zip(columns, widths, strict=True):
        column.width = width
    return id_width


def shown_columns(columns: list[Column], offset: int, room: int) -> range:
    """Criterion columns that fit entirely in ``room``, from ``offset`` (room kept for "+N›")."""
    rest = columns[offset:]
    if sum(c.width + GAP for c in rest) > room:
        room -= cell_len(f"+{len(rest)}›")
    end, used = offset, 0
    while end < len(columns) and used + columns[end].width + GAP <= room:
        used += columns[end].width + GAP
        end += 1
    return range(offset, max(end, min(offset + 1, len(columns))))
