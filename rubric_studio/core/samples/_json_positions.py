"""Where each record of a JSON samples file starts, as line and column.

``json`` gives positions only for syntax errors; a record that parses but cannot be graded
(no ``output``, not a mapping) still has to be reported at its line and column. The file is
parsed once as a whole (which reports syntax errors with their position); this module
then walks the top level again with ``raw_decode`` to find where each record of the list,
or of ``{"samples": [...]}``, begins.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")


class _Walker:
    """Offsets into ``text`` read with a decoder that matches the one that parsed it."""

    def __init__(self, text: str, decoder: json.JSONDecoder) -> None:
        self.text = text
        self.decoder = decoder
        self.at = 0

    def skip_space(self) -> str:
        self.at = _SPACE.match(self.text, self.at).end()  # type: ignore[union-attr]
        return self.text[self.at : self.at + 1]

    def value(self) -> tuple[Any, int]:
        """The value at the cursor and where it starts; the cursor moves past it."""
        start = self.at
        value, self.at = self.decoder.raw_decode(self.text, start)
        return value, start

    def expect(self, char: str) -> None:
        if self.skip_space() != char:
            raise ValueError(f"expected {char!r} at offset {self.at}")
        self.at += 1

    def list_starts(self) -> list[int]:
        """Offsets of the elements of the list at the cursor; the cursor moves past the list."""
        self.expect("[")
        starts: list[int] = []
        if self.skip_space() != "]":
            while True:
                self.skip_space()
                starts.append(self.value()[1])
                if self.skip_space() != ",":
                    break
                self.at += 1
        self.expect("]")
        return starts

    def samples_list_starts(self) -> list[int]:
        """Offsets of the elements of the ``samples`` list of the object at the cursor (the
        last ``samples`` key wins, as in ``json.loads``)."""
        self.expect("{")
        found: list[int] = []
        while self.skip_space() == '"':
            key, _ = self.value()
            self.expect(":")
            self.skip_space()
            if key == "samples" and self.text[self.at : self.at + 1] == "[":
                found = self.list_starts()
            else:
                self.value()
            if self.skip_space() != ",":
                break
            self.at += 1
        return found


def record_positions(text: str, data: Any, decoder: json.JSONDecoder) -> list[tuple[int, int]] | None:
    """(line, column) of each record of ``data`` (the parsed ``text``): a top-level list, or the
    ``samples`` list of a top-level object. None when the walk does not match the data."""
    walker = _Walker(text, decoder)
    walker.skip_space()
    try:
        starts = walker.list_starts() if isinstance(data, list) else walker.samples_list_starts()
    except (ValueError, RecursionError):
        return None
    return _lines_and_columns(text, starts)


def _lines_and_columns(text: str, offsets: list[int]) -> list[tuple[int, int]]:
    """1-based (line, column) of increasing ``offsets`` in one pass over ``text``."""
    positions = []
    line, line_start, counted = 1, 0, 0
    for offset in offsets:
        newlines = text.count("\n", counted, offset)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", counted, offset) + 1
        counted = offset
        positions.append((line, offset - line_start + 1))
    return positions
