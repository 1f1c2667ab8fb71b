"""Editing the labels sidecar: byte-for-byte, everything but the edited entry stays as it was."""

from __future__ import annotations

import pytest

from rubric_studio.core import labels_store as store
from rubric_studio.core.labels import Label, load_labels


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
