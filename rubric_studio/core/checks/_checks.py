"""The text checks: length, keywords, regex and json.

:class:`~rubric_studio.core.check_runner.CheckRunner` compiles a rubric's checks once into
small functions and runs them over samples. Every evaluation is bounded in time (regexes, and the
patterns of a json check's schema, through the ``regex`` engine's timeout — see
:mod:`~rubric_studio.core.checks._jsonschema`; code checks in a worker thread or
subprocess) and ends in ``error`` with the reason instead of freezing or raising.
The text checks are here; the checks that run the author's code are in
:mod:`~rubric_studio.core.checks._code`, and what every check shares in
:mod:`~rubric_studio.core.checks._eval`.
"""

from __future__ import annotations

import json
from typing import Any

import regex

from rubric_studio.core.checks._eval import CheckFailure, CheckTimeout, Evaluator, TextView
from rubric_studio.core.checks._jsonschema import (
    SchemaTimeout,
    bounded_validator,
    describe_failure,
    validation_errors,
)
from rubric_studio.core.checks._spec import JsonCheck, KeywordsCheck, LengthCheck, RegexCheck
from rubric_studio.core.results import Evidence
from rubric_studio.core.values import max_int_digits

__all__ = [
    "CheckFailure",
    "CheckTimeout",
    "Evaluator",
    "TextView",
    "falloff",
    "json_value",
]

def falloff(value: int, low: int | None, high: int | None) -> float:
    """1 inside [low, high]; linear to 0 at 1.5 × high above, at 0.5 × low below."""
    if high is not None and value > high:
        return max(0.0, 1.0 - (value - high) / (0.5 * high))
    if low is not None and value < low:
        return max(0.0, 1.0 - (low - value) / (0.5 * low)) if low > 0 else 1.0
    return 1.0


def _bounds_text(low: int | None, high: int | None, unit: str) -> str:
    if low is not None and high is not None:
        return f"{low}–{high} {unit}"
    if high is not None:
        return f"max {high} {unit}"
    return f"min {low} {unit}"


def length_evaluator(spec: LengthCheck) -> Evaluator:
    chars = (spec.min_chars, spec.max_chars) if spec.min_chars is not None or spec.max_chars is not None else None
    words = (spec.min_words, spec.max_words) if spec.min_words is not None or spec.max_words is not None else None
    chars_note = f" chars ({_bounds_text(*chars, 'chars')})" if chars else ""
    words_note = f" words ({_bounds_text(*words, 'words')})" if words else ""

    def evaluate(view: TextView) -> tuple[float, str, list[Evidence]]:
        if chars is None:
            count = view.word_count
            return falloff(count, *words), f"{count}{words_note}", []  # type: ignore[misc]
        count = len(view.text)
        score = falloff(count, *chars)
        why = f"{count}{chars_note}"
        if words is not None:
            word_count = view.word_count
            score = min(score, falloff(word_count, *words))
            why += f"; {word_count}{words_note}"
        return score, why, []

    return evaluate


