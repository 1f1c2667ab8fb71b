"""Which cells are stale: compare two snapshots of (rubric, samples, judge).

A snapshot maps every (sample id, criterion id) cell to a fingerprint of what
decides its result: for a check, the criterion's fingerprint and the sample's
text; for a judge cell, the cache keys of the requests that judge it (so a
comment-only edit or a re-save changes nothing, and editing one criterion's
outcome makes exactly that criterion's cells stale). A judge cell with no request
(no judge, or the criterion still has the starter's placeholder outcome) is
fingerprinted by the criterion, the sample and why it is not judged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric

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


def snapshot_of(
    rubric: Rubric,
    sample_ids: Sequence[str],
    sample_fps: Mapping[str, str],
    judge_cell_keys: Mapping[CellKey, list[str]] | None,
    *,
    trusted: bool,
) -> Snapshot:
    """The snapshot of ``rubric`` over the samples; ``judge_cell_keys`` maps each judged cell to
    the cache keys of its requests (None when there is no judge)."""
    from rubric_studio.engine.starter import awaits_outcome

    snap = Snapshot()
    criterion_fps = {c.key: c.fingerprint() for c in rubric.criteria}
    for sample_id in sample_ids:
        sample_fp = sample_fps[sample_id]
        for criterion in rubric.criteria:
            cell = (sample_id, criterion.key)
            if not criterion.is_judged:
                snap.cells[cell] = combine("check", criterion_fps[criterion.key], sample_fp, str(trusted))
            elif awaits_outcome(criterion):
                snap.cells[cell] = combine("awaits-outcome", criterion_fps[criterion.key], sample_fp)
            elif judge_cell_keys is None:
                snap.cells[cell] = combine("unjudged", criterion_fps[criterion.key], sample_fp)
            else:
                snap.cells[cell] = combine("judge", *judge_cell_keys.get(cell, []))
    return snap
