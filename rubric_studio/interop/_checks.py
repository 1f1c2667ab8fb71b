"""Deterministic checks ↔ promptfoo-style assertions (promptfoo and AgentV share them).

Export keeps the *score* of a check, not just its pass/fail: a keywords check
scores the fraction of words (1 − fraction present for ``forbidden``), so it
becomes one ``icontains`` / ``not-icontains`` per word with weight w/n each —
their weighted sum is exactly w × our score. Checks without a native assertion
(length, keywords with whole words, regex flags promptfoo lacks, penalty checks)
become a ``javascript`` assertion that computes our formula and starts with a
``// rubric-studio: {...}`` marker so that import restores the original check.
``python`` / ``command`` checks run the author's code with our calling
convention; they are never exported (a warning says so).

``dialect`` is ``"promptfoo"`` (negation by a ``not-`` type prefix, regex without
flags) or ``"agentv"`` (negation by ``negate: true``, ``regex`` with ``flags``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from rubric_studio.core.checkspec import KeywordsCheck, LengthCheck, RegexCheck
from rubric_studio.core.files import parse_user_json
from rubric_studio.core.problems import RubricError
from rubric_studio.core.rubric import Criterion
from rubric_studio.interop._common import Warnings, num

MARKER = "// rubric-studio: "
#: Python anchors with an exact JavaScript equivalent (lookarounds that hold only at the very
#: start / end of the text, whatever the flags).
_ANCHORS = {"A": "(?<![\\s\\S])", "Z": "(?![\\s\\S])"}
_PY_ONLY = {
    "(?#": "(?#...) comments",
    "(?>": "atomic groups",
    "*+": "possessive quantifiers",
    "++": "possessive quantifiers",
}
_INLINE_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


def _translate_anchors(pattern: str) -> str:
    r"""``\A`` / ``\Z`` outside character classes as JavaScript lookarounds; an escaped backslash
    (``\\A``, a literal backslash then A) is left alone."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            pair = pattern[i:i + 2]
            out.append(_ANCHORS.get(pair[1], pair) if not in_class else pair)
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
            # A "]" first in a Python class is literal; in JavaScript "[]" is an empty class.
            opener = "[^]" if pattern.startswith("[^]", i) else "[]" if pattern.startswith("[]", i) else "["
            out.append(opener[:-1] + "\\]" if opener.endswith("]") else opener)
            i += len(opener)
            continue
        elif char == "]" and in_class:
            in_class = False
        out.append(char)
        i += 1
    return "".join(out)


def js_regex(pattern: str, criterion_id: str, warn: Warnings) -> str:
    """Our (Python ``regex``) pattern in JavaScript syntax, warning about what differs."""
    converted = _translate_anchors(pattern)
    converted = re.sub(r"\(\?P<([A-Za-z_]\w*)>", r"(?<\1>", converted)
    converted = re.sub(r"\(\?P=([A-Za-z_]\w*)\)", r"\\k<\1>", converted)
    found = sorted({label for token, label in _PY_ONLY.items() if token in converted})
    if _INLINE_FLAGS.search(converted):
        found.append("inline flags such as (?i)")
    if found:
        warn.criterion(criterion_id, f"regex uses Python syntax JavaScript lacks ({', '.join(found)}); "
                                     "check that the exported pattern still matches what you expect")
    return converted


def _negated(kind: str, dialect: str, base: dict[str, Any]) -> dict[str, Any]:
    if dialect == "promptfoo":
        return {"type": f"not-{kind}", **base}
    return {"type": kind, **base, "negate": True}


def _javascript(criterion: Criterion, body: str, *, penalty: bool) -> str:
    """A JS assertion body returning {pass, score, reason}, led by a restorable marker."""
    assert criterion.check is not None
    spec = criterion.check.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    spec["type"] = criterion.check.type
    marker: dict[str, Any] = {"check": spec}
    if criterion.min_score is not None:
        marker["min_score"] = num(criterion.min_score)
    if penalty:
        marker["penalty"] = True
    lines = [MARKER + json.dumps(marker, ensure_ascii=False), "const text = String(output);", body]
    min_score = criterion.effective_min_score
    if penalty:
        lines.append("// penalty: the assertion scores how far the check is NOT met")
        lines.append(f"return {{ pass: !(score >= {min_score} - 1e-9), score: 1 - score, reason }};")
    else:
        lines.append(f"return {{ pass: score >= {min_score} - 1e-9, score, reason }};")
    return "\n".join(lines)


