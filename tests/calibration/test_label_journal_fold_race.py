"""A fold that lands while a reader reads the labels (readers hold no lock).

The fold removes the copies of older sidecar versions that journal lines written over them are
resolved against. A reader that found such a copy a moment before the fold removed it must not
fail ("labels not found"), nor read the vanished copy as a sidecar with no labels (which drops a
line a later change never touched): it reads again and sees what the fold wrote. The fold is
made to land at the exact moment through the module functions the reader calls, no timing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from rubric_studio.core.labels import (
    LabelChange,
    LabelStore,
    _journal,
    fold_journal,
    journal_path,
    load_labels,
)
from rubric_studio.core.labels import _labels as labels_module
from rubric_studio.core.labels._labels import load_sidecar

TEXT = "s1:\n  annotator: w\n  verdict: pass\ns2: fail\n"


def journal_over_an_older_version(tmp_path: Path) -> tuple[Path, LabelStore]:
    """w's s1 verdict set to fail in the journal; then s2 edited by hand, so that line is over an
    older version of the sidecar and a reader looks up that version's copy. The store that wrote
    the line has read the sidecar only as it was before the edit."""
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(TEXT)
    store = LabelStore(sidecar)
    store.write("s1", LabelChange("verdict", "fail"), "w")
    before = _journal.signature(sidecar)
    assert list(_journal.base_copies(journal_path(sidecar)))
    sidecar.write_text(TEXT.replace("s2: fail", "s2: pass  # checked again"))
    os.utime(sidecar, ns=(before[0] + 10**9, before[0] + 10**9))
    assert _journal.signature(sidecar) != before
    return sidecar, store


class FoldOnce:
    """Folds the sidecar's journal the first time it is called, then lets the reader go on."""

    def __init__(self, sidecar: Path) -> None:
        self.sidecar = sidecar
        self.folds = 0

    def __call__(self) -> None:
        if self.folds == 0:
            self.folds += 1
            assert fold_journal(self.sidecar) == 1
            assert not list(_journal.base_copies(journal_path(self.sidecar)))


def fold_after_the_copy_is_found(monkeypatch: pytest.MonkeyPatch, fold: FoldOnce) -> None:
    real = _journal.base_copy

    def found_then_folded(journal: Path, base: _journal.Signature) -> Path | None:
        copy = real(journal, base)
        if copy is not None:
            fold()
        return copy

    monkeypatch.setattr(_journal, "base_copy", found_then_folded)


def fold_as_the_copy_is_opened(monkeypatch: pytest.MonkeyPatch, fold: FoldOnce) -> None:
    real = labels_module.read_user_file

    def folded_then_opened(path, *args, **kwargs):
        if ".base-" in Path(path).name:
            fold()
        return real(path, *args, **kwargs)

    monkeypatch.setattr(labels_module, "read_user_file", folded_then_opened)


def by_load_labels(sidecar: Path, _store: LabelStore):
    return load_labels(sidecar)


def by_a_new_store(sidecar: Path, _store: LabelStore):
    store = LabelStore(sidecar)
    assert store.refresh() == set()  # what it read is the sidecar as it is: nothing left to catch up
    return store.label_set()


def by_a_store_refreshing(_sidecar: Path, store: LabelStore):
    store.refresh()  # it read the sidecar before the hand edit: everything is read again
    labels = store.label_set()
    assert store.refresh() == set()
    return labels


@pytest.mark.parametrize("moment", [fold_after_the_copy_is_found, fold_as_the_copy_is_opened])
@pytest.mark.parametrize("reader", [by_load_labels, by_a_new_store, by_a_store_refreshing])
def test_a_fold_while_a_reader_resolves_a_line_over_an_older_version(tmp_path, monkeypatch, moment: Callable,
                                                                    reader: Callable):
    sidecar, store = journal_over_an_older_version(tmp_path)
    fold = FoldOnce(sidecar)
    moment(monkeypatch, fold)

    labels = reader(sidecar, store)

    assert fold.folds == 1  # the fold landed in the middle of the reading
    assert labels.problems == []
    assert labels.by_annotator["s1"]["w"].verdict == "fail"  # the line no later change touched
    assert labels.labels["s2"].verdict == "pass"  # the hand edit
    assert load_labels(sidecar).by_annotator == labels.by_annotator  # as a reading with no fold gives


# -- a fold between the reading of the sidecar and of its journal --------------------------------
@pytest.mark.parametrize("reader", [by_load_labels, by_a_new_store])
def test_a_fold_between_reading_the_sidecar_and_its_journal(tmp_path, monkeypatch, reader: Callable):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(TEXT)
    LabelStore(sidecar).write("s1", LabelChange("verdict", "fail"), "w")
    fold = FoldOnce(sidecar)
    real = _journal.read

    def folded_then_read(journal: Path, offset: int = 0) -> _journal.Tail:
        fold()  # the sidecar was read before this: it no longer holds what the journal did
        return real(journal, offset)

    monkeypatch.setattr(_journal, "read", folded_then_read)

    labels = reader(sidecar, None)

    assert fold.folds == 1
    assert labels.by_annotator["s1"]["w"].verdict == "fail"  # in the folded sidecar, not in the one read first
    assert labels.by_annotator == load_sidecar(sidecar).by_annotator
