"""JSON Schema validation for ``json`` checks, bounded in time, size and reach.

``jsonschema`` runs ``pattern`` / ``patternProperties`` (and the pattern part of
``additionalProperties``) with Python's ``re``, which holds the interpreter lock while it
backtracks: a catastrophic pattern would freeze the whole studio. Here those keywords
run on the ``regex`` engine with a deadline shared by the whole validation of one
sample, like ``regex`` checks. Schemas are also limited in nesting and size, must be
plain JSON, and may not reach outside themselves: a ``$ref`` to a URL or a file is never
fetched (it fails to resolve instead).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

import regex

from rubric_studio.core.values import ValueProblem, check_plain_value

#: Deepest nesting of lists/mappings in a schema.
MAX_SCHEMA_DEPTH = 64
#: Most lists, mappings and values in a schema.
MAX_SCHEMA_NODES = 20_000
#: Longest ``pattern`` (in characters).
MAX_PATTERN_CHARS = 2_000

_DEADLINE: ContextVar[float | None] = ContextVar("schema_deadline", default=None)


class SchemaTimeout(Exception):
    """A schema pattern ran past the validation's deadline."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        super().__init__(pattern)


def _schema_nodes(schema: Any) -> Iterator[Any]:
    stack = [schema]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _patterns_of(node: dict[str, Any]) -> list[str]:
    found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
    if isinstance(node.get("patternProperties"), dict):
        found.extend(node["patternProperties"])
    return found


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> regex.Pattern:
    return regex.compile(pattern, regex.VERSION0)


def _pattern_problem(pattern: str) -> str | None:
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"schema pattern is longer than {MAX_PATTERN_CHARS:,} characters"
    try:
        _compiled(pattern)
    except (regex.error, RecursionError, OverflowError) as exc:
        return f"schema pattern {pattern[:80]!r} does not compile: {exc}"
    return None


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be used by a json check (before jsonschema sees it), or None."""
    try:
        check_plain_value(schema, max_depth=MAX_SCHEMA_DEPTH, json_only=True)
    except ValueProblem as exc:
        return f"schema: {exc}"
    keywords: set[str] = set()
    for count, node in enumerate(_schema_nodes(schema), start=1):
        if count > MAX_SCHEMA_NODES:
            return f"schema has more than {MAX_SCHEMA_NODES:,} values; too large to check"
        if isinstance(node, dict):
            keywords.update(node)
            for pattern in _patterns_of(node):
                problem = _pattern_problem(pattern)
                if problem:
                    return problem
    if {"unevaluatedProperties", "patternProperties"} <= keywords:
        return ("schema uses 'unevaluatedProperties' together with 'patternProperties'; json checks do not "
                "support that combination (its patterns cannot be bounded in time)")
    return None


def _search(pattern: str, text: str) -> bool:
    """``pattern`` searched in ``text`` on the regex engine, within the current deadline."""
    deadline = _DEADLINE.get()
    remaining = 2.0 if deadline is None else max(deadline - time.monotonic(), 0.001)
    try:
        return _compiled(pattern).search(text, timeout=remaining) is not None
    except TimeoutError:
        raise SchemaTimeout(pattern) from None


def _pattern(validator, pattern, instance, schema):
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator, pattern_properties, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator, additional, instance, schema):
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [k for k in instance if k not in known and not any(_search(p, k) for p in patterns)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        names = ", ".join(repr(each) for each in sorted(extras))
        if patterns:
            yield ValidationError(f"{names} {'does' if len(extras) == 1 else 'do'} not match any of the regexes: "
                                  + ", ".join(repr(p) for p in sorted(patterns)))
        else:
            yield ValidationError(f"Additional properties are not allowed ({names} {'was' if len(extras) == 1 else 'were'} unexpected)")


_BOUNDED_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


@lru_cache(maxsize=16)
def _bounded_class(base: type) -> type:
    import jsonschema

    overrides = {k: v for k, v in _BOUNDED_KEYWORDS.items() if k in base.VALIDATORS}
    return jsonschema.validators.extend(base, overrides)


def bounded_validator(schema: dict[str, Any]) -> Any:
    """A jsonschema validator for ``schema`` whose patterns run bounded and whose ``$ref``s stay local."""
    import jsonschema
    import referencing

    return _bounded_class(jsonschema.validators.validator_for(schema))(schema, registry=referencing.Registry())


def validation_errors(validator: Any, instance: Any, seconds: float) -> list[Any]:
    """Every error of ``instance``; SchemaTimeout once ``seconds`` have passed (checked between errors too)."""
    deadline = time.monotonic() + seconds
    token = _DEADLINE.set(deadline)
    errors: list[Any] = []
    try:
        for error in validator.iter_errors(instance):
            errors.append(error)
            if time.monotonic() > deadline:
                raise SchemaTimeout("")
    finally:
        _DEADLINE.reset(token)
    return errors


def describe_failure(exc: Exception) -> str:
    """Why a schema could not be applied to a sample, in the user's terms."""
    from referencing.exceptions import Unresolvable

    if isinstance(exc, Unresolvable):
        return f"schema $ref {getattr(exc, 'ref', '')!r} cannot be resolved (only references inside the schema are followed)"
    return f"schema could not be applied: {type(exc).__name__}: {exc}"
