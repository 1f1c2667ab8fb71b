"""The fields of the rubric editor, and where each finds its value in the document's data.

The spec tables say what every control of the criterion and rubric forms edits; the
helpers read a criterion's raw data (what the document's ``criterion_data`` returns)
the way the forms need it: its kind, its check type, its score-range rows. The raw
data may hold anything a hand-edited file holds, so every helper tolerates wrong types.
Nothing here touches Textual.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubric_studio.core.checks import CHECK_TYPES, TIMEOUT_FIELD, EditorField, LiveMapping, check_types
from rubric_studio.tui.editor._fields import FieldSpec, display_value

__all__ = [
    "CHECK_SPECS",
    "CRITERION_SPECS",
    "JUDGE_SPECS",
    "KEYWORDS_MODE",
    "KIND_ICONS",
    "KIND_NAMES",
    "NEW_BAND_TEXT",
    "RUBRIC_SPECS",
    "check_field_rows",
    "check_type_of",
    "criterion_kind",
    "field_display",
    "keywords_mode",
    "next_band",
    "range_keys",
    "range_lower",
    "stored_value",
]

KIND_ICONS = {"checklist": "✓", "analytic": "◑", "check": "▣", "penalty": "✗"}
KIND_NAMES = {
    "checklist": "judge · checklist", "analytic": "judge · analytic 0-10", "check": "check", "penalty": "judge · penalty",
}
NEW_BAND_TEXT = "Describe this band"  # the placeholder of a band's text (a new band starts empty)
_BAND_ORDER = (0, 10, 5, 7, 3, 8, 2, 1, 4, 6, 9)  # where "+ band" puts the next band

CRITERION_SPECS: dict[str, FieldSpec] = {
    "id": FieldSpec("criterion", "id", "id", "id"),
    "type": FieldSpec("check-type", "type", "choice", "type"),
    "outcome": FieldSpec("criterion", "outcome", "outcome", "outcome", required=True),
    "weight": FieldSpec("criterion", "weight", "float", "weight", nonzero=True),
    "required": FieldSpec("criterion", "required", "bool", "required", default=False),
    "operator": FieldSpec("criterion", "operator", "choice", "operator"),
    "min_score": FieldSpec("criterion", "min_score", "float", "min_score", minimum=0, maximum=1),
    "tags": FieldSpec("criterion", "tags", "tags", "tags"),
}



def _check_spec(field: EditorField) -> FieldSpec:
    return FieldSpec("check", field.key, field.kind, field.label, minimum=field.minimum, maximum=field.maximum,
                     above=field.above, required=field.required, default=field.default)


def check_field_rows() -> list[tuple[str, str, EditorField, FieldSpec]]:
    """Every check type's editor fields from the registry, in order: (check type, control id, field, spec).

    A parameter's control is ``ed-c-<key>``; a later type that reuses a key gets ``ed-c-<type>-<key>``."""
    rows: list[tuple[str, str, EditorField, FieldSpec]] = []
    taken: set[str] = set()
    for definition in check_types():
        for field in definition.fields:
            control = f"ed-c-{field.key}" if field.key not in taken else f"ed-c-{definition.name}-{field.key}"
            taken.add(field.key)
            rows.append((definition.name, control, field, _check_spec(field)))
    return rows


CHECK_SPECS: Mapping[str, FieldSpec] = LiveMapping(lambda: {
    **{spec.key: spec for _type, control, _field, spec in check_field_rows() if control == f"ed-c-{spec.key}"},
    "timeout": _check_spec(TIMEOUT_FIELD)})
"""The check parameters' fields by key (the first type to declare a key defines it), and the timeout."""
KEYWORDS_MODE = FieldSpec("keywords-mode", "mode", "choice", "mode")

