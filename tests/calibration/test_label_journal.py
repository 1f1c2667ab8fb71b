"""The labels journal and its fold, on real files and real processes.

A label written through :class:`LabelStore` is one line appended to
``.rubric-studio/<sidecar>.journal`` (the sidecar's bytes untouched), seen by every reader; the
fold writes it into the sidecar entry by entry (comments and untouched entries kept byte for
byte) with the same result as the whole-document editor; a hand edit made meanwhile wins on the
field it changed and nothing else; torn and malformed lines, planted links and a writer killed
mid-write lose nothing acknowledged and break nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rubric_studio.core.atomic import UnsafeTarget
from rubric_studio.core.labels import (
    Label,
    LabelChange,
    LabelConflict,
    LabelStore,
    _journal,
    _splice,
    _store,
    fold_journal,
    journal_path,
    load_labels,
)
from rubric_studio.core.labels._labels import load_sidecar
from tests._timing import scaled

ROOT = Path(__file__).resolve().parents[2]

#: A sidecar as people keep it: header, comments between and inside entries, blank lines, a block
#: note, short forms, a numeric and a quoted id, several annotators.
SIDECAR = """\
# Human labels: sample id -> {verdict: pass|fail, score: 0-10, criteria: {id: met|unmet}, note}.
# Reviewed by the support team in November.

s1:
  annotator: alice
  verdict: pass
  score: 8
  annotators:
    bob: fail  # disagreed on tone
# escalated to Dana
s2:
  verdict: fail
  note: |
    Quotes the wrong policy.
    Needs a second look.
  criteria:
    tone: met
    refund-policy: unmet

s3: pass  # quick one
1:
  verdict: fail
"a b":
  annotators:
    carol:
      verdict: pass
# end of the November batch
"""


def _journal_lines(sidecar: Path) -> list[dict]:
    """The journal's label lines (its id line left out), parsed."""
    path = journal_path(sidecar)
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    return [line for line in lines if "journal" not in line]


def _verdict(labels, sample: str, annotator: str) -> str | None:
    label = labels.by_annotator.get(sample, {}).get(annotator)
    return None if label is None else label.verdict


