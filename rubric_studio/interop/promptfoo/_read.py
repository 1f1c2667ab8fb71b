"""Reading promptfoo configs (the import half of :mod:`.promptfoo`, whose docstring says how
promptfoo scores and how import keeps its verdicts).

What promptfoo keeps per test and a rubric cannot (a threshold per test, ``{{var}}``
templates, output transforms, a grader prompt per assertion) is resolved where one value
holds for every test, and otherwise warned or skipped - never imported as if it did not
exist (:mod:`._promptfoo_vars`, :mod:`._promptfoo_build`).
"""

from __future__ import annotations

import math
import re
from typing import Any

from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import _checks
from rubric_studio.interop._common import (
    GENERIC_BANDS,
    Source,
    Warnings,
    expect_mapping,
    num,
    read_threshold,
    slugify,
    snap,
)
from rubric_studio.interop.promptfoo._build import BANDS_INTRO, CONTRADICTION, CORRECTNESS, Entry, assemble
from rubric_studio.interop.promptfoo._vars import TestVars, has_template, transform_of, trims_only

_BAND_LINE = re.compile(r"^- (?P<low>\d(?:\.\d)?)(?:-(?P<high>\d(?:\.\d)?))?: (?P<text>.*)$")
_RAW = re.compile(r"^\{% raw %\}(?P<body>.*)\{% endraw %\}$", re.S)
#: A value that is one word-like token (``factual_correctness``): a label, not a rubric.
_LABEL = re.compile(r"[A-Za-z0-9]+(?:[_.:-][A-Za-z0-9]+)*")
#: Judged assertion types imported as criteria.
JUDGED = ("llm-rubric", "model-graded-closedqa", "g-eval")
#: Graded against a reference answer each test supplies; a rubric criterion has none.
REFERENCE = ("factuality", "model-graded-factuality")
GEVAL_PASS_MARK = 0.7  # promptfoo's g-eval threshold when none (or 0) is given
#: Check types whose verdict a whitespace-only transform (``output.trim()``) cannot change.
_TRIM_SAFE = ("contains", "icontains", "contains-any", "icontains-any", "contains-all", "icontains-all", "is-json")
_CHECK_TYPES = (*_TRIM_SAFE, "regex", "equals", "starts-with")
_SKIPPED = object()


def unraw(value: Any) -> Any:
    """Our export wraps rubric text in ``{% raw %}`` so promptfoo keeps it literal; unwrap it."""
    if isinstance(value, str):
        match = _RAW.match(value.strip())
        if match:
            return match.group("body")
    return value


def parse_value(text: str) -> dict[str, Any]:
    """llm-rubric text → outcome / operator / score_ranges (reverses ``promptfoo.rubric_value``)."""
    criterion: dict[str, Any] = {}
    if BANDS_INTRO in text:
        head, _, tail = text.partition(BANDS_INTRO)
        bands: dict[int, str] = {}
        for line in tail.strip().split("\n"):
            match = _BAND_LINE.match(line.strip())
            if match:
                bands[round(float(match.group("low")) * 10)] = match.group("text").strip()
        if 0 in bands:
            criterion["score_ranges"] = bands
            text = head.strip()
    for prefix, operator in ((CONTRADICTION, "contradiction"), (CORRECTNESS, "correctness")):
        if text.startswith(prefix):
            criterion["operator"] = operator
            text = text[len(prefix):]
    criterion["outcome"] = text.strip()
    return criterion


def number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def assertion_threshold(value: Any) -> float | None:
    """An assertion's ``threshold``; promptfoo converts a quoted one (``"0.7"``) with ``Number()``."""
    if isinstance(value, str):
        try:
            parsed = float(value.strip())
        except ValueError:
            return None
        return parsed if math.isfinite(parsed) else None
    return number(value)


def _braces(name: str) -> str:
    return "{{" + name + "}}"


