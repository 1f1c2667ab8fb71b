"""Reply schemas: what the judge must answer, per criterion or for a batch.

Per criterion: ``{"rationale", "evidence": [quote], "verdict": "met"|"unmet"}`` for a
checklist criterion, ``{"rationale", "evidence", "score": 0..10}`` for an analytic one.
Rationale comes first so the model reasons before it decides. Batch:
``{"criteria": [{"id", "rationale", "evidence", "verdict"|"score"}]}``.

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
    """The reply schema for several criteria judged in one call."""
    shapes: list[dict[str, Any]] = []
    for kind in ("checklist", "analytic"):
        ids = [c.key for c in criteria if c.kind == kind]
        if ids:
            name, decision = _decision(next(c for c in criteria if c.kind == kind))
            shapes.append(_object({"id": {"type": "string", "enum": ids}, "rationale": _RATIONALE, "evidence": _EVIDENCE, name: decision}))
    items = shapes[0] if len(shapes) == 1 else {"anyOf": shapes}
    return _object({"criteria": {"type": "array", "items": items, "description": "One entry per criterion, each id once."}})
