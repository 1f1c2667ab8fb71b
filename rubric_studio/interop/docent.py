"""Docent rubrics (JSON): ``rubric_text``, ``output_schema``, ``judge_model``.

A Docent judge (TransluceAI/docent ``docent/judges/types.py``) reads one
``rubric_text`` and answers in the shape of ``output_schema``, which must pass
Docent's restricted meta-schema (``docent/judges/util/meta_schema.json``): a root
object with ``properties``; per property only ``type``, ``description``,
``citations``, ``enum``, ``format``, length/number bounds, ``pattern``, ``items``,
``properties``, ``required`` and ``additionalProperties: false`` — no ``anyOf`` /
``oneOf`` / ``allOf``, no ``default``; arrays need ``items``, objects need
``properties``. ``"citations": true`` on a string asks the judge to cite the
transcript. ``judge_model`` is ``{provider, model_name, reasoning_effort}``.

Export writes the rubric as instructions (:mod:`._text`) and a schema that asks
for each criterion's verdict (``met`` or a 0–10 ``score``) with a cited
explanation, the weighted ``score`` and a ``label`` pass/fail. Deterministic
checks (length, keywords, regex, json, code) cannot run inside a Docent judge and
are listed as warnings.

Import reads rubric_text written that way back into criteria; any other text
becomes one checklist criterion ("match" = met).
"""

from __future__ import annotations

from typing import Any

from rubric_studio.core.rubric import Rubric
from rubric_studio.interop._common import (
    IdAllocator,
    Source,
    Warnings,
    build_rubric,
    common_export_warnings,
    expect_mapping,
    refuse_without_judged,
    slugify,
)
from rubric_studio.interop._formats import ExportResult
from rubric_studio.interop._output import dump_json
from rubric_studio.interop._providers import cannot_carry, judge_provider, key_var
from rubric_studio.interop._text import parse_criteria_text, render_criteria_text

DOCENT_PROVIDERS = ("openai", "anthropic", "google", "openrouter")
#: Our judge provider -> Docent's ``judge_model.provider`` (Docent has no Azure and no base URL).
JUDGE_PROVIDERS = {"openai": "openai", "anthropic": "anthropic"}
#: Docent's provider -> ours, on import (``openrouter`` becomes an OpenAI-compatible judge).
IMPORTED = {"openai": "openai", "anthropic": "anthropic"}
OPENROUTER_URL = "https://openrouter.ai/api/v1"
_PROPERTY_KEYS = {"type", "description", "citations", "enum", "format", "minLength", "maxLength", "pattern",
                  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "items",
                  "properties", "required", "additionalProperties"}
_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def output_schema_problems(schema: Any, path: str = "output_schema") -> list[str]:
    """Violations of Docent's documented output_schema rules (empty when it is acceptable)."""
    problems: list[str] = []
    if not isinstance(schema, dict):
        return [f"{path}: expected an object"]
    if path == "output_schema":
        extra = set(schema) - {"type", "additionalProperties", "required", "properties"}
        if extra:
            problems.append(f"{path}: keys not allowed at the root: {sorted(extra)}")
        if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
            problems.append(f"{path}: the root must be type object with properties")
    else:
        extra = set(schema) - _PROPERTY_KEYS
        if extra:
            problems.append(f"{path}: keys not allowed: {sorted(extra)}")
        if schema.get("type") not in _TYPES:
            problems.append(f"{path}: type must be one of {sorted(_TYPES)}")
        if schema.get("type") == "array" and "items" not in schema:
            problems.append(f"{path}: arrays need items")
        if schema.get("type") == "object" and "properties" not in schema:
            problems.append(f"{path}: objects need properties")
        if "items" in schema:
            problems += output_schema_problems(schema["items"], f"{path}.items")
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        problems.append(f"{path}: additionalProperties may only be false")
    for name, sub in (schema.get("properties") or {}).items():
        problems += output_schema_problems(sub, f"{path}.properties.{name}")
    return problems


def output_schema(rubric: Rubric) -> dict[str, Any]:
    per_criterion: dict[str, Any] = {}
    for criterion in rubric.criteria:
        if criterion.check is not None:
            continue
        if criterion.score_ranges:
            verdict = {"score": {"type": "integer", "minimum": 0, "maximum": 10,
                                 "description": "0-10, chosen with the criterion's bands"}}
        else:
            description = ("true when the response does the penalised thing" if criterion.weight < 0
                           else "true when the criterion is met")
            verdict = {"met": {"type": "boolean", "description": description}}
        per_criterion[criterion.key] = {
            "type": "object",
            "properties": {**verdict, "explanation": {"type": "string", "citations": True}},
            "required": [*verdict, "explanation"],
            "additionalProperties": False,
        }
    return {
        "type": "object",
        "properties": {
            "criteria": {"type": "object", "properties": per_criterion, "required": list(per_criterion),
                         "additionalProperties": False},
            "score": {"type": "number", "minimum": 0, "maximum": 1,
                      "description": "total computed as described under Scoring"},
            "label": {"type": "string", "enum": ["pass", "fail"]},
            "explanation": {"type": "string", "citations": True},
        },
        "required": ["criteria", "score", "label", "explanation"],
        "additionalProperties": False,
    }


