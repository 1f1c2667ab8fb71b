"""Labelling in a studio session: writing labels and finding the next sample to look at.

:class:`LabelWriter` writes one label change at a time through the session's
:class:`~rubric_studio.core.labels.LabelStore` (one line appended to the labels journal, the
same cost at 100,000 labels as at 10), in the order asked (label keys pressed quickly must land
in order), off the event loop, and remembers the files it wrote so the watcher can tell our own
write from someone else's. Each change it makes is a step of its
:class:`LabelHistory`: undo writes the field's previous value back (its absence too), redo
writes the change again, both through the same queue, so a label set by a stray key is one
key away from undone. The stepping functions answer "which
row next" over the rows the table shows, for disagreements, for samples without a label
(a labelling queue) and for labels given under an older wording of their criterion (a re-check
queue), wrapping around. A cell change records the wording it answered
(:func:`cell_change`): relabelling a cell makes it current.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubric_studio.core.files import file_signature as signature
from rubric_studio.core.labels import (
    ADJUDICATED,
    UNNAMED,
    Label,
    LabelChange,
    LabelStore,
    journal_path,
    older_cells,
    wording_fingerprint,
)
from rubric_studio.core.problems import RubricError
from rubric_studio.session.labelling import next_sample_where
from rubric_studio.session.results_model import (
    ResultsModel,
    cell_disagrees,
    disagrees,
    has_human_label,
    label_verdict_disagrees,
)


def labels_signature(path: Path) -> tuple[Any, Any]:
    """The signatures of the sidecar and its journal: what a label write changes."""
    return signature(path), signature(journal_path(path))


#: How many label changes undo reaches back.
UNDO_DEPTH = 500


@dataclass(frozen=True)
class LabelStep:
    """A label change written to the sidecar: the sample's label before and after it."""

    sample_id: str
    change: LabelChange
    before: Label | None
    after: Label | None
    #: Whose label changed (undo and redo write that annotator's label, whoever labels now).
    annotator: str | None = None

    @property
    def undoing(self) -> LabelChange:
        """The change that puts back what ``change`` replaced."""
        return self.change.restoring(self.before)


@dataclass(frozen=True)
class ClaimStep:
    """The sidecar's unnamed labels claimed as ``annotator``'s (undo makes them unnamed again)."""

    sample_ids: tuple[str, ...]
    annotator: str
    sample_id: str = ""  # a claim is about no one sample

    def describe(self) -> str:
        count = len(self.sample_ids)
        return f"{count} unnamed label{'s' if count != 1 else ''} claimed as {self.annotator}'s"


def cell_change(rubric: Any, criterion_id: str, state: str | None) -> LabelChange:
    """A cell's label change that records the wording of the criterion in ``rubric`` (the one the
    person is looking at) when it sets a value; no wording when the rubric does not have it."""
    criterion = None
    if state is not None and rubric is not None:
        criterion = next((c for c in rubric.criteria if c.key == criterion_id), None)
    return LabelChange("cell", state, criterion_id, wording_fingerprint(criterion) if criterion is not None else None)


def describe_change(change: LabelChange) -> str:
    """``fail``, ``no verdict``, ``score 7``, ``tone met``, ``tone unlabelled``, ``a note``, ``no label`` ..."""
    value = change.value
    if change.field == "verdict":
        return value or "no verdict"
    if change.field == "score":
        return "no score" if value is None else f"score {value:g}"
    if change.field == "note":
        return "a note" if value else "no note"
    if change.field == "cell":
        return f"{change.criterion} {value or 'unlabelled'}"
    return "the whole label" if value is not None else "no label"


class LabelHistory:
    """The label changes of this session, for undo and redo (most recent last)."""

    def __init__(self, depth: int = UNDO_DEPTH) -> None:
        self.depth = depth
        self.done: list[LabelStep] = []
        self.undone: list[LabelStep] = []

    def record(self, step: LabelStep) -> None:
        """A new change (not an undo or redo): it is the one to undo next; nothing is left to redo."""
        if step.before == step.after:
            return  # the label already said so: nothing to undo
        self.done.append(step)
        del self.done[:-self.depth]
        self.undone.clear()


