"""Check the judge's evidence quotes against the sample text.

A quote is *found* when it occurs in the sample: exactly first, then after normalising
both sides the same way (case, runs of whitespace, curly quotes and dashes, markdown
``*`` / backticks, surrounding quotation marks), then — when the judge elided part of
a passage with ``...`` — as its pieces in order. Found quotes carry ``start``/``end``
offsets into the original sample text so a viewer can highlight them. A judge that
invents a quote gets ``found=False``; nothing here guesses beyond that.
"""

from __future__ import annotations

import re

from rubric_studio.core.results import Evidence

_SAME = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u2026": "...",
})  # fmt: skip
_DROPPED = set("*`")
_ELLIPSIS = re.compile(r"\s*(?:\[(?:\.\.\.|\u2026)\]|\((?:\.\.\.|\u2026)\)|\.\.\.|\u2026)\s*")
_WRAPPERS = "\"'\u201c\u201d\u2018\u2019 \t\n"


def normalise(text: str) -> tuple[str, list[int]]:
    """The normalised text and, for each of its characters, its index in ``text``."""
    out: list[str] = []
    where: list[int] = []
    for index, char in enumerate(text):
        for ch in char.translate(_SAME):
            if ch in _DROPPED:
                continue
            if ch.isspace():
                if not out or out[-1] == " ":
                    continue
                out.append(" ")
                where.append(index)
                continue
            for folded in ch.casefold():
                out.append(folded)
                where.append(index)
    if out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def _find_pieces(pieces: list[str], haystack: str, where: list[int]) -> tuple[int, int] | None:
    position, first = 0, None
    last_end = 0
    for piece in pieces:
        found = haystack.find(piece, position)
        if found < 0:
            return None
        if first is None:
            first = found
        position = found + len(piece)
        last_end = where[position - 1] + 1
    assert first is not None
    return where[first], last_end


def locate(quote: str, text: str) -> tuple[int, int] | None:
    """``(start, end)`` of ``quote`` in ``text``, or None when it does not occur."""
    start = text.find(quote)
    if start >= 0:
        return start, start + len(quote)
    stripped = quote.strip(_WRAPPERS)
    if not stripped:
        return None
    haystack, where = normalise(text)
    needle = normalise(stripped)[0]
    if not needle:
        return None
    span = _find_pieces([needle], haystack, where)
    if span is not None:
        return span
    pieces = [p for p in (normalise(part)[0] for part in _ELLIPSIS.split(stripped)) if p]
    if len(pieces) > 1:
        return _find_pieces(pieces, haystack, where)
    return None


def check_quotes(quotes: list[str], text: str) -> list[Evidence]:
    """Each non-empty quote, marked found / not found in ``text`` (with offsets when found)."""
    evidence = []
    for quote in quotes:
        if not quote or not quote.strip(_WRAPPERS):
            continue
        span = locate(quote, text)
        if span is None:
            evidence.append(Evidence(quote=quote, found=False))
        else:
            evidence.append(Evidence(quote=quote, found=True, start=span[0], end=span[1]))
    return evidence
