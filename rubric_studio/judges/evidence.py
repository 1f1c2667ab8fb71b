"""Check the judge's evidence quotes against the sample text.

A quote is *found* when it occurs in the sample and says what the sample says:

* **Exactly** first; otherwise after **normalising** both sides the same way: Unicode NFC
  (an accent typed as a combining mark matches the precomposed letter), case, runs of
  whitespace, curly quotes and dashes, markdown ``*`` / backticks, list markers at the start
  of a line (``-``, ``*``, ``+``, ``•``, ``1.``, ``1)``, ``a)``, ``(i)``, ``>``, ``#``, so
  a quote running across bullet points matches) and the quotation marks around the quote.
  A quote that ran a list's lines together keeping the markers ("password. 2. Contact")
  is also tried without them.
* **Elisions**: when the judge left part of a passage out with ``...`` (or ``…``,
  ``[...]``, ``(...)``), every part must occur in order, and the text each ``...`` skips
  must be *short* — at most :data:`MAX_ELIDED` normalised characters, about two sentences:
  an ellipsis trims a passage, it does not stitch together words from across the sample —
  and must not contain a **negation** (not, no, never, none, nobody, nothing, nowhere,
  neither, nor, without, cannot, any ``n't`` form). "We ... ask for your password" is
  *not* found in "We never ask for your password": the quote says the opposite of the
  sample. A quote may still contain a negation itself; only skipped text is checked.
* **Too short to be evidence**: a quote needs at least :data:`MIN_ALNUM` letters or digits,
  and each part of an elided quote at least :data:`MIN_PART_ALNUM`. "a", "I", "ok", "no"
  occur almost anywhere and prove nothing, so they are not found whatever the sample says;
  "a ... b" anchors nothing either. A short part still counts when it is a real word of
  the passage ("We ... ask"): its neighbours pin it to one place.

Found quotes carry ``start``/``end`` offsets into the *original* sample text (every
normalisation keeps a map back) so a viewer can highlight them; quotes not found carry a
``reason``. Nothing here guesses beyond that.

**Quoted from the input**: the judge also sees the sample's input and reference answer, and
sometimes quotes those instead of the output. Such a quote is still *not found* (it is no
evidence about the output), but :func:`check_sample_quotes` marks it ``quoted_from``
``"input"`` / ``"reference"`` (the same matching rules, tried only for quotes the output lacks),
so it is told apart from a quote the judge made up. The sample is normalised once per
:func:`check_quotes` call, in linear time, and each elided quote is placed by one pass per
part, so checking stays cheap for every judged cell.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from rubric_studio.core.results import Evidence
from rubric_studio.core.samples import Sample

#: The longest stretch of the sample (normalised characters) one ``...`` may stand for.
MAX_ELIDED = 200
#: The fewest letters or digits a quote must contain (all its parts together) ...
MIN_ALNUM = 3
#: ... and each part of an elided quote.
MIN_PART_ALNUM = 2

_SAME = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
})  # fmt: skip
_LIST_MARKER = (
    r"(?:[-*+>\u2022\u25e6\u2023\u25aa\u2043\u2013\u2014]|\d{1,3}[.)]|[A-Za-z]\)|\(\w{1,3}\)|#{1,6})"
)
#: What the normaliser does not copy through: a list marker (with the line break before
#: it, which counts as whitespace), a whitespace run, a dropped markdown character, "…".
_SPECIAL = re.compile(
    rf"(?P<space>(?:\A|\s*\n)[ \t]*{_LIST_MARKER}[ \t]+|\s+)|(?P<drop>[*`])|(?P<dots>\u2026)"
)
_ELLIPSIS = re.compile(r"\s*(?:\[(?:\.\.\.|\u2026)\]|\((?:\.\.\.|\u2026)\)|\.\.\.|\u2026)\s*")
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|nowhere|neither|nor|without|cannot|\w*n't"
    r"|(?:do|does|did|is|are|was|were|has|have|had|would|should|could|ca|wo|must|need)nt)\b"
)
#: A list marker inside a quote that ran a list's lines together ("... password. 2. Contact").
_FLATTENED_MARKER = re.compile(rf"(?<=[.!?:;])[ \t]+{_LIST_MARKER}(?=[ \t])")
_WRAPPERS = "\"'\u201c\u201d\u2018\u2019 \t\n"

NOT_IN_SAMPLE = "not in the sample"
#: The other texts the judge is shown, in the order a quote missing from the output is looked for there.
QUOTED_FROM = {
    "input": "quoted from the input, not from the output",
    "reference": "quoted from the reference answer, not from the output",
}


def _composed(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """``text`` in NFC and, per character, the ``[start, end)`` it came from in ``text``
    (``None`` maps when ``text`` is already NFC, the usual case)."""
    if unicodedata.is_normalized("NFC", text):
        return text, None, None
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []

    def close(begin: int, end: int) -> None:
        piece = unicodedata.normalize("NFC", text[begin:end])
        pieces.append(piece)
        starts.extend([begin] * len(piece))
        ends.extend([end] * len(piece))

    begin, composed = 0, None
    for index in range(1, len(text)):
        char = text[index]
        if unicodedata.combining(char):
            composed = None  # a combining mark always belongs to the cluster before it
            continue
        if composed is None:
            composed = unicodedata.normalize("NFC", text[begin:index])
        joined = unicodedata.normalize("NFC", composed + char)
        if len(joined) <= len(composed):  # a starter that composes, e.g. Hangul jamo
            composed = joined
            continue
        close(begin, index)
        begin, composed = index, None
    if text:
        close(begin, len(text))
    return "".join(pieces), starts, ends


def _fold(text: str) -> tuple[str, list[int]]:
    """``text`` normalised (see the module docstring) and each character's index in ``text``."""
    out: list[str] = []
    where: list[int] = []
    pending_space: int | None = None
    position = 0
    for special in (*_SPECIAL.finditer(text), None):
        stop = special.start() if special else len(text)
        kind = special.lastgroup if special else None
        if position < stop or kind == "dots":
            if pending_space is not None and out:  # one space between words, none at the ends
                out.append(" ")
                where.append(pending_space)
            pending_space = None
            _fold_plain(text, position, stop, out, where)
        if special is None:
            break
        position = special.end()
        if kind == "space":
            pending_space = special.start() if pending_space is None else pending_space
        elif kind == "dots":
            out.append("...")
            where.extend([special.start()] * 3)
    return "".join(out), where