class LabelWriter:
    """Serialised writes of the labels sidecar, with undo and redo of the changes made here."""

    def __init__(self, path: Path, annotator: str | None = None,
                 store: Callable[[], LabelStore] | None = None) -> None:
        self.path = path
        #: Whose labels the changes are (None: the entries' top-level labels, as before annotators).
        self.annotator = annotator
        self.history = LabelHistory()
        #: Claim the sidecar's unnamed labels for :attr:`annotator` before the next change (set by the
        #: session when they are the only labels and the annotator was not named; tried once).
        self.claim_pending = False
        self.claim_offered = False
        #: The claim the last :meth:`apply` made (None: none).
        self.claimed: ClaimStep | None = None
        self._lock = asyncio.Lock()
        self._written: tuple[Any, Any] | None = None
        self._store_of = store
        self._own_store: LabelStore | None = None

    async def write(self, change: Callable[..., Label | None], sample_id: str, *args: Any) -> Label | None:
        """Apply ``change(path, sample_id, *args)`` (a sidecar editor of :mod:`rubric_studio.core.labels`,
        which folds the journal first), in turn with the label writes. Raises what it raises."""
        async with self._lock:
            label = await asyncio.to_thread(change, self.path, sample_id, *args)
            self._written = labels_signature(self.path)
        return label

    def store(self) -> LabelStore:
        """The label store written through (the session's, else one of its own; blocking on first use).

        ValueError when the sidecar does not read (a label is never written over a file being fixed).
        """
        if self._store_of is not None:
            return self._store_of()
        if self._own_store is None:
            self._own_store = open_store(self.path)
        return self._own_store

    async def _apply(self, sample_id: str, change: LabelChange, annotator: str | None = None,
                     **expect: Label | None) -> LabelStep:
        """Write ``change``; with ``expect=label``, only while its field still holds what ``label`` has
        (an undo or redo puts a value back over the one written here, never over a newer one)."""
        annotator = self.annotator if annotator is None else annotator

        def write() -> tuple[Label | None, Label | None]:
            try:
                return self.store().write(sample_id, change, annotator or UNNAMED, **expect)
            except RubricError as exc:  # the sidecar was broken by hand since it was read
                first = exc.problems[0] if exc.problems else self.path
                raise ValueError(f"{first}; fix the labels file by hand first, nothing written") from None

        before, after = await asyncio.to_thread(write)
        self._written = labels_signature(self.path)
        return LabelStep(sample_id, change, before, after, annotator)

    async def apply(self, sample_id: str, change: LabelChange) -> LabelStep:
        """Make ``change`` (a label key's) and remember it for undo. Raises what the store raises."""
        async with self._lock:
            self.claimed = await self._claim() if self.claim_pending else None
            step = await self._apply(sample_id, change)
            self.history.record(step)
        return step

    async def _claim(self) -> ClaimStep | None:
        """Claim the unnamed labels (once): a step of its own, undone after the change that follows it."""
        from rubric_studio.core.labels import claim_unnamed  # ruamel: loaded when a claim is made

        self.claim_pending, self.claim_offered = False, True
        name = self.annotator
        if name in (None, UNNAMED, ADJUDICATED):
            return None
        ids = await asyncio.to_thread(claim_unnamed, self.path, name)
        self._written = labels_signature(self.path)
        if not ids:
            return None
        step = ClaimStep(tuple(ids), name)
        self.history.done.append(step)  # type: ignore[arg-type]
        self.history.undone.clear()
        return step

    async def undo(self) -> tuple[LabelStep, LabelStep] | None:
        """Put back what the last change replaced: (the change undone, the write that undid it);
        None when there is nothing to undo. A failed write leaves the change to undo (and raises)."""
        return await self._replay(undo=True)

    async def redo(self) -> LabelStep | None:
        """Make the last undone change again (None: nothing to redo)."""
        replayed = await self._replay(undo=False)
        return None if replayed is None else replayed[1]

    async def _replay(self, *, undo: bool) -> tuple[LabelStep, LabelStep] | None:
        """Undo the last change, or redo the last undone one: (that step, the write made)."""
        async with self._lock:  # after every change asked before it
            history = self.history
            source, target = (history.done, history.undone) if undo else (history.undone, history.done)
            if not source:
                return None
            step = source[-1]
            if isinstance(step, ClaimStep):
                from rubric_studio.core.labels import claim_unnamed, unclaim

                if undo:
                    await asyncio.to_thread(unclaim, self.path, step.sample_ids, step.annotator)
                else:
                    await asyncio.to_thread(claim_unnamed, self.path, step.annotator, step.sample_ids)
                self._written = labels_signature(self.path)
                target.append(source.pop())
                return step, step
            written = await self._apply(step.sample_id, step.undoing if undo else step.change, step.annotator,
                                        expect=step.after if undo else step.before)
            target.append(source.pop())
        return step, written

    async def settled(self) -> None:
        """Wait until the writes asked so far have landed (a watcher's event can arrive while the
        journal line it reports is still being fsync'd)."""
        async with self._lock:
            pass

    def is_own_write(self) -> bool:
        """The sidecar and journal on disk are as we last wrote them (the watcher need not read them)."""
        return self._written is not None and labels_signature(self.path) == self._written


def open_store(path: Path) -> LabelStore:
    """The label store of ``path``; ValueError saying how to fix a sidecar that does not read."""
    try:
        return LabelStore(path)
    except RubricError as exc:
        first = exc.problems[0] if exc.problems else path
        raise ValueError(f"{first}; fix the labels file by hand first, nothing written") from None


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


def next_older_wording(labels: dict[str, Label], fingerprints: dict[str, str], rows: Sequence[str], cursor: int,
                       step: int = 1) -> tuple[str, str] | None:
    """(sample, criterion) of the next label in ``rows`` after ``cursor`` (``step`` -1: before it) that
    has a cell given under an older wording of its criterion (``fingerprints``: the wordings now),
    wrapping: the re-check queue. The criterion is the sample's first such cell in rubric order."""
    if not rows:
        return None
    order = list(rows) if step > 0 else list(reversed(rows))
    after = rows[cursor] if 0 <= cursor < len(rows) else None
    target = next_sample_where(order, after, lambda i: bool(older_cells(labels.get(i), fingerprints)))
    if target is None:
        return None
    older = set(older_cells(labels.get(target), fingerprints))
    return target, next(cid for cid in fingerprints if cid in older)


def next_unlabelled(model: ResultsModel, rows: Sequence[str], cursor: int, step: int = 1) -> str | None:
    """The next sample in ``rows`` after ``cursor`` (``step`` -1: before it) that has no label shown
    yet (yours with "my labels", else anyone's), wrapping: the web labeller's "next sample" rule
    (:func:`rubric_studio.session.labelling.next_sample_where`) over the rows the table shows."""
    if not rows:
        return None
    order = list(rows) if step > 0 else list(reversed(rows))
    after = rows[cursor] if 0 <= cursor < len(rows) else None
    shown = model.shown_labels
    return next_sample_where(order, after, lambda i: not has_human_label(shown.get(i)))
