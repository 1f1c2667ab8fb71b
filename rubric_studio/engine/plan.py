"""Which cells are stale: compare two snapshots of (rubric, samples, judge).

A snapshot maps every (sample id, criterion id) cell to a fingerprint of what
decides its result: for a check, the criterion's fingerprint and the sample's
text; for a judge cell, the cache keys of the requests that judge it (so a
comment-only edit or a re-save changes nothing, and editing one criterion's
outcome makes exactly that criterion's cells stale).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

CellKey = tuple[str, str]  # (sample id, criterion id)


@dataclass
class Snapshot:
    cells: dict[CellKey, str] = field(default_factory=dict)


@dataclass
class Plan:
    """The difference between two snapshots."""

    stale: set[CellKey]
    unchanged: set[CellKey]
    removed: set[CellKey]

    @property
    def stale_criteria(self) -> set[str]:
        return {criterion for _, criterion in self.stale}


def plan(previous: Snapshot | None, current: Snapshot) -> Plan:
    """Cells of ``current`` whose fingerprint is new or differs from ``previous``."""
    if previous is None:
        return Plan(stale=set(current.cells), unchanged=set(), removed=set())
    stale = {cell for cell, fp in current.cells.items() if previous.cells.get(cell) != fp}
    unchanged = set(current.cells) - stale
    removed = set(previous.cells) - set(current.cells)
    return Plan(stale=stale, unchanged=unchanged, removed=removed)


def combine(*parts: str) -> str:
    """A short stable fingerprint of several strings."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    return digest[:24]
