"""The labels journal's lines put over the sidecar's labels: what every reader of labels sees.

A line sets one field of one annotator's label (:func:`changed_label`, the same rules as the
sidecar editor). A line written over an older version of the sidecar than the one on disk now
applies only when nobody changed that field since (:func:`resolve`; see
:mod:`rubric_studio.core.labels._journal`). :func:`load_labels` is the sidecar with its journal.

Readers hold no lock, so a fold may land while they read. The sidecar, the journal and the copies
of older versions are then read again, until a reading starts and ends at the same
:func:`~rubric_studio.core.labels._journal.read_point` with no copy gone from under it
(:data:`READ_ATTEMPTS` at most: folds are rare, and a reading they keep moving is kept as read).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from rubric_studio.core.atomic import UnsafeTarget
from rubric_studio.core.labels import _journal
from rubric_studio.core.labels._journal import Entry, Signature, signature
from rubric_studio.core.labels._labels import (
    Label,
    LabelChange,
    LabelSet,
    change_value,
    consensus,
    load_sidecar,
)
from rubric_studio.core.problems import Problem, RubricError

ByAnnotator = dict[str, dict[str, Label]]
#: Readings of the sidecar and its journal before one is kept that a fold may have moved.
READ_ATTEMPTS = 8
_NOW = object()  # the sidecar's signature as it is now


def load_labels(path: str | Path, *, missing_ok: bool = True) -> LabelSet:
    """Load a labels sidecar (``*.labels.yaml``) with the labels written since it was last folded
    (its journal, see :mod:`rubric_studio.core.labels._journal`).

    Returns:
        A :class:`LabelSet`; a missing file is an empty set unless ``missing_ok`` is False.
    Raises:
        RubricError: the file is missing (with ``missing_ok=False``), unreadable or malformed.
    """
    source = Path(path)
    if not source.exists() and not missing_ok:
        raise RubricError([Problem(str(source), None, None, "labels file not found")])
    journal = _journal.journal_path(source)
    for _ in range(READ_ATTEMPTS):
        start = _journal.read_point(source, journal)
        bases = Bases(journal)
        labels = with_journal(load_sidecar(source), source, bases, start[0])
        if settled(source, journal, start, bases):
            break
    return labels


def settled(sidecar: Path, journal: Path, start: tuple[Signature, str | None], bases: Bases) -> bool:
    """Whether a reading that began at ``start`` stands: no fold landed while it read (the sidecar
    and the journal are where they were) and no copy it looked for vanished."""
    return not bases.vanished and _journal.read_point(sidecar, journal) == start


def changed_label(label: Label | None, change: LabelChange) -> Label | None:
    """``label`` after ``change`` (None: no label left); the same rules as the sidecar editor."""
    value = change_value(change)
    field = change.field
    if field == "label":
        new = value if value is not None else None
    else:
        new = replace(label) if label is not None else Label()
        if field == "cell":
            new.criteria = {k: v for k, v in new.criteria.items() if k != change.criterion}
            new.given_under = {k: v for k, v in new.given_under.items() if k != change.criterion}
            if value is not None:
                new.criteria[change.criterion or ""] = value
                if change.given_under is not None:
                    new.given_under[change.criterion or ""] = change.given_under
        elif field == "cell_score":
            new.criterion_scores = {k: v for k, v in new.criterion_scores.items() if k != change.criterion}
            if value is not None:
                new.criterion_scores[change.criterion or ""] = float(value)
        else:
            setattr(new, field, value)
    if new is None or new.is_empty:
        return None
    return dataclasses.replace(new, ties=())


def _label_in(by: Mapping[str, Mapping[str, Label]], entry: Entry) -> Label | None:
    return by.get(entry.sample_id, {}).get(entry.annotator)


class Bases:
    """The sidecar as it was when journal lines were written over it (parsed once each)."""

    def __init__(self, journal: Path) -> None:
        self.journal = journal
        self._parsed: dict[Signature, ByAnnotator | None] = {}
        #: A copy was found but gone when read: a fold removed it meanwhile, and what was read
        #: with it (lines and sidecar from before the fold) must be read again.
        self.vanished = False

    def labels(self, base: Signature) -> ByAnnotator | None:
        """The labels of that version (empty: it did not exist; None: no copy was kept, or it
        vanished while read - then :attr:`vanished` is set)."""
        if base is None:
            return {}
        if base not in self._parsed:
            self._parsed[base] = self._read(base)
        return self._parsed[base]

    def _read(self, base: Signature) -> ByAnnotator | None:
        copy = _journal.base_copy(self.journal, base)
        if copy is None:
            return None
        try:
            labels = load_sidecar(copy).by_annotator
        except RubricError:
            if copy.exists():
                raise  # a copy that cannot be read: say so
            labels = None
        # a copy gone now may have been gone when opened (read as a sidecar that does not exist)
        if labels is None or not copy.exists():
            self.vanished = True
            return None
        return labels


def resolve(entries: Iterable[Entry], sidecar_now: Signature, by_now: Mapping[str, Mapping[str, Label]],
            bases: Bases) -> tuple[list[Entry], list[Entry]]:
    """(the lines to apply, the lines a later change outside rubric-studio won over).

    A line written over the sidecar as it is now applies. One written over an older version
    applies when the field it sets held the same then as it holds now (nobody touched it
    since), or already holds its value; else the change made since wins.
    """
    keep: list[Entry] = []
    lost: list[Entry] = []
    for entry in entries:
        if entry.base == sidecar_now:
            keep.append(entry)
            continue
        then = bases.labels(entry.base)
        now = entry.change.value_in(_label_in(by_now, entry))
        if then is None or now == entry.change.value_in(changed_label(None, entry.change)) or \
                entry.change.value_in(_label_in(then, entry)) == now:
            keep.append(entry)
        else:
            lost.append(entry)
    return keep, lost


def apply_entries(by: ByAnnotator, entries: Iterable[Entry]) -> set[tuple[str, str]]:
    """Apply entries to ``by`` in place; the (sample, annotator) labels that changed."""
    changed: set[tuple[str, str]] = set()
    for entry in entries:
        labels = by.setdefault(entry.sample_id, {})
        before = labels.get(entry.annotator)
        try:
            after = changed_label(before, entry.change)
        except ValueError:
            continue  # never written so (values are checked before a line is appended)
        if after is None:
            labels.pop(entry.annotator, None)
        else:
            labels[entry.annotator] = after
        if not labels:
            del by[entry.sample_id]
        if after != before:
            changed.add((entry.sample_id, entry.annotator))
    return changed


def read_journal(journal: Path, offset: int = 0) -> _journal.Tail:
    """:func:`rubric_studio.core.labels._journal.read`; a journal that is a planted link (or not a
    regular file) is a RubricError naming it (one line for every command that reads labels)."""
    try:
        return _journal.read(journal, offset)
    except UnsafeTarget as exc:
        message = str(exc).removeprefix(f"{journal} ").removeprefix(f"{journal}: ")
        raise RubricError([Problem(str(journal), None, None, message)]) from None


def with_journal(label_set: LabelSet, sidecar: str | Path, bases: Bases | None = None,
                 loaded_at: Signature | object = _NOW) -> LabelSet:
    """``label_set`` (the sidecar as loaded, at ``loaded_at``: its signature then, by default now)
    with its journal's lines over it; ``bases``: the copies of older versions looked at."""
    journal = _journal.journal_path(sidecar)
    tail = read_journal(journal)
    problems = label_set.problems + [Problem(str(journal), None, None, p) for p in tail.problems]
    if not tail.entries:
        return replace(label_set, problems=problems) if tail.problems else label_set
    by = {s: dict(labels) for s, labels in label_set.by_annotator.items()}
    now = signature(Path(sidecar)) if loaded_at is _NOW else loaded_at
    keep, _lost = resolve(tail.entries, now, label_set.by_annotator, bases or Bases(journal))
    touched = {s for s, _ in apply_entries(by, keep)}
    labels = dict(label_set.labels)
    for sample_id in touched:
        set_consensus(labels, by, sample_id)
    return LabelSet(label_set.path or str(sidecar), labels, problems, by)


def set_consensus(labels: dict[str, Label], by: ByAnnotator, sample_id: str) -> None:
    found = consensus(by[sample_id]) if by.get(sample_id) else None
    if found is None or found.is_empty:
        labels.pop(sample_id, None)
    else:
        labels[sample_id] = found


