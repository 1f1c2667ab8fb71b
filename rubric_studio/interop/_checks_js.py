"""The JavaScript side of exported checks: ``javascript`` assertion bodies that compute a check's
score by rubric-studio's formula, and our (Python) regex syntax in JavaScript's (the translation,
both ways, is :mod:`._regex_js`).

Each body starts with a :data:`MARKER` line holding the original check as JSON, so that import
(:func:`._checks.import_check`) restores the check instead of running the code.
"""

from __future__ import annotations

import json
from typing import Any

from rubric_studio.core.checks import KeywordsCheck, LengthCheck, RegexCheck
from rubric_studio.core.rubric import Criterion
from rubric_studio.interop._common import Warnings, num
from rubric_studio.interop._regex_js import JsRegex, UntranslatableRegex, python_regex, to_javascript

__all__ = ["MARKER", "JsRegex", "UntranslatableRegex", "javascript_body", "js_regex", "keywords_js", "length_js",
           "python_regex", "regex_js", "to_javascript"]

MARKER = "// rubric-studio: "


def js_regex(pattern: str, criterion_id: str, warn: Warnings) -> str:
    """Our (Python ``regex``) ``pattern`` for a ``RegExp`` built without flags, whose ``$`` the check already
    reads as the very end (a json_path ``matches``; see :mod:`._regex_js`). Raises
    :class:`UntranslatableRegex` (reported by :func:`._checks.export_check`) when it has no such form.
    ``criterion_id`` and ``warn`` are kept for check-type plugins that call it."""
    translated = to_javascript(pattern, dollar_is_end=True)
    if translated.flags:
        raise UntranslatableRegex("(?i) needs the RegExp i flag, which this assertion's RegExp is built without")
    return translated.source


def javascript_body(criterion: Criterion, body: str, *, penalty: bool) -> str:
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


def length_js(spec: LengthCheck) -> str:
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


def keywords_js(spec: KeywordsCheck) -> str:
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


def regex_js(spec: RegexCheck, pattern: JsRegex) -> str:
    """A regex check's body: ``pattern`` is its translation (:func:`._regex_js.to_javascript`)."""
    source = json.dumps(pattern.source, ensure_ascii=False)
    return "\n".join([
        f"const matched = new RegExp({source}, {json.dumps(pattern.flags)}).test(text);",
        f"const score = matched === {'true' if spec.expect_match else 'false'} ? 1 : 0;",
        "const reason = matched ? 'pattern matched' : 'no match';",
    ])
