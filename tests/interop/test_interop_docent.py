"""Docent: rubric_text, an output_schema Docent accepts, judge_model; import and round trip."""

from __future__ import annotations

import json

import jsonschema
import pytest

from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import export_rubric, import_rubric
from rubric_studio.interop.docent import output_schema_problems

ROUND_TRIP_FIELDS = ("outcome", "weight", "required", "operator", "score_ranges", "min_score", "tags")

# Docent's documented restrictions on output_schema, written as a JSON Schema of our own:
# root object with properties; per property only these keywords; arrays need items,
# objects need properties; additionalProperties only false; no anyOf/oneOf/allOf/default.
PROPERTY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["type"],
    "properties": {
        "type": {"enum": ["string", "integer", "number", "boolean", "array", "object"]},
        "description": {"type": "string"},
        "citations": {"type": "boolean"},
        "enum": {"type": "array", "items": {"type": ["string", "integer", "boolean"]}},
        "minimum": {"type": "number"}, "maximum": {"type": "number"},
        "items": {"$ref": "#/$defs/property"},
        "properties": {"type": "object", "additionalProperties": {"$ref": "#/$defs/property"}},
        "required": {"type": "array", "items": {"type": "string"}},
        "additionalProperties": {"const": False},
    },
    "allOf": [
        {"if": {"properties": {"type": {"const": "array"}}}, "then": {"required": ["items"]}},
        {"if": {"properties": {"type": {"const": "object"}}}, "then": {"required": ["properties"]}},
    ],
}
DOCENT_RULES = {
    "$defs": {"property": PROPERTY},
    "type": "object",
    "additionalProperties": False,
    "required": ["type", "properties"],
    "properties": {
        "type": {"const": "object"},
        "additionalProperties": {"const": False},
        "required": {"type": "array", "items": {"type": "string"}},
        "properties": {"type": "object", "additionalProperties": {"$ref": "#/$defs/property"}},
    },
}


def _export(rubric):
    result = export_rubric(rubric, "docent")
    return json.loads(result.text), result


def test_output_schema_passes_docents_restrictions(sample_rubric):
    data, _ = _export(sample_rubric)
    schema = data["output_schema"]
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(DOCENT_RULES).validate(schema)
    assert output_schema_problems(schema) == []
    text = json.dumps(schema)
    assert "anyOf" not in text and "default" not in text
    assert schema["properties"]["explanation"] == {"type": "string", "citations": True}
    per_criterion = schema["properties"]["criteria"]["properties"]
    assert set(per_criterion) == {c.key for c in sample_rubric.judge_criteria}


def test_schema_checker_rejects_what_docent_rejects():
    bad = {"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}]}, "y": {"type": "array"},
                                            "z": {"type": "string", "default": "a"}}}
    problems = output_schema_problems(bad)
    assert any("x" in p and "anyOf" in p for p in problems)
    assert any("arrays need items" in p for p in problems)
    assert any("default" in p for p in problems)


def test_rubric_text_and_judge_model(support_reply):
    rubric = support_reply.model_copy(update={"judge": support_reply.judge.model_copy(update={"reasoning_effort": "high"})})
    data, result = _export(rubric)
    assert result.suggested_suffix == ".docent.json"
    assert data["judge_model"] == {"provider": "openai", "model_name": "gpt-6-luna", "reasoning_effort": "high"}
    text = data["rubric_text"]
    assert "[policy-accurate] (weight 2; required; operator: contradiction" in text
    assert "   - 7-9: Friendly and professional" in text
    assert "PASS when total >= 0.8" in text
    assert any("'no-internal-links'" in w and "regex" in w for w in result.warnings)


def test_unsupported_judge_provider_is_warned():
    rubric = Rubric.model_validate({"name": "x", "judge": {"model": "ollama:qwen2.5"}, "criteria": ["Is fine"]})
    data, result = _export(rubric)
    assert "judge_model" not in data
    assert any("ollama" in w and "judge_model omitted" in w for w in result.warnings)


def test_round_trip_keeps_every_field_docent_expresses(sample_rubric, compare):
    result = export_rubric(sample_rubric, "docent")
    imported = import_rubric(result.text, "docent")
    judged = [c.key for c in sample_rubric.judge_criteria]
    assert compare(sample_rubric, imported.rubric, ROUND_TRIP_FIELDS, ids=judged) == []
    assert imported.rubric.name == sample_rubric.name
    assert imported.rubric.pass_threshold == sample_rubric.pass_threshold
    assert imported.rubric.judge.model == sample_rubric.judge.model


def test_import_docent_rubric_written_by_hand(fixtures):
    result = import_rubric(fixtures / "docent" / "rubric.json")
    assert result.detected == "docent"
    (criterion,) = result.rubric.criteria
    assert criterion.outcome.startswith("The agent should ask for confirmation")
    assert result.rubric.judge.model == "anthropic:claude-sonnet-4-5"
    assert result.rubric.judge.reasoning_effort == "medium"
    assert any("one checklist criterion" in w for w in result.warnings)


def test_import_without_rubric_text_is_an_error():
    from rubric_studio.core.problems import RubricError

    with pytest.raises(RubricError) as caught:
        import_rubric('{"output_schema": {"type": "object", "properties": {}}}', "docent")
    assert "rubric_text" in caught.value.problems[0].message
