"""The JavaScript side of exported checks: our (Python) regex syntax translated to JavaScript and
back, and ``javascript`` assertion bodies that compute a check's score by rubric-studio's formula.

Each body starts with a :data:`MARKER` line holding the original check as JSON, so that import
(:func:`._checks.import_check`) restores the check instead of running the code.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rubric_studio.core.checks import KeywordsCheck, LengthCheck, RegexCheck
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


def regex_js(spec: RegexCheck, pattern: str) -> str:
    flags = "".join(f for f in spec.flags if f in "ims")
    return "\n".join([
        f"const matched = new RegExp({json.dumps(pattern, ensure_ascii=False)}, {json.dumps(flags)}).test(text);",
        f"const score = matched === {'true' if spec.expect_match else 'false'} ? 1 : 0;",
        "const reason = matched ? 'pattern matched' : 'no match';",
    ])


def python_regex(pattern: str) -> str:
    """A JavaScript pattern in Python syntax (named groups; the exported text anchors back to
    ``\\A`` / ``\\Z``)."""
    for letter, lookaround in _ANCHORS.items():
        pattern = pattern.replace(lookaround, "\\" + letter)
    pattern = re.sub(r"\(\?<([A-Za-z_]\w*)>", r"(?P<\1>", pattern)
    return re.sub(r"\\k<([A-Za-z_]\w*)>", r"(?P=\1)", pattern)