def _fold_plain(text: str, start: int, stop: int, out: list[str], where: list[int]) -> None:
    """Case-fold ``text[start:stop]`` (no whitespace or markup in it) onto ``out``/``where``."""
    piece = text[start:stop]
    folded = piece.translate(_SAME).casefold()
    if len(folded) == len(piece):
        out.append(folded)
        where.extend(range(start, stop))
        return
    for index in range(start, stop):  # a character that folds to several (ß -> ss)
        char = text[index].translate(_SAME).casefold()
        out.append(char)
        where.extend([index] * len(char))


def normalise(text: str) -> str:
    """``text`` normalised the way quotes and samples are compared."""
    return _fold(_composed(text)[0])[0]


class _Sample:
    """The sample text, normalised once and shared by every quote checked against it."""

    def __init__(self, text: str):
        self.text = text

    @cached_property
    def folded(self) -> str:
        return self._folding[0]

    @cached_property
    def _folding(self) -> tuple[str, list[int], list[int] | None, list[int] | None]:
        composed, starts, ends = _composed(self.text)
        folded, where = _fold(composed)
        return folded, where, starts, ends

    def span(self, first: int, stop: int) -> tuple[int, int]:
        """Offsets in the original text of the folded characters ``[first, stop)``."""
        _, where, starts, ends = self._folding
        if starts is None or ends is None:
            return where[first], where[stop - 1] + 1
        return starts[where[first]], ends[where[stop - 1]]

    @cached_property
    def _negations(self) -> tuple[list[int], list[int], list[str]]:
        found = list(_NEGATION.finditer(self.folded))
        return [m.start() for m in found], [m.end() for m in found], [m.group(0) for m in found]

    def negation_in(self, first: int, stop: int) -> str | None:
        """The first negation word overlapping folded text ``[first, stop)``, if any."""
        starts, ends, words = self._negations
        index = bisect_right(ends, first)
        return words[index] if index < len(starts) and starts[index] < stop else None


@dataclass(slots=True)
class _Match:
    span: tuple[int, int] | None
    reason: str | None = None


def _too_short(parts: list[str]) -> str | None:
    """Why the parts of a quote are too short to be evidence, or None when they are not.

    Counted as written (an accent typed as a combining mark is no extra letter), which
    keeps a verbatim quote's check as cheap as finding it.
    """
    counts = [sum(map(str.isalnum, part)) for part in parts]
    if sum(counts) < MIN_ALNUM:
        return f"too short to be evidence (fewer than {MIN_ALNUM} letters or digits)"
    for part, count in zip(parts, counts, strict=True):
        if len(parts) > 1 and count < MIN_PART_ALNUM:
            return f'its part "{part.strip()}" is too short to be evidence (fewer than {MIN_PART_ALNUM} letters or digits)'
    return None


def _place_parts(
    parts: list[str], sample: _Sample, *, max_gap: int | None, negations: bool
) -> list[int] | None:
    """Folded ``[start, stop)`` bounds of each part, in order, each within ``max_gap`` of the
    one before (any gap when None) and, with ``negations``, no negation in what is skipped.

    One left-to-right pass per part over its occurrences: the best predecessor of an
    occurrence is the nearest end of the previous part before it (the shortest gap, so the
    least text to hold a negation), found by bisection, so placing stays near-linear.
    """
    haystack = sample.folded
    layers: list[tuple[list[int], list[int], list[int]]] = []  # per part: starts, ends, predecessors
    for part in parts:
        previous_ends = layers[-1][1] if layers else None
        starts: list[int] = []
        ends: list[int] = []
        back: list[int] = []
        at = haystack.find(part, previous_ends[0] if previous_ends else 0)
        while at >= 0:
            if previous_ends is None:
                predecessor: int | None = -1
            elif max_gap is not None and at > previous_ends[-1] + max_gap:
                break
            else:
                predecessor = _predecessor(previous_ends, at, sample, max_gap, negations)
            if predecessor is not None:
                starts.append(at)
                ends.append(at + len(part))
                back.append(predecessor)
            at = haystack.find(part, at + 1)
        if not starts:
            return None
        layers.append((starts, ends, back))
    bounds: list[int] = []
    index = 0
    for starts, ends, back in reversed(layers):
        bounds[:0] = [starts[index], ends[index]]
        index = back[index]
    return bounds