def _length_js(spec: LengthCheck) -> str:
    def lit(value: int | None) -> str:
        return "null" if value is None else str(value)

    lines = [
        "const fall = (v, lo, hi) => {",
        "  if (hi !== null && v > hi) return Math.max(0, 1 - (v - hi) / (0.5 * hi));",
        "  if (lo !== null && v < lo) return lo > 0 ? Math.max(0, 1 - (lo - v) / (0.5 * lo)) : 1;",
        "  return 1;",
        "};",
        "let score = 1;",
        "const parts = [];",
    ]
    if spec.min_chars is not None or spec.max_chars is not None:
        lines += ["const chars = [...text].length;",
                  f"score = Math.min(score, fall(chars, {lit(spec.min_chars)}, {lit(spec.max_chars)}));",
                  "parts.push(`${chars} chars`);"]
    if spec.min_words is not None or spec.max_words is not None:
        lines += ["const words = text.split(/\\s+/).filter(Boolean).length;",
                  f"score = Math.min(score, fall(words, {lit(spec.min_words)}, {lit(spec.max_words)}));",
                  "parts.push(`${words} words`);"]
    lines.append("const reason = parts.join('; ');")
    return "\n".join(lines)


def _keywords_js(spec: KeywordsCheck) -> str:
    words = spec.required if spec.required is not None else spec.forbidden or []
    flags = "u" if spec.case_sensitive else "iu"
    if spec.whole_words:
        test = (r"const esc = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');" + "\n"
                + r"const found = words.filter((w) => new RegExp('(?<![\\p{L}\\p{N}_])' + esc(w) + "
                + r"'(?![\\p{L}\\p{N}_])', '" + flags + "').test(text));")
    elif spec.case_sensitive:
        test = "const found = words.filter((w) => text.includes(w));"
    else:
        test = "const found = words.filter((w) => text.toLowerCase().includes(w.toLowerCase()));"
    fraction = "found.length / words.length"
    score = fraction if spec.required is not None else f"1 - {fraction}"
    return "\n".join([
        f"const words = {json.dumps(words, ensure_ascii=False)};",
        test,
        f"const score = {score};",
        "const reason = `${found.length}/${words.length} " + ("required" if spec.required is not None else "forbidden")
        + " keywords present`;",
    ])


def _regex_js(spec: RegexCheck, pattern: str) -> str:
    flags = "".join(f for f in spec.flags if f in "ims")
    return "\n".join([
        f"const matched = new RegExp({json.dumps(pattern, ensure_ascii=False)}, {json.dumps(flags)}).test(text);",
        f"const score = matched === {'true' if spec.expect_match else 'false'} ? 1 : 0;",
        "const reason = matched ? 'pattern matched' : 'no match';",
    ])


