"""Hostile YAML and JSON where rubric cards and imports are read: nesting 5,000 deep, numbers of 5,000
digits, syntax errors, a card of the wrong shape. Each is exit 2 with ``file:line:col`` and never a
traceback: ``validate`` reading a ``<stem>.card.yaml``, and every file an import reads (the eval
itself, an AgentV tests file, AgentV 4's ``.agentv/targets.yaml`` and header, the examples written
into a criterion's text)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.card import card_path_for, card_state, read_card, rubric_identity
from rubric_studio.core.loading import load_rubric
from rubric_studio.interop import import_rubric

DEEP = "[" * 5000 + "]" * 5000
DEEP_MAP = "{a: " * 5000 + "1" + "}" * 5000
BIG = "9" * 5000
RUBRIC = "name: tiny\ncriteria:\n  - id: short\n    check: {type: length, max_words: 50}\n"
POSITION = re.compile(r":\d+:\d+: ")


def _rubric(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(RUBRIC)
    return path


def _fresh_card(rubric_path: Path) -> dict:
    """A card whose rubric identity matches the rubric on disk (so it is fresh)."""
    rubric = load_rubric(rubric_path)
    figure = {"value": None, "ci": None, "n": 0, "cant_tell": "no labels"}
    return {"card_version": 1, "rubric": {**rubric_identity(rubric), "path": rubric_path.name}, "judge": None,
            "judge_detail": None, "date": "2026-01-01", "samples": 3,
            "labels": {"n": 0, "annotators": [], "against": "x"}, "kappa": figure,
            "within_humans": {"verdict": None, "reason": "x", "cant_tell": "x"}, "criteria": {},
            "probes": {"cant_tell": "x"}, "consistency": {"cant_tell": "x"}, "cost_per_100": figure, "warnings": []}


CARDS = {
    "nested 5,000 deep": (f"card_version: 1\nrubric: {DEEP}\n", 2),
    "a mapping nested 5,000 deep": (f"card_version: 1\nrubric: {DEEP_MAP}\n", 2),
    "a 5,000-digit number": (f"card_version: 1\nsamples: {BIG}\n", 2),
    "not YAML": ("card_version: 1\nrubric: [a, list\n", None),
    "an alias bomb": ("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)), None),
    "not a card": ("just: a mapping\n", None),
}


@pytest.mark.parametrize("text", [v[0] for v in CARDS.values()], ids=list(CARDS))
def test_validate_refuses_an_unreadable_card_at_its_line_and_column(tmp_path, capsys, text):
    rubric = _rubric(tmp_path)
    card = card_path_for(rubric)
    card.write_text(text)
    assert main(["validate", str(rubric)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(re.escape(str(card)) + r":\d+:\d+: ", err), err
    assert main(["validate", str(rubric), "--format", "json"]) == 2
    entry = json.loads(capsys.readouterr().out)["files"][0]
    assert entry["card"] == "unreadable"
    (problem,) = [p for p in entry["problems"] if p["file"] == str(card)]
    assert problem["severity"] == "error" and problem["line"] and problem["column"]


def test_the_line_of_a_deep_card_is_where_the_nesting_is(tmp_path, capsys):
    rubric = _rubric(tmp_path)
    card_path_for(rubric).write_text(f"card_version: 1\ndate: x\nrubric: {DEEP}\n")
    assert main(["validate", str(rubric)]) == 2
    assert f"{card_path_for(rubric)}:3:" in capsys.readouterr().err


@pytest.mark.parametrize(("field", "value"), [("kappa", {"value": "high", "ci": [0.1, 0.2], "n": 3}),
                                              ("kappa", [1, 2]), ("kappa", {"value": 0.5, "ci": "wide", "n": 3}),
                                              ("rubric.hash", ["not", "text"]), ("rubric.criteria", "x")])
def test_a_fresh_card_of_the_wrong_shape_is_refused_not_a_traceback(tmp_path, capsys, field, value):
    rubric = _rubric(tmp_path)
    card = _fresh_card(rubric)
    holder, _, key = field.rpartition(".")
    (card[holder] if holder else card)[key] = value
    card_path_for(rubric).write_text(json.dumps(card))
    with pytest.raises(ValueError, match=re.escape(field)):
        read_card(card_path_for(rubric))
    assert card_state(load_rubric(rubric))[0] == "unreadable"
    assert main(["validate", str(rubric)]) == 2
    err = capsys.readouterr().err
    assert POSITION.search(err) and field in err and "Traceback" not in err
    assert main(["export", str(rubric), "--to", "promptfoo"]) == 0  # the card comment is left out
    out = capsys.readouterr().out
    assert "rubric card:" not in out


def test_a_well_formed_fresh_card_still_reads(tmp_path, capsys):
    rubric = _rubric(tmp_path)
    card_path_for(rubric).write_text(json.dumps(_fresh_card(rubric)))
    assert card_state(load_rubric(rubric))[0] == "fresh"
    assert main(["validate", str(rubric)]) == 0
    assert main(["export", str(rubric), "--to", "promptfoo"]) == 0
    assert "# rubric card: hash" in capsys.readouterr().out


def test_a_card_that_is_a_fifo_is_refused_without_blocking(tmp_path, capsys):
    import os

    rubric = _rubric(tmp_path)
    os.mkfifo(card_path_for(rubric))
    assert main(["validate", str(rubric)]) == 2
    assert str(card_path_for(rubric)) in capsys.readouterr().err


# -- what an import reads -------------------------------------------------------------
def _import_fails_at(capsys, path: Path, where: Path, line: int | None = None) -> str:
    assert main(["import", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    pattern = re.escape(str(where)) + (f":{line}:" if line else r":\d+:") + r"\d+: "
    assert re.search(pattern, err), err
    return err


def test_agentv4_targets_file_nested_deep_is_refused_at_its_place(tmp_path, capsys):
    eval_file = tmp_path / "suite.eval.yaml"
    eval_file.write_text("name: x\nexecution:\n  target: default\nassertions:\n  - type: rubrics\n    criteria: [ok]\n")
    (tmp_path / ".agentv").mkdir()
    targets = tmp_path / ".agentv" / "targets.yaml"
    targets.write_text(f"targets:\n  - name: default\n    grader_target: j\n    extra: {DEEP}\n")
    _import_fails_at(capsys, eval_file, targets, 4)
    targets.write_text(f"targets:\n  - name: default\n    grader_target: j\n    extra: {BIG}\n")
    _import_fails_at(capsys, eval_file, targets, 4)


def test_agentv4_header_lines_nested_deep_do_not_crash(tmp_path):
    text = ("# targets:\n#   - name: rubric-judge\n#     model: " + DEEP + "\nname: x\nexecution:\n  target: default\n"
            "assertions:\n  - type: rubrics\n    criteria: [ok]\n")
    result = import_rubric(text, "agentv")  # a header line it cannot read is not a judge
    assert any("AgentV 4" in w for w in result.warnings)


@pytest.mark.parametrize("content", [f'{{"id": "t", "assert": {DEEP}}}\n', f'{{"id": "t", "weight": {BIG}}}\n'],
                         ids=["deep", "big"])
def test_an_agentv_tests_file_nested_deep_or_with_a_huge_number_is_refused_at_its_place(tmp_path, capsys, content):
    eval_file = tmp_path / "suite.eval.yaml"
    eval_file.write_text("name: x\nassert:\n  - type: llm-rubric\n    value: [ok]\ntests: ./cases.jsonl\n")
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "assert": ["Is kind"]}\n' + content)
    _import_fails_at(capsys, eval_file, tmp_path / "cases.jsonl", 2)


@pytest.mark.parametrize("fmt", ["agentv", "promptfoo"])
@pytest.mark.parametrize("value", [DEEP, BIG], ids=["deep", "big"])
def test_examples_written_into_criterion_text_nested_deep_are_kept_as_text(tmp_path, fmt, value):
    outcome = ("Is ok\n\nGraded examples (apply the criterion the same way):\n"
               f'- {{"sample": "s", "verdict": "met", "x": {value}}}')
    if fmt == "agentv":
        data = {"name": "x", "assert": [{"type": "llm-rubric", "value": [{"id": "ok", "outcome": outcome}]}]}
    else:
        data = {"prompts": ["{{output}}"], "providers": ["echo"],
                "defaultTest": {"assert": [{"type": "llm-rubric", "metric": "ok", "value": outcome}]}}
    rubric = import_rubric(json.dumps(data), fmt).rubric
    assert rubric.criteria[0].outcome.startswith("Is ok") and not rubric.criteria[0].examples


@pytest.mark.parametrize(("name", "text"), [
    ("deep.promptfooconfig.yaml", f"prompts: ['{{{{output}}}}']\ndefaultTest:\n  assert:\n    - type: llm-rubric\n"
                                  f"      value: ok\n      weight: {DEEP}\n"),
    ("big.promptfooconfig.yaml", f"prompts: ['{{{{output}}}}']\ndefaultTest:\n  assert:\n    - type: llm-rubric\n"
                                 f"      value: ok\n      weight: {BIG}\n"),
    ("deep.eval.yaml", f"name: x\nassert:\n  - type: llm-rubric\n    value: [ok]\n    weight: {DEEP}\n"),
    ("deep.suite.yaml", f"name: s\ndataset: d.jsonl\ngraders:\n  q:\n    kind: model_judge\n    prompt: x\n"
                        f"    extra: {DEEP}\n"),
    ("deep.docent.json", f'{{"rubric_text": "x", "output_schema": {DEEP}, "judge_model": "a"}}'),
    ("big.docent.json", f'{{"rubric_text": "x", "output_schema": {{"a": {BIG}}}, "judge_model": "a"}}'),
    ("deep.healthbench.jsonl", f'{{"criterion": "x", "points": 1, "tags": []}}\n'
                               f'{{"criterion": "x", "points": 1, "tags": {DEEP}}}\n'),
    ("big.healthbench.jsonl", f'{{"criterion": "x", "points": {BIG}, "tags": []}}\n'),
], ids=lambda value: value if isinstance(value, str) and len(value) < 40 else "")
def test_every_imported_format_refuses_deep_nesting_and_huge_numbers_with_a_position(tmp_path, capsys, name, text):
    path = tmp_path / name
    path.write_text(text)
    _import_fails_at(capsys, path, path)