def _predecessor(
    ends: list[int], at: int, sample: _Sample, max_gap: int | None, negations: bool
) -> int | None:
    """Index of the previous part's end that an occurrence at ``at`` may follow, if any."""
    index = bisect_right(ends, at) - 1
    gap_start = ends[index]
    if max_gap is not None and at - gap_start > max_gap:
        return None
    if negations and sample.negation_in(gap_start, at):
        return None
    return index


def _place_elided(parts: list[str], sample: _Sample) -> _Match:
    """Where the parts of an elided quote sit, or why they do not count as found."""
    bounds = _place_parts(parts, sample, max_gap=MAX_ELIDED, negations=True)
    if bounds is not None:
        return _Match(sample.span(bounds[0], bounds[-1]))
    bounds = _place_parts(parts, sample, max_gap=MAX_ELIDED, negations=False)
    if bounds is not None:
        for gap_start, gap_stop in zip(bounds[1:-1:2], bounds[2::2], strict=True):
            word = sample.negation_in(gap_start, gap_stop)
            if word:
                return _Match(None, f'its "..." leaves out "{word}", which changes what the sample says')
    if _place_parts(parts, sample, max_gap=None, negations=False) is not None:
        return _Match(None, f'what its "..." leaves out is longer than {MAX_ELIDED} characters')
    return _Match(None, NOT_IN_SAMPLE)


def _match(quote: str, sample: _Sample) -> _Match:
    """Where ``quote`` is in the sample, or why it is not found (see the module docstring)."""
    match = _match_as_written(quote, sample)
    if match.reason == NOT_IN_SAMPLE:
        flattened = _FLATTENED_MARKER.sub("", quote)
        if flattened != quote:
            return _match_as_written(flattened, sample)
    return match


def _match_as_written(quote: str, sample: _Sample) -> _Match:
    stripped = quote.strip(_WRAPPERS)
    written = [part for part in _ELLIPSIS.split(stripped) if part.strip()]
    too_short = _too_short(written)
    if too_short:
        return _Match(None, too_short)
    start = sample.text.find(quote)
    if start >= 0:
        return _Match((start, start + len(quote)))
    parts = [folded for part in written if (folded := normalise(part))]
    needles = [normalise(stripped)]
    if len(parts) == 1:  # an ellipsis only at either end leaves nothing out in between
        needles.append(parts[0])
    for needle in needles:
        at = sample.folded.find(needle)
        if at >= 0:
            return _Match(sample.span(at, at + len(needle)))
    if len(parts) < 2:
        return _Match(None, NOT_IN_SAMPLE)
    return _place_elided(parts, sample)


def locate(quote: str, text: str) -> tuple[int, int] | None:
    """``(start, end)`` of ``quote`` in ``text``, or None when it is not found there."""
    return _match(quote, _Sample(text)).span


def check_quotes(quotes: list[str], text: str, *, elsewhere: Mapping[str, str | None] | None = None) -> list[Evidence]:
    """Each non-empty quote, marked found (with offsets into ``text``) or not (with a reason).

    ``elsewhere`` names the other texts the judge saw (keys of :data:`QUOTED_FROM`): a quote
    not in ``text`` but in one of them is marked ``quoted_from`` that name, not made up.
    """
    sample = _Sample(text)
    others: dict[str, str | _Sample] = {name: other for name, other in (elsewhere or {}).items() if other}
    evidence = []
    for quote in quotes:
        if not quote or not quote.strip(_WRAPPERS):
            continue
        match = _match(quote, sample)
        if match.span is not None:
            evidence.append(Evidence(quote=quote, found=True, start=match.span[0], end=match.span[1]))
            continue
        source = _quoted_from(quote, others)
        reason = QUOTED_FROM.get(source, f"quoted from the {source}") if source else match.reason
        evidence.append(Evidence(quote=quote, found=False, reason=reason, quoted_from=source))
    return evidence


def _quoted_from(quote: str, others: dict[str, str | _Sample]) -> str | None:
    """The first of ``others`` (name → text, parsed in place on first use) holding ``quote``."""
    for name, other in others.items():
        if isinstance(other, str):
            other = others[name] = _Sample(other)
        if _match(quote, other).span is not None:
            return name
    return None


def check_sample_quotes(quotes: list[str], sample: Sample) -> list[Evidence]:
    """:func:`check_quotes` against the sample's output, telling quotes of its input or
    reference answer apart from made-up ones."""
    return check_quotes(quotes, sample.output, elsewhere={"input": sample.input, "reference": sample.ground_truth})