def _judge_model(rubric: Rubric, warn: Warnings) -> dict[str, Any] | None:
    judge = rubric.judge
    if judge is None or judge.model is None:
        return None
    found = judge_provider(judge.model)
    if found is None or found.name not in JUDGE_PROVIDERS:
        if found is not None:
            cannot_carry(warn, found, "Docent", DOCENT_PROVIDERS,
                         left_out="judge_model omitted, Docent's default judge applies", set_by_hand="judge_model",
                         environment=False)
        return None
    if judge.base_url:
        warn.add(f"judge.base_url {judge.base_url} has no Docent equivalent; not exported")
    out: dict[str, Any] = {"provider": JUDGE_PROVIDERS[found.name], "model_name": found.model}
    if judge.reasoning_effort:
        out["reasoning_effort"] = judge.reasoning_effort
    return out


def export(rubric: Rubric) -> ExportResult:
    warn = Warnings()
    common_export_warnings(rubric, warn, "Docent", judge_fields=("reasoning_effort", "base_url"))
    for criterion in rubric.criteria:
        if criterion.check is not None:
            warn.criterion(criterion.key, f"deterministic {criterion.check.type} check cannot run inside a "
                                          "Docent judge; not exported")
    refuse_without_judged(rubric, "a Docent rubric")
    judged = [c for c in rubric.criteria if c.is_judged]
    data: dict[str, Any] = {"rubric_text": render_criteria_text(rubric, judged), "output_schema": output_schema(rubric)}
    judge_model = _judge_model(rubric, warn)
    if judge_model:
        data["judge_model"] = judge_model
    return ExportResult(dump_json(data), warn.items)


# -- import ------------------------------------------------------------------
def _judge(source: Source, raw: Any, warn: Warnings) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    provider, model = raw.get("provider"), raw.get("model_name")
    if not isinstance(provider, str) or not isinstance(model, str):
        warn.add(f"{source.at(('judge_model',))}: judge_model needs provider and model_name; not imported")
        return None
    judge: dict[str, Any] = {}
    if provider in IMPORTED:
        judge["model"] = f"{IMPORTED[provider]}:{model}"
    elif provider == "openrouter":
        judge["model"] = f"openai-compatible:{model}"
        judge["base_url"] = OPENROUTER_URL
        warn.add(f"judge_model openrouter/{model}: imported as an OpenAI-compatible judge at {OPENROUTER_URL} "
                 f"(put your OpenRouter key in {key_var('openai-compatible')})")
    else:
        warn.add(f"judge_model provider {provider!r} has no rubric-studio judge; judge.model not set")
    if raw.get("reasoning_effort") in ("minimal", "low", "medium", "high"):
        judge["reasoning_effort"] = raw["reasoning_effort"]
    return judge or None


def import_(source: Source, warn: Warnings) -> Rubric:
    data = expect_mapping(source, source.data, (), "Docent rubric")
    text = data.get("rubric_text")
    if not isinstance(text, str) or not text.strip():
        raise source.error(("rubric_text",), "Docent rubric: 'rubric_text' (the rubric's instructions) is missing "
                                             "or empty")
    schema = data.get("output_schema")
    if schema is not None:
        for problem in output_schema_problems(schema):
            warn.add(f"{source.at(('output_schema',))}: {problem} (Docent would reject this schema)")
    if data.get("prompt_templates") or data.get("system_prompt_template"):
        warn.add("custom Docent prompt templates are not imported; rubric-studio's judge prompt applies")
    parsed = parse_criteria_text(text)
    ids = IdAllocator()
    origins: dict[int, tuple[Any, ...]] = {}
    if parsed is not None:
        criteria = []
        for criterion in parsed.criteria:
            criterion["id"] = ids.take(criterion.get("id"), f"c{len(criteria) + 1}")
            origins[len(criteria)] = ("rubric_text",)
            criteria.append(criterion)
        name = parsed.name or _default_name(source)
        description = parsed.description
        threshold = parsed.pass_threshold
    else:
        label = (((schema or {}).get("properties") or {}).get("label") or {}) if isinstance(schema, dict) else {}
        enum = label.get("enum") if isinstance(label, dict) else None
        if enum and set(enum) != {"match", "no match"}:
            warn.add(f"output_schema label values {enum} were read as met = {enum[0]!r}")
        warn.add("free-form Docent rubric_text imported as one checklist criterion (met = the judge's "
                 "'match'); split it into separate criteria in the studio")
        criteria = [{"id": "rubric", "outcome": text.strip()}]
        origins[0] = ("rubric_text",)
        name, description, threshold = _default_name(source), None, None
    rubric_data: dict[str, Any] = {"name": name, "criteria": criteria}
    if description:
        rubric_data["description"] = description
    if threshold is not None:
        rubric_data["pass_threshold"] = threshold
    judge = _judge(source, data.get("judge_model"), warn)
    if judge:
        rubric_data["judge"] = judge
    return build_rubric(rubric_data, source, origins)


def _default_name(source: Source) -> str:
    return slugify(source.stem("docent-rubric"), fallback="docent-rubric")

