"""``grade --format table`` drawn row by row.

A rich ``Table`` measures every cell of every row before it draws one, which took ten
seconds for 20,000 samples. The columns of this table have widths known from the header
and one pass over the ids, so each row is a formatted string: the same box and columns as
rich draws, in a small fraction of the time. When the table would be wider than the
console, rich's ``Table`` draws it instead (it shrinks columns to fit).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size

SAMPLE_MAX_WIDTH = 32


@dataclass
class Column:
    header: str
    justify: str = "left"  # left | right | center
    min_width: int = 0
    max_width: int | None = None
    width: int = 0


def fit(text: str, width: int, justify: str) -> str:
    """``text`` padded (or cut with an ellipsis) to exactly ``width`` cells."""
    size = cell_len(text)
    if size > width:
        return set_cell_size(text, width - 1) + "…"
    gap = width - size
    if justify == "right":
        return " " * gap + text
    if justify == "center":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    return text + " " * gap


class Styles:
    """ANSI start/end codes per rich style name (empty strings when not colouring)."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour
        self._codes: dict[str, tuple[str, str]] = {}

    def wrap(self, text: str, style: str) -> str:
        if not self.colour or not style:
            return text
        if style not in self._codes:
            from rich.color import ColorSystem
            from rich.style import Style

            start, _, end = Style.parse(style).render("\0", color_system=ColorSystem.TRUECOLOR).partition("\0")
            self._codes[style] = (start, end)
        start, end = self._codes[style]
        return f"{start}{text}{end}"


def size_columns(columns: list[Column], rows: list[list[tuple[str, str]]]) -> None:
    """Set each column's width to its widest cell, within its minimum and maximum."""
    widths = [max(cell_len(c.header), c.min_width) for c in columns]
    for row in rows:
        for index, (text, _) in enumerate(row):
            size = cell_len(text)
            if size > widths[index]:
                widths[index] = size
    for column, width in zip(columns, widths, strict=True):
        column.width = width if column.max_width is None else min(width, max(column.max_width, cell_len(column.header)))


def table_width(columns: list[Column]) -> int:
    return sum(c.width for c in columns) + 3 * len(columns) + 1


def draw(title: str, columns: list[Column], rows: list[list[tuple[str, str]]], styles: Styles) -> Iterator[str]:
    """The lines of the table: title, heavy head, one line per row, bottom edge."""
    width = table_width(columns)
    yield styles.wrap(fit(title, width, "left") if cell_len(title) <= width else title, "italic")
    yield "┏" + "┳".join("━" * (c.width + 2) for c in columns) + "┓"
    yield "┃" + "┃".join(" " + styles.wrap(fit(c.header, c.width, c.justify), "bold") + " " for c in columns) + "┃"
    yield "┡" + "╇".join("━" * (c.width + 2) for c in columns) + "┩"
    for row in rows:
        yield "│" + "│".join(
            " " + styles.wrap(fit(text, column.width, column.justify), style) + " "
            for (text, style), column in zip(row, columns, strict=True)
        ) + "│"
    yield "└" + "┴".join("─" * (c.width + 2) for c in columns) + "┘"
