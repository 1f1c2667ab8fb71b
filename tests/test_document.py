"""RubricDocument: round-trip edits that change only what they say, undo/redo, atomic save."""

from __future__ import annotations

import difflib
import os
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from rubric_studio.core.atomic import STATE_FOLDER, ChangedOnDisk, UnsafeTarget
from rubric_studio.core.document import EditError, Merge, RevertsOutsideEdit, RubricDocument, UndoStop, merge3
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.problems import RubricError

ROOT = Path(__file__).resolve().parent.parent
RUBRICS = sorted(p for p in (ROOT / "sample_rubrics").glob("*/*.yaml") if p.stem == p.parent.name)
ALL_YAML = sorted((ROOT / "sample_rubrics").glob("*/*.yaml"))
SUPPORT = ROOT / "sample_rubrics" / "support_reply" / "support_reply.yaml"


def changes(before: str, after: str) -> list[tuple[str, list[str], list[str]]]:
    """(tag, old lines, new lines) of every non-equal block."""
    a, b = before.splitlines(True), after.splitlines(True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(tag, a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def comments(text: str) -> Counter[str]:
    return Counter(line.strip() for line in text.splitlines() if line.strip().startswith("#"))


def eol_comments(text: str) -> Counter[str]:
    return Counter(line.split(" # ", 1)[1].strip() for line in text.splitlines() if " # " in line and not line.strip().startswith("#"))


@pytest.fixture
def support(tmp_path: Path) -> RubricDocument:
    target = tmp_path / "support_reply.yaml"
    target.write_bytes(SUPPORT.read_bytes())
    return RubricDocument.load(target)


def doc_of(text: str, tmp_path: Path, name: str = "r.yaml") -> RubricDocument:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return RubricDocument.load(path)


# -- round trip -----------------------------------------------------------------------


@pytest.mark.parametrize("source", ALL_YAML, ids=lambda p: p.name)
def test_load_and_save_unchanged_is_byte_identical(source: Path, tmp_path: Path):
    target = tmp_path / source.name
    target.write_bytes(source.read_bytes())
    document = RubricDocument.load(target)
    assert not document.dirty
    assert document.save() == source.read_text(encoding="utf-8")
    assert target.read_bytes() == source.read_bytes()


@pytest.mark.parametrize("source", RUBRICS, ids=lambda p: p.name)
def test_ruamel_configuration_reproduces_the_bundled_rubrics_exactly(source: Path):
    document = RubricDocument.load(source)
    assert document._base_dump() == document.text
    assert document.problems() == [] or all(p.severity == "warning" for p in document.problems())


@pytest.mark.parametrize("source", RUBRICS, ids=lambda p: p.name)
def test_changing_one_weight_changes_exactly_one_line(source: Path, tmp_path: Path):
    document = doc_of(source.read_text(encoding="utf-8"), tmp_path, source.name)
    before = document.text
    for index in range(document.criteria_count):
        document.break_coalescing()
        had_weight = "weight" in document.criterion_data(index)
        assert document.set_criterion_field(index, "weight", 7)
        diff = changes(before, document.text)
        assert len(diff) == 1, diff
        tag, old, new = diff[0]
        if had_weight:
            assert tag == "replace" and len(old) == len(new) == 1
            assert old[0].split("weight:")[0] == new[0].split("weight:")[0]  # same indentation
            assert new[0].split("#")[0].rstrip().endswith("weight: 7")
        else:
            assert tag == "insert" and len(new) == 1 and new[0].strip() == "weight: 7"
        assert document.parse().criteria[index].weight == 7
        assert comments(document.text) == comments(before)
        assert document.undo() and document.text == before


@pytest.mark.parametrize("source", RUBRICS, ids=lambda p: p.name)
def test_every_field_edit_is_local_and_keeps_comments(source: Path, tmp_path: Path):
    text = source.read_text(encoding="utf-8")
    edits = [
        ("required", lambda d, i: d.set_criterion_field(i, "required", not d.criterion_data(i).get("required", False)), 1),
        ("min_score", lambda d, i: d.set_criterion_field(i, "min_score", 0.55), 1),
        ("tags", lambda d, i: d.set_criterion_field(i, "tags", ["edited", "x"]), 1),
        ("id", lambda d, i: d.set_criterion_field(i, "id", f"renamed-{i}"), 1),
    ]
    fresh = doc_of(text, tmp_path, source.name)
    for index in range(fresh.criteria_count):
        for name, edit, max_lines in edits:
            fresh.break_coalescing()
            edit(fresh, index)
            diff = changes(text, fresh.text)
            assert len(diff) == 1, (name, index, diff)
            _, old, new = diff[0]
            assert len(old) <= max_lines and len(new) <= max_lines, (name, index, diff)
            assert comments(fresh.text) == comments(text), (name, index)
            assert eol_comments(fresh.text) == eol_comments(text), (name, index)
            fresh.parse()
            assert fresh.undo() and fresh.text == text


def test_field_values_land_where_expected(support: RubricDocument):
    text = support.text
    support.set_criterion_field(2, "weight", 5)  # tone has no weight: goes after outcome
    (tag, _, new), = changes(text, support.text)
    assert tag == "insert" and new == ["    weight: 5\n"]
    lines = support.text.splitlines()
    assert lines[lines.index("    weight: 5") - 1].startswith("    outcome: Warm, professional tone")

    support.set_criterion_field(1, "min_score", 0.5)  # policy-accurate: operator first; min_score before tags
    lines = support.text.splitlines()
    position = lines.index("    min_score: 0.5")
    assert lines[position - 1] == "    required: true"
    assert lines[position + 1] == "    tags: [axis:accuracy, policy]"
    assert parse_rubric(support.text).criterion("policy-accurate").min_score == 0.5


def test_end_of_line_comments_survive_value_changes(support: RubricDocument):
    support.set_criterion_field(3, "weight", -5)
    assert '    weight: -5        # penalty: "met" means the reply does the bad thing' in support.text
    support.set_check_field(4, "max_words", 120)
    assert "check: {type: length, max_words: 120}   # support lead" in support.text


def test_folded_outcome_keeps_its_style_and_wrapping(support: RubricDocument):
    text = support.text
    old = support.criterion_data(0)["outcome"]
    support.set_criterion_field(0, "outcome", old + " and thanks them")
    (tag, before, after), = changes(text, support.text)
    assert tag == "replace"
    assert before == ["      what the customer should do)\n"]
    assert after == ["      what the customer should do) and thanks them\n"]
    assert support.parse().criteria[0].outcome == old + " and thanks them"


def test_multiline_outcome_becomes_a_literal_block(support: RubricDocument):
    support.set_criterion_field(2, "outcome", "Warm tone.\nAcknowledges the issue.")
    assert "    outcome: |-\n      Warm tone.\n      Acknowledges the issue.\n" in support.text
    assert support.parse().criteria[2].outcome == "Warm tone.\nAcknowledges the issue."


def test_deleting_a_key_keeps_the_lines_around_it(support: RubricDocument):
    text = support.text
    support.set_criterion_field(3, "weight", None)
    (tag, old, new), = changes(text, support.text)
    assert tag == "delete" and old[0].startswith("    weight: -3") and new == []
    support.set_check_type(4, None)  # the flow check had an end-of-line comment and a blank line after
    assert "  - id: short\n    outcome: ''\n\n  - id: no-boilerplate" in support.text


def test_choosing_judge_for_a_judged_criterion_writes_nothing(support: RubricDocument):
    """The form's type select shows "judge"; choosing it again must not add an empty outcome."""
    support.replace_text(support.text.replace("    outcome: Warm, professional", "    outcom: Warm, professional"))
    support.save()
    text = support.text
    assert support.set_check_type(2, None) is False  # no check: judged already, the typo stays the user's
    assert support.text == text and not support.dirty
    assert support.set_check_type(0, None) is False
    assert support.text == text


def test_score_ranges_edit_add_remove_and_move(support: RubricDocument):
    text = support.text
    support.set_score_range(2, 4, "Neutral")
    assert changes(text, support.text) == [
        ("replace", ["      4: Neutral and formulaic; reads like a template\n"], ["      4: Neutral\n"])
    ]
    support.set_score_range(2, 8, "Great")
    lines = support.text.splitlines()
    assert lines[lines.index("      8: Great") - 1] == "      7: Friendly and professional"
    support.remove_score_range(2, 4)
    assert "      4: Neutral" not in support.text
    support.move_score_range(2, 8, 9)
    assert "      9: Great" in support.text and "      8: Great" not in support.text
    assert list(support.parse().criteria[2].score_ranges) == [0, 7, 9, 10]
    for lower in (0, 7, 9, 10):
        support.remove_score_range(2, lower)
    assert "score_ranges" not in support.criterion_data(2)
    assert support.parse().criteria[2].kind == "checklist"
    support.set_score_range(0, 0, "Missing")  # a checklist criterion gains a score_ranges block
    assert support.parse().criteria[0].score_ranges == {0: "Missing"}
    with pytest.raises(EditError):
        support.set_score_range(0, 11, "too high")


def test_check_type_switches(support: RubricDocument):
    support.set_check_type(2, "length")  # tone: judge-only keys go, min_score and tags stay
    data = support.criterion_data(2)
    assert data["check"] == {"type": "length", "max_words": 200}
    assert "outcome" not in data and "score_ranges" not in data and data["min_score"] == 0.7
    support.parse()
    support.set_check_type(6, "keywords")  # regex params go, the user fills in the words
    assert support.criterion_data(6)["check"] == {"type": "keywords"}
    support.set_check_field(6, "forbidden", ["secret"])
    assert support.parse().criteria[6].check.forbidden == ["secret"]
    assert "forbidden: [secret]" in support.text
    with pytest.raises(EditError):
        support.set_check_type(0, "nonsense")
    with pytest.raises(EditError):
        support.set_check_field(0, "max_words", 3)  # not a check


def test_rubric_and_judge_fields(support: RubricDocument):
    text = support.text
    support.set_rubric_field("pass_threshold", 0.75)
    assert changes(text, support.text) == [("replace", ["pass_threshold: 0.8\n"], ["pass_threshold: 0.75\n"])]
    support.set_rubric_field("on_error", "ignore")
    lines = support.text.splitlines()
    assert lines[lines.index("on_error: ignore") - 1] == "pass_threshold: 0.75"
    support.set_judge_field("base_url", "http://localhost:8000/v1")
    lines = support.text.splitlines()
    at = lines.index("  base_url: http://localhost:8000/v1")  # after the model and the comment that follows it
    assert lines[at - 2 : at] == ["  model: openai:gpt-6-luna", "  # no temperature: a reasoning model takes only its own"]
    support.set_judge_field("mode", "batch")
    rubric = support.parse()
    assert rubric.judge.mode == "batch" and rubric.on_error == "ignore" and rubric.pass_threshold == 0.75
    for key in ("model", "temperature", "timeout", "max_retries", "concurrency", "base_url", "mode"):
        support.set_judge_field(key, None)
    assert "judge:" not in support.text  # emptied block goes
    support.set_judge_field("model", "anthropic:claude-3-5-haiku-latest")
    lines = support.text.splitlines()
    assert lines[lines.index("judge:") + 1] == "  model: anthropic:claude-3-5-haiku-latest"
    assert lines[lines.index("judge:") + 2] == "criteria:"
    with pytest.raises(EditError):
        support.set_rubric_field("criteria", [])


def test_plain_string_criteria_become_mappings_only_when_needed(tmp_path: Path):
    document = doc_of('name: x\ncriteria:\n  - "Mentions X"   # keep me\n  - Is polite\n', tmp_path)
    assert document.criterion_data(0) == {"outcome": "Mentions X"}
    assert document.criterion_is_plain(0)
    document.set_criterion_field(0, "outcome", "Mentions Y")
    assert document.text == 'name: x\ncriteria:\n  - "Mentions Y"   # keep me\n  - Is polite\n'
    document.set_criterion_field(1, "weight", 2)
    assert document.text.endswith("  - outcome: Is polite\n    weight: 2\n")
    document.set_criterion_field(0, "id", "mentions")
    assert '  - id: mentions\n    outcome: "Mentions Y" # keep me\n' in document.text
    rubric = document.parse()
    assert [c.id for c in rubric.criteria] == ["mentions", "c1"]


# -- criteria as a list ----------------------------------------------------------------


def test_add_criterion_at_the_end_and_after_a_criterion(support: RubricDocument):
    text = support.text
    index = support.add_criterion()
    assert index == 7
    assert support.text == text + "\n  - id: new-criterion\n    outcome: Describe what a good answer does\n"
    support.add_criterion({"outcome": "Offers a callback", "weight": 2, "id": "callback"}, 1)
    assert support.criterion_ids()[1] == "callback"
    assert "    tags: [axis:completeness]\n\n  - id: callback\n    outcome: Offers a callback\n    weight: 2\n\n  # contradiction" in support.text
    assert sum(len(new) for _, _, new in changes(text, support.text)) == 7
    assert support.add_criterion() == 9
    assert support.criterion_ids()[-1] == "new-criterion-2"
    support.parse()


def test_delete_criterion_takes_its_own_comments_and_nothing_else(support: RubricDocument):
    text = support.text
    support.delete_criterion(1)  # policy-accurate and the two comment lines above it
    (tag, old, new), = changes(text, support.text)
    assert tag == "delete"
    assert old[0] == "\n" and old[1].startswith("  # contradiction") and old[3] == "  - id: policy-accurate\n"
    assert len(old) == 11
    support.delete_criterion(3)  # short: the section header above it stays
    assert "# --- deterministic (no judge call)" in support.text
    assert "id: short" not in support.text
    assert support.criterion_ids() == ["resolves-issue", "tone", "asks-for-credentials", "no-boilerplate", "no-internal-links"]
    support.parse()


def test_duplicate_criterion_gets_a_unique_copy_id(support: RubricDocument):
    text = support.text
    assert support.duplicate_criterion(2) == 3
    assert support.criterion_ids()[2:4] == ["tone", "tone-copy"]
    (tag, _, new), = changes(text, support.text)
    assert tag == "insert" and new[0] == "  - id: tone-copy\n" and new[-1] == "\n"
    assert support.duplicate_criterion(2) == 3
    assert support.criterion_ids()[2:5] == ["tone", "tone-copy-2", "tone-copy"]
    assert support.parse().criterion("tone-copy").score_ranges == support.parse().criterion("tone").score_ranges
    assert support.undo() and support.undo()
    assert support.text == text  # each duplicate is one undo step


def test_move_criterion_carries_its_comments_and_keeps_separators(support: RubricDocument):
    text = support.text
    assert support.move_criterion(1, 1) == 2
    assert support.criterion_ids()[:3] == ["resolves-issue", "tone", "policy-accurate"]
    lines = support.text.splitlines()
    at = lines.index("  - id: policy-accurate")
    assert lines[at - 2].startswith("  # contradiction") and lines[at - 3] == ""
    assert sorted(support.text.splitlines()) == sorted(text.splitlines())  # nothing added or lost
    assert support.move_criterion(6, -100) == 0
    assert support.criterion_ids()[0] == "no-internal-links"
    assert support.text.splitlines()[20:23] == [
        "  # --- judged ---------------------------------------------------------------",
        "  # Admin-console and Jira links must never reach a customer.",
        "  - id: no-internal-links",
    ]
    assert support.move_criterion(0, -1) == 0  # clamped: no change
    support.parse()
    support.undo()
    support.undo()
    assert support.text == text


def test_list_operations_on_other_layouts(tmp_path: Path):
    flow = doc_of("name: x\ncriteria: [A, B, C]\n", tmp_path, "flow.yaml")
    flow.move_criterion(0, 2)
    assert flow.text == "name: x\ncriteria: [B, C, A]\n"
    flow.delete_criterion(0)
    assert flow.text == "name: x\ncriteria: [C, A]\n"

    unindented = doc_of("name: x\ncriteria:\n- id: a\n  outcome: A\n- id: b\n  outcome: B", tmp_path, "u.yaml")
    unindented.move_criterion(1, -1)  # no final newline: still none after
    assert unindented.text == "name: x\ncriteria:\n- id: b\n  outcome: B\n- id: a\n  outcome: A"
    unindented.set_criterion_field(0, "weight", 2)
    assert unindented.text == "name: x\ncriteria:\n- id: b\n  outcome: B\n  weight: 2\n- id: a\n  outcome: A"
    unindented.add_criterion({"id": "c", "outcome": "C"})
    assert unindented.text.endswith("- id: a\n  outcome: A\n- id: c\n  outcome: C")

    single = doc_of("name: x\ncriteria:\n  - id: a\n    outcome: A\n", tmp_path, "single.yaml")
    single.delete_criterion(0)
    assert single.text == "name: x\ncriteria: []\n"
    assert single.criteria_count == 0
    single.add_criterion({"id": "b", "outcome": "B"})
    assert single.text == "name: x\ncriteria:\n  - id: b\n    outcome: B\n"


def test_edits_on_a_file_ruamel_would_reformat_stay_local(tmp_path: Path):
    text = "# top\nname:    demo      # spaced out\ncriteria:\n- id: a\n  outcome:    A   # odd spacing\n- id: b\n  outcome: B\n  weight: 2\n"
    document = doc_of(text, tmp_path)
    document.set_criterion_field(1, "weight", 3)
    assert changes(text, document.text) == [("replace", ["  weight: 2\n"], ["  weight: 3\n"])]


def test_crlf_files_keep_their_line_endings(tmp_path: Path):
    text = SUPPORT.read_text(encoding="utf-8").replace("\n", "\r\n")
    path = tmp_path / "crlf.yaml"
    path.write_bytes(text.encode())
    document = RubricDocument.load(path)
    document.set_criterion_field(0, "weight", 4)
    assert changes(text, document.text) == [("replace", ["    weight: 3\r\n"], ["    weight: 4\r\n"])]
    document.move_criterion(1, 1)
    document.add_criterion()
    document.duplicate_criterion(0)
    assert "\n" not in document.text.replace("\r\n", "")
    document.save()
    assert path.read_bytes() == document.text.encode()
    document.parse()


def test_random_edit_sequences_stay_valid_and_undo_to_the_original(support: RubricDocument):
    import random

    rng = random.Random(7)
    original = support.text
    for _ in range(40):
        count = support.criteria_count
        index = rng.randrange(count)
        choice = rng.randrange(7)
        support.break_coalescing()
        if choice == 0:
            support.set_criterion_field(index, "weight", rng.choice([1, 2, 3, 0.5]))
        elif choice == 1 and count < 12:
            support.duplicate_criterion(index)
        elif choice == 2 and count > 3:
            support.delete_criterion(index)
        elif choice == 3:
            support.move_criterion(index, rng.choice([-2, -1, 1, 3]))
        elif choice == 4:
            support.set_criterion_field(index, "tags", [f"t{rng.randrange(9)}"])
        elif choice == 5:
            support.add_criterion(index=index)
        else:
            support.set_criterion_field(index, "required", rng.choice([True, False]))
        support.parse()  # always a valid rubric
        assert comments(support.text) <= comments(original) + Counter()
    while support.undo():
        pass
    assert support.text == original


# -- undo / redo -----------------------------------------------------------------------


def test_undo_and_redo_walk_the_history(support: RubricDocument):
    original = support.text
    support.set_criterion_field(0, "weight", 4)
    after_weight = support.text
    support.delete_criterion(2)
    assert support.can_undo and not support.can_redo
    assert support.undo()
    assert support.text == after_weight
    assert support.undo()
    assert support.text == original and not support.dirty
    assert not support.undo()
    assert support.redo() and support.text == after_weight
    support.set_rubric_field("name", "other")  # a new edit clears the redo history
    assert not support.can_redo


def test_typing_in_one_field_is_one_undo_step(support: RubricDocument):
    original = support.text
    for value in ("W", "Wa", "War", "Warm"):
        support.set_criterion_field(2, "outcome", value)
    support.set_criterion_field(2, "weight", 2)  # another field: a new step
    assert support.undo()
    assert support.criterion_data(2)["outcome"] == "Warm"
    assert support.undo()
    assert support.text == original


def test_coalescing_stops_after_a_pause_or_on_request(support: RubricDocument, monkeypatch: pytest.MonkeyPatch):
    original = support.text
    support.set_criterion_field(0, "weight", 4)
    support.break_coalescing()
    support.set_criterion_field(0, "weight", 5)
    assert support.undo() and support.criterion_data(0)["weight"] == 4
    assert support.undo() and support.text == original
    monkeypatch.setattr(RubricDocument, "coalesce_seconds", -1.0)
    support.set_criterion_field(0, "weight", 6)
    support.set_criterion_field(0, "weight", 7)
    assert support.undo() and support.criterion_data(0)["weight"] == 6


def test_transaction_is_one_step_and_rolls_back_on_error(support: RubricDocument):
    original = support.text
    with support.transaction():
        support.set_criterion_field(0, "weight", 4)
        support.set_criterion_field(1, "weight", 5)
    assert support.undo() and support.text == original
    with pytest.raises(EditError), support.transaction():
        support.set_criterion_field(0, "weight", 9)
        support.set_check_type(0, "bogus")
    assert support.text == original


def test_replace_text_is_undoable_and_coalesces_typing(support: RubricDocument):
    original = support.text
    support.replace_text(original.replace("weight: 3", "weight: 30"))
    support.replace_text(original.replace("weight: 3", "weight: 300"))
    assert support.criterion_data(0)["weight"] == 300
    assert support.undo() and support.text == original
    assert not support.replace_text(original)  # same text: nothing to do


# -- files -------------------------------------------------------------------------------


def test_save_is_atomic_keeps_permissions_and_leaves_no_temp_files(support: RubricDocument):
    path = support.path
    os.chmod(path, 0o640)
    support.set_criterion_field(0, "weight", 4)
    assert support.dirty
    written = support.save()
    assert not support.dirty and support.disk_text == written == support.text
    assert path.read_text(encoding="utf-8") == written
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in path.parent.iterdir() if p.name != STATE_FOLDER) == [path.name]  # no temp file left
    assert "# Billing-support reply rubric (Ledgerly)." in written
    assert "weight: 4" in written


def test_disk_changes_and_reload(support: RubricDocument):
    assert not support.disk_changed()
    support.path.write_text(support.text.replace("weight: 3", "weight: 8"), encoding="utf-8")
    assert support.disk_changed()
    assert support.reload_from_disk()
    assert support.criterion_data(0)["weight"] == 8 and not support.dirty and not support.disk_changed()
    stop = support.undo()  # the reload is an outside edit: undo stops there first and says so
    assert isinstance(stop, UndoStop) and stop.outside.startswith("the outside edit of ")
    assert support.criterion_data(0)["weight"] == 8
    assert support.undo() is True  # the version before the reload is the next undo away
    assert support.criterion_data(0)["weight"] == 3 and support.dirty
    assert support.reverted_outside == stop.outside
    support.path.unlink()
    assert support.disk_changed()
    with pytest.raises(RubricError):
        support.reload_from_disk()


# -- saving over a change made on disk --------------------------------------------------


def outside_sed(path: Path, expression: str) -> None:
    """Edit the file the way another program would (sed -i writes a new file and renames it)."""
    subprocess.run(["sed", "-i", expression, str(path)], check=True)


def test_save_refuses_to_overwrite_an_outside_edit_and_carries_the_disk_text(support: RubricDocument):
    path = support.path
    outside_sed(path, "s/^description:.*/description: EXT/")
    outside = path.read_text(encoding="utf-8")
    support.set_criterion_field(0, "weight", 4)
    mine = support.text
    with pytest.raises(ChangedOnDisk) as caught:
        support.save()
    assert path.read_text(encoding="utf-8") == outside  # nothing lost on disk ...
    assert support.text == mine and support.dirty  # ... nor in the editor
    assert caught.value.text == outside
    assert sorted(p.name for p in path.parent.iterdir() if p.name != STATE_FOLDER) == [path.name]  # no temp file left


def test_merging_keeps_both_the_outside_edit_and_mine(support: RubricDocument):
    path = support.path
    support.set_criterion_field(0, "weight", 4)
    outside_sed(path, "s/^pass_threshold:.*/pass_threshold: 0.7/")
    with pytest.raises(ChangedOnDisk) as caught:
        support.save()
    merged = support.merge_disk(caught.value.text)
    assert merged.clean
    assert support.take_disk(caught.value.text, caught.value.state, merged.text)
    support.save()  # over exactly the version merged with
    data = parse_rubric(path.read_text(encoding="utf-8"), str(path))
    assert data.pass_threshold == 0.7 and data.criteria[0].weight == 4
    assert not support.dirty and not support.disk_changed()
    assert isinstance(support.undo(), UndoStop)  # the merge took in an outside edit: undo stops first
    assert support.undo() is True and support.criterion_data(0)["weight"] == 4  # then it is one undo step
    assert "pass_threshold: 0.8" in support.text
    # Saving now would undo the outside edit, which is still on disk: nothing is written without asking.
    with pytest.raises(RevertsOutsideEdit):
        support.save()
    assert "pass_threshold: 0.7" in path.read_text(encoding="utf-8")
    assert support.redo() and support.reverted_outside is None


def test_overwriting_is_explicit_and_only_over_the_version_shown(support: RubricDocument):
    path = support.path
    support.set_criterion_field(0, "weight", 4)
    outside_sed(path, "s/^pass_threshold:.*/pass_threshold: 0.7/")
    with pytest.raises(ChangedOnDisk) as first:
        support.save()
    outside_sed(path, "s/^pass_threshold:.*/pass_threshold: 0.6/")  # changed again while the user decided
    with pytest.raises(ChangedOnDisk) as second:
        support.save(replacing=first.value.state)
    assert "pass_threshold: 0.6" in path.read_text(encoding="utf-8")
    support.save(replacing=second.value.state)
    assert path.read_text(encoding="utf-8") == support.text and "pass_threshold: 0.8" in support.text
    support.set_criterion_field(0, "weight", 5)
    support.save()  # the document now knows the version it wrote: a plain save goes through
    assert "weight: 5" in path.read_text(encoding="utf-8")


def test_a_save_without_edits_never_writes_back_an_old_version(support: RubricDocument):
    outside_sed(support.path, "s/^pass_threshold:.*/pass_threshold: 0.7/")
    assert not support.dirty
    with pytest.raises(ChangedOnDisk):
        support.save()
    assert "pass_threshold: 0.7" in support.path.read_text(encoding="utf-8")


def test_edits_of_the_same_lines_do_not_merge_cleanly(tmp_path: Path):
    document = doc_of("name: x\ndescription: base\ncriteria:\n  - outcome: a\n", tmp_path)
    document.set_rubric_field("description", "mine")
    outside_sed(document.path, "s/^description:.*/description: theirs/")
    merged = document.merge_disk(document.read_disk())
    assert not merged.clean and merged.conflicts == [2]


def test_three_way_merge_of_separate_changes_and_identical_ones():
    base = "a\nb\nc\nd\n"
    assert merge3(base, "A\nb\nc\nd\n", "a\nb\nc\nD\n") == Merge("A\nb\nc\nD\n")
    assert merge3(base, "a\nB\nc\nd\n", "a\nB\nc\nd\n").clean  # both made the same change
    assert merge3(base, "a\nb\nx\nc\nd\n", "a\nb\ny\nc\nd\n").conflicts == [3]  # two inserts, one place
    assert merge3(base, base, "z\n") == Merge("z\n") and merge3(base, "z\n", base) == Merge("z\n")


@pytest.mark.timeout(20)
def test_a_fifo_or_device_is_refused_with_a_message_without_hanging(tmp_path: Path):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(RubricError, match="named pipe"):
        RubricDocument.load(fifo)
    document = doc_of("name: x\ncriteria:\n  - outcome: a\n", tmp_path)
    document.path.unlink()
    document.path.symlink_to("/dev/null")
    with pytest.raises(RubricError, match="symbolic link to a device"):
        document.read_disk()
    with pytest.raises(UnsafeTarget):
        document.save()
    assert document.path.is_symlink()


def test_opening_removes_what_a_killed_save_left(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("name: x\ncriteria:\n  - outcome: a\n", encoding="utf-8")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftover = tmp_path / f".r.yaml.rubric-studio-{int(dead.stdout)}-00ff00ff.tmp"
    leftover.write_text("name: half", encoding="utf-8")
    RubricDocument.load(path)
    assert not leftover.exists()


def test_a_rubric_that_parses_but_does_not_validate_still_loads(tmp_path: Path):
    document = doc_of("name: x\ncriteria:\n  - outcome: a\n    wieght: 2\n", tmp_path)
    problems = document.problems()
    assert [str(p) for p in problems][0].startswith(f"{tmp_path / 'r.yaml'}:4:5:")
    assert "did you mean 'weight'" in problems[0].message
    with pytest.raises(RubricError):
        document.parse()
    document.set_criterion_field(0, "wieght", None)  # fixable from the editor
    document.set_criterion_field(0, "weight", 2)
    assert document.problems() == []
    assert document.parse().criteria[0].weight == 2


def test_yaml_syntax_error_raises_with_line_and_column(tmp_path: Path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\ncriteria:\n  - outcome: [unclosed\n", encoding="utf-8")
    with pytest.raises(RubricError) as info:
        RubricDocument.load(path)
    (problem,) = info.value.problems
    assert problem.file == str(path) and problem.line is not None and problem.column is not None
    assert "YAML syntax error" in problem.message
    document = RubricDocument.load(path, allow_syntax_errors=True)
    assert document.yaml_problem == problem
    assert document.criteria_count == 0 and document.criterion_ids() == []
    assert document.problems() == [problem]
    with pytest.raises(EditError, match="fix the YAML first"):
        document.set_criterion_field(0, "weight", 2)
    document.replace_text("name: x\ncriteria:\n  - outcome: [closed]\n")
    assert document.yaml_problem is None and document.criteria_count == 1
    with pytest.raises(RubricError):
        RubricDocument.load(tmp_path / "missing.yaml")


def test_criterion_helpers(support: RubricDocument):
    assert support.criterion_index("tone") == 2 and support.criterion_index("nope") is None
    assert support.criterion_line(0) == 22
    assert support.text.splitlines()[21] == "  - id: resolves-issue"
    assert support.rubric_data()["name"] == "support-reply"
    assert support.criterion_data(4) == {"id": "short", "check": {"type": "length", "max_words": 150}}
    with pytest.raises(IndexError):
        support.set_criterion_field(99, "weight", 1)


@pytest.mark.parametrize("text", ["yes", "No", "on", "012", "1:30", "2024-01-01", "~", "null"])
def test_a_string_yaml_11_would_misread_is_written_quoted_and_loads_as_written(text):
    """The rubric loader reads YAML 1.1: an outcome set to "yes" must not come back as True."""
    doc = RubricDocument.from_text("name: x\ncriteria:\n  - id: a\n    outcome: hi\n", "r.yaml")
    doc.set_criterion_field(0, "outcome", text)
    doc.set_rubric_field("description", text)
    rubric = doc.parse()
    assert rubric.criteria[0].outcome == text and rubric.description == text
