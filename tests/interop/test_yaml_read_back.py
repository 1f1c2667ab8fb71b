"""Every YAML the tool writes reads back equal in PyYAML (YAML 1.1, ``yaml.safe_load``) and in ruamel
(YAML 1.2, ``YAML(typ='rt')``): the rubric an import writes, the exports (AgentV 4 and 5, promptfoo,
Letta), the rubric card, the labels sidecar and the starter ``new`` writes. Docent and HealthBench
exports are JSON and must read back with ``json``.

Each writer gets awkward strings - YAML indicators at the start (``? x``, ``- x``, ``&a``, ``!tag``),
words YAML 1.1 or 1.2 reads as something else (``yes``, ``null``, ``0x1F``, ``1e3``, ``0o17``),
spaces at either end, CR, TAB, NEL and the Unicode line separators - as criterion outcomes, ids
where the id rule allows them, regex patterns, notes and names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from ruamel.yaml import YAML

from rubric_studio.core.card import card_yaml
from rubric_studio.core.rubric import ID_PATTERN, Rubric
from rubric_studio.interop import export_rubric, rubric_to_yaml
from rubric_studio.interop._output import dump_yaml, flow, prepare

AWKWARD = [
    "https?://", "? x", ": x", "- x", "#x", "yes", "no", "on", "off", "null", "~", "0x1F", "1e3", "0o17", "1:20",
    "2024-01-01", ".inf", "+1", "1_000", "True", "<<", "=", " leading", "trailing ", " both ", "a\rb", "a\tb",
    "tab\t", "a\u2028b", "a\u2029b", "a\x85b", "{", "[", "}", "]", "&a", "*a", "!tag", "%", "@", "`", "a: b",
    "a #b", "a, b", "'q", '"q', "|", ">", "-", "?", ":", "a\\b", "\ufeffbom", "é ü", "two\nlines",
    "two\nlines\n", " indented\nblock", "trailing space \nline", "1:" * 40 + "1", "9" * 80, "0x" + "f" * 70,
]
#: The awkward strings the criterion id rule allows (``[A-Za-z0-9][A-Za-z0-9_.:-]*``).
AWKWARD_IDS = [s for s in AWKWARD if __import__("re").fullmatch(ID_PATTERN, s)]
#: What a file name (``new NAME.yaml``) can hold: no control characters, no slash, no surrounding spaces.
AWKWARD_NAMES = [s for s in AWKWARD if s == s.strip() and s and "/" not in s
                 and not any(ord(ch) < 32 or ord(ch) == 127 for ch in s)]


def _plain(value: Any) -> Any:
    """ruamel's round-trip objects as plain dicts, lists and scalars."""
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def read_both(text: str) -> tuple[Any, Any]:
    """(PyYAML's data, ruamel's data) of ``text``; a failure names the reader and shows the text."""
    try:
        first = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AssertionError(f"PyYAML cannot read what was written: {exc}\n---\n{text}") from None
    try:
        second = _plain(YAML(typ="rt").load(text))
    except Exception as exc:  # ruamel's errors share no base class with PyYAML's
        raise AssertionError(f"ruamel cannot read what was written: {exc}\n---\n{text}") from None
    return first, second


def assert_reads_back(text: str, expected: Any = None) -> Any:
    """Both readers give the same data (``expected`` when given); returns it."""
    first, second = read_both(text)
    assert first == second, f"PyYAML and ruamel disagree:\n{first!r}\n{second!r}\n---\n{text}"
    if expected is not None:
        assert first == expected, f"read back {first!r}, wrote {expected!r}\n---\n{text}"
    return first


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


# -- the emitter every interop YAML goes through ------------------------------------
@pytest.mark.parametrize("text", AWKWARD, ids=repr)
@pytest.mark.parametrize("style", ["block", "flow"])
def test_dump_yaml_reads_back_in_both_readers(text, style):
    node = prepare({"pattern": text, "words": [text, "plain"], text: 1})
    if style == "flow":
        flow(node)
        flow(node["words"])
    written = dump_yaml({"check": node, "name": text}, header=f"header naming {text}")
    assert_reads_back(written, {"check": {"pattern": text, "words": [text, "plain"], text: 1}, "name": text})