def export_check(criterion: Criterion, dialect: str, warn: Warnings) -> list[dict[str, Any]]:
    """Assertions for one check criterion, weights set; empty (with a warning) when not exportable.

    Each assertion passes exactly when its part of the check is met, so a
    required criterion can gate with them (one per word when split).
    """
    check = criterion.check
    assert check is not None
    cid = criterion.key
    weight = abs(criterion.weight)
    penalty = criterion.weight < 0
    min_score = criterion.effective_min_score
    target = "promptfoo" if dialect == "promptfoo" else "AgentV"

    def js(body: str) -> list[dict[str, Any]]:
        return [{"type": "javascript", "value": _javascript(criterion, body, penalty=penalty), "weight": num(weight)}]

    if check.type in ("python", "command"):
        warn.criterion(cid, f"{check.type} check runs your own code with rubric-studio's calling convention; "
                            f"not exported to {target} - add an equivalent {target} assertion by hand")
        return []
    if check.type == "length":
        return js(_length_js(check))
    if check.type == "keywords":
        words = check.required if check.required is not None else check.forbidden or []
        exact_split = min_score >= 1.0 or len(words) == 1
        if check.whole_words or penalty or not exact_split:
            return js(_keywords_js(check))
        kind = "contains" if check.case_sensitive else "icontains"
        each = weight / len(words)
        out = []
        for word in words:
            base = {"value": word, "weight": num(each)}
            out.append({"type": kind, **base} if check.required is not None else _negated(kind, dialect, base))
        if len(words) > 1:
            verb = "contains" if check.required is not None else "does not contain"
            warn.criterion(cid, f"keywords check scores the fraction of its {len(words)} words; exported as one "
                                f"'{verb}' assertion per word with weight {num(each)} each, so the weighted score "
                                f"is the same, but {target} shows each word as its own pass/fail")
        return out
    if check.type == "regex":
        if "x" in check.flags:
            warn.criterion(cid, "regex with the x (verbose) flag has no JavaScript equivalent; not exported")
            return []
        pattern = js_regex(check.pattern, cid, warn)
        flags = "".join(f for f in check.flags if f in "ims")
        if penalty or (flags and dialect == "promptfoo"):
            return js(_regex_js(check, pattern))
        base: dict[str, Any] = {"value": pattern}
        if flags:
            base["flags"] = flags
        base["weight"] = num(weight)
        return [{"type": "regex", **base}] if check.expect_match else [_negated("regex", dialect, base)]
    if check.type == "json":
        if penalty:
            warn.criterion(cid, f"a penalty json check has no {target} form; not exported")
            return []
        assertion: dict[str, Any] = {"type": "is-json"}
        if check.json_schema is not None:
            if dialect == "promptfoo":
                assertion["value"] = check.json_schema
            else:
                warn.criterion(cid, "AgentV's is-json does not validate a JSON Schema; the schema is not exported")
        assertion["weight"] = num(weight)
        warn.criterion(cid, f"rubric-studio accepts JSON inside a ``` code fence; {target}'s is-json needs bare JSON")
        return [assertion]
    return []  # pragma: no cover - every check type is handled above


# -- import ----------------------------------------------------------------------
def _escape_literal(text: str) -> str:
    return re.escape(text)


def _py_regex(pattern: str) -> str:
    """A JavaScript pattern in Python syntax (named groups; the exported text anchors back to
    ``\\A`` / ``\\Z``)."""
    for letter, lookaround in _ANCHORS.items():
        pattern = pattern.replace(lookaround, "\\" + letter)
    pattern = re.sub(r"\(\?<([A-Za-z_]\w*)>", r"(?P<\1>", pattern)
    return re.sub(r"\\k<([A-Za-z_]\w*)>", r"(?P=\1)", pattern)


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


def import_check(kind: str, negated: bool, value: Any, flags: Any, where: str,
                 warn: Warnings) -> tuple[dict[str, Any], float | None, bool] | None:
    """One foreign assertion → ``(check spec, min_score or None, is a penalty)``; None (with a warning) if it
    has no check form. Only assertions this package wrote can be penalties (their marker says so)."""
    if kind == "javascript" and isinstance(value, str) and value.lstrip().startswith(MARKER):
        first = value.lstrip().split("\n", 1)[0]
        try:
            marker = parse_user_json(first[len(MARKER):], where)
            return dict(marker["check"]), marker.get("min_score"), bool(marker.get("penalty"))
        except (RubricError, ValueError, KeyError, TypeError):
            warn.skip("unreadable rubric-studio markers",
                      f"{where}: unreadable rubric-studio marker in a javascript assertion; skipped")
            return None
    if kind in ("contains", "icontains") and isinstance(value, str | int | float):
        words = [str(value)]
        spec = {"type": "keywords", ("forbidden" if negated else "required"): words}
        if kind == "contains":
            spec["case_sensitive"] = True
        return spec, None, False
    if kind in ("contains-all", "icontains-all", "contains-any", "icontains-any") and isinstance(value, list):
        return _keyword_list(kind, negated, value, where, warn)
    if kind in ("regex", "equals", "starts-with") and isinstance(value, str | int | float):
        text = str(value)
        if kind == "regex":
            pattern = _py_regex(text)
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
