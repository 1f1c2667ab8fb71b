"""The ``json_path`` check: a JSON Pointer (RFC 6901) into a JSON output and one assertion on
what it points at (``equals``, ``exists``, ``matches``, ``value_type``)."""

from __future__ import annotations

import pytest

from rubric_studio.core.checks import CHECK_TYPES
from rubric_studio.core.document import CHECK_FIELDS
from rubric_studio.core.grading import score_text
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.problems import RubricError

OUTPUT = '{"answer": {"status": "done", "items": [1, 2.5, true], "a/b": {"m~n": null}, "count": 3}}'


def _grade(check: str, text: str = OUTPUT) -> tuple[str, str]:
    rubric = parse_rubric(f"name: j\ncriteria:\n  - id: c\n    check: {check}\n", "r.yaml")
    cell = score_text(rubric, text).details["c"]
    return cell.status, cell.rationale or ""


@pytest.mark.parametrize("check, status", [
    ("{type: json_path, pointer: /answer/status, equals: done}", "met"),
    ("{type: json_path, pointer: /answer/status, equals: Done}", "unmet"),
    ("{type: json_path, pointer: /answer/items, equals: [1, 2.5, true]}", "met"),
    ("{type: json_path, pointer: /answer/items/2, equals: 1}", "unmet"),  # true is not 1
    ("{type: json_path, pointer: /answer/count, equals: 3.0}", "met"),  # 3 is 3.0
    ("{type: json_path, pointer: /answer/items/0, value_type: integer}", "met"),
    ("{type: json_path, pointer: /answer/items/1, value_type: integer}", "unmet"),
    ("{type: json_path, pointer: /answer/items/1, value_type: number}", "met"),
    ("{type: json_path, pointer: /answer/items, value_type: array}", "met"),
    ("{type: json_path, pointer: /answer/items/3, exists: true}", "unmet"),
    ("{type: json_path, pointer: /answer/items/01, exists: true}", "unmet"),  # no leading zeros
    ("{type: json_path, pointer: /answer/missing, exists: false}", "met"),
    ("{type: json_path, pointer: /answer/status, exists: false}", "unmet"),
    ("{type: json_path, pointer: /answer/status, matches: '^do'}", "met"),
    ("{type: json_path, pointer: /answer/count, matches: '3'}", "unmet"),  # not a string
    ("{type: json_path, pointer: '', value_type: object}", "met"),
    # escaped tokens: ~1 is '/', ~0 is '~'
    ("{type: json_path, pointer: /answer/a~1b/m~0n, value_type: 'null'}", "met"),
    ("{type: json_path, pointer: /answer/a/b, exists: true}", "unmet"),
])
def test_json_path_verdicts(check, status):
    assert _grade(check)[0] == status


def test_reasons_say_what_was_found():
    assert _grade("{type: json_path, pointer: /answer/status, equals: ok}") == (
        "unmet", '/answer/status is "done", not "ok"')
    assert _grade("{type: json_path, pointer: /answer/nope/x, exists: true}") == (
        "unmet", "no value at /answer/nope/x: /answer has no key 'nope'")
    assert _grade("{type: json_path, pointer: /answer/items/7, value_type: string}")[1] == (
        "no value at /answer/items/7: /answer/items is an array of 3 with no item '7'")


def test_output_that_is_not_json_is_unmet_with_the_reason():
    status, why = _grade("{type: json_path, pointer: /a, exists: false}", "not json at all")
    assert status == "unmet" and why.startswith("not valid JSON: Expecting value at line 1 column 1")


def test_a_fenced_json_block_is_read_as_the_json_check_reads_it():
    assert _grade("{type: json_path, pointer: /ok, equals: true}", '```json\n{"ok": true}\n```')[0] == "met"


def test_deeply_nested_output_is_an_error_not_a_crash():
    status, _ = _grade("{type: json_path, pointer: /a, exists: true}", "[" * 100_000 + "]" * 100_000)
    assert status == "error"


