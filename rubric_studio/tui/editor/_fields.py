"""What one field of the rubric editor edits, and how its text is read and shown.

A :class:`FieldSpec` names the key of the document a control edits (its *scope* says
where the key lives: the criterion, its check, the rubric, its judge ...) and the kind
of value it holds. :func:`parse_field` turns what the user typed into the value to
write, or says in a ValueError what is wrong; :func:`display_value` turns a document
value into the control's text. Nothing here touches Textual or the document, so the
rules of every field can be read (and tested) in one place.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.rubric import ID_PATTERN

__all__ = ["FieldSpec", "display_value", "number_text", "parse_field"]

CRITERION_SCOPES = frozenset({"criterion", "check", "check-type", "keywords-mode", "range-lower", "range-text"})


@dataclass(frozen=True)
class FieldSpec:
    """What one control edits and how its text is read."""

    scope: str  # criterion | check | check-type | keywords-mode | range-lower | range-text | rubric | judge
    key: str
    kind: str  # text outcome id int float bool choice yes-no tags words json json-value pattern model command function flags
    label: str = ""
    row: int | None = None  # the score-range row (bands sorted by lower bound) it edits
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None  # strictly greater than
    nonzero: bool = False
    required: bool = False
    default: Any = None  # a choice or bool equal to this removes the key
    live: bool = True  # apply while typing (False: on enter / leaving the field)

    @property
    def of_criterion(self) -> bool:
        """Whether the field edits the selected criterion (else the rubric itself)."""
        return self.scope in CRITERION_SCOPES


def number_text(value: Any) -> str:
    """A number as the user would type it (``1.0`` stays ``1.0``, booleans in YAML's spelling)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return str(value)


def display_value(spec: FieldSpec, value: Any, *, blank: Any = None) -> Any:
    """How a document value shows in the control for ``spec`` (``blank``: what an empty choice shows)."""
    if spec.kind == "bool":
        return bool(spec.default) if value is None else bool(value)
    if spec.kind == "choice":
        return blank if value is None else str(value)
    if spec.kind == "yes-no":
        return blank if value is None else "true" if value is True else "false" if value is False else str(value)
    if value is None:
        return ""
    if spec.kind == "tags":
        return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    if spec.kind == "words":
        return "\n".join(str(v) for v in value) if isinstance(value, list) else str(value)
    if spec.kind == "json":
        return json.dumps(value, indent=2) if isinstance(value, dict | list) else str(value)
    if spec.kind == "json-value":
        return json.dumps(value, indent=2, ensure_ascii=False)
    if spec.kind == "command" and isinstance(value, list):
        return shlex.join(str(v) for v in value)
    if spec.kind in ("int", "float"):
        return number_text(value)
    return str(value)


# -- reading what the user typed -----------------------------------------------------------


def parse_field(spec: FieldSpec, raw: Any, *, current: Any = None, blank: Any = None) -> Any:
    """The value to write for ``raw`` (``None`` removes the key); ValueError says what is wrong.

    ``current`` is the document's value now: a command stored as a list stays a list, and
    a default picked for a key the file does not have does not add it. ``blank`` is what
    a choice control holds when nothing is picked.
    """
    if spec.kind == "bool":
        value = bool(raw)
        return None if spec.default is not None and value == spec.default and current is None else value
    if spec.kind == "choice":
        if raw is blank or raw is None or raw == "":
            return None
        return None if spec.default is not None and raw == spec.default and current is None else raw
    if spec.kind == "yes-no":
        return None if raw is blank or raw is None or raw == "" else raw == "true"
    text = raw if isinstance(raw, str) else str(raw)
    stripped = text.strip()
    if not stripped:
        if spec.required:
            raise ValueError(_empty_message(spec))
        return None
    parser = _PARSERS.get(spec.kind)
    return stripped if parser is None else parser(spec, text, current)


def _empty_message(spec: FieldSpec) -> str:
    if spec.key == "outcome":
        return "the outcome is empty; write what a good output does"
    return f"{spec.label or spec.key} is required"


def _bounded(spec: FieldSpec, number: float) -> float:
    if spec.nonzero and number == 0:
        raise ValueError("weight 0 has no effect; use a positive weight, or a negative one for a penalty")
    if spec.minimum is not None and number < spec.minimum:
        raise ValueError(f"must be at least {number_text(spec.minimum)}")
    if spec.maximum is not None and number > spec.maximum:
        raise ValueError(f"must be at most {number_text(spec.maximum)}")
    if spec.above is not None and number <= spec.above:
        raise ValueError(f"must be more than {number_text(spec.above)}")
    return number


def _parse_int(spec: FieldSpec, text: str, current: Any) -> int | float:
    stripped = text.strip()
    if not re.fullmatch(r"[-+]?\d+", stripped):
        raise ValueError(f"expected a whole number, got {stripped!r}")
    return _bounded(spec, int(stripped))


def _parse_float(spec: FieldSpec, text: str, current: Any) -> int | float:
    stripped = text.strip()
    try:
        number: float = float(stripped)
    except ValueError:
        raise ValueError(f"expected a number, got {stripped!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"expected a finite number, got {stripped!r}")
    if re.fullmatch(r"[-+]?\d+", stripped):
        number = int(stripped)
    return _bounded(spec, number)


def _parse_id(spec: FieldSpec, text: str, current: Any) -> str:
    stripped = text.strip()
    if not re.fullmatch(ID_PATTERN, stripped):
        raise ValueError("ids are letters, digits and . _ : - (starting with a letter or digit)")
    return stripped


def _parse_tags(spec: FieldSpec, text: str, current: Any) -> list[str]:
    return [part.strip() for part in text.strip().split(",") if part.strip()]


def _parse_words(spec: FieldSpec, text: str, current: Any) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _parse_json(spec: FieldSpec, text: str, current: Any) -> dict[str, Any]:
    try:
        value = json.loads(text.strip())
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(value, dict):
        raise ValueError("a JSON Schema is an object ({...})")
    return value


def _parse_json_value(spec: FieldSpec, text: str, current: Any) -> Any:
    try:
        return json.loads(text.strip())
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None


def _parse_pattern(spec: FieldSpec, text: str, current: Any) -> str:
    import regex  # the checks' own regex engine; imported when a pattern is first typed

    try:
        regex.compile(text, regex.VERSION0)
    except regex.error as exc:
        raise ValueError(f"pattern does not compile: {exc}") from None
    return text


def _parse_model(spec: FieldSpec, text: str, current: Any) -> str:
    stripped = text.strip()
    provider, sep, name = stripped.partition(":")
    if not sep or not provider or not name:
        raise ValueError('expected "provider:model", e.g. openai:gpt-4o-mini')
    return stripped


def _parse_function(spec: FieldSpec, text: str, current: Any) -> str:
    stripped = text.strip()
    if not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", stripped):
        raise ValueError('expected "module:function"')
    return stripped


def _parse_command(spec: FieldSpec, text: str, current: Any) -> str | list[str]:
    stripped = text.strip()
    if not isinstance(current, list):
        return stripped  # a command written as one string stays one string
    try:
        return shlex.split(stripped)
    except ValueError as exc:
        raise ValueError(f"cannot split the command: {exc}") from None


def _parse_flags(spec: FieldSpec, text: str, current: Any) -> str:
    stripped = text.strip()
    unknown = sorted(set(stripped) - set("imsx"))
    if unknown:
        raise ValueError(f"unknown flag(s) {''.join(unknown)!r}; use letters from 'imsx'")
    return stripped


_PARSERS: dict[str, Callable[[FieldSpec, str, Any], Any]] = {
    "int": _parse_int,
    "float": _parse_float,
    "id": _parse_id,
    "tags": _parse_tags,
    "words": _parse_words,
    "json": _parse_json,
    "json-value": _parse_json_value,
    "pattern": _parse_pattern,
    "model": _parse_model,
    "function": _parse_function,
    "command": _parse_command,
    "flags": _parse_flags,
}