class _Reader:
    """Reads assertions into :class:`Entry` objects, with what the test they run in means for them."""

    def __init__(self, source: Source, data: dict[str, Any], warn: Warnings):
        self.source, self.data, self.warn = source, data, warn
        self.vars = TestVars(data)

    def read(self, entry: Any, path: tuple[Any, ...], tag: str | None, scope: int | None,
             scale: float = 1.0) -> list[Entry]:
        """The criteria of one assertion (``scope``: the index of its test, None for ``defaultTest``)."""
        source, warn = self.source, self.warn
        if isinstance(entry, str):
            warn.add(f"{source.at(path)}: string assertion {entry[:40]!r} read as llm-rubric")
            entry = {"type": "llm-rubric", "value": entry}
        entry = expect_mapping(source, entry, path, "assertion")
        raw_type = entry.get("type")
        if not isinstance(raw_type, str):
            warn.skip("assertions without a type", f"{source.at(path)}: assertion without a type skipped")
            return []
        weight = entry.get("weight", 1)
        if not isinstance(weight, int | float) or isinstance(weight, bool):
            raise source.error((*path, "weight"), f"weight: expected a number, got {weight!r}")
        if weight == 0:
            warn.skip("weight 0 (promptfoo always passes it)",
                      f"{source.at(path)}: weight 0 assertion skipped (promptfoo always passes it)")
            return []
        weight = float(weight) * scale
        if raw_type == "assert-set":
            return self._set(entry, path, tag, scope, weight)
        negated = raw_type.startswith("not-")
        kind = raw_type[4:] if negated else raw_type
        if kind in JUDGED:
            return self._judged(entry, path, tag, scope, weight, kind, negated)
        if kind in REFERENCE:
            warn.skip(f"{kind} (needs a reference answer)",
                      f"{source.at(path)}: {raw_type} grades the output against the reference answer each test "
                      "gives in its value; a rubric criterion has no reference, so it is skipped (to keep it, write a "
                      "criterion stating the reference with operator: contradiction)")
            return []
        return self._check(entry, path, tag, scope, weight, kind, negated)

    def _set(self, entry: dict[str, Any], path: tuple[Any, ...], tag: str | None, scope: int | None,
             weight: float) -> list[Entry]:
        members = entry.get("assert")
        if not isinstance(members, list) or not members:
            raise self.source.error((*path, "assert"), "assert-set: expected a non-empty assert list")
        inner = [m.get("weight", 1) if isinstance(m, dict) else 1 for m in members]
        total = math.fsum(w for w in inner if isinstance(w, int | float)) or 1
        out: list[Entry] = []
        for index, member in enumerate(members):
            out += self.read(member, (*path, "assert", index), tag, scope, scale=weight / total)
        return out

    def _check(self, entry: dict[str, Any], path: tuple[Any, ...], tag: str | None, scope: int | None,
               weight: float, kind: str, negated: bool) -> list[Entry]:
        at = self.source.at(path)
        value = unraw(entry.get("value"))
        known = kind in _CHECK_TYPES or kind == "javascript" and isinstance(value, str) \
            and value.lstrip().startswith(_checks.MARKER)
        if known:
            transform = transform_of(self.data, entry, scope)
            if transform is not None and not (trims_only(transform) and kind in _TRIM_SAFE):
                self.warn.skip("checks on transformed output",
                               f"{at}: {entry['type']} runs on the output after transform {transform.strip()!r}; "
                               "rubric-studio checks the raw output, so it is skipped")
                return []
            value = self._template(value, scope, at, entry["type"], judged=False)
            if value is _SKIPPED:
                return []
        found = _checks.import_check(kind, negated, value, entry.get("flags"), at, self.warn)
        if found is None:
            return []
        spec, min_score, penalty = found
        criterion = {"id": entry.get("metric"), "check": spec}
        if min_score is not None:
            criterion["min_score"] = min_score
        return [Entry(criterion, path, weight, penalty, False, tag)]

    def _judged(self, entry: dict[str, Any], path: tuple[Any, ...], tag: str | None, scope: int | None,
                weight: float, kind: str, negated: bool) -> list[Entry]:
        at = self.source.at(path)
        value = unraw(entry.get("value"))
        if value is None:
            where = "its rubric is in a rubricPrompt, which is not imported" if self._rubric_prompt(entry, scope) \
                else "nothing to grade"
            self.warn.skip(f"{kind} without a value", f"{at}: {kind} without value skipped ({where})")
            return []
        if kind == "g-eval" and negated:
            self.warn.skip("not-g-eval (no rubric-studio equivalent)",
                           f"{at}: not-g-eval has no rubric-studio equivalent; skipped")
            return []
        if not isinstance(value, str) and not (kind == "g-eval" and isinstance(value, list)):
            self.warn.add(f"{at}: {kind} value is structured data; imported as its text")
            value = str(value)
        value = self._template(value, scope, at, entry["type"], judged=True)
        transform = transform_of(self.data, entry, scope)
        if transform is not None and not trims_only(transform):
            self.warn.add(f"{at}: promptfoo's judge grades the output after transform {transform.strip()!r}; "
                          "rubric-studio's judge sees the whole output")
        self._grader_overrides(entry, at, value)
        metric = entry.get("metric")
        if kind == "g-eval":
            return self._geval(entry, at, value, weight, tag, path, metric)
        criterion = parse_value(value)
        if kind == "model-graded-closedqa":
            self.warn.add(f"{at}: model-graded-closedqa imported as a met/unmet criterion; promptfoo's own grading "
                          "prompt (a yes/no question about the criterion) differs from rubric-studio's")
        else:
            self._rubric_threshold(entry, at, criterion)
        criterion["id"] = metric
        return [Entry(criterion, path, weight, negated, True, tag)]

    def _rubric_threshold(self, entry: dict[str, Any], at: str, criterion: dict[str, Any]) -> None:
        threshold = assertion_threshold(entry.get("threshold"))
        if threshold is not None:
            if "score_ranges" not in criterion:
                criterion["score_ranges"] = dict(GENERIC_BANDS)
                self.warn.add(f"{at}: llm-rubric with threshold {num(threshold)} is a graded score; imported as a "
                              "0-10 criterion with generic score bands")
            criterion["min_score"] = snap(read_threshold(threshold))
        elif "score_ranges" in criterion:
            criterion["min_score"] = 0.7

    def _geval(self, entry: dict[str, Any], at: str, value: Any, weight: float, tag: str | None,
               path: tuple[Any, ...], metric: Any) -> list[Entry]:
        texts = [str(v).strip() for v in value] if isinstance(value, list) else [value.strip()]
        texts = [t for t in texts if t]
        if not texts:
            self.warn.skip("g-eval without a value", f"{at}: g-eval without criteria skipped")
            return []
        mark = assertion_threshold(entry.get("threshold")) or GEVAL_PASS_MARK
        self.warn.add(f"{at}: g-eval imported as a 0-10 criterion with generic score bands, met at {num(mark)}; "
                      "promptfoo's G-Eval prompt (generated evaluation steps) differs from rubric-studio's")
        if len(texts) > 1:
            self.warn.add(f"{at}: g-eval with {len(texts)} criteria passes on their mean in promptfoo; imported as "
                          f"{len(texts)} criteria sharing its weight, each met at {num(mark)}")
        return [Entry({"id": metric, "outcome": text, "score_ranges": dict(GENERIC_BANDS),
                       "min_score": snap(read_threshold(mark))}, path, weight / len(texts), False, True, tag)
                for text in texts]

    def _rubric_prompt(self, entry: dict[str, Any], scope: int | None) -> bool:
        """Does a ``rubricPrompt`` (the assertion's, its test's or defaultTest's) do the grading?"""
        tests = self.data.get("tests") if isinstance(self.data.get("tests"), list) else []
        tests_ = [self.data.get("defaultTest"), tests[scope] if scope is not None else None]
        options = [t.get("options") for t in tests_ if isinstance(t, dict)]
        return any(isinstance(h, dict) and h.get("rubricPrompt") for h in [entry, *options])

    def _grader_overrides(self, entry: dict[str, Any], at: str, value: Any) -> None:
        """promptfoo grades an assertion with its own ``rubricPrompt`` / ``provider`` when it has them."""
        own = [key for key in ("rubricPrompt", "provider") if entry.get(key)]
        if not own:
            return
        what = " and ".join({"rubricPrompt": "grading prompt (rubricPrompt)",
                             "provider": "grader (provider)"}[key] for key in own)
        verb = "are" if len(own) > 1 else "is"
        message = f"{at}: this assertion has its own {what}, which {verb} not imported; rubric-studio's judge applies"
        if "rubricPrompt" in own and isinstance(value, str) and _LABEL.fullmatch(value.strip()):
            message += (f" - and its value {value.strip()!r} is only a label (the rubric is in its rubricPrompt), "
                        "so the criterion text is only that label: rewrite it from the rubricPrompt")
        self.warn.add(message)

    def _template(self, value: Any, scope: int | None, at: str, label: str, *, judged: bool) -> Any:
        """``value`` with its ``{{var}}`` templates filled where one value holds; :data:`_SKIPPED` (warned) for
        a check that still has one; a judge text keeps it, warned."""
        texts = [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] \
            if isinstance(value, list) else []
        if not any(has_template(text) for text in texts):
            return value
        filled: dict[str, str] = {}
        unresolved: dict[str, str] = {}

        def fill(text: str) -> str:
            result = self.vars.fill(text, scope)
            filled.update(result.filled)
            unresolved.update(result.unresolved)
            return result.text

        value = fill(value) if isinstance(value, str) else [fill(v) if isinstance(v, str) else v for v in value]
        count = self.vars.count(scope)
        holder = "its test gives" if scope is not None else "the only test gives" if count == 1 \
            else f"all {count} tests give"
        for name, text in filled.items():
            self.warn.add(f"{at}: {_braces(name)} filled with {text!r}, the value {holder} it")
        if not unresolved:
            return value
        names = "; ".join(f"{_braces(name) if name != '{% %}' else name} ({why})" for name, why in unresolved.items())
        if judged:
            self.warn.add(f"{at}: {label} text uses {names}, which promptfoo fills per test; kept as literal text")
            return value
        self.warn.skip("checks on a per-test {{var}}",
                       f"{at}: {label} value uses {names}, which promptfoo fills per test; a fixed check cannot, "
                       "so it is skipped")
        return _SKIPPED


