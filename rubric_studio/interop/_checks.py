"""Deterministic checks ↔ promptfoo-style assertions (promptfoo and AgentV share them).

Export keeps the *score* of a check, not just its pass/fail: a keywords check
scores the fraction of words (1 − fraction present for ``forbidden``), so it
becomes one ``icontains`` / ``not-icontains`` per word with weight w/n each —
their weighted sum is exactly w × our score. Checks without a native assertion
(length, keywords with whole words, penalty checks, a regex whose JavaScript form needs
a flag promptfoo's ``regex`` lacks or would not import back as written) become a
``javascript`` assertion that computes our formula and starts with a
``// rubric-studio: {...}`` marker so that import restores the original check
(that JavaScript is written by :mod:`._checks_js`). Patterns are translated to
JavaScript's syntax and meaning by :mod:`._regex_js`; one JavaScript cannot express is
not exported, and the warning names the construct.
``python`` / ``command`` checks run the author's code with our calling
convention; they are never exported (a warning says so). Which exporter a check uses, or
why it has none, comes from its type's registered definition (:mod:`rubric_studio.core.checks`).

``dialect`` is ``"promptfoo"`` (negation by a ``not-`` type prefix, regex without
flags) or ``"agentv"`` (negation by ``negate: true``, ``regex`` with ``flags``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.checks import CannotExport, JsonCheck, KeywordsCheck, RegexCheck, definition_of
from rubric_studio.core.files import parse_user_json
from rubric_studio.core.problems import RubricError
from rubric_studio.core.rubric import Criterion
from rubric_studio.interop._checks_js import (
    MARKER,
    JsRegex,
    UntranslatableRegex,
    javascript_body,
    js_regex,
    keywords_js,
    length_js,
    python_regex,
    regex_js,
    to_javascript,
)
from rubric_studio.interop._common import Warnings, num

__all__ = ["MARKER", "CheckExport", "absorb_keywords", "export_check", "import_check", "joinable_keywords",
           "js_regex", "to_javascript"]


def _negated(kind: str, dialect: str, base: dict[str, Any]) -> dict[str, Any]:
    if dialect == "promptfoo":
        return {"type": f"not-{kind}", **base}
    return {"type": kind, **base, "negate": True}


def _javascript_assertion(criterion: Criterion, body: str) -> list[dict[str, Any]]:
    return [{"type": "javascript", "value": javascript_body(criterion, body, penalty=criterion.weight < 0),
             "weight": num(abs(criterion.weight))}]


def _keywords_assertions(criterion: Criterion, check: KeywordsCheck, dialect: str, target: str,
                         warn: Warnings) -> list[dict[str, Any]]:
    """One (i)contains per word, weight w/n each, when that scores and gates as the check does;
    otherwise a javascript assertion."""
    words = check.required if check.required is not None else check.forbidden or []
    exact_split = criterion.effective_min_score >= 1.0 or len(words) == 1
    if check.whole_words or criterion.weight < 0 or not exact_split:
        return _javascript_assertion(criterion, keywords_js(check))
    kind = "contains" if check.case_sensitive else "icontains"
    each = abs(criterion.weight) / len(words)
    out = []
    for word in words:
        base = {"value": word, "weight": num(each)}
        out.append({"type": kind, **base} if check.required is not None else _negated(kind, dialect, base))
    if len(words) > 1:
        verb = "contains" if check.required is not None else "does not contain"
        warn.criterion(criterion.key, f"keywords check scores the fraction of its {len(words)} words; exported as "
                                      f"one '{verb}' assertion per word with weight {num(each)} each, so the "
                                      f"weighted score is the same, but {target} shows each word as its own pass/fail")
    return out


def _reads_back(pattern: JsRegex, check: RegexCheck) -> bool:
    """Does a native ``regex`` assertion of ``pattern`` import as ``check`` (same pattern, same flags)?"""
    return python_regex(pattern.source, pattern.flags) == check.pattern and set(pattern.flags) == set(check.flags)


def _regex_assertions(criterion: Criterion, check: RegexCheck, out: CheckExport) -> list[dict[str, Any]]:
    """A native ``regex`` assertion when it takes the translated pattern's flags (promptfoo's takes none) and
    imports back as the same check - or when no javascript assertion can run (AgentV 4); else a javascript
    assertion, whose marker gives the check back. UntranslatableRegex: the pattern has no JavaScript form."""
    pattern = to_javascript(check.pattern, check.flags)
    native = (criterion.weight >= 0 and not (pattern.flags and out.dialect == "promptfoo")
              and (_reads_back(pattern, check) or not out.javascript_ok))
    if not native:
        return _javascript_assertion(criterion, regex_js(check, pattern))
    base: dict[str, Any] = {"value": pattern.source}
    if pattern.flags:
        base["flags"] = pattern.flags
    base["weight"] = out.weight
    return [{"type": "regex", **base}] if check.expect_match else [_negated("regex", out.dialect, base)]


def _json_assertions(criterion: Criterion, check: JsonCheck, dialect: str, target: str,
                     warn: Warnings) -> list[dict[str, Any]]:
    cid = criterion.key
    if criterion.weight < 0:
        warn.criterion(cid, f"a penalty json check has no {target} form; not exported")
        return []
    assertion: dict[str, Any] = {"type": "is-json"}
    if check.json_schema is not None:
        if dialect == "promptfoo":
            assertion["value"] = check.json_schema
        else:
            warn.criterion(cid, "AgentV's is-json does not validate a JSON Schema; the schema is not exported")
    assertion["weight"] = num(abs(criterion.weight))
    warn.criterion(cid, f"rubric-studio accepts JSON inside a ``` code fence; {target}'s is-json needs bare JSON")
    return [assertion]


@dataclass(frozen=True)
class CheckExport:
    """What a check type's exporter gets beside its spec: the criterion, the target, and the helpers
    an exporter needs (warnings naming the criterion, a ``javascript`` assertion that computes the
    score and restores the check on import, regex syntax in JavaScript's dialect)."""

    criterion: Criterion
    dialect: str  # "promptfoo" | "agentv"
    warn: Warnings
    #: Can the target run a ``javascript`` assertion (AgentV 4 cannot: a native form is preferred there)?
    javascript_ok: bool = True

    @property
    def target(self) -> str:
        return "promptfoo" if self.dialect == "promptfoo" else "AgentV"

    @property
    def weight(self) -> int | float:
        """The assertion weight (a penalty's weight is positive; the assertion is negated instead)."""
        return num(abs(self.criterion.weight))

    def warning(self, message: str) -> None:
        self.warn.criterion(self.criterion.key, message)

    def javascript(self, body: str) -> list[dict[str, Any]]:
        """A ``javascript`` assertion from ``body``, which sets ``score`` (0-1) and ``reason`` from ``text``."""
        return _javascript_assertion(self.criterion, body)

    def js_regex(self, pattern: str) -> str:
        """``pattern`` for a ``RegExp`` built without flags that reads ``$`` as the very end; raises
        UntranslatableRegex (the check is then not exported, and the warning says why)."""
        return js_regex(pattern, self.criterion.key, self.warn)


def length_export(out: CheckExport, check: Any) -> list[dict[str, Any]]:
    return out.javascript(length_js(check))


def keywords_export(out: CheckExport, check: KeywordsCheck) -> list[dict[str, Any]]:
    return _keywords_assertions(out.criterion, check, out.dialect, out.target, out.warn)


def regex_export(out: CheckExport, check: RegexCheck) -> list[dict[str, Any]]:
    return _regex_assertions(out.criterion, check, out)


def json_export(out: CheckExport, check: JsonCheck) -> list[dict[str, Any]]:
    return _json_assertions(out.criterion, check, out.dialect, out.target, out.warn)


def export_check(criterion: Criterion, dialect: str, warn: Warnings, *, javascript: bool = True) -> list[dict[str, Any]]:
    """Assertions for one check criterion, weights set; empty (with a warning) when not exportable.

    The check type's registered definition gives the exporter for ``dialect``, or the reason it
    has none (which becomes the warning); a pattern with no JavaScript form is warned the same way,
    naming the construct. Each assertion passes exactly when its part of the check is met, so a
    required criterion can gate with them (one per word when split). ``javascript``: whether the
    target runs ``javascript`` assertions.
    """
    check = criterion.check
    assert check is not None
    out = CheckExport(criterion, dialect, warn, javascript_ok=javascript)
    exporter = definition_of(check).exporter(dialect)
    if isinstance(exporter, CannotExport):
        out.warning(exporter.reason.format(type=check.type, target=out.target))
        return []
    try:
        return exporter(out, check)
    except UntranslatableRegex as exc:
        gate = "; it was required, so samples that fail it can pass there" if criterion.required else ""
        out.warning(f"the {check.type} check's pattern cannot run in {out.target}: {exc}; not exported{gate}")
        return []


# -- import ----------------------------------------------------------------------
def _escape_literal(text: str) -> str:
    return re.escape(text)


def _keyword_list(kind: str, negated: bool, value: list[Any], where: str,
                  warn: Warnings) -> tuple[dict[str, Any], float | None, bool] | None:
    """``contains-all`` / ``contains-any`` (and their ``i`` and ``not-`` forms) as a keywords check."""
    words = [str(v) for v in value]
    if not words:
        warn.skip(f"{kind} without words", f"{where}: {kind} with an empty list skipped")
        return None
    case = {"case_sensitive": True} if not kind.startswith("i") else {}
    any_of = kind.endswith("any")
    if negated:
        if not any_of:
            warn.skip(f"not-{kind} (no keywords form)",
                      f"{where}: not-{kind} (fails only when every word is present) has no keywords form; skipped")
            return None
        spec = {"type": "keywords", "forbidden": words, **case}
        warn.add(f"{where}: not-{kind} imported as a forbidden-keywords check; rubric-studio scores "
                 "1 - fraction present instead of 0/1")
        return spec, None, False
    spec = {"type": "keywords", "required": words, **case}
    if any_of:
        warn.add(f"{where}: {kind} imported as a required-keywords check met when at least one word "
                 "is present (min_score 1/n); its score is the fraction present, not 0/1")
        return spec, round(1 / len(words), 6), False
    if len(words) > 1:
        warn.add(f"{where}: {kind} imported as a required-keywords check; rubric-studio scores the "
                 "fraction present (met only when all are present)")
    return spec, None, False


def _marker_check(value: str, where: str, warn: Warnings) -> tuple[dict[str, Any], float | None, bool] | None:
    """The check a javascript assertion written by :func:`export_check` restores (its marker line)."""
    first = value.lstrip().split("\n", 1)[0]
    try:
        marker = parse_user_json(first[len(MARKER):], where)
        return dict(marker["check"]), marker.get("min_score"), bool(marker.get("penalty"))
    except (RubricError, ValueError, KeyError, TypeError):
        warn.skip("unreadable rubric-studio markers",
                  f"{where}: unreadable rubric-studio marker in a javascript assertion; skipped")
        return None


def _pattern_check(kind: str, negated: bool, text: str, flags: Any, where: str,
                   warn: Warnings) -> tuple[dict[str, Any], float | None, bool] | None:
    """``regex`` / ``equals`` / ``starts-with`` as a regex check (None, warned, when we cannot compile it)."""
    if kind == "regex":
        pattern = python_regex(text, flags if isinstance(flags, str) else "")
    elif kind == "equals":
        pattern = "^" + _escape_literal(text) + r"\Z"
    else:
        pattern = "^" + _escape_literal(text)
    our_flags = ""
    if isinstance(flags, str):
        our_flags = "".join(f for f in flags if f in "ims")
        dropped = "".join(f for f in flags if f not in "ims")
        if dropped:
            warn.add(f"{where}: regex flags {dropped!r} have no rubric-studio equivalent; dropped")
    spec = {"type": "regex", "pattern": pattern, **({"flags": our_flags} if our_flags else {})}
    if negated:
        spec["expect_match"] = False
    try:
        RegexCheck.model_validate(spec)
    except ValueError as exc:
        warn.skip(f"{kind} patterns rubric-studio cannot compile",
                  f"{where}: {kind} pattern is not valid for rubric-studio ({exc.__class__.__name__}); skipped")
        return None
    return spec, None, False


def import_check(kind: str, negated: bool, value: Any, flags: Any, where: str,
                 warn: Warnings) -> tuple[dict[str, Any], float | None, bool] | None:
    """One foreign assertion → ``(check spec, min_score or None, is a penalty)``; None (with a warning) if it
    has no check form. Only assertions this package wrote can be penalties (their marker says so)."""
    if kind == "javascript" and isinstance(value, str) and value.lstrip().startswith(MARKER):
        return _marker_check(value, where, warn)
    if kind in ("contains", "icontains") and isinstance(value, str | int | float):
        words = [str(value)]
        spec = {"type": "keywords", ("forbidden" if negated else "required"): words}
        if kind == "contains":
            spec["case_sensitive"] = True
        return spec, None, False
    if kind in ("contains-all", "icontains-all", "contains-any", "icontains-any") and isinstance(value, list):
        return _keyword_list(kind, negated, value, where, warn)
    if kind in ("regex", "equals", "starts-with") and isinstance(value, str | int | float):
        return _pattern_check(kind, negated, str(value), flags, where, warn)
    if kind == "is-json" and not negated:
        spec = {"type": "json"}
        if isinstance(value, dict):
            spec["schema"] = value
        elif value is not None:
            warn.add(f"{where}: is-json schema given as {type(value).__name__} (e.g. a file:// path) was not imported")
        return spec, None, False
    if kind in ("javascript", "python", "script", "webhook", "ruby"):
        warn.skip(f"{kind} (code is not run from an imported file)",
                  f"{where}: {kind} assertion runs code rubric-studio will not run from an imported file; "
                  "skipped - recreate it as a check (python/command) if you trust it")
        return None
    label = f"not-{kind}" if negated else kind
    warn.skip(f"{label} (no rubric-studio equivalent)",
              f"{where}: assertion type {label!r} has no rubric-studio equivalent; skipped")
    return None


def joinable_keywords(into: dict[str, Any], criterion: dict[str, Any]) -> bool:
    """Can one-word keyword criterion ``criterion`` join keyword criterion ``into`` without changing a verdict?

    Exports split a keywords check into one assertion per word (equal weights, all met
    only when every word is); joining them back gives the same scores and the same
    pass/fail. That holds only for plain one-word parts: same direction (required or
    forbidden), same case rule, no min_score of their own (``icontains-any`` passes on
    one word of several, which a joined check cannot say). The caller compares weights.
    """
    a, b = into.get("check"), criterion.get("check")
    if not a or not b or a.get("type") != "keywords" or b.get("type") != "keywords":
        return False
    if into.get("min_score") is not None or criterion.get("min_score") is not None:
        return False
    key = "required" if "required" in b else "forbidden"
    words = b.get(key)
    return (key in a and isinstance(words, list) and len(words) == 1
            and bool(a.get("case_sensitive")) == bool(b.get("case_sensitive"))
            and not a.get("whole_words") and not b.get("whole_words"))


def absorb_keywords(into: dict[str, Any], spec: dict[str, Any]) -> None:
    """Append keyword check ``spec``'s words to ``into`` (after :func:`joinable_keywords` said yes)."""
    key = "required" if "required" in spec else "forbidden"
    into[key] = [*into[key], *spec[key]]
