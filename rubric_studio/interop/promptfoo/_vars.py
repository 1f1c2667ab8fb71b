"""promptfoo per-test context of an assertion: ``{{var}}`` templates and output transforms.

promptfoo renders every string assertion value as a Nunjucks template with the vars of
the test it runs in (``defaultTest.vars`` overlaid by the test's own ``vars``), so
``icontains: "{{expected}}"`` checks a different word in each test. A rubric-studio
rubric is one text for every sample: a variable is filled only when every test the
assertion runs in gives it the same plain value (a ``defaultTest`` assertion runs in
every test; a test's own assertion only in that test). Anything else stays unresolved
and the caller decides: a fixed check would test the literal ``{{expected}}``, so it is
skipped; a judge criterion keeps the text and a warning names the variable.

promptfoo also runs an assertion on ``transform``-ed output when the assertion has a
``transform`` or its test has ``options.transform`` (a ``defaultTest`` one applies to
every test). rubric-studio checks the raw output, so :func:`transform_of` says which
transform applies, if any.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: One ``{{ ... }}`` expression; group 1 is what is inside.
_EXPRESSION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Transforms that only strip surrounding whitespace: they cannot change whether a word occurs
#: in the output or whether it parses as JSON.
_TRIM_ONLY = ("output.trim()",)


def has_template(text: str) -> bool:
    return "{{" in text or "{%" in text


@dataclass
class Filled:
    """A template after filling: its text, the variables filled (name → value) and those left
    (name → why)."""

    text: str
    filled: dict[str, str] = field(default_factory=dict)
    unresolved: dict[str, str] = field(default_factory=dict)


class TestVars:
    """The vars of a config's tests, to fill assertion templates the way promptfoo would."""

    def __init__(self, data: dict[str, Any]):
        default_test = data.get("defaultTest")
        base = default_test.get("vars") if isinstance(default_test, dict) else None
        base = base if isinstance(base, dict) else {}
        tests = data.get("tests")
        self.external = tests if isinstance(tests, str) else None
        self.cases: dict[int | None, dict[str, Any]] = {}
        if isinstance(tests, list):
            for index, test in enumerate(tests):
                if isinstance(test, dict):
                    own = test.get("vars")
                    self.cases[index] = {**base, **(own if isinstance(own, dict) else {})}
        if not self.cases:
            self.cases[None] = dict(base)

    def count(self, scope: int | None) -> int:
        """How many tests an assertion of ``scope`` runs in (as far as this file tells)."""
        return 1 if scope is not None else len(self.cases)

    def fill(self, text: str, scope: int | None) -> Filled:
        """``text`` with each ``{{name}}`` filled where every test of ``scope`` (a test index, or None
        for every test) gives ``name`` one plain value; the rest is kept as written."""
        result = Filled(text)
        if "{%" in text or "{#" in text:
            result.unresolved["{% %}"] = "Nunjucks tags are not evaluated here"
            return result

        def replace(match: re.Match[str]) -> str:
            inner = match.group(1)
            if not _NAME.fullmatch(inner):
                result.unresolved[inner] = "it is an expression, not a plain variable"
                return match.group(0)
            value, why = self._value(inner, scope)
            if value is None:
                result.unresolved[inner] = why
                return match.group(0)
            result.filled[inner] = value
            return value

        result.text = _EXPRESSION.sub(replace, text)
        return result

    def _value(self, name: str, scope: int | None) -> tuple[str | None, str]:
        if scope is None and self.external is not None:
            return None, f"the tests are loaded from {self.external!r}, which is not read"
        cases = [self.cases[scope]] if scope in self.cases else list(self.cases.values())
        values = set()
        for case in cases:
            if name not in case:
                return None, ("no test sets it (promptfoo renders it empty)" if len(cases) == 1
                              else "not every test sets it")
            value, why = _plain(case[name])
            if value is None:
                return None, why
            values.add(value)
        if len(values) > 1:
            return None, f"it has {len(values)} different values in {len(cases)} tests"
        return values.pop(), ""


def _plain(value: Any) -> tuple[str | None, str]:
    """The text promptfoo substitutes for a var value, or (None, why) when it is not one fixed text."""
    if isinstance(value, bool):
        return ("true" if value else "false"), ""
    if isinstance(value, int):
        return str(value), ""
    if isinstance(value, float):
        return (str(int(value)) if value.is_integer() else repr(value)), ""
    if isinstance(value, str):
        if value.startswith("file://"):
            return None, f"its value is loaded from {value!r}"
        return value, ""
    if isinstance(value, list):
        if len(value) == 1:
            return _plain(value[0])
        return None, "it lists several values (promptfoo runs one test per value)"
    return None, "its value is structured data"


def transform_of(data: dict[str, Any], entry: dict[str, Any], scope: int | None) -> str | None:
    """The output transform promptfoo applies before assertion ``entry`` of test ``scope`` (None for a
    ``defaultTest`` assertion), or None. A ``defaultTest`` assertion also runs under the transforms of
    the tests that set one, so any of those counts."""
    if isinstance(entry.get("transform"), str):
        return entry["transform"]
    found = [_options_transform(data.get("defaultTest"))]
    tests = data.get("tests") if isinstance(data.get("tests"), list) else []
    if scope is not None and scope < len(tests):
        found.insert(0, _options_transform(tests[scope]))
    elif scope is None:
        found += [_options_transform(test) for test in tests]
    return next((t for t in found if t is not None), None)


def _options_transform(test: Any) -> str | None:
    options = test.get("options") if isinstance(test, dict) else None
    value = options.get("transform") if isinstance(options, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def trims_only(transform: str) -> bool:
    """True for a transform that only strips whitespace from the output."""
    return "".join(transform.split()).rstrip(";") in _TRIM_ONLY
