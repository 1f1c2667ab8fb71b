"""A regex check exported to JavaScript (promptfoo, AgentV) finds what rubric-studio finds: Python-only
syntax (inline flags, verbose mode, ``\\A``/``\\Z``, named groups, Python's ``$`` and ``.``) is
translated, and what JavaScript cannot express (atomic groups, possessive quantifiers, scoped
case-insensitivity ...) is refused with the construct named - never written as it stands, where
JavaScript would reject it or read it differently. Node runs the translated patterns against the
same texts as Python's ``regex`` (skipped without node)."""

from __future__ import annotations

import json

import pytest
import regex
import yaml

from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import export_rubric, import_rubric
from rubric_studio.interop._regex_js import UntranslatableRegex, python_regex, to_javascript

TEXTS = [
    "", "Refund", "refund now", "REFUND\n", "a\nb", "a\rb", "a\r\nb", "a\u2028b", "x\n", "x\n\n", "line one\nline two\n",
    "ab", "aB", "AB", "a b", "aab", "aaab", "abab", "aa", "foo bar", "bar foo", "foo\n", "https://example.com",
    "café", "naïve\tcafé", "2024-01-02", "x{,2}", "]x", "[A]", "a\\Afoo", "tab\there", "\U0001F600\U0001F600", "smile 😀!",
    "Ticket T-12", "\x07bell", "name: Ann", "Ann Ann", "•bullet", "**nit:** ok", " ok",
]

#: (pattern, rubric-studio flags) that have a JavaScript form.
TRANSLATED = [
    (r"(?i)refund", ""), (r"(?m)^line", ""), (r"(?m)two$", ""), (r"(?s)a.b", ""), (r"(?x) a \s b  # spaced", ""),
    (r"(?a)\s", ""), (r"(?a)a\sb", ""), (r"(?u)caf.", ""), (r"(?im)^LINE", ""), (r"(?i)(?m)^line", ""),
    (r"\Afoo", ""), (r"foo\Z", ""), (r"foo\Z|\Abar", ""), (r"\\Afoo", ""), (r"\A[]A]", ""), (r"^x$", ""),
    (r"x$", "m"), (r"^x\Z", ""), (r"a.b", ""), (r"a.b", "s"), (r"(?P<n>a)(?P=n)", ""), (r"(?P<word>\w+) (?P=word)", ""),
    (r"x{,2}", ""), (r"a{2,}", ""), (r"a{2}", ""), (r"a{,}", ""), (r"a{", ""), (r"}", ""), (r"]x", ""),
    (r"(?#a comment)ab", ""), (r"a(?x) b", ""), (r"(a(?s).)b", ""), (r"(?x: a b )", ""), (r"(?m:^two)", ""),
    (r"\N{BULLET}", ""), (r"\U0001F600+", ""), (r"😀{2}", ""), (r"\x07", ""), (r"\a", ""), (r"\0", ""),
    (r"\*\*(?:nit|issue):\*\*", ""), (r"^\s*(?:[-*•]|\d+[.)])\s", "m"), (r"T-\d+$", ""), (r"(?i)ticket", "i"),
    (r"(?-i)Refund", "i"), (r"[^\]x]", ""), (r"\d{4}-\d{2}-\d{2}", ""), (r"a+?b", ""), (r"(a)\1", ""), (r"\_x", ""),
    (r"https?://", ""), (r"(?<=a)b", ""), (r"(?<!a)b", ""), (r"[a-c]+$", "mi"), (r"^\w+: \w+$", "x"),
    (r"a{}", ""), (r"x{ 2}", ""), (r"a(?i)b", "i"), (r"(?s:.)b", ""), (r"(?m)x\Z", ""), (r"\é", ""),
]

#: (pattern, what the refusal names).
REFUSED = [
    (r"(?>a+)a", "atomic"), (r"a++", "possessive"), (r"a*+b", "possessive"), (r"a{2}+", "possessive"),
    (r"a(?i)b", "case-insensitivity for part"), (r"(?i:a)b", "case-insensitivity for part"),
    (r"(?L)a", "locale"), (r"(?|(a)|(b))", "branch reset"), (r"(a)(?(1)b|c)", "conditional"),
    (r"\p{L}", "\\p"), (r"\X", "\\X"), (r"\Ga", "\\G"), (r"[[:alpha:]]", "POSIX"), (r"(?ai)a", "(?a)"),
    (r"[😀]", "character class"), (r"(?a)[\S]", "\\S"), (r"(a)(?1)", "recursion"), (r"(?R)?", "recursion"),
]


def _python(pattern: str, flags: str, text: str) -> bool:
    bits = 0
    for letter in flags:
        bits |= {"i": regex.I, "m": regex.M, "s": regex.S, "x": regex.X}[letter]
    return regex.compile(pattern, bits | regex.VERSION0).search(text) is not None


def _js(source: str, flags: str) -> str:
    return f"return {{ pass: new RegExp({json.dumps(source)}, {json.dumps(flags)}).test(output) }};"


