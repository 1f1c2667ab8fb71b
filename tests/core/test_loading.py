"""Rubric loading: every problem with file, line, column and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.core.loading import check_rubric_file, load_rubric, parse_rubric
from rubric_studio.core.problems import RubricError

ROOT = Path(__file__).resolve().parents[2]


def problems_of(text: str) -> list[str]:
    with pytest.raises(RubricError) as info:
        parse_rubric(text, "r.yaml")
    return [str(p) for p in info.value.problems]


def test_yaml_syntax_error_has_line_and_column():
    (msg,) = problems_of("name: x\ncriteria:\n  - outcome: [unclosed\n")
    assert msg.startswith("r.yaml:4:1:") or msg.startswith("r.yaml:3:")
    assert "YAML syntax error" in msg


def test_unknown_key_suggests_the_near_miss_at_the_key_position():
    (msg,) = problems_of("name: x\ncriteria:\n  - outcome: a\n    wieght: 2\n")
    assert msg.startswith("r.yaml:4:5:")
    assert "did you mean 'weight'" in msg


def test_unknown_key_in_check_suggests_field_of_that_check_type():
    (msg,) = problems_of("name: x\ncriteria:\n  - check: {type: length, max_word: 3}\n")
    assert msg.startswith("r.yaml:3:27:")
    assert "did you mean 'max_words'" in msg


def test_duplicate_ids_point_at_the_second_and_name_the_first():
    (msg,) = problems_of("name: x\ncriteria:\n  - id: a\n    outcome: x\n  - id: a\n    outcome: y\n")
    assert msg.startswith("r.yaml:5:9:")
    assert "duplicate criterion id 'a'" in msg and "line 3" in msg


def test_score_ranges_keys_must_start_at_zero_and_be_0_to_10():
    msgs = problems_of(
        "name: x\ncriteria:\n  - id: a\n    outcome: x\n    score_ranges: {2: low, 8: high}\n"
        "  - id: b\n    outcome: y\n    score_ranges: {0: low, 12: high}\n  - id: c\n    outcome: z\n    score_ranges: {0: low, high: x}\n"
    )
    assert any(m.startswith("r.yaml:5:19:") and "start at 0" in m for m in msgs)
    assert any(m.startswith("r.yaml:8:19:") and "got 12" in m for m in msgs)
    assert any(m.startswith("r.yaml:11:19:") and "got 'high'" in m for m in msgs)


def test_outcome_and_check_are_exclusive():
    msgs = problems_of(
        "name: x\ncriteria:\n  - id: a\n    outcome: x\n    check: {type: json}\n  - id: b\n    weight: 2\n"
    )
    assert any(m.startswith("r.yaml:3:5:") and "it has both" in m for m in msgs)
    assert any(m.startswith("r.yaml:6:5:") and "it has neither" in m for m in msgs)


def test_unknown_check_type_lists_the_known_ones():
    (msg,) = problems_of("name: x\ncriteria:\n  - check: {type: regexp, pattern: a}\n")
    assert msg.startswith("r.yaml:3:12:")
    assert "unknown check type 'regexp'" in msg and "regex" in msg


def test_regex_that_does_not_compile_is_reported_at_the_check():
    (msg,) = problems_of("name: x\ncriteria:\n  - check: {type: regex, pattern: '(a'}\n")
    assert msg.startswith("r.yaml:3:12:")
    assert "does not compile" in msg


def test_wrong_types_say_what_was_expected_and_what_was_found():
    (msg,) = problems_of("name: x\ncriteria:\n  - outcome: a\n    weight: heavy\n")
    assert msg.startswith("r.yaml:4:13:")
    assert "valid number" in msg and "'heavy'" in msg


def test_all_problems_are_reported_at_once_in_file_order():
    msgs = problems_of("name: x\nthreshold: 2\ncriteria:\n  - outcome: a\n    requried: true\n")
    assert [m.split(":")[1] for m in msgs] == ["2", "5"]


def test_duplicate_yaml_keys_are_not_silently_merged():
    (msg,) = problems_of("name: x\nname: y\ncriteria: [a]\n")
    assert msg.startswith("r.yaml:2:1:") and "duplicate key 'name'" in msg


def test_unknown_prompt_placeholder_is_a_validation_error():
    (msg,) = problems_of("name: x\njudge:\n  prompt: 'Grade {submission} against {rubrc}'\ncriteria: [a]\n")
    assert "{rubrc}" in msg and msg.startswith("r.yaml:3:")


def test_prompt_path_placeholders_are_checked(tmp_path: Path):
    (tmp_path / "p.txt").write_text("Input: {input}\nAnswer: {answer}\n")
    rubric = tmp_path / "r.yaml"
    rubric.write_text("name: x\njudge:\n  prompt_path: p.txt\ncriteria: [a]\n")
    _, problems = check_rubric_file(rubric)
    assert any("{answer}" in str(p) and ":3:" in str(p) for p in problems)


def test_plain_strings_become_criteria_with_generated_ids():
    rubric = parse_rubric("name: x\ncriteria:\n  - Mentions X\n  - id: c1\n    outcome: y\n  - Mentions Z\n")
    assert [c.id for c in rubric.criteria] == ["c2", "c1", "c3"]
    assert rubric.criteria[0].outcome == "Mentions X"


def test_missing_file_and_empty_file(tmp_path: Path):
    with pytest.raises(RubricError, match="no such file"):
        load_rubric(tmp_path / "nope.yaml")
    (tmp_path / "empty.yaml").write_text("")
    with pytest.raises(RubricError, match="empty"):
        load_rubric(tmp_path / "empty.yaml")


def test_penalties_alone_cannot_score():
    (msg,) = problems_of("name: x\ncriteria:\n  - outcome: bad\n    weight: -1\n")
    assert "positive weight" in msg


BUNDLED = sorted(p for p in (ROOT / "sample_rubrics").glob("*/*.yaml") if p.name.count(".") == 1)


def test_three_bundled_rubrics_exist():
    assert len(BUNDLED) >= 3


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_bundled_rubrics_are_valid(path: Path):
    rubric, problems = check_rubric_file(path)
    assert rubric is not None, problems
    assert [p for p in problems if p.severity == "error"] == []
    assert rubric.judge_criteria and rubric.check_criteria


def test_a_missing_key_is_named():
    (msg,) = problems_of("name: x\ncriteria:\n  - id: run\n    check: {type: command}\n")
    assert msg == "r.yaml:4:12: criteria[0].check: required key 'command' is missing"


def test_a_value_matching_no_branch_says_what_is_expected_without_internal_names():
    (msg,) = problems_of("name: x\ncriteria:\n  - id: run\n    check: {type: command, command: 5}\n")
    assert msg == "r.yaml:4:37: criteria[0].check.command: expected a string or a list of strings (got 5)"
    assert "str]" not in msg and ".str" not in msg


@pytest.mark.parametrize("word", ["no", "yes", "on", "Off", "true", "false", "null", "~"])
def test_a_bare_yaml_word_where_a_string_is_expected_says_how_to_quote_it(word: str):
    (msg,) = problems_of(f"name: x\ncriteria:\n  - id: a\n    outcome: Polite\n  - id: b\n    check: {{type: keywords, forbidden: [ok, {word}]}}\n")
    read_as = {"no": "false", "yes": "true", "on": "true", "Off": "false", "true": "true", "false": "false",
               "null": "null (no value)", "~": "null (no value)"}[word]
    assert msg == f"r.yaml:6:45: criteria[1].check.forbidden[1]: YAML reads {word} as {read_as}; quote it: '{word}'"


def test_outcome_no_is_read_as_false_and_the_message_says_so():
    (msg,) = problems_of("name: x\ncriteria:\n  - id: a\n    outcome: no\n")
    assert msg == "r.yaml:4:14: criteria[0].outcome: YAML reads no as false; quote it: 'no'"


@pytest.mark.parametrize(("value", "at", "said"), [
    ("", "4:5", "outcome is empty; write what a good output does"),
    ("   # to do", "4:5", "outcome is empty; write what a good output does"),
    ("''", "4:14", "outcome is empty; write what a good output does"),
    ("~", "4:5", "YAML reads ~ as null (no value); write what a good output does"),
    ("null", "4:5", "YAML reads null as null (no value); write what a good output does"),
])
def test_an_empty_or_null_outcome_says_so_where_it_is_written(value: str, at: str, said: str):
    (msg,) = problems_of(f"name: x\ncriteria:\n  - id: a\n    outcome: {value}\n  - id: b\n    outcome: fine\n")
    assert msg == f"r.yaml:{at}: criteria[0].outcome: {said}"


def test_an_empty_check_is_reported_at_its_key():
    (msg,) = problems_of("name: x\ncriteria:\n  - id: a\n    check:\n")
    assert msg.startswith("r.yaml:4:5: criteria[0].check: check is empty; give it a type (one of: ")


def test_a_null_outcome_beside_a_check_is_still_a_check():
    rubric = parse_rubric("name: x\ncriteria:\n  - id: a\n    outcome: ~\n    check: {type: json}\n", "r.yaml")
    assert rubric.criteria[0].check is not None


def test_a_null_key_is_reported_at_the_key():
    (msg,) = problems_of("name: x\ncriteria:\n  - id: a\n    outcome: fine\n    ~: 3\n")
    assert msg.startswith("r.yaml:5:5: criteria[0]: a key is null")


def test_a_penalty_with_operator_contradiction_is_flagged(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("name: x\ncriteria:\n  - id: good\n    outcome: Polite\n  - id: bad\n    outcome: Shares the password\n"
                    "    weight: -3\n    operator: contradiction\n")
    _, problems = check_rubric_file(path)
    (warning,) = [p for p in problems if "operator" in p.message]
    assert (warning.line, warning.column, warning.severity) == (8, 15, "warning")
    assert "penalty" in warning.message and "does NOT contradict" in warning.message
    path.write_text("name: x\ncriteria:\n  - id: fact\n    outcome: Refunds take 5 days\n    operator: contradiction\n")
    assert check_rubric_file(path)[1] == []  # a positive contradiction criterion is fine


@pytest.mark.parametrize(("check", "line_col", "says"), [
    ("{type: length, min_words: 10, max_words: 5}", "4:12", "min_words 10 is larger than max_words 5"),
    ("{type: length, min_chars: 90, max_chars: 20}", "4:12", "min_chars 90 is larger than max_chars 20"),
    ("{type: length, min_words: 5, max_words: 5, max_chars: 8}", "4:12", "min_words 5 needs at least 9 characters"),
])
def test_a_check_no_text_can_pass_is_flagged_where_it_is(check: str, line_col: str, says: str):
    (msg,) = problems_of(f"name: x\ncriteria:\n  - id: a\n    check: {check}\n")
    assert msg.startswith(f"r.yaml:{line_col}: criteria[0].check: no text can pass: ") and says in msg


def test_a_length_check_that_some_text_passes_is_accepted():
    parse_rubric("name: x\ncriteria:\n  - id: a\n    check: {type: length, min_words: 5, max_words: 5, max_chars: 9}\n")