def keywords_evaluator(spec: KeywordsCheck) -> Evaluator:
    required = spec.required is not None
    words = list(spec.required if required else spec.forbidden or [])
    flags = 0 if spec.case_sensitive else regex.IGNORECASE
    patterns = (
        [regex.compile(r"(?<!\w)" + regex.escape(w) + r"(?!\w)", flags) for w in words] if spec.whole_words else None
    )
    needles = words if spec.case_sensitive else [w.lower() for w in words]

    def evaluate(view: TextView) -> tuple[float, str, list[Evidence]]:
        present: list[str] = []
        evidence: list[Evidence] = []
        if patterns is not None:
            for word, pattern in zip(words, patterns, strict=True):
                try:
                    match = pattern.search(view.text, timeout=spec.timeout)
                except TimeoutError:
                    raise CheckTimeout(f"keyword {word!r} took longer than {spec.timeout:g}s on this sample") from None
                if match:
                    present.append(word)
                    evidence.append(Evidence(match.group(0), True, match.start(), match.end()))
        else:
            haystack = view.text if spec.case_sensitive else view.lower
            for word, needle in zip(words, needles, strict=True):
                at = haystack.find(needle)
                if at >= 0:
                    present.append(word)
                    evidence.append(Evidence(view.text[at : at + len(needle)], True, at, at + len(needle)))
        fraction = len(present) / len(words)
        if required:
            missing = [w for w in words if w not in present]
            why = f"{len(present)}/{len(words)} required keywords present"
            if missing:
                why += "; missing: " + ", ".join(repr(w) for w in missing)
            return fraction, why, evidence
        why = f"{len(present)}/{len(words)} forbidden keywords present"
        if present:
            why += ": " + ", ".join(repr(w) for w in present)
        return 1.0 - fraction, why, evidence

    return evaluate


def regex_evaluator(spec: RegexCheck) -> Evaluator:
    pattern = spec.compiled()

    def evaluate(view: TextView) -> tuple[float, str, list[Evidence]]:
        try:
            match = pattern.search(view.text, timeout=spec.timeout)
        except TimeoutError:
            raise CheckTimeout(f"regex took longer than {spec.timeout:g}s on this sample (catastrophic backtracking?)") from None
        if match is None:
            return (0.0 if spec.expect_match else 1.0), f"no match for /{spec.pattern}/", []
        evidence = [Evidence(match.group(0), True, match.start(), match.end())]
        why = f"/{spec.pattern}/ matched {match.group(0)[:80]!r} at {match.start()}"
        return (1.0 if spec.expect_match else 0.0), why, evidence

    return evaluate


_FENCE = regex.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n\s*```\s*$", regex.DOTALL)


def _parse_json_text(text: str) -> tuple[Any, str | None]:
    """(value, None) or (None, why it is not valid JSON); CheckFailure when it cannot be checked at all."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        raise CheckFailure("JSON nested too deeply to check") from None
    except ValueError:  # an integer past Python's digit limit
        raise CheckFailure(f"JSON has a number with more than {max_int_digits()} digits; cannot check it") from None


def json_value(text: str) -> tuple[Any, str | None]:
    """The JSON value of an output (bare, or alone in a ``` code fence), or (None, why it is not JSON).

    Bounded as every JSON check is: too deep a nesting or too long a number raises CheckFailure."""
    fenced = _FENCE.match(text)
    return _parse_json_text(fenced.group(1) if fenced else text)


def json_evaluator(spec: JsonCheck) -> Evaluator:
    validator = bounded_validator(spec.json_schema) if spec.json_schema is not None else None

    def evaluate(view: TextView) -> tuple[float, str, list[Evidence]]:
        value, not_json = json_value(view.text)
        if not_json is not None:
            return 0.0, not_json, []
        if validator is None:
            return 1.0, "valid JSON", []
        try:
            errors = validation_errors(validator, value, spec.timeout)
        except SchemaTimeout as exc:
            what = f"schema pattern {exc.pattern[:80]!r}" if exc.pattern else "schema validation"
            raise CheckTimeout(f"{what} took longer than {spec.timeout:g}s on this sample (catastrophic backtracking?)") from None
        except RecursionError:
            raise CheckFailure("schema validation recursed too deeply (a $ref cycle, or JSON nested too deeply)") from None
        except Exception as exc:  # an unresolvable $ref and the like: the schema's fault, not the sample's
            raise CheckFailure(describe_failure(exc)) from None
        if errors:
            first = min(errors, key=lambda e: [(isinstance(p, str), p) for p in e.path])
            where = "/".join(str(p) for p in first.path) or "(root)"
            return 0.0, f"JSON does not match the schema at {where}: {first.message}", []
        return 1.0, "valid JSON matching the schema", []

    return evaluate