def _test_name(index: int, test: dict[str, Any]) -> str:
    description = test.get("description")
    return repr(str(description)[:40]) if description else f"tests[{index}]"


def _threshold(data: dict[str, Any], warn: Warnings) -> float | None:
    """The score threshold: promptfoo's per test (``test.threshold ?? defaultTest.threshold``); when the tests
    differ, the one most tests use (warned, naming them)."""
    default_test = data.get("defaultTest")
    default = number(default_test.get("threshold")) if isinstance(default_test, dict) else None
    tests = data.get("tests")
    by_value: dict[float | None, list[str]] = {}
    for index, test in enumerate(tests if isinstance(tests, list) else []):
        if isinstance(test, dict):
            own = number(test.get("threshold"))
            by_value.setdefault(own if own is not None else default, []).append(_test_name(index, test))
    if len(by_value) <= 1:
        return next(iter(by_value), default)
    chosen = max(by_value, key=lambda value: len(by_value[value]))

    def label(value: float | None) -> str:
        return "none (every assertion must pass)" if value is None else str(num(value))

    def names(items: list[str]) -> str:
        return ", ".join(items[:4]) + (f" and {len(items) - 4} more" if len(items) > 4 else "")

    parts = "; ".join(f"{label(value)} in {names(items)}" for value, items in by_value.items())
    warn.add(f"tests use different thresholds (promptfoo applies each test's own): {parts}; a rubric has one, "
             f"so {label(chosen)} is used for every sample")
    return chosen