# -- a write is one line; readers see it ------------------------------------------------------------
def test_a_label_is_one_journal_line_the_sidecar_untouched_and_every_reader_sees_it(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(SIDECAR)
    before, mtime = sidecar.read_bytes(), sidecar.stat().st_mtime_ns
    writer, reader = LabelStore(sidecar), LabelStore(sidecar)

    assert writer.write("s2", LabelChange("verdict", "pass"), "alice") == (
        None, Label(verdict="pass"))

    assert sidecar.read_bytes() == before and sidecar.stat().st_mtime_ns == mtime
    assert [(e["s"], e["a"], e["f"], e["v"]) for e in _journal_lines(sidecar)] == [("s2", "alice", "verdict", "pass")]
    assert journal_path(sidecar).parent == tmp_path / ".rubric-studio"
    loaded = load_labels(sidecar)
    assert loaded.problems == [] and _verdict(loaded, "s2", "alice") == "pass"
    assert _verdict(loaded, "s2", "(unnamed)") == "fail"  # the entry's own label is still there
    assert reader.refresh() == {("s2", "alice")}  # exactly the label that changed
    assert reader.label("s2", "alice") == Label(verdict="pass")
    assert reader.refresh() == set()  # nothing new since
    writer.write("s1", LabelChange("score", 3), "bob")
    assert reader.refresh() == {("s1", "bob")}
    assert reader.label_set().by_annotator == load_labels(sidecar).by_annotator


# -- the fold ------------------------------------------------------------------------------------------
def test_the_fold_writes_the_journal_into_its_entry_and_keeps_every_other_byte(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(SIDECAR)
    store = LabelStore(sidecar)
    store.write("s2", LabelChange("verdict", "pass"), "bob")
    store.write("s2", LabelChange("cell", "met", "refund-policy"), "bob")
    store.write("s2", LabelChange("score", 4), "(unnamed)")
    expected = load_labels(sidecar).by_annotator

    assert fold_journal(sidecar) == 3

    after = sidecar.read_text()
    start, end = SIDECAR.index("s2:\n"), SIDECAR.index("s3: pass")
    assert after.startswith(SIDECAR[:start]), "text before the touched entry changed"
    assert after.endswith(SIDECAR[end:]), "text after the touched entry changed"
    touched = after[start:len(after) - len(SIDECAR) + end]
    assert touched.startswith("s2:\n  verdict: fail\n  score: 4\n  note: |\n    Quotes the wrong policy.\n")
    assert "    bob:\n      verdict: pass\n      criteria:\n        refund-policy: met\n" in touched
    for line in SIDECAR.splitlines():  # every comment kept
        if "#" in line:
            assert line in after
    assert load_sidecar(sidecar).by_annotator == expected  # the sidecar alone holds every label now
    assert _journal_lines(sidecar) == [] and journal_path(sidecar).stat().st_size == 0
    assert load_labels(sidecar).by_annotator == expected
    assert fold_journal(sidecar) == 0  # nothing left to fold


ANCHORED = """\
# s2 says what s1 says
s1: &agreed
  verdict: pass
  note: checked twice
s2: *agreed
s3:
  verdict: pass
"""
FLOW = "{s1: pass, s2: {verdict: fail, score: 3}, s3: {verdict: pass}}\n"


@pytest.mark.parametrize("text", [ANCHORED, FLOW], ids=["anchor-and-alias", "flow-mapping"])
def test_a_sidecar_the_splice_cannot_take_is_folded_as_a_whole_with_the_same_labels(tmp_path, text):
    assert _splice.entries(text) is None  # the whole-document editor's job
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(text)
    store = LabelStore(sidecar)
    store.write("s3", LabelChange("verdict", "fail"), "alice")
    store.write("s9", LabelChange("verdict", "pass"), "bob")
    store.write("s3", LabelChange("score", 4), "(unnamed)")
    store.write("s3", LabelChange("note", "seen"), "carol")
    expected = load_labels(sidecar).by_annotator
    assert expected["s3"]["alice"] == Label(verdict="fail") and expected["s9"]["bob"] == Label(verdict="pass")

    assert fold_journal(sidecar) == 4

    folded = load_sidecar(sidecar)
    assert folded.problems == [] and folded.by_annotator == expected
    assert _journal_lines(sidecar) == []
    if text is ANCHORED:
        assert "&agreed" in sidecar.read_text() and "*agreed" in sidecar.read_text()


def test_folding_a_change_to_an_aliased_entry_changes_that_entry_only(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(ANCHORED)
    store = LabelStore(sidecar)
    store.write("s2", LabelChange("verdict", "fail"), "(unnamed)")
    expected = load_labels(sidecar).by_annotator
    assert expected["s1"]["(unnamed)"].verdict == "pass" and expected["s2"]["(unnamed)"].verdict == "fail"

    fold_journal(sidecar)

    assert load_sidecar(sidecar).by_annotator == expected


# -- entry by entry == the whole document ---------------------------------------------------------
BLANK_SEPARATED = """\
# Human labels: sample id -> {verdict: pass|fail, score: 0-10, criteria: {id: met|unmet}, note}.
# Written by rubric-studio when you label samples; edit freely, comments are kept.

refund-late:
  annotator: alice
  verdict: fail
  criteria:
    tone: met
    refund-policy: unmet

refund-ok:
  verdict: pass
  score: 9

# Dana's batch
greeting-only:
  annotators:
    dana:
      verdict: fail
      note: |
        Says hello,
        answers nothing.
    erin: fail

"42":
  verdict: pass
"""
COMPACT_INDENT4 = """\
s1:
    verdict: pass
    criteria:
        tone: met  # clear
s2: fail
# s3 was argued over
s3:
    annotator: bob
    verdict: fail
    annotators:
        carol:
            verdict: pass
            score: 6.5
7: pass
"two words":
    verdict: fail
"""
MANY_ANNOTATORS = """\
# three people labelled every sample
a1:
  annotators:
    ann: pass
    ben: fail  # unsure
    cat:
      verdict: pass
      criteria: {tone: met, facts: unmet}

a2:
  annotators:
    ann: fail
    ben: fail
    cat: pass

# to adjudicate
a3: pass
"""
SIDECARS = {"commented": SIDECAR, "blank-separated": BLANK_SEPARATED, "compact-indent-4": COMPACT_INDENT4,
            "many-annotators": MANY_ANNOTATORS}
V, S, N, C = "verdict", "score", "note", "cell"
CHANGES = {
    "set-verdict": [("s1", LabelChange(V, "fail"), "alice"), ("refund-ok", LabelChange(V, "fail"), None),
                    ("a2", LabelChange(V, "pass"), "ben"), ("s3", LabelChange(V, "pass"), "bob")],
    "new-annotator": [("s2", LabelChange(V, "pass"), "zed"), ("refund-late", LabelChange(S, 3), "zed"),
                      ("a1", LabelChange(C, "met", "tone"), "dan"), ("s1", LabelChange(N, "two\nlines"), "zed")],
    "new-samples": [("new-1", LabelChange(V, "pass"), "alice"), ("new 2", LabelChange(S, 7.5), None),
                    ("10", LabelChange(V, "fail"), "bob")],
    "clear-fields": [("s2", LabelChange(N, None), None), ("greeting-only", LabelChange(N, None), "dana"),
                     ("s1", LabelChange(C, None, "tone"), None), ("a1", LabelChange(C, None, "facts"), "cat"),
                     ("s3", LabelChange(S, None), "carol")],
    "remove-an-entry": [("s3", LabelChange("label", None), None), ("refund-ok", LabelChange("label", None), None),
                        ("s2", LabelChange("label", None), None), ("a3", LabelChange("label", None), None)],
    "remove-the-first-entry": [("s1", LabelChange("label", None), "alice"), ("s1", LabelChange("label", None), "bob"),
                               ("refund-late", LabelChange("label", None), "alice"),
                               ("s1", LabelChange("label", None), None)],
    "numeric-and-quoted-ids": [("1", LabelChange(S, 2), "alice"), ("a b", LabelChange(V, "fail"), "carol"),
                               ("42", LabelChange(C, "unmet", "tone"), None), ("7", LabelChange(V, "fail"), None),
                               ("two words", LabelChange(N, "why: unclear"), "bob")],
    "short-form-grows": [("s3", LabelChange(S, 6), None), ("s2", LabelChange(N, "#1 issue"), None),
                         ("a3", LabelChange(V, "fail"), "eve"), ("a2", LabelChange(S, 1), "cat")],
    "whole-labels": [("s1", LabelChange("label", Label(verdict="pass", criteria={"tone": "unmet"})), "bob"),
                     ("refund-late", LabelChange("label", Label(verdict="pass", score=5)), "alice"),
                     ("a1", LabelChange("label", Label(verdict="fail", note="x")), "cat")],
    "mixed-batch": [("s1", LabelChange(V, "fail"), "bob"), ("new-3", LabelChange(V, "pass"), "alice"),
                    ("s2", LabelChange(C, "met", "refund-policy"), None), ("s1", LabelChange(V, None), "bob"),
                    ("a2", LabelChange(V, None), "cat"), ("greeting-only", LabelChange(V, "pass"), "erin"),
                    ("s3", LabelChange(V, "fail"), "carol"), ("new-3", LabelChange(S, 2), "alice")],
}


def _whole_document_text(monkeypatch, text: str, target: Path, changes) -> str | None:
    """The text the whole-document editor gives: :func:`_store.text_with_changes` with the entry
    splitter declining every file (the fallback ``_edited_many`` takes for a file it cannot cut)."""
    with monkeypatch.context() as patch:
        patch.setattr(_store, "entries", lambda _text: None)
        return _store.text_with_changes(text, target, changes)


def _loaded(path: Path, text: str):
    path.write_text(text)
    loaded = load_sidecar(path)
    assert loaded.problems == []
    return loaded.by_annotator


@pytest.mark.parametrize("changes", CHANGES, ids=list(CHANGES))
@pytest.mark.parametrize("name", SIDECARS, ids=list(SIDECARS))
def test_entry_by_entry_gives_what_the_whole_document_editor_gives(tmp_path, monkeypatch, name, changes):
    text, batch = SIDECARS[name], CHANGES[changes]
    target = tmp_path / "r.labels.yaml"
    assert _splice.entries(text) is not None  # the entry-by-entry path really is taken

    spliced = _store.text_with_changes(text, target, batch)
    whole = _whole_document_text(monkeypatch, text, target, batch)

    assert _loaded(tmp_path / "spliced.labels.yaml", spliced if spliced is not None else text) == \
        _loaded(tmp_path / "whole.labels.yaml", whole if whole is not None else text)
    assert spliced == whole


#: Batches where the two editors give the same labels in different text (both read the same; the
#: entry-by-entry text is the one kept):
#: an entry emptied and filled again in one fold is re-made in place entry by entry, at the end of
#: the file as a whole (comments around it placed differently); the last entry removed leaves an
#: empty file entry by entry, the header as a whole; an entry whose last value is a flow mapping
#: removed takes the blank line after it along entry by entry, not as a whole.
TEXT_DIFFERS = {
    "emptied-and-refilled": (SIDECAR, [("s3", LabelChange("verdict", None), None),
                                       ("s3", LabelChange("verdict", "fail"), "bob")]),
    "emptied-and-refilled-first": ("s1: pass\n# after s1\ns2: fail\n",
                                   [("s2", LabelChange("verdict", None), None), ("s2", LabelChange(S, 1), "bob")]),
    "last-entry-removed": ("s1:\n  verdict: pass\n", [("s1", LabelChange("label", None), None)]),
    "removed-entry-ending-in-a-flow-mapping": (MANY_ANNOTATORS, [("a1", LabelChange("label", None), name)
                                                                 for name in ("ann", "ben", "cat")]),
}


@pytest.mark.parametrize("case", TEXT_DIFFERS, ids=list(TEXT_DIFFERS))
def test_where_the_text_differs_the_labels_are_the_same(tmp_path, monkeypatch, case):
    text, batch = TEXT_DIFFERS[case]
    target = tmp_path / "r.labels.yaml"
    spliced = _store.text_with_changes(text, target, batch)
    whole = _whole_document_text(monkeypatch, text, target, batch)
    assert spliced is not None and whole is not None
    assert _loaded(tmp_path / "a.labels.yaml", spliced) == _loaded(tmp_path / "b.labels.yaml", whole)


def test_a_sidecar_that_loads_folds(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text('s1:\n  verdict: pass\n  note: "asked twice\nrefund: still missing"\ns2: fail\n')
    assert load_sidecar(sidecar).problems == []  # PyYAML and ruamel read it: one note over two lines
    LabelStore(sidecar).write("s1", LabelChange("score", 4), "(unnamed)")
    expected = load_labels(sidecar).by_annotator

    fold_journal(sidecar)  # the whole-document editor: the note goes on past its line

    assert load_sidecar(sidecar).by_annotator == expected


# -- hand edits made after a journal line ----------------------------------------------------------
HAND_BASE = """\
s1:
  annotator: alice
  verdict: pass
  score: 5
  annotators:
    bob:
      verdict: fail
      score: 2
"""
HAND_EDITS = {  # what the hand edit changes -> (old text, new text)
    "same-field": ("  score: 5\n", "  score: 3  # fixed by hand\n"),
    "another-field": ("  verdict: pass\n", "  verdict: fail  # by hand\n"),
    "another-annotator": ("      score: 2\n", "      score: 9  # by hand\n"),
}


@pytest.mark.parametrize("edit", HAND_EDITS, ids=list(HAND_EDITS))
def test_a_hand_edit_after_a_journal_line_wins_on_its_own_field_only(tmp_path, edit):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(HAND_BASE)
    store = LabelStore(sidecar)
    store.write("s1", LabelChange("score", 7), "alice")
    old, new = HAND_EDITS[edit]
    sidecar.write_text(sidecar.read_text().replace(old, new))  # an editor saving, after the label was written

    expected = {
        "same-field": ({"verdict": "pass", "score": 3}, {"verdict": "fail", "score": 2}),
        "another-field": ({"verdict": "fail", "score": 7}, {"verdict": "fail", "score": 2}),
        "another-annotator": ({"verdict": "pass", "score": 7}, {"verdict": "fail", "score": 9}),
    }[edit]

    def seen(labels) -> tuple[dict, dict]:
        by = labels.by_annotator["s1"]
        return tuple({"verdict": by[n].verdict, "score": by[n].score} for n in ("alice", "bob"))

    assert load_labels(sidecar).problems == []
    assert seen(load_labels(sidecar)) == expected  # before the fold
    assert store.refresh() and seen(store.label_set()) == expected
    assert fold_journal(sidecar) == 1
    assert seen(load_sidecar(sidecar)) == expected  # after it, from the sidecar alone
    assert new.strip() in sidecar.read_text()  # the hand edit, comment and all
    superseded = journal_path(sidecar).with_name("r.labels.yaml.superseded")
    if edit == "same-field":
        kept = [json.loads(line) for line in superseded.read_bytes().splitlines()]
        assert [(e["s"], e["a"], e["f"], e["v"]) for e in kept if "s" in e] == [("s1", "alice", "score", 7)]
    else:
        assert not superseded.exists()
    assert not list(_journal.base_copies(journal_path(sidecar)))  # the fold dropped the copies it kept


# -- torn and malformed lines ------------------------------------------------------------------------
def test_a_torn_last_line_is_skipped_by_readers_and_cut_off_by_the_next_append(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    store = LabelStore(sidecar)
    store.write("s1", LabelChange("verdict", "pass"), "alice")
    journal = journal_path(sidecar)
    torn = b'{"s":"s2","a":"alice","f":"verdict","c":null,"v":"fail","b":null,"t":0}'  # no newline: never acknowledged
    with open(journal, "ab") as handle:
        handle.write(torn)

    loaded = load_labels(sidecar)
    assert loaded.problems == []
    assert _verdict(loaded, "s1", "alice") == "pass" and "s2" not in loaded.by_annotator
    fresh = LabelStore(sidecar)
    assert fresh.problems == [] and fresh.label("s2", "alice") is None
    assert store.refresh() == set()

    store.write("s3", LabelChange("verdict", "fail"), "alice")

    data = journal.read_bytes()
    assert torn not in data and data.endswith(b"\n")
    assert [(e["s"], e["v"]) for e in _journal_lines(sidecar)] == [("s1", "pass"), ("s3", "fail")]
    loaded = load_labels(sidecar)
    assert loaded.problems == [] and "s2" not in loaded.by_annotator and _verdict(loaded, "s3", "alice") == "fail"
    assert fresh.refresh() == {("s3", "alice")}


def test_a_malformed_line_is_a_problem_naming_the_journal_and_the_other_lines_still_apply(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text("s0: pass\n")
    LabelStore(sidecar).write("s1", LabelChange("verdict", "pass"), "alice")
    journal = journal_path(sidecar)
    with open(journal, "ab") as handle:
        handle.write(b'{"s": "s9", "a": "alice"}\n')  # no field, no value
    LabelStore(sidecar).write("s2", LabelChange("verdict", "fail"), "bob")

    loaded = load_labels(sidecar)

    assert len(loaded.problems) == 1
    assert loaded.problems[0].file == str(journal) and "skipped" in loaded.problems[0].message
    assert _verdict(loaded, "s1", "alice") == "pass" and _verdict(loaded, "s2", "bob") == "fail"
    assert _verdict(loaded, "s0", "(unnamed)") == "pass" and "s9" not in loaded.by_annotator
    assert [str(p.file) for p in LabelStore(sidecar).problems] == [str(journal)]


# -- conflicts -----------------------------------------------------------------------------------------
def test_expect_refuses_a_change_over_the_same_field_only(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    mine, other = LabelStore(sidecar), LabelStore(sidecar)
    _, seen = mine.write("s1", LabelChange("verdict", "pass"), "alice")
    other.write("s1", LabelChange("verdict", "fail"), "alice")  # alice again, in another window
    lines = len(_journal_lines(sidecar))

    with pytest.raises(LabelConflict, match="verdict changed on disk"):
        mine.write("s1", LabelChange("verdict", None), "alice", expect=seen)  # an undo over a newer value

    assert len(_journal_lines(sidecar)) == lines  # nothing written
    assert _verdict(load_labels(sidecar), "s1", "alice") == "fail" and mine.label("s1", "alice").verdict == "fail"

    _, bob_seen = mine.write("s2", LabelChange("verdict", "pass"), "bob")
    other.write("s2", LabelChange("verdict", "fail"), "alice")  # another annotator's label of the sample
    other.write("s2", LabelChange("note", "tone?"), "bob")  # another field of bob's
    mine.write("s2", LabelChange("verdict", None), "bob", expect=bob_seen)  # never refused
    labels = load_labels(sidecar)
    assert _verdict(labels, "s2", "bob") is None and labels.by_annotator["s2"]["bob"].note == "tone?"
    assert _verdict(labels, "s2", "alice") == "fail"


# -- permissions and links -----------------------------------------------------------------------------
@pytest.mark.parametrize(("umask", "mode"), [(0o077, 0o600), (0o027, 0o640)])
def test_the_files_the_store_makes_honour_the_umask(tmp_path, umask, mode):
    sidecar = tmp_path / "r.labels.yaml"
    previous = os.umask(umask)
    try:
        sidecar.write_text(HAND_BASE)
        store = LabelStore(sidecar)
        store.write("s1", LabelChange("score", 7), "alice")
        sidecar.write_text(sidecar.read_text().replace("score: 5", "score: 3  # by hand"))
        journal = journal_path(sidecar)
        copies = list(_journal.base_copies(journal))
        made = {"journal": journal, "base copy": copies[0] if copies else None}
        modes = {what: stat.S_IMODE(path.stat().st_mode) for what, path in made.items() if path is not None}
        fold_journal(sidecar)
        superseded = journal.with_name("r.labels.yaml.superseded")
        modes["superseded"] = stat.S_IMODE(superseded.stat().st_mode)
    finally:
        os.umask(previous)
    assert modes == {"journal": mode, "base copy": mode, "superseded": mode}


@pytest.mark.parametrize("planted", ["journal", "superseded", "base copy", "working folder"])
def test_a_planted_link_is_never_written_through(tmp_path, planted):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "precious.txt"
    target.write_text("keep me\n")
    work = tmp_path / "work"
    work.mkdir()
    sidecar = work / "r.labels.yaml"
    sidecar.write_text(HAND_BASE)
    folder = work / ".rubric-studio"
    journal = folder / "r.labels.yaml.journal"

    if planted == "working folder":
        folder.symlink_to(outside, target_is_directory=True)
        with pytest.raises(UnsafeTarget):
            LabelStore(sidecar).write("s1", LabelChange("score", 7), "alice")
    elif planted == "journal":
        folder.mkdir()
        journal.symlink_to(target)
        with pytest.raises(OSError):  # refused (see the test below for how it is worded)
            LabelStore(sidecar).write("s1", LabelChange("score", 7), "alice")
    elif planted == "base copy":  # dangling: the copy must replace the link, never create its target
        folder.mkdir()
        missing = outside / "made-through-the-link"
        copy = _journal._base_path(journal, _journal.signature(sidecar))
        copy.symlink_to(missing)
        LabelStore(sidecar).write("s1", LabelChange("score", 7), "alice")
        assert not missing.exists() and copy.is_file() and not copy.is_symlink()
        assert copy.read_text() == HAND_BASE
    else:  # superseded: a hand edit on the same field, then the fold keeps the line aside
        folder.mkdir()
        journal.with_name("r.labels.yaml.superseded").symlink_to(target)
        LabelStore(sidecar).write("s1", LabelChange("score", 7), "alice")
        sidecar.write_text(HAND_BASE.replace("score: 5", "score: 3  # by hand"))
        with pytest.raises(OSError):
            fold_journal(sidecar)
        assert load_labels(sidecar).by_annotator["s1"]["alice"].score == 3  # the hand edit still wins
    assert target.read_text() == "keep me\n"
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    if planted in ("journal", "working folder"):
        assert sidecar.read_text() == HAND_BASE


@pytest.mark.parametrize("planted", ["journal", "superseded"])
def test_a_planted_link_is_refused_as_an_unsafe_target_that_says_so(tmp_path, planted):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(HAND_BASE)
    journal = tmp_path / ".rubric-studio" / "r.labels.yaml.journal"
    journal.parent.mkdir()
    if planted == "journal":
        journal.symlink_to(outside)
        with pytest.raises(UnsafeTarget, match="symbolic link"):
            LabelStore(sidecar).write("s1", LabelChange("score", 7), "alice")
    else:
        journal.with_name("r.labels.yaml.superseded").symlink_to(outside)
        LabelStore(sidecar).write("s1", LabelChange("score", 7), "alice")
        sidecar.write_text(HAND_BASE.replace("score: 5", "score: 3  # by hand"))
        with pytest.raises(UnsafeTarget, match="symbolic link"):
            fold_journal(sidecar)


# -- git ------------------------------------------------------------------------------------------------
def test_git_status_shows_only_the_sidecar_after_labelling_and_folding(tmp_path):
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def run(*args: str) -> str:
        return subprocess.run([git, *args], cwd=tmp_path, env=env, check=True, capture_output=True,
                              text=True, timeout=scaled(60)).stdout

    run("init", "-q")
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(SIDECAR)
    run("add", "r.labels.yaml")
    run("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "labels")
    store = LabelStore(sidecar)
    for number in range(5):
        store.write(f"s{number}", LabelChange("verdict", "pass"), "alice")

    assert run("status", "--porcelain", "--untracked-files=all") == ""  # the journal is not for git
    assert (tmp_path / ".rubric-studio" / "r.labels.yaml.journal").stat().st_size > 0

    assert store.fold() == 5
    assert run("status", "--porcelain", "--untracked-files=all").splitlines() == [" M r.labels.yaml"]


# -- writers killed mid-write --------------------------------------------------------------------------
WRITER = r"""
import os, random, sys
from pathlib import Path
from rubric_studio.core.labels import LabelChange, LabelStore

path, name, count, seed, log, fold_every = sys.argv[1:7]
rng = random.Random(int(seed))
store = LabelStore(Path(path))
fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, b"ready\n")
for number in range(1, int(count) + 1):
    sample = f"s{rng.randrange(10):02d}"
    field, value = ("verdict", rng.choice(["pass", "fail"])) if rng.random() < 0.7 else ("score", rng.randrange(11))
    os.write(fd, f"try {sample} {field} {value}\n".encode())
    store.write(sample, LabelChange(field, value), name)
    os.write(fd, f"ack {sample} {field} {value}\n".encode())
    if int(fold_every) and number % int(fold_every) == 0:
        store.fold()
"""


def _acknowledged(log: Path) -> tuple[dict[tuple[str, str], str], tuple[str, str, str] | None, int]:
    """(last acknowledged value by (sample, field), the write in flight when the log ends, acks)."""
    acked: dict[tuple[str, str], str] = {}
    pending = None
    acks = 0
    for line in log.read_text().splitlines():
        kind, *rest = line.split()
        if kind == "try":
            pending = tuple(rest)
        elif kind == "ack":
            acked[(rest[0], rest[1])] = rest[2]
            pending, acks = None, acks + 1
    return acked, pending, acks


def _as_logged(label: Label | None, field: str) -> str | None:
    value = None if label is None else getattr(label, field)
    return None if value is None else str(int(value)) if field == "score" else str(value)


def test_eight_writers_one_killed_lose_no_acknowledged_label(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text(SIDECAR)  # labels of other samples, by other people, stay as they are
    names = [f"w{n}" for n in range(8)]
    logs = {name: tmp_path / f"{name}.log" for name in names}
    victim = "w5"
    writes = 150
    procs = {name: subprocess.Popen(
        [sys.executable, "-c", WRITER, str(sidecar), name, str(writes), str(n), str(logs[name]),
         "25" if name == "w0" else "0"],  # w0 also folds now and then, while the others write
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}) for n, name in enumerate(names)}
    started = time.monotonic()
    while not logs[victim].exists() or logs[victim].read_text().count("ack ") < 40:
        assert procs[victim].poll() is None and time.monotonic() - started < scaled(120), "the victim never wrote"
        time.sleep(0.005)
    procs[victim].send_signal(signal.SIGKILL)
    assert procs[victim].wait(timeout=scaled(60)) == -signal.SIGKILL
    for name in names:
        if name != victim:
            assert procs[name].wait(timeout=scaled(240)) == 0

    def check(labels) -> None:
        assert labels.problems == []
        for name in names:
            acked, pending, acks = _acknowledged(logs[name])
            assert acks == writes if name != victim else acks < writes  # the victim died mid-run
            for sample in (f"s{n:02d}" for n in range(10)):
                label = labels.by_annotator.get(sample, {}).get(name)
                for field in ("verdict", "score"):
                    allowed = {acked.get((sample, field))}
                    if name == victim and pending is not None and pending[:2] == (sample, field):
                        allowed.add(pending[2])  # written, but killed before its acknowledgement
                    assert _as_logged(label, field) in allowed, f"{name}'s {sample} {field}"
        for sample in ("s1", "s2", "s3", "1", "a b"):  # the labels that were there before
            assert labels.by_annotator[sample] == _labels_of_text(tmp_path, SIDECAR)[sample]

    check(load_labels(sidecar))
    assert LabelStore(sidecar).problems == []

    fold_journal(sidecar)

    assert _journal_lines(sidecar) == []
    check(load_sidecar(sidecar))  # the sidecar alone holds every acknowledged label


def _labels_of_text(folder: Path, text: str):
    path = folder / "reference.labels.yaml"
    path.write_text(text)
    return load_sidecar(path).by_annotator


# -- the commands that read labels -------------------------------------------------------------------
def test_a_planted_journal_link_is_a_one_line_error_for_a_command_that_reads_labels(tmp_path):
    rubric = tmp_path / "r.yaml"
    rubric.write_text("name: r\ncriteria:\n  - id: tone\n    outcome: Polite\n")
    (tmp_path / "r.labels.yaml").write_text("s1: pass\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    (tmp_path / ".rubric-studio").mkdir()
    (tmp_path / ".rubric-studio" / "r.labels.yaml.journal").symlink_to(outside)

    done = subprocess.run([sys.executable, "-m", "rubric_studio", "labels", "export", str(rubric), "--to", "csv"],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=scaled(60))

    assert "Traceback" not in done.stderr
    assert done.returncode == 2 and "r.labels.yaml.journal" in done.stderr
    assert outside.read_text() == "keep me\n"
