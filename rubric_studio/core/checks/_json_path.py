"""The ``json_path`` check: one value of a JSON output, found by a JSON Pointer (RFC 6901), is
asserted to equal a value, to exist (or not), to match a regex, or to be of a JSON type::

    check: {type: json_path, pointer: /answer/status, equals: done}

The output is read as the ``json`` check reads it (bare, or alone in a ``` code fence, bounded in
nesting and number size); output that is not JSON is unmet, saying why. ``matches`` runs on the
``regex`` engine with the check's timeout, like a ``regex`` check, except that ``$`` is the very end
of the string, as in the JavaScript the exports run (:func:`javascript_end`). promptfoo and AgentV get a
``javascript`` assertion computing the same verdict; the other formats warn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import regex
from pydantic import Field, field_validator, model_validator

from rubric_studio.core.checks._checks import json_value
from rubric_studio.core.checks._definition import CheckType, EditorField
from rubric_studio.core.checks._eval import CheckTimeout, Evaluator, TextView
from rubric_studio.core.checks._jsonschema import MAX_PATTERN_CHARS, MAX_SCHEMA_DEPTH
from rubric_studio.core.checks._spec import CheckModel
from rubric_studio.core.results import Evidence
from rubric_studio.core.values import ValueProblem, check_plain_value

__all__ = ["JSON_PATH", "JsonPathCheck", "pointer_tokens"]

JSON_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")
_ASSERTIONS = ("equals", "exists", "matches", "value_type")
_INDEX = regex.compile(r"0|[1-9][0-9]*")


def pointer_tokens(pointer: str) -> list[str]:
    """The reference tokens of an RFC 6901 pointer (``~1`` is ``/``, ``~0`` is ``~``); ValueError if malformed."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"pointer {pointer!r} must start with '/' (RFC 6901), e.g. '/{pointer}'")
    bad = regex.search(r"~(?![01])", pointer)
    if bad:
        raise ValueError(f"pointer has a '~' not followed by 0 or 1 at character {bad.start() + 1}; "
                         "write ~0 for '~' and ~1 for '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


class JsonPathCheck(CheckModel):
    """A JSON Pointer into the output and one assertion on what it points at."""

    type: Literal["json_path"]
    pointer: str = Field(max_length=2_000)
    equals: Any = None
    exists: bool | None = None
    matches: str | None = Field(default=None, max_length=MAX_PATTERN_CHARS)
    value_type: Literal["string", "number", "integer", "boolean", "array", "object", "null"] | None = None

    @field_validator("pointer")
    @classmethod
    def _pointer(cls, value: str) -> str:
        pointer_tokens(value)
        return value

    @field_validator("matches")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                regex.compile(value, regex.VERSION0)
            except (regex.error, RecursionError, OverflowError) as exc:
                raise ValueError(f"pattern does not compile: {exc}") from None
        return value

    @model_validator(mode="after")
    def _one_assertion(self) -> JsonPathCheck:
        if "equals" in self.model_fields_set and self.equals is None:
            raise ValueError("equals: null is not compared; to require null write value_type: null")
        given = [name for name in _ASSERTIONS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("a json_path check needs exactly one of equals, exists, matches, value_type"
                             + (f" (got {', '.join(given)})" if given else ""))
        if self.equals is not None:
            try:
                check_plain_value(self.equals, max_depth=MAX_SCHEMA_DEPTH, json_only=True)
            except ValueProblem as exc:
                raise ValueError(f"equals: {exc}") from None
        return self


def _resolve(document: Any, tokens: list[str]) -> tuple[bool, Any, str]:
    """(found, value, why not found)."""
    node = document
    for depth, token in enumerate(tokens):
        where = "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in tokens[:depth]) if depth else "the root"
        if isinstance(node, list):
            if not _INDEX.fullmatch(token) or int(token) >= len(node):
                return False, None, f"{where} is an array of {len(node)} with no item {token!r}"
            node = node[int(token)]
        elif isinstance(node, dict):
            if token not in node:
                return False, None, f"{where} has no key {token!r}"
            node = node[token]
        else:
            return False, None, f"{where} is {_kind(node)}, not an object or array"
    return True, node, ""


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or isinstance(value, float) and value.is_integer():
        return "integer"
    if isinstance(value, float):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _is(value: Any, json_type: str) -> bool:
    kind = _kind(value)
    return kind == json_type or json_type == "number" and kind == "integer"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``, lists in order, objects by key."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def javascript_end(pattern: str) -> str:
    r"""``pattern`` with each ``$`` anchor (outside a character class, not escaped) as ``\Z``: the
    very end of the string, as ``$`` means in the JavaScript ``RegExp`` the exports run (Python's
    ``$`` also matches before a final newline, so ``^[A-Z]+$`` would accept ``"AB\n"`` here and
    reject it in promptfoo and AgentV). A pattern that turns on multi-line mode itself is kept."""
    if regex.search(r"\(\?[a-zA-Z]*m", pattern):
        return pattern
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
            # a "]" first in a class (or after "^") is literal, not its end
            end = i + 1 + (pattern.startswith("^", i + 1))
            if pattern.startswith("]", end):
                out.append(pattern[i:end + 1])
                i = end + 1
                continue
        elif char == "]" and in_class:
            in_class = False
        out.append("\\Z" if char == "$" and not in_class else char)
        i += 1
    return "".join(out)


def _judge(spec: JsonPathCheck, found: bool, value: Any, missing: str) -> tuple[bool, str]:
    """(met, reason) for the value the pointer found (or did not)."""
    at = spec.pointer or "the root"
    if spec.exists is not None:
        if found:
            return spec.exists, f"{at} exists"
        return not spec.exists, f"no value at {at}: {missing}"
    if not found:
        return False, f"no value at {at}: {missing}"
    if spec.value_type is not None:
        ok = _is(value, spec.value_type)
        return ok, f"{at} is {_kind(value)}" + ("" if ok else f", not {spec.value_type}")
    if spec.matches is not None:
        if not isinstance(value, str):
            return False, f"{at} is {_kind(value)}, not a string to match /{spec.matches}/"
        try:
            match = regex.compile(javascript_end(spec.matches), regex.VERSION0).search(value, timeout=spec.timeout)
        except TimeoutError:
            raise CheckTimeout(f"pattern took longer than {spec.timeout:g}s on this sample") from None
        return (match is not None), f"{at} {'matches' if match else 'does not match'} /{spec.matches}/"
    ok = _same(value, spec.equals)
    return ok, f"{at} is {_shown(value)}" + ("" if ok else f", not {_shown(spec.equals)}")


def json_path_evaluator(spec: JsonPathCheck, base_dir: Path | None = None) -> Evaluator:
    tokens = pointer_tokens(spec.pointer)

    def evaluate(view: TextView) -> tuple[float, str, list[Evidence]]:
        document, not_json = json_value(view.text)
        if not_json is not None:
            return 0.0, not_json, []
        met, why = _judge(spec, *_resolve(document, tokens))
        return (1.0 if met else 0.0), why, []

    return evaluate


_JS = r"""const spec = %s;
const fenced = /^\s*```[A-Za-z0-9_-]*\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
let node, parsed = true;
try { node = JSON.parse(fenced ? fenced[1] : text); } catch (e) { parsed = false; }
const tokens = spec.pointer === '' ? [] : spec.pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
let found = parsed;
for (const t of tokens) {
  if (!found) break;
  if (Array.isArray(node)) { found = /^(0|[1-9][0-9]*)$/.test(t) && Number(t) < node.length; if (found) node = node[Number(t)]; }
  else if (node !== null && typeof node === 'object') { found = Object.prototype.hasOwnProperty.call(node, t); if (found) node = node[t]; }
  else found = false;
}
const kind = (v) => v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
const same = (a, b) => {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
  }
  return a === b;
};
let ok = false;
if (!parsed) ok = false;
else if ('exists' in spec) ok = found === spec.exists;
else if (!found) ok = false;
else if ('value_type' in spec) ok = kind(node) === spec.value_type || (spec.value_type === 'number' && kind(node) === 'integer');
else if ('matches' in spec) ok = typeof node === 'string' && new RegExp(%s).test(node);
else ok = same(node, spec.equals);
const score = ok ? 1 : 0;
const reason = !parsed ? 'not valid JSON' : (ok ? 'met: ' : 'unmet: ') + (spec.pointer || 'the root');"""


def _export(out: Any, spec: JsonPathCheck) -> list[dict[str, Any]]:
    """promptfoo / AgentV: a ``javascript`` assertion with the same verdict."""
    params = spec.model_dump(mode="json", exclude={"type", "timeout"}, exclude_none=True)
    pattern = json.dumps(out.js_regex(spec.matches) if spec.matches is not None else "", ensure_ascii=False)
    return out.javascript(_JS % (json.dumps(params, ensure_ascii=False), pattern))


JSON_PATH = CheckType(
    "json_path", JsonPathCheck, json_path_evaluator, hint="a JSON Pointer into JSON output, and one assertion",
    fields=(EditorField("pointer", "text", "pointer", "RFC 6901, e.g. /answer/status; empty: all"),
            EditorField("equals", "json-value", "equals", "any JSON value"),
            EditorField("exists", "yes-no", "exists", "true: present; false: absent"),
            EditorField("matches", "pattern", "matches", "regex searched in a string value; $ is its very end"),
            EditorField("value_type", "choice", "value type", "the JSON type", choices=JSON_TYPES)),
    exports={"promptfoo": _export, "agentv": _export}, defaults={"pointer": "", "exists": True}, binary=True,
)
