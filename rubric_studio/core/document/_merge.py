"""A line-based three-way merge (diff3) that says where both sides changed the same lines.

Used twice: by the document to put a ruamel edit back onto the user's own formatting,
and by the studio when a rubric changed on disk while it held unsaved edits (base = the
version both started from, mine = the editor's text, theirs = the file on disk).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Merge:
    """The merged text, and the lines of ``theirs`` (1-based) both sides changed differently.

    Where they conflict, ``text`` holds *mine*; a merge is clean when ``conflicts`` is empty.
    """

    text: str
    conflicts: list[int] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.conflicts


def hunks(a: list[str], b: list[str]) -> list[tuple[int, int, list[str]]]:
    """The changes from ``a`` to ``b``: (start, end) in ``a`` and the lines that replace them."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(i1, i2, b[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def overlap(lo1: int, hi1: int, lo2: int, hi2: int) -> bool:
    """Whether two changed ranges touch the same lines (two insertions at one place do)."""
    if lo1 == hi1 and lo2 == hi2:
        return lo1 == lo2
    if lo1 == hi1:
        return lo2 < lo1 < hi2
    if lo2 == hi2:
        return lo1 < lo2 < hi1
    return max(lo1, lo2) < min(hi1, hi2)


def _clusters(base: list[str], mine: list[str], theirs: list[str]) -> list[list[tuple[int, int, str, list[str]]]]:
    """Both sides' changes against ``base``, grouped where they overlap (``m`` sorts before ``t``)."""
    tagged = sorted(
        [(lo, hi, "m", lines) for lo, hi, lines in hunks(base, mine)]
        + [(lo, hi, "t", lines) for lo, hi, lines in hunks(base, theirs)],
        key=lambda h: (h[0], h[1], h[2]),
    )
    clusters: list[list[tuple[int, int, str, list[str]]]] = []
    for hunk in tagged:
        if clusters and any(overlap(h[0], h[1], hunk[0], hunk[1]) for h in clusters[-1]):
            clusters[-1].append(hunk)
        else:
            clusters.append([hunk])
    return clusters


def merge3(base: str, mine: str, theirs: str) -> Merge:
    """Apply both ``base`` → ``mine`` and ``base`` → ``theirs``; where they overlap, mine wins.

    Overlapping changes that produce the same lines are not conflicts.
    """
    if base == theirs or mine == theirs:
        return Merge(mine)
    if base == mine:
        return Merge(theirs)
    b, m, t = base.splitlines(True), mine.splitlines(True), theirs.splitlines(True)
    out: list[str] = []
    conflicts: list[int] = []
    position = shift_m = shift_t = 0  # line offsets of mine / theirs against base before `position`
    for cluster in _clusters(b, m, t):
        lo, hi = min(h[0] for h in cluster), max(h[1] for h in cluster)
        delta = {side: sum(len(h[3]) - (h[1] - h[0]) for h in cluster if h[2] == side) for side in "mt"}
        if len({h[2] for h in cluster}) == 1:
            for h_lo, h_hi, _, lines in cluster:
                out.extend(b[position:h_lo])
                out.extend(lines)
                position = h_hi
        else:
            mine_lines = m[lo + shift_m : hi + shift_m + delta["m"]]
            theirs_lines = t[lo + shift_t : hi + shift_t + delta["t"]]
            if mine_lines != theirs_lines:
                conflicts.append(lo + shift_t + 1)
            out.extend(b[position:lo])
            out.extend(mine_lines)
            position = hi
        shift_m += delta["m"]
        shift_t += delta["t"]
    out.extend(b[position:])
    return Merge("".join(out), conflicts)