RUBRIC_SPECS: dict[str, FieldSpec] = {
    "name": FieldSpec("rubric", "name", "text", "name", required=True),
    "description": FieldSpec("rubric", "description", "outcome", "description"),
    "pass_threshold": FieldSpec("rubric", "pass_threshold", "float", "pass threshold", minimum=0, maximum=1),
    "on_error": FieldSpec("rubric", "on_error", "choice", "on error"),
}
JUDGE_SPECS: dict[str, FieldSpec] = {
    "model": FieldSpec("judge", "model", "model", "model"),
    "base_url": FieldSpec("judge", "base_url", "text", "base url"),
    "temperature": FieldSpec("judge", "temperature", "float", "temperature", minimum=0, maximum=2),
    "timeout": FieldSpec("judge", "timeout", "float", "timeout", above=0, maximum=3600),
    "max_retries": FieldSpec("judge", "max_retries", "int", "max retries", minimum=0, maximum=20),
    "concurrency": FieldSpec("judge", "concurrency", "int", "concurrency", minimum=1, maximum=256),
    "mode": FieldSpec("judge", "mode", "choice", "mode"),
}


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def criterion_kind(data: dict[str, Any]) -> str:
    """checklist | analytic | check | penalty, from raw criterion data."""
    if "check" in data:
        return "check"
    weight = data.get("weight", 1)
    if isinstance(weight, int | float) and not isinstance(weight, bool) and weight < 0:
        return "penalty"
    return "analytic" if data.get("score_ranges") else "checklist"


def check_type_of(data: dict[str, Any]) -> str | None:
    """The check's type (``""`` when it has none or a non-string one); None for a judge criterion."""
    check = data.get("check")
    if isinstance(check, dict):
        value = check.get("type")
        return value if isinstance(value, str) else ""
    return None


def keywords_mode(data: dict[str, Any]) -> str:
    """Which list a keywords check holds: ``required`` or ``forbidden``."""
    check = _mapping(data.get("check"))
    return "required" if "required" in check and "forbidden" not in check else "forbidden"


def range_keys(data: dict[str, Any]) -> list[int]:
    """The score ranges' lower bounds, lowest first (keys that are not numbers left out)."""
    ranges = data.get("score_ranges")
    if not isinstance(ranges, dict):
        return []
    return sorted(k for k in ranges if isinstance(k, int) and not isinstance(k, bool))


def range_lower(data: dict[str, Any], row: int | None) -> int | None:
    """The lower bound of score-range row ``row`` (bands sorted by lower bound)."""
    keys = range_keys(data)
    return keys[row] if row is not None and 0 <= row < len(keys) else None


def next_band(data: dict[str, Any]) -> int | None:
    """The lower bound "+ band" adds next; None when every bound 0-10 is taken."""
    taken = set(range_keys(data))
    return next((k for k in _BAND_ORDER if k not in taken), None)


def stored_value(spec: FieldSpec, data: dict[str, Any]) -> Any:
    """The value ``spec`` edits in ``data`` (a criterion's raw data, or the rubric's); None when absent."""
    scope = spec.scope
    if scope in ("criterion", "rubric"):
        return data.get(spec.key)
    if scope == "judge":
        return _mapping(data.get("judge")).get(spec.key)
    if scope == "check":
        key = keywords_mode(data) if spec.kind == "words" else spec.key
        return _mapping(data.get("check")).get(key)
    if scope == "check-type":
        return check_type_of(data)
    if scope == "keywords-mode":
        return keywords_mode(data)
    lower = range_lower(data, spec.row)
    if lower is None:
        return None
    return lower if scope == "range-lower" else _mapping(data.get("score_ranges")).get(lower)


def field_display(spec: FieldSpec, data: dict[str, Any], *, blank: Any = None) -> Any:
    """What the control for ``spec`` shows for ``data``; None when it cannot show the value.

    A check of a type the form does not know, and a score-range row the criterion does
    not have, show nothing (the form reports the problem or hides the row).
    """
    scope = spec.scope
    if scope == "check-type":
        check_type = check_type_of(data)
        return "judge" if check_type is None else (check_type if check_type in CHECK_TYPES else None)
    if scope == "keywords-mode":
        return keywords_mode(data)
    if scope in ("range-lower", "range-text"):
        if range_lower(data, spec.row) is None:
            return None
        value = stored_value(spec, data)
        return str("" if value is None else value)
    if scope == "check" and spec.kind == "bool":
        return bool(_mapping(data.get("check")).get(spec.key, spec.default))
    return display_value(spec, stored_value(spec, data), blank=blank)