# -- the rubric an import writes ----------------------------------------------------
def _awkward_rubric(text: str) -> Rubric:
    cid = text if text in AWKWARD_IDS else "c-1"
    criteria: list[dict[str, Any]] = [
        {"id": cid, "outcome": f"{text}", "tags": [text]} if text.strip() else {"id": cid, "outcome": f"x{text}"},
        {"id": "pattern", "check": {"type": "regex", "pattern": _pattern(text)}},
        {"id": "words", "check": {"type": "keywords", "required": [text if text.strip() else "x"]}},
        {"id": "bands", "outcome": "Scored", "score_ranges": {0: f"low {text}", 5: text if text.strip() else "mid"}},
    ]
    return Rubric.model_validate({"name": text if text.strip() else "n", "description": text, "criteria": criteria})


def _pattern(text: str) -> str:
    import re

    return text if text.strip() and _compiles(text) else re.escape(text) or "x"


def _compiles(pattern: str) -> bool:
    import regex

    try:
        regex.compile(pattern)
    except regex.error:
        return False
    return True


@pytest.mark.parametrize("text", AWKWARD, ids=repr)
def test_the_rubric_an_import_writes_reads_back(text):
    rubric = _awkward_rubric(text)
    written = rubric_to_yaml(rubric)
    data = assert_reads_back(written)
    expected = rubric.model_dump()
    expected["description"] = expected["description"].strip()  # rubric_to_yaml writes it trimmed
    assert Rubric.model_validate(data).model_dump() == expected


# -- exports ------------------------------------------------------------------------
YAML_TARGETS = [("agentv", {"agentv_version": 5}), ("agentv", {"agentv_version": 4}), ("promptfoo", {}),
                ("letta", {})]


@pytest.mark.parametrize("text", AWKWARD, ids=repr)
@pytest.mark.parametrize(("target", "options"), YAML_TARGETS, ids=["agentv5", "agentv4", "promptfoo", "letta"])
def test_yaml_exports_read_back(text, target, options):
    rubric = _awkward_rubric(text)
    result = export_rubric(rubric, target, **options)
    data = assert_reads_back(result.text)
    if text.strip():
        assert any(text.strip() in s for s in _strings(data)), f"{text!r} is missing from the export"


@pytest.mark.parametrize("text", AWKWARD, ids=repr)
@pytest.mark.parametrize("target", ["docent", "healthbench"])
def test_json_exports_read_back(text, target):
    result = export_rubric(_awkward_rubric(text), target)
    lines = result.text.splitlines() if target == "healthbench" else [result.text]
    data = [json.loads(line) for line in lines if line.strip()]
    if text.strip():
        assert any(text.strip() in s for s in _strings(data))


# -- the rubric card ----------------------------------------------------------------
def _card(text: str) -> dict[str, Any]:
    cid = text if text in AWKWARD_IDS else "c-1"
    figure = {"value": None, "ci": None, "n": 0, "cant_tell": text}
    return {
        "card_version": 1,
        "rubric": {"name": text, "hash": "abc", "parts": {"name": "1"}, "criteria": {cid: "f1"}, "path": f"{text}.yaml"},
        "judge": f"openai:{text}",
        "judge_detail": {"provider": "openai", "model": text},
        "date": "2026-01-01",
        "samples": 3,
        "labels": {"n": 0, "annotators": [text], "against": "the consensus"},
        "kappa": figure,
        "within_humans": {"verdict": None, "reason": text, "cant_tell": text},
        "criteria": {cid: {"kappa": figure}},
        "probes": {"cant_tell": text},
        "consistency": {"cant_tell": text},
        "cost_per_100": figure,
        "warnings": [text],
    }


@pytest.mark.parametrize("text", AWKWARD, ids=repr)
def test_the_card_reads_back(text):
    card = _card(text)
    assert_reads_back(card_yaml(card), card)


