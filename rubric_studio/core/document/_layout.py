"""Where each criterion of a block-style ``criteria:`` list sits in the text.

Adding, deleting, duplicating and moving criteria work on the lines themselves, so the
comments written directly above a criterion travel with it, while a section header
(``# --- deterministic ---``, a comment ruler) and the comments under it stay where they
are. :func:`find_layout` finds each criterion's chunk of lines, or None when the list is
not written one ``-`` per criterion at one column (flow style, odd indentation): the
document then edits through ruamel instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # ruamel is loaded by the first edit, not by opening a rubric to read it
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

__all__ = ["CriteriaLayout", "find_layout", "insert_lines", "is_comment", "render_item"]

_RULER = re.compile(r"^\s*#\s*([-=*#~_+])\1{2,}")


def is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _is_blank(line: str) -> bool:
    return not line.strip()


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


@dataclass
class CriteriaLayout:
    """Where each criterion of a block-style ``criteria:`` sequence sits in the text."""

    lines: list[str]
    starts: list[int]  # first line of the chunk (its own comments included)
    dashes: list[int]  # line of the item's "-"
    ends: list[int]  # one past the item's last line
    column: int  # column of the "-"
    added_newline: bool
    newline: str = "\n"

    def chunk(self, index: int) -> list[str]:
        return self.lines[self.starts[index] : self.ends[index]]

    def item(self, index: int) -> list[str]:
        return self.lines[self.dashes[index] : self.ends[index]]

    def separator(self, index: int) -> list[str]:
        """Lines between chunk ``index - 1`` and chunk ``index`` (index ≥ 1)."""
        return self.lines[self.ends[index - 1] : self.starts[index]]

    def blank_separator(self) -> list[str]:
        for index in range(1, len(self.starts)):
            if any(_is_blank(line) for line in self.separator(index)):
                return [self.newline]
        return []

    def join(self, lines: list[str]) -> str:
        text = "".join(lines)
        if self.added_newline and text.endswith(self.newline):
            text = text[: -len(self.newline)]
        return text


def _dash_lines(criteria: CommentedSeq, lines: list[str], key_line: int) -> tuple[list[int], int] | None:
    """The line of each criterion's ``-`` and their common column (None when they do not line up)."""
    dashes: list[int] = []
    column = -1
    for index in range(len(criteria)):
        line, col = criteria.lc.item(index)
        dash = lines[line].rfind("-", 0, col)
        while dash < 0 or lines[line][:dash].strip():
            line -= 1
            if line <= key_line:
                return None
            stripped = lines[line].rstrip("\n").rstrip()
            dash = len(stripped) - 1 if stripped.endswith("-") else -1
        if column == -1:
            column = dash
        if dash != column or (dashes and line <= dashes[-1]):
            return None
        dashes.append(line)
    return dashes, column


def _item_ends(lines: list[str], dashes: list[int], column: int) -> list[int]:
    """One past the last line indented under each ``-`` (trailing blank lines excluded)."""
    ends: list[int] = []
    for index, dash in enumerate(dashes):
        limit = dashes[index + 1] if index + 1 < len(dashes) else len(lines)
        end = dash + 1
        for number in range(dash + 1, limit):
            line = lines[number]
            if _is_blank(line):
                continue
            if _indent_of(line) <= column:
                break
            end = number + 1
        ends.append(end)
    return ends


def _chunk_starts(lines: list[str], dashes: list[int], ends: list[int], key_line: int) -> list[int]:
    """The first line of each criterion's chunk: the comments directly above its ``-``, up to a ruler."""
    starts: list[int] = []
    for index, dash in enumerate(dashes):
        floor = ends[index - 1] if index else key_line + 1
        start = dash
        while start - 1 >= floor and is_comment(lines[start - 1]):
            start -= 1
        for number in range(dash - 1, start - 1, -1):
            if _RULER.match(lines[number]):
                start = number + 1
                break
        starts.append(start)
    return starts


def find_layout(data: CommentedMap, criteria: CommentedSeq, text: str) -> CriteriaLayout | None:
    """The layout of ``criteria`` (the list in ``data``, loaded from ``text``), or None when it
    is flow style, empty or not laid out one ``-`` per criterion at one column."""
    if not criteria or criteria.fa.flow_style():
        return None
    newline = "\r\n" if "\r\n" in text else "\n"
    added = not text.endswith("\n")
    lines = (text + newline if added else text).splitlines(True)
    try:
        key_line = data.lc.key("criteria")[0]
    except Exception:
        key_line = -1
    found = _dash_lines(criteria, lines, key_line)
    if found is None:
        return None
    dashes, column = found
    ends = _item_ends(lines, dashes, column)
    starts = _chunk_starts(lines, dashes, ends, key_line)
    return CriteriaLayout(lines, starts, dashes, ends, column, added, newline)


def render_item(dump: Callable[[Any], str], item: Any, column: int) -> list[str]:
    """The lines of one new criterion at dash column ``column``, as ``dump`` renders YAML."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    holder = CommentedMap([("criteria", CommentedSeq([item]))])
    holder["criteria"].fa.set_block_style()
    rendered = dump(holder).splitlines(True)[1:]
    if not rendered:
        return []
    here = _indent_of(rendered[0])
    shift = column - here
    out = []
    for line in rendered:
        if _is_blank(line):
            out.append(line)
        elif shift >= 0:
            out.append(" " * shift + line)
        else:
            out.append(line[min(-shift, _indent_of(line)) :])
    return out


def insert_lines(layout: CriteriaLayout, index: int, item_lines: list[str]) -> str:
    """The text with ``item_lines`` as criterion ``index`` (separated like the others are)."""
    lines = layout.lines
    sep = layout.blank_separator()
    count = len(layout.starts)
    if index >= count:
        at = layout.ends[-1]
        new = lines[:at] + sep + item_lines + lines[at:]
    elif index <= 0:
        at = layout.starts[0]
        new = lines[:at] + item_lines + sep + lines[at:]
    else:
        at = layout.ends[index - 1]
        new = lines[:at] + sep + item_lines + lines[at:]
    return layout.join(new)
