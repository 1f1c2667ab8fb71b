"""Watching the rubric, samples, labels and the rubric's card for changes made outside the studio.

The *folders* that hold the files are watched (not the files), so editors that save
by writing a temporary file and renaming it over the original are caught; events are
filtered down to the files in use. ``debounce=50, step=10`` yields a change about
10 ms after the last write settles (watchfiles' defaults wait ~100 ms or more).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from rubric_studio.core.samples import TEXT_SUFFIXES

DEBOUNCE_MS = 50
STEP_MS = 10


def _canonical(path: str | os.PathLike[str]) -> Path:
    """The folder resolved (symlinks, ``..``) and the name kept as given."""
    path = Path(path).absolute()
    return path.parent.resolve() / path.name


@dataclass
class WatchTargets:
    """Which paths are the rubric, the samples (file or folder), the labels and the rubric card."""

    rubric: Path
    samples: Path | None = None
    labels: Path | None = None
    #: Samples were not named: files that *would* be found beside the rubric count too.
    discover: bool = False

    def __post_init__(self) -> None:
        self.rubric = _canonical(self.rubric)
        self.samples = _canonical(self.samples) if self.samples is not None else None
        self.labels = _canonical(self.labels) if self.labels is not None else None
        #: The labels journal (web and studio labels land there before the sidecar).
        self.journal: Path | None = None
        if self.labels is not None:
            from rubric_studio.core.labels import journal_path

            self.journal = _canonical(journal_path(self.labels))
        #: The rubric card (``rubric-studio card`` writes it beside the rubric; the status bar shows it).
        from rubric_studio.core.card import card_path_for

        self.card: Path = _canonical(card_path_for(self.rubric))
        self._candidates: set[Path] = set()
        if self.discover:
            from rubric_studio.core.discovery import SAMPLE_CANDIDATES

            stem = self.rubric.stem
            self._candidates = {self.rubric.parent / p.format(stem=stem) for p in SAMPLE_CANDIDATES}

    @property
    def samples_is_folder(self) -> bool:
        return self.samples is not None and self.samples.is_dir()

    def folders(self) -> list[Path]:
        """The folders to watch (non-recursively)."""
        found: list[Path] = [self.rubric.parent]
        if self.samples is not None:
            found.append(self.samples.parent)
            if self.samples_is_folder:
                found.append(self.samples)
        if self.labels is not None:
            found.append(self.labels.parent)
        if self.journal is not None:
            with contextlib.suppress(OSError, ValueError):  # a read-only folder: no journal there either
                from rubric_studio.core.atomic import state_folder

                state_folder(self.labels)  # made now, so labels written by others are seen as they land
            found.append(self.journal.parent)
        unique: list[Path] = []
        for folder in found:
            if folder not in unique and folder.is_dir():
                unique.append(folder)
        return unique

    def kind_of(self, path: str | os.PathLike[str]) -> str | None:
        """"rubric", "samples", "labels", "card" or None for a path reported by the watcher."""
        candidate = _canonical(path)
        if candidate == self.rubric:
            return "rubric"
        if candidate == self.card:
            return "card"
        if candidate == self.labels or candidate == self.journal:
            return "labels"
        if candidate in self._candidates:
            return "samples"
        if self.samples is not None:
            if candidate == self.samples:
                return "samples"
            if candidate.parent == self.samples and candidate.suffix.lower() in TEXT_SUFFIXES:
                return "samples"
        return None


async def watch_targets(targets: WatchTargets, stop_event: object | None = None) -> AsyncIterator[set[str]]:
    """Yield the set of kinds that changed, each time something in use changes on disk."""
    from watchfiles import awatch

    def keep(_change: object, path: str) -> bool:
        return targets.kind_of(path) is not None

    async for changes in awatch(
        *targets.folders(),
        watch_filter=keep,
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        recursive=False,
        stop_event=stop_event,  # type: ignore[arg-type]
        rust_timeout=1000,
    ):
        kinds = {kind for _, path in changes if (kind := targets.kind_of(path)) is not None}
        if kinds:
            yield kinds