# -- the labels sidecar -------------------------------------------------------------
@pytest.mark.parametrize("text", AWKWARD, ids=repr)
def test_the_labels_sidecar_reads_back(tmp_path, text):
    from rubric_studio.core.labels import LabelChange, apply_change, apply_changes, load_labels

    sidecar = tmp_path / "r.labels.yaml"
    sample_id = text if text.strip() else "s1"
    criterion = text if text in AWKWARD_IDS else "c-1"
    apply_change(sidecar, sample_id, LabelChange("verdict", "pass"))
    apply_change(sidecar, sample_id, LabelChange("note", text))
    apply_change(sidecar, sample_id, LabelChange("cell", "met", criterion))
    apply_changes(sidecar, [(sample_id, LabelChange("cell_score", 7, criterion), None)])
    named = text in AWKWARD_IDS and ":" not in text  # what an annotator's name may be
    if named:
        apply_change(sidecar, "other", LabelChange("verdict", "fail"), annotator=text)
        apply_change(sidecar, "other", LabelChange("verdict", "pass"), annotator="someone")
    assert_reads_back(sidecar.read_text(encoding="utf-8"))
    labels = load_labels(sidecar)
    if named:
        assert labels.by_annotator["other"][text].verdict == "fail"
    label = labels.labels[sample_id]
    assert (label.verdict, label.criteria, label.criterion_scores) == ("pass", {criterion: "met"}, {criterion: 7})
    assert (label.note or "").strip() == text.strip()  # (whether the note keeps its outer spaces is not asked here)


# -- the starter ``new`` writes -----------------------------------------------------
@pytest.mark.parametrize("text", AWKWARD_NAMES, ids=repr)
def test_the_starter_reads_back(tmp_path, text):
    from rubric_studio.engine.starter import create_starter_rubric

    path = tmp_path / f"{text}.yaml"
    create_starter_rubric(path)
    data = assert_reads_back(path.read_text(encoding="utf-8"))
    assert data["name"] == Path(f"{text}.yaml").stem


def test_the_awkward_strings_cover_ids_and_file_names():
    assert {"yes", "null", "0x1F", "1e3", "1:20"} <= set(AWKWARD_IDS)
    assert {"? x", "&a", "a\u2028b", "yes"} <= set(AWKWARD_NAMES)


def test_an_imported_url_pattern_is_written_so_both_readers_read_it(tmp_path, capsys):
    from rubric_studio.cli import main

    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: ['{{output}}']\ndefaultTest:\n  assert:\n"
                      "    - {type: regex, value: 'https?://', metric: link}\n    - {type: llm-rubric, value: Is kind}\n")
    out = tmp_path / "imported.yaml"
    assert main(["import", str(config), "-o", str(out)]) == 0
    data = assert_reads_back(out.read_text(encoding="utf-8"))
    assert next(c for c in data["criteria"] if c["id"] == "link")["check"]["pattern"] == "https?://"


#: Text js-yaml's core schema (how promptfoo and AgentV read) takes for a number, where PyYAML (YAML 1.1)
#: and ruamel read text: a writer that asks only those two writes it plain.
CORE_SCHEMA_NUMBERS = [".1e5", ".5E3", "+.2e1", "-.0e0"]


@pytest.mark.parametrize("text", CORE_SCHEMA_NUMBERS)
def test_what_the_core_schema_reads_as_a_number_is_written_as_text(text):
    from rubric_studio.core.yamlpos import load_with_positions

    def core_schema(written: str) -> Any:
        data, _, problems = load_with_positions(written, "<written>", core_schema=True)
        assert not problems
        return data

    node = prepare({"value": text, "words": [text]})
    assert core_schema(dump_yaml(node)) == {"value": text, "words": [text]}
    flow(node["words"])
    assert core_schema(dump_yaml(node)) == {"value": text, "words": [text]}
    card = _card(text)
    assert core_schema(card_yaml(card)) == card
