"""Column widths of the results matrix: as wide as the terminal allows, compact when it does not.

Pure functions over :class:`Column` (no widget), so the layout is tested without a screen:

* **Everything fits compact** (the id column at up to :data:`ID_MAX`, every criterion at
  :data:`CRIT_MIN`): spare width first makes each criterion as wide as its title up to
  :data:`CRIT_MAX`, then the id column as wide as the longest id up to :data:`ID_WIDE`
  (an id names its row on every line; a title is one line, and the focused line shows it
  whole), then is shared, a cell at a time, between the id column (up to the longest id)
  and the criterion columns (up to their whole title), so a wide terminal shows whole
  ids and whole titles.
* **Not everything fits**: criterion columns stay compact, the id column gives up width
  (down to :data:`ID_COMPACT`) when that shows another criterion, and the columns scroll
  sideways with ``+N›`` saying how many are off to the right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

from rubric_studio.core.rubric import Criterion
from rubric_studio.tui.results._text import (
    CRIT_MAX,
    CRIT_MIN,
    GAP,
    HUMAN_W,
    ID_COMPACT,
    ID_MAX,
    ID_MIN,
    SCORE_W,
    SEPARATOR,
    VERDICT_W,
    full_title,
    two_line_width,
)

ID_WIDE = 32  # the id column grows to this before the titles get past CRIT_MAX


@dataclass
class Column:
    """One criterion column: its criterion, its width now, and its whole title."""

    criterion: Criterion
    width: int
    title: str  # the full title: id, and * when required

    @classmethod
    def of(cls, criterion: Criterion) -> Column:
        return cls(criterion, CRIT_MIN, full_title(criterion))

    @property
    def natural(self) -> int:
        """As wide as the title on two lines broken at a hyphen (within CRIT_MIN..CRIT_MAX): the
        matrix gives such a title a second header line rather than cutting it."""
        return max(CRIT_MIN, min(CRIT_MAX, two_line_width(self.title)))

    @property
    def full(self) -> int:
        """As wide as the whole title."""
        return max(CRIT_MIN, cell_len(self.title))


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


def plan_layout(columns: list[Column], longest_id: int, room: int) -> int:
    """Set each column's width for ``room`` cells beside the score, verdict and human columns
    (see the module docstring); return the id column's width."""
    wanted = max(ID_MIN, min(ID_MAX, longest_id))
    widths = [CRIT_MIN] * len(columns)
    compact = len(columns) * (CRIT_MIN + GAP)
    if wanted + compact <= room:
        spare = share(widths, [c.natural for c in columns], room - wanted - compact)
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
