"""Editing the labels sidecar: byte-for-byte, everything but the edited entry stays as it was."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from rubric_studio.core.labels import Label, load_labels
from rubric_studio.core.labels import _store as store
from rubric_studio.core.problems import RubricError
from tests.conftest import SAMPLE_RUBRICS as SAMPLES


@pytest.fixture
def sidecar(bundled):
    return bundled / "support_reply" / "support_reply.labels.yaml"


def test_changing_a_verdict_changes_one_line(sidecar):
    before = sidecar.read_text()
    label = store.set_verdict(sidecar, "refund-status-curt", "fail")
    assert label.verdict == "fail" and label.score == 7  # other fields kept
    old = "refund-status-curt:\n  verdict: pass\n"
    assert before.count(old) == 1
    assert sidecar.read_text() == before.replace(old, "refund-status-curt:\n  verdict: fail\n")


def test_adding_a_cell_and_a_score_inserts_lines_in_place(sidecar):
    before = sidecar.read_text()
    store.set_cell(sidecar, "refund-late-request", "no-internal-links", "met")
    store.set_score(sidecar, "vague-escalation", 2.5)
    old_cells = "    short: met\n    no-boilerplate: met\n  note: Says no without"
    new_cells = "    short: met\n    no-boilerplate: met\n    no-internal-links: met\n  note: Says no without"
    old_score = "vague-escalation:\n  verdict: fail\n  score: 2\n"
    expected = before.replace(old_cells, new_cells).replace(old_score, "vague-escalation:\n  verdict: fail\n  score: 2.5\n")
    assert before.count(old_cells) == 1 and before.count(old_score) == 1
    assert sidecar.read_text() == expected


def test_a_new_sample_goes_at_the_end_with_the_files_blank_line_separator(sidecar):
    before = sidecar.read_text()
    label = store.set_label(sidecar, "cancel-subscription", Label(verdict="pass", criteria={"tone": "met"}, note="ok"))
    assert label == Label(verdict="pass", criteria={"tone": "met"}, note="ok")
    assert sidecar.read_text() == before + "\ncancel-subscription:\n  verdict: pass\n  criteria:\n    tone: met\n  note: ok\n"
    assert load_labels(sidecar).labels["cancel-subscription"].criteria == {"tone": "met"}


def test_removing_a_label_keeps_the_comments_around_it(tmp_path):
    path = tmp_path / "x.labels.yaml"
    path.write_text(
        "# header\n\na:\n  verdict: pass   # sure\n  note: fine\n  # about a, indented: goes with a\n"
        "# --- about b ---\n\nb: fail  # quick\n# tail\n"
    )
    assert store.set_label(path, "a", None) is None
    assert path.read_text() == "# header\n\n# --- about b ---\n\nb: fail  # quick\n# tail\n"
    # a scalar entry becomes a mapping when a field is added; its comments stay
    store.set_note(path, "b", "two\nlines")
    assert path.read_text() == "# header\n\n# --- about b ---\n\nb:       # quick\n  verdict: fail\n  note: |-\n    two\n    lines\n# tail\n"
    assert load_labels(path).labels["b"].note == "two\nlines"


def test_clearing_fields_one_by_one_removes_the_entry(tmp_path):
    path = tmp_path / "x.labels.yaml"
    store.set_verdict(path, "s1", "pass")
    assert path.read_text() == store.HEADER + "s1:\n  verdict: pass\n"
    store.set_cell(path, "s1", "tone", "unmet")
    store.set_cell(path, "s1", "tone", None)
    assert path.read_text() == store.HEADER + "s1:\n  verdict: pass\n"
    assert store.set_verdict(path, "s1", None) is None
    assert path.read_text() == store.HEADER
    assert load_labels(path).labels == {}


def test_bad_values_are_refused_and_nothing_is_written(sidecar):
    before = sidecar.read_text()
    with pytest.raises(ValueError):
        store.set_verdict(sidecar, "duplicate-charge", "maybe")
    with pytest.raises(ValueError):
        store.set_score(sidecar, "duplicate-charge", 11)
    with pytest.raises(ValueError):
        store.set_cell(sidecar, "duplicate-charge", "tone", "sort-of")
    assert sidecar.read_text() == before


def test_a_hand_edit_on_disk_is_not_clobbered(sidecar):
    sidecar.write_text(sidecar.read_text() + "\nadded-by-hand: fail  # typed in vim\n")
    store.set_verdict(sidecar, "duplicate-charge", "fail")
    text = sidecar.read_text()
    assert "added-by-hand: fail  # typed in vim\n" in text
    assert load_labels(sidecar).labels["duplicate-charge"].verdict == "fail"


def test_the_guessed_indentation_keeps_a_four_space_file_as_is(tmp_path):
    path = tmp_path / "x.labels.yaml"
    path.write_text("s1:\n    verdict: pass\n    criteria:\n        tone: met\n")
    store.set_cell(path, "s1", "short", "unmet")
    assert path.read_text() == "s1:\n    verdict: pass\n    criteria:\n        tone: met\n        short: unmet\n"


def test_clearing_an_absent_label_does_not_touch_the_file(sidecar):
    before = sidecar.read_text()
    stamp = sidecar.stat().st_mtime_ns
    assert store.set_cell(sidecar, "nobody", "tone", None) is None
    assert store.set_label(sidecar, "nobody", None) is None
    assert sidecar.read_text() == before and sidecar.stat().st_mtime_ns == stamp


def test_a_broken_file_is_refused(tmp_path):
    path = tmp_path / "x.labels.yaml"
    path.write_text("a: [unclosed\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        store.set_verdict(path, "a", "pass")
    assert path.read_text() == "a: [unclosed\n"


# -- writes that race an outside edit, odd targets, permissions -----------------------------------
def edit_landing_during(sidecar, outside_edits: list[str]):
    """A change for ``store._edit`` that, while it runs (between the store's read and its write),
    appends the next outside edit to the file, as an editor saving at that moment would."""
    calls = []

    def change(entry, carry):
        if len(calls) < len(outside_edits):
            with open(sidecar, "a", encoding="utf-8") as handle:
                handle.write(outside_edits[len(calls)])
        calls.append(1)
        store._set_field(entry, carry, "verdict", "fail")

    return change, calls


def test_an_outside_edit_during_a_label_write_is_kept(sidecar):
    change, calls = edit_landing_during(sidecar, ["\nadded-by-hand: fail  # saved at that moment\n"])
    store._edit(sidecar, "duplicate-charge", change)
    text = sidecar.read_text()
    assert "added-by-hand: fail  # saved at that moment\n" in text
    assert load_labels(sidecar).labels["duplicate-charge"].verdict == "fail"
    assert len(calls) == 2  # redone once on the new content


def test_a_file_that_keeps_changing_is_not_written(sidecar):
    edits = [f"{'' if n else chr(10)}by-hand-{n}: pass\n" for n in range(store._ATTEMPTS)]
    change, calls = edit_landing_during(sidecar, edits)
    with pytest.raises(ValueError, match="changing on disk"):
        store._edit(sidecar, "duplicate-charge", change)
    text = sidecar.read_text()
    assert all(f"by-hand-{n}: pass\n" in text for n in range(store._ATTEMPTS))
    assert len(calls) == store._ATTEMPTS
    assert load_labels(sidecar).labels["duplicate-charge"].verdict != "fail"


@pytest.mark.timeout(20)
def test_a_fifo_labels_path_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "x.labels.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="named pipe"):
        store.set_verdict(fifo, "a", "pass")
    with pytest.raises(RubricError, match="named pipe"):
        load_labels(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_a_new_labels_file_gets_the_users_umask(tmp_path, mask, expected):
    saved = os.umask(mask)
    try:
        store.set_verdict(tmp_path / "x.labels.yaml", "a", "pass")
    finally:
        os.umask(saved)
    assert stat.S_IMODE((tmp_path / "x.labels.yaml").stat().st_mode) == expected


def test_loading_labels_removes_what_a_killed_write_left(sidecar):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftover = sidecar.with_name(f".{sidecar.name}.rubric-studio-{int(dead.stdout)}-00ff00ff.tmp")
    leftover.write_text("half: [", encoding="utf-8")
    load_labels(sidecar)
    assert not leftover.exists()


@pytest.mark.parametrize(("change", "in_place"), [
    (store.LabelChange("verdict", "fail"), True),
    (store.LabelChange("score", 3), True),
    (store.LabelChange("cell", "unmet", "tone"), True),
    (store.LabelChange("note", "a note\nwith two lines"), False),  # the note comes back as a block
    (store.LabelChange("cell", None, "short"), False),  # the cell comes back last
    (store.LabelChange("label", None), False),  # the label comes back at the end of the file
])
def test_a_change_reports_the_label_before_and_restoring_it_gives_the_label_back(sidecar, change, in_place):
    before_text = sidecar.read_text()
    old = load_labels(sidecar).labels["refund-within-window"]
    before, after = store.apply_change(sidecar, "refund-within-window", change)
    assert before == old and after != old and sidecar.read_text() != before_text
    assert change.value_in(after) == change.value
    assert store.apply_change(sidecar, "refund-within-window", change.restoring(before)) == (after, old)
    assert load_labels(sidecar).labels == load_labels(SAMPLES / "support_reply" / "support_reply.labels.yaml").labels
    assert (sidecar.read_text() == before_text) is in_place


def test_a_change_to_a_sample_without_a_label_is_undone_by_removing_the_entry(sidecar):
    before_text = sidecar.read_text()
    change = store.LabelChange("cell", "met", "tone")
    before, after = store.apply_change(sidecar, "cancel-subscription", change)
    assert before is None and after == Label(criteria={"tone": "met"})
    assert change.restoring(before) == store.LabelChange("cell", None, "tone")
    store.apply_change(sidecar, "cancel-subscription", change.restoring(before))
    assert sidecar.read_text().rstrip("\n") == before_text.rstrip("\n")
    with pytest.raises(ValueError):
        store.LabelChange("cell", "met")  # a cell change names its criterion


def test_one_analytic_cell_score_written_through_apply_change_reads_back(tmp_path):
    """``apply_change`` with a ``cell_score`` change writes it where a label's analytic scores live
    (``criterion_scores:``), as ``apply_changes`` does — not as an unknown ``cell_score`` key."""
    from rubric_studio.core.labels import LabelChange, apply_change, load_labels

    path = tmp_path / "r.labels.yaml"
    apply_change(path, "s0", LabelChange("cell_score", 7, criterion="tone"))
    assert "cell_score" not in path.read_text()
    assert load_labels(path).labels["s0"].criterion_scores == {"tone": 7}
