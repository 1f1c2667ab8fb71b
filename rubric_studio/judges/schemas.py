"""Reply schemas: what the judge must answer, per criterion or for a batch.

Per criterion: ``{"rationale", "evidence": [quote], "verdict": "met"|"unmet"}`` for a
checklist criterion, ``{"rationale", "evidence", "score": 0..10}`` for an analytic one.
Rationale comes first so the model reasons before it decides. Batch: one such object
per criterion, keyed by criterion id, every id required: ``{"<id>": {...}, ...}``.

The schemas stay inside the subset every provider accepts: OpenAI strict ``json_schema``
(every property required, ``additionalProperties: false``, no numeric bounds — the 0..10
range is an integer ``enum``) and Anthropic tool ``input_schema``.
"""

from __future__ import annotations

from typing import Any

from rubric_studio.core.rubric import Criterion

SCORES = list(range(11))
VERDICTS = ["met", "unmet"]

_RATIONALE = {"type": "string", "description": "Why, in two or three sentences, citing the submission."}
_EVIDENCE = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Exact passages copied verbatim from the submission; empty if none apply.",
}


def _decision(criterion: Criterion) -> tuple[str, dict[str, Any]]:
    if criterion.kind == "analytic":
        return "score", {"type": "integer", "enum": SCORES, "description": "Integer score from 0 to 10."}
    return "verdict", {"type": "string", "enum": VERDICTS}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def criterion_schema(criterion: Criterion) -> dict[str, Any]:
    """The reply schema for one criterion."""
    name, decision = _decision(criterion)
    return _object({"rationale": _RATIONALE, "evidence": _EVIDENCE, name: decision})


def batch_schema(criteria: list[Criterion]) -> dict[str, Any]:
    """The reply schema for several criteria judged in one call: an object keyed by
    criterion id, every id required (so a schema-enforcing server cannot leave one out)."""
    return _object({c.key: criterion_schema(c) for c in criteria})