@pytest.mark.parametrize(("pattern", "flags"), TRANSLATED, ids=[f"{p} /{f}" for p, f in TRANSLATED])
def test_translated_patterns_find_in_node_what_python_finds(run_js, pattern, flags):
    translated = to_javascript(pattern, flags)
    results = run_js([(_js(translated.source, translated.flags), text) for text in TEXTS])
    theirs = [r["pass"] for r in results]
    ours = [_python(pattern, flags, text) for text in TEXTS]
    assert theirs == ours, [(t, o, h) for t, o, h in zip(TEXTS, ours, theirs, strict=True) if o != h]


@pytest.mark.parametrize(("pattern", "named"), REFUSED, ids=[p for p, _ in REFUSED])
def test_what_javascript_cannot_express_is_refused_naming_it(pattern, named):
    try:
        regex.compile(pattern, regex.VERSION0)
    except regex.error:
        pytest.skip("not a pattern rubric-studio accepts either")
    with pytest.raises(UntranslatableRegex, match=regex.escape(named)):
        to_javascript(pattern)


def _rubric(pattern: str, flags: str = "", **extra) -> Rubric:
    return Rubric.model_validate({"name": "r", "criteria": [
        {"id": "re", "check": {"type": "regex", "pattern": pattern, "flags": flags}, **extra},
        {"id": "judged", "outcome": "Is polite"}]})


def _entries(target: str, rubric: Rubric, **options) -> tuple[list[dict], list[str]]:
    result = export_rubric(rubric, target, **options)
    data = yaml.safe_load(result.text)
    found: list[dict] = []
    todo = list(data.get("defaultTest", {}).get("assert") or data.get("assert") or data.get("assertions") or [])
    while todo:
        entry = todo.pop(0)
        todo += entry.get("assert", []) if isinstance(entry, dict) else []
        if isinstance(entry, dict) and entry.get("metric", entry.get("name")) == "re":
            found.append(entry)
    return found, result.warnings


def _runs(entry: dict, run_js) -> list[bool]:
    """Whether the exported assertion passes on each of TEXTS, run by node."""
    if entry["type"] == "javascript":
        return [r["pass"] for r in run_js([(entry["value"], text) for text in TEXTS])]
    negated = entry["type"] == "not-regex" or entry.get("negate") is True
    body = _js(entry["value"], entry.get("flags", ""))
    return [r["pass"] != negated for r in run_js([(body, text) for text in TEXTS])]


@pytest.mark.parametrize(("target", "options"), [("promptfoo", {}), ("agentv", {"agentv_version": 5}),
                                                 ("agentv", {"agentv_version": 4})],
                         ids=["promptfoo", "agentv5", "agentv4"])
@pytest.mark.parametrize(("pattern", "flags"), [(r"(?i)refund", ""), (r"(?m)^line two$", ""), (r"^x$", ""),
                                                (r"(?x) re fund  # word", "i"), (r"(?P<w>a)(?P=w)", ""),
                                                (r"a.b", "")], ids=str)
def test_exported_regex_checks_give_python_s_verdicts_in_node(run_js, target, options, pattern, flags):
    entries, warnings = _entries(target, _rubric(pattern, flags), **options)
    assert len(entries) == 1, warnings
    (entry,) = entries
    assert _runs(entry, run_js) == [_python(pattern, flags, text) for text in TEXTS], entry


@pytest.mark.parametrize(("target", "options"), [("promptfoo", {}), ("agentv", {"agentv_version": 5})],
                         ids=["promptfoo", "agentv5"])
@pytest.mark.parametrize("pattern", [r"(?>a+)a", r"a++", r"a(?i)b", r"[[:alpha:]]"])
def test_an_untranslatable_pattern_is_not_written_and_the_warning_names_it(target, options, pattern):
    entries, warnings = _entries(target, _rubric(pattern, required=True), **options)
    assert entries == []
    (warning,) = [w for w in warnings if "'re'" in w]
    assert "cannot run in" in warning and "not exported" in warning and "required" in warning


@pytest.mark.parametrize(("pattern", "flags"), [(r"^x$", ""), (r"a.b", ""), (r"\Afoo\Z", ""), (r"(?P<n>a)(?P=n)", ""),
                                                (r"(?i)refund", ""), (r"^\s*(?:[-*•]|\d+[.)])\s", "m"), (r"x", "i")])
@pytest.mark.parametrize("target", ["promptfoo", "agentv"])
def test_exported_regex_checks_import_back_as_written(target, pattern, flags):
    back = import_rubric(export_rubric(_rubric(pattern, flags), target).text, target).rubric.criterion("re").check
    assert (back.pattern, back.flags) == (pattern, flags)


@pytest.mark.parametrize(("source", "flags", "python"), [
    ("^\\d+$", "", "^\\d+\\Z"), ("a.b", "", "a[^\\n\\r\\u2028\\u2029]b"), ("a.b", "s", "a.b"),
    ("^x$", "m", "(?<![^\\n\\r\\u2028\\u2029])x(?=[\\n\\r\\u2028\\u2029]|\\Z)"), ("(?<n>a)\\k<n>", "", "(?P<n>a)(?P=n)"),
    ("[^]x", "", "[\\s\\S]x"), ("[]x", "", "(?!)x"),
])
def test_a_foreign_javascript_pattern_imports_with_javascript_s_meaning(run_js, source, flags, python):
    assert python_regex(source, flags) == python
    theirs = [r["pass"] for r in run_js([(_js(source, flags), text) for text in TEXTS])]
    assert theirs == [_python(python, flags, text) for text in TEXTS]
