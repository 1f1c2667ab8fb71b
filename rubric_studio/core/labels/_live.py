"""The label store: a labels sidecar and its journal, read once and kept current.

A label written through :class:`LabelStore` costs the same at 100,000 labels as at 10: one
line appended to the journal under the folder's lock and fsync'd (see
:mod:`rubric_studio.core.labels._journal`). A store reads the sidecar once; :meth:`LabelStore.refresh`
reads only the journal lines written since (by this process, another studio, the web
labeller), and the whole sidecar again only when it changed on disk (an editor, a ``git pull``,
a fold). :func:`fold_journal` writes the journal into the sidecar and empties it: the web
labeller and the studio fold when nobody has labelled for a while and when they stop,
``rubric-studio labels compact`` folds on demand, and every direct edit of the sidecar
(``labels import``, claiming unnamed labels) folds first, so changes land in the order made.

:func:`with_journal` puts the journal's lines over a sidecar just loaded (what
:func:`~rubric_studio.core.labels.load_labels` returns), so ``calibrate``, ``card`` and
``grade`` count labels not folded yet.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from rubric_studio.core.atomic import locked
from rubric_studio.core.labels import _journal
from rubric_studio.core.labels._journal import Entry, signature
from rubric_studio.core.labels._labels import Label, LabelChange, LabelSet, load_sidecar
from rubric_studio.core.labels._overlay import (
    READ_ATTEMPTS,
    Bases,
    ByAnnotator,
    apply_entries,
    changed_label,
    resolve,
    set_consensus,
    settled,
)
from rubric_studio.core.problems import Problem

_UNSEEN = object()


class LabelStore:
    """One labels sidecar with its journal: every label in memory, kept current, written in O(1).

    Thread-safe: the web labeller writes from many requests, the studio from a worker.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.journal = _journal.journal_path(self.path)
        self._guard = threading.RLock()
        self.by_annotator: ByAnnotator = {}
        self.labels: dict[str, Label] = {}
        self.problems: list[Problem] = []
        #: When this store last wrote a label (monotonic seconds; 0: never).
        self.last_write = 0.0
        self._load()

    # -- reading ---------------------------------------------------------------------------
    def _load(self) -> None:
        """Read the sidecar and its whole journal again; again while a fold moves them (a reader
        holds no lock, see :mod:`rubric_studio.core.labels._overlay`)."""
        for _ in range(READ_ATTEMPTS):
            start = _journal.read_point(self.path, self.journal)
            sidecar = load_sidecar(self.path)
            self._sidecar_sig = start[0]  # what was read is the sidecar as it was then (or is read again)
            self._sidecar = sidecar.by_annotator
            self._bases = Bases(self.journal)
            self.by_annotator = {s: dict(labels) for s, labels in sidecar.by_annotator.items()}
            self.labels = dict(sidecar.labels)
            self.problems = list(sidecar.problems)
            self._offset, self._generation = 0, None
            self._take(_journal.read(self.journal))
            if settled(self.path, self.journal, start, self._bases):
                return

    def _take(self, tail: _journal.Tail) -> set[tuple[str, str]]:
        """Apply the lines just read; the labels they changed."""
        self._offset, self._generation = tail.offset, tail.generation
        self.problems += [Problem(str(self.journal), None, None, p) for p in tail.problems]
        keep, _lost = resolve(tail.entries, self._sidecar_sig, self._sidecar, self._bases)
        changed = apply_entries(self.by_annotator, keep)
        for sample_id in {s for s, _ in changed}:
            set_consensus(self.labels, self.by_annotator, sample_id)
        return changed

    def refresh(self) -> set[tuple[str, str]]:
        """Read what changed on disk since the last read; the (sample, annotator) labels that changed.

        Reads only the journal's new lines, unless the sidecar changed or the journal was folded
        and begun again (then everything is read again and compared).
        """
        with self._guard:
            if signature(self.path) == self._sidecar_sig:
                tail = _journal.read(self.journal, self._offset if self._generation else 0)
                # a line over another version than the one read: a fold landed since the check
                # above (its copy may go at any moment), so everything is read again
                if (self._generation is None or tail.generation == self._generation) \
                        and all(entry.base == self._sidecar_sig for entry in tail.entries):
                    return self._take(tail)
            before = self.by_annotator
            self._load()
            return _differences(before, self.by_annotator)

    def label(self, sample_id: str, annotator: str) -> Label | None:
        """``annotator``'s label of the sample as last read."""
        with self._guard:
            return self.by_annotator.get(sample_id, {}).get(annotator)

    def label_set(self) -> LabelSet:
        """The labels as last read, as :func:`~rubric_studio.core.labels.load_labels` gives them."""
        with self._guard:
            return LabelSet(str(self.path), dict(self.labels), list(self.problems),
                            {s: dict(labels) for s, labels in self.by_annotator.items()})

    @property
    def pending(self) -> int:
        """Bytes of journal not folded into the sidecar yet (0: the sidecar holds every label)."""
        return self._offset

    # -- writing ---------------------------------------------------------------------------
    def write(self, sample_id: str, change: LabelChange, annotator: str, *,
              expect: Any = _UNSEEN) -> tuple[Label | None, Label | None]:
        """Make ``change`` to ``annotator``'s label of the sample: (before, after).

        One line appended to the journal and fsync'd before this returns. With ``expect`` (the
        label the writer last saw), :class:`~rubric_studio.core.labels.LabelConflict` when the
        field holds anything else now. ValueError for a value no label can hold.
        """
        return self.write_many([(sample_id, change, annotator)], expect=expect)[0]

    def write_many(self, changes: list[tuple[str, LabelChange, str]], *,
                   expect: Any = _UNSEEN) -> list[tuple[Label | None, Label | None]]:
        """Make every change, in order, in one append; (before, after) of each."""
        from rubric_studio.core.labels._annotators import check_name
        for sample_id, change, annotator in changes:
            changed_label(None, change)  # a bad value is refused before anything is written
            if annotator != "(unnamed)":
                check_name(annotator)
            if not str(sample_id):
                raise ValueError("a label needs a sample id")
        results: list[tuple[Label | None, Label | None]] = []
        with self._guard, locked(self.path):
            self.refresh()
            base = signature(self.path)
            entries = []
            for sample_id, change, annotator in changes:
                sample_id = str(sample_id)
                before = self.label(sample_id, annotator)
                if expect is not _UNSEEN and change.value_in(before) != change.value_in(expect):
                    from rubric_studio.core.labels._store import LabelConflict  # with ruamel: only here

                    what = f"{change.criterion} cell" if change.field == "cell" else change.field
                    raise LabelConflict(f"{sample_id}: {annotator}'s {what} changed on disk since you last saw it "
                                        f"(now {change.value_in(before)!r}); nothing written")
                entry = Entry(sample_id, annotator, change, base, time.time())
                entries.append(entry)
                apply_entries(self.by_annotator, [entry])
                set_consensus(self.labels, self.by_annotator, sample_id)
                results.append((before, self.label(sample_id, annotator)))
            try:
                self._offset = _journal.append(self.journal_for_write(), entries, self.path)
            except BaseException:
                self._load()  # nothing acknowledged: memory back to what is on disk
                raise
            tail_generation = _journal.read(self.journal, self._offset).generation
            self._generation = tail_generation
            self.last_write = time.monotonic()
        return results

    def journal_for_write(self) -> Path:
        """The journal path, its folder made (with its ``.gitignore``) on the first write."""
        return _journal.journal_path(self.path, create=True)

    def fold(self) -> int:
        """Fold the journal into the sidecar (:func:`fold_journal`); lines folded. The labels in
        memory are the sidecar's now: nothing is read again unless a line was superseded."""
        from rubric_studio.core.labels._store import _fold  # ruamel: loaded by the first fold

        with self._guard, locked(self.path):
            self.refresh()
            folded, lost = _fold(self.path)
            if lost:
                self._load()
            elif folded:
                self._sidecar_sig = signature(self.path)
                self._sidecar = {s: dict(labels) for s, labels in self.by_annotator.items()}
                self._bases = Bases(self.journal)
                self._offset, self._generation = 0, None
            return folded

    def fold_if_idle(self, idle_seconds: float) -> int:
        """Fold when this store wrote nothing for ``idle_seconds`` and there is something to fold."""
        with self._guard:
            if self._offset and time.monotonic() - self.last_write >= idle_seconds:
                return self.fold()
        return 0


def _differences(before: ByAnnotator, after: ByAnnotator) -> set[tuple[str, str]]:
    changed = set()
    for sample_id in before.keys() | after.keys():
        old, new = before.get(sample_id, {}), after.get(sample_id, {})
        for name in old.keys() | new.keys():
            if old.get(name) != new.get(name):
                changed.add((sample_id, name))
    return changed