def _top(data: dict[str, Any], warn: Warnings) -> list[tuple[Any, tuple[Any, ...], str | None, int | None]]:
    """Every top-level assertion: (entry, path, tag, index of its test or None for defaultTest)."""
    default_test = data.get("defaultTest")
    top: list[tuple[Any, tuple[Any, ...], str | None, int | None]] = []
    if isinstance(default_test, dict):
        for index, entry in enumerate(default_test.get("assert") or []):
            top.append((entry, ("defaultTest", "assert", index), None, None))
    tests = data.get("tests")
    if isinstance(tests, str):
        warn.add(f"tests are loaded from {tests!r}; only defaultTest assertions were read")
    with_asserts = [(i, t) for i, t in enumerate(tests) if isinstance(t, dict) and t.get("assert")] \
        if isinstance(tests, list) else []
    if len(with_asserts) > 1:
        warn.add(f"{len(with_asserts)} tests have their own assertions; merged into one rubric (tagged test:<n>)")
    for index, test in with_asserts:
        tag = f"test:{test.get('description') and slugify(str(test['description']), max_words=4) or index + 1}" \
            if len(with_asserts) > 1 else None
        for j, entry in enumerate(test["assert"]):
            top.append((entry, ("tests", index, "assert", j), tag, index))
    return top


def import_(source: Source, warn: Warnings) -> Rubric:
    """Returns the rubric of a promptfoo config (what it cannot carry over goes to ``warn``).
    Raises :class:`~rubric_studio.core.problems.RubricError` with positions for a malformed config."""
    data = expect_mapping(source, source.data, (), "promptfoo config")
    top = _top(data, warn)
    if not top:
        raise source.error((), "no assertions found: expected defaultTest.assert or tests[].assert")
    threshold = _threshold(data, warn)
    reader = _Reader(source, data, warn)
    gates: list[Entry] = []
    scored: list[Entry] = []
    if threshold is not None:
        for entry, path, tag, scope in top:
            scored += reader.read(entry, path, tag, scope)
    else:
        sets = [e for e, _, _, _ in top if isinstance(e, dict) and e.get("type") == "assert-set"
                and number(e.get("threshold")) is not None]
        if len(sets) > 1:
            warn.add("several assert-sets with a threshold; the first sets the score threshold, the others' "
                     "members are read as required criteria")
        for entry, path, tag, scope in top:
            if sets and entry is sets[0]:
                threshold = number(entry["threshold"])
                for index, member in enumerate(entry.get("assert") or []):
                    scored += reader.read(member, (*path, "assert", index), tag, scope)
            else:
                gates += reader.read(entry, path, tag, scope)
    return assemble(source, data, gates, scored, threshold, warn)
