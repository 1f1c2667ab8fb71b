"""Labelling in a studio session: writing the sidecar and finding the next sample to look at.

:class:`LabelWriter` writes one label change at a time, in the order asked (label keys
pressed quickly must land in order), off the event loop, and remembers the file it wrote so
the watcher can tell our own write from someone else's. The stepping functions answer "which
row next" over the rows the table shows, for disagreements and for samples without a label
(a labelling queue), wrapping around.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rubric_studio.core.labels import Label
from rubric_studio.session.results_model import (
    ResultsModel,
    cell_disagrees,
    disagrees,
    has_human_label,
    label_verdict_disagrees,
)


def file_signature(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


class LabelWriter:
    """Serialised writes of the labels sidecar."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = asyncio.Lock()
        self._written: tuple[int, int, int] | None = None

    async def write(self, change: Callable[..., Label | None], sample_id: str, *args: Any) -> Label | None:
        """Apply ``change(path, sample_id, *args)`` (a :mod:`~rubric_studio.core.labels_store` function).

        Raises what the store raises (bad YAML in the sidecar, permissions, a full disk).
        """
        async with self._lock:  # one write at a time, in the order asked
            label = await asyncio.to_thread(change, self.path, sample_id, *args)
            self._written = file_signature(self.path)
        return label

    def is_own_write(self) -> bool:
        """The sidecar on disk is the one we last wrote (the watcher need not reload it)."""
        return self._written is not None and file_signature(self.path) == self._written


def _step(rows: Sequence[str], cursor: int, step: int, wanted: Callable[[str], bool]) -> str | None:
    """The next row from ``cursor`` in direction ``step`` (wrapping) for which ``wanted`` holds."""
    count = len(rows)
    for offset in range(1, count + 1):
        candidate = rows[(cursor + step * offset) % count]
        if wanted(candidate):
            return candidate
    return None


def disagreeing(model: ResultsModel) -> set[str]:
    """Samples whose verdict or a labelled cell disagrees with the human label."""
    return {i for i in model.order if disagrees(model.results.get(i), model.labels.get(i))}


def next_disagreement(model: ResultsModel, rows: Sequence[str], cursor: int, step: int) -> tuple[str, str | None] | None:
    """(sample, criterion to show or None) of the next disagreement after ``cursor`` in ``rows``.

    The criterion is the first disagreeing cell when the sample's verdict itself agrees.
    """
    wrong = disagreeing(model)
    target = _step(rows, cursor, step, wrong.__contains__) if rows else None
    if target is None:
        return None
    result, label = model.results.get(target), model.labels.get(target)
    if result is None or label_verdict_disagrees(result, label):
        return target, None
    cells = [c.id for c in result.criteria if cell_disagrees(c, label)]
    return target, (cells[0] if cells else None)


def next_unlabelled(model: ResultsModel, rows: Sequence[str], cursor: int, step: int = 1) -> str | None:
    """The next sample in ``rows`` after ``cursor`` that has no label yet (wrapping)."""
    if not rows:
        return None
    return _step(rows, cursor, step, lambda i: not has_human_label(model.labels.get(i)))