@pytest.mark.parametrize("check, at, message", [
    ("{type: json_path, pointer: answer/status, equals: 1}", "answer/status",
     "criteria[0].check.pointer: pointer 'answer/status' must start with '/' (RFC 6901), e.g. '/answer/status'"),
    ("{type: json_path, pointer: /a~2b, equals: 1}", "/a~2b",
     "criteria[0].check.pointer: pointer has a '~' not followed by 0 or 1 at character 3; write ~0 for '~' "
     "and ~1 for '/'"),
    ("{type: json_path, pointer: /a}", "{",
     "criteria[0].check: a json_path check needs exactly one of equals, exists, matches, value_type"),
    ("{type: json_path, pointer: /a, exists: true, equals: 2}", "{",
     "criteria[0].check: a json_path check needs exactly one of equals, exists, matches, value_type "
     "(got equals, exists)"),
    ("{type: json_path, pointer: /a, equals: null}", "{",
     "criteria[0].check: equals: null is not compared; to require null write value_type: null"),
    ("{type: json_path, pointer: /a, matches: '('}", "'('", "criteria[0].check.matches: pattern does not compile"),
    ("{type: json_path, pointer: /a, value_type: text}", "text", "criteria[0].check.value_type:"),
    ("{type: json_path, pointr: /a, exists: true}", "pointr",
     "unknown key 'pointr' in criteria[0].check — did you mean 'pointer'?"),
    ("{type: jsonpath, pointer: /a, exists: true}", "{",
     "criteria[0].check: unknown check type 'jsonpath' — did you mean 'json_path'?"),
])
def test_validation_messages_name_the_position(check, at, message):
    """Each message points at line 5 and the column where ``at`` starts (the check's ``{`` for a
    problem of the whole check)."""
    line = f"      {check}"
    text = f"name: j\ncriteria:\n  - id: c\n    check:\n{line}\n"
    where = f"5:{line.index(at) + 1}"
    with pytest.raises(RubricError) as error:
        parse_rubric(text, "r.yaml")
    assert f"r.yaml:{where}: {message}" in str(error.value), str(error.value)


def test_json_path_is_a_registered_type_with_its_parameters():
    assert "json_path" in CHECK_TYPES
    assert CHECK_FIELDS["json_path"] == ("pointer", "equals", "exists", "matches", "value_type")


def test_the_editor_lists_its_fields_in_order_with_hints_and_reads_them():
    from rubric_studio.tui.editor import check_field_rows, display_value, parse_field

    rows = [(control, field.kind, field.hint) for name, control, field, _spec in check_field_rows()
            if name == "json_path"]
    assert [r[0] for r in rows] == ["ed-c-pointer", "ed-c-equals", "ed-c-exists", "ed-c-matches", "ed-c-value_type"]
    assert rows[0][2] == "RFC 6901, e.g. /answer/status; empty: all" and all(r[2] for r in rows)
    specs = {name: spec for _t, _c, field, spec in check_field_rows() if _t == "json_path" for name in [field.key]}
    assert parse_field(specs["equals"], '{"a": [1, null]}') == {"a": [1, None]}
    assert parse_field(specs["exists"], "false", blank=None) is False
    assert display_value(specs["exists"], False) == "false"
    with pytest.raises(ValueError, match="not JSON"):
        parse_field(specs["equals"], "{nope")


def test_choosing_json_path_in_the_editor_writes_a_check_that_validates(tmp_path):
    from rubric_studio.core.document import RubricDocument

    document = RubricDocument("name: j\ncriteria:\n  - id: c\n    outcome: x\n", tmp_path / "j.yaml")
    document.set_check_type(0, "json_path")
    document.set_check_field(0, "value_type", "string")
    document.set_check_field(0, "exists", None)
    document.set_check_field(0, "pointer", "/answer")
    assert "check:\n      type: json_path\n      pointer: /answer\n      value_type: string\n" in document.text
    assert document.parse().criteria[0].check.value_type == "string"
