"""Deterministic checks: exact scores, bounded time, isolated custom code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rubric_studio.core.check_runner import CheckRunner
from rubric_studio.core.checks import falloff
from rubric_studio.core.grading import score_text
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.problems import RubricError
from rubric_studio.core.results import Status
from rubric_studio.core.samples import Sample


def run_one(check_yaml: str, text: str, *, allow_code: bool = False, base: Path | None = None, extra: str = ""):
    rubric = parse_rubric(f"name: t\ncriteria:\n  - id: k\n    check: {check_yaml}\n{extra}", str((base or Path(".")) / "r.yaml"))
    runner = CheckRunner(rubric, allow_code=allow_code, base_dir=base)
    return runner.run_sample(Sample(id="s", output=text))["k"]


def test_length_falloff_is_linear_to_zero_at_half_over_and_under():
    assert falloff(150, None, 150) == 1.0
    assert falloff(200, None, 150) == pytest.approx(1 - 50 / 75)
    assert falloff(225, None, 150) == 0.0
    assert falloff(20, 40, None) == 0.0
    assert falloff(30, 40, None) == pytest.approx(0.5)


def test_length_in_words_counts_whitespace_tokens():
    result = run_one("{type: length, max_words: 4}", "one  two\nthree\tfour five six")
    assert result.score == pytest.approx(1 - 2 / 2)
    assert result.status is Status.UNMET
    assert "6 words" in result.rationale


def test_length_chars_and_words_take_the_lower_score():
    result = run_one("{type: length, max_chars: 10, max_words: 100}", "x" * 12)
    assert result.score == pytest.approx(1 - 2 / 5)


def test_keywords_required_fraction_case_insensitive_with_evidence():
    result = run_one("{type: keywords, required: [refund, '30 days', invoice]}", "Your REFUND arrives within 30 Days.")
    assert result.score == pytest.approx(2 / 3)
    assert result.status is Status.UNMET
    assert [e.quote for e in result.evidence] == ["REFUND", "30 Days"]
    assert "missing: 'invoice'" in result.rationale


def test_keywords_forbidden_is_one_minus_fraction():
    result = run_one("{type: keywords, forbidden: ['As an AI', 'sorry']}", "As an AI, I cannot.")
    assert result.score == pytest.approx(0.5)


def test_keywords_case_sensitive_and_whole_words():
    assert run_one("{type: keywords, required: [Refund], case_sensitive: true}", "refund").score == 0.0
    assert run_one("{type: keywords, required: [art], whole_words: true}", "a smart start").score == 0.0
    assert run_one("{type: keywords, required: [art], whole_words: true}", "modern art.").score == 1.0


def test_regex_expect_match_and_flags():
    found = run_one(r"{type: regex, pattern: '\d{4}-\d{2}-\d{2}', expect_match: false}", "due 2024-05-01")
    assert found.status is Status.UNMET and found.evidence[0].quote == "2024-05-01"
    assert run_one("{type: regex, pattern: 'hello'}", "HELLO").status is Status.UNMET
    assert run_one("{type: regex, pattern: 'hello', flags: i}", "HELLO").status is Status.MET


def test_catastrophic_regex_ends_in_error_naming_its_time_bound():
    """The bound itself is timed in bench/bench_core.py: a wall clock in a test fails on a busy machine."""
    result = run_one("{type: regex, pattern: '^(a|a)+$', timeout: 0.2}", "a" * 40 + "!")
    assert result.status is Status.ERROR
    assert "longer than 0.2s" in result.error


SENTENCE = "Thanks for reaching out about your refund, a " * 4 + "!"


@pytest.mark.parametrize(("check", "text"), [
    (r"{type: regex, pattern: '(.|..)+\d$', timeout: 0.2}", SENTENCE),
    (r"{type: json, schema: {type: string, pattern: '(.|..)+\d$'}, timeout: 0.2}", json.dumps(SENTENCE)),
    ("{type: keywords, required: [a], whole_words: true, timeout: 0.000001}", "b " * 2_000_000),
])
def test_a_check_that_times_out_is_skipped_for_the_rest_of_the_run(check: str, text: str):
    """One catastrophic pattern costs one timeout per run, not one per sample."""
    rubric = parse_rubric(f"name: t\ncriteria:\n  - id: k\n    check: {check}\n  - id: n\n"
                          "    check: {type: length, min_words: 1}\n", "r.yaml")
    runner = CheckRunner(rubric)
    results = [runner.run_sample(Sample(id=f"s{i}", output=text)) for i in range(6)]
    assert [r["k"].status for r in results] == [Status.ERROR] * 6
    assert "longer than" in results[0]["k"].error
    for later in results[1:]:
        assert later["k"].error.startswith("not run: this check ran out of time on sample 's0'")
    assert all(r["n"].status is Status.MET for r in results)  # other checks still run
    # A new runner (the next run, or the check changed) tries again.
    assert "longer than" in CheckRunner(rubric).run_sample(Sample(id="s9", output=text))["k"].error


def test_json_parses_with_fences_and_validates_schema():
    schema = "{type: json, schema: {type: object, required: [score], properties: {score: {type: number}}}}"
    assert run_one(schema, '```json\n{"score": 3}\n```').status is Status.MET
    bad = run_one(schema, '{"score": "high"}')
    assert bad.status is Status.UNMET and "score" in bad.rationale
    broken = run_one("{type: json}", '{"a": }')
    assert broken.status is Status.UNMET and "not valid JSON" in broken.rationale


def test_min_score_lowers_the_bar_for_a_check():
    rubric = parse_rubric("name: t\ncriteria:\n  - id: k\n    check: {type: keywords, required: [a, b, c]}\n    min_score: 0.6\n")
    result = CheckRunner(rubric).run_sample(Sample(id="s", output="a b"))["k"]
    assert result.status is Status.MET


def _write_module(tmp_path: Path, name: str, body: str) -> None:
    (tmp_path / f"{name}.py").write_text(body)
    sys.modules.pop(name, None)


def test_python_check_runs_only_when_trusted(tmp_path: Path):
    _write_module(tmp_path, "mychecks", "def polite(text):\n    return ('please' in text, 'looked for please')\n")
    untrusted = run_one("{type: python, function: 'mychecks:polite'}", "please", base=tmp_path)
    assert untrusted.status is Status.UNJUDGED and "--allow-code" in untrusted.rationale
    trusted = run_one("{type: python, function: 'mychecks:polite'}", "please", allow_code=True, base=tmp_path)
    assert trusted.status is Status.MET and trusted.rationale == "looked for please"


def test_python_check_exception_and_hang_are_isolated_to_the_cell(tmp_path: Path):
    _write_module(tmp_path, "badchecks", "import time\ndef boom(text):\n    raise RuntimeError('nope')\ndef hang(text):\n    time.sleep(30)\n")
    boom = run_one("{type: python, function: 'badchecks:boom'}", "x", allow_code=True, base=tmp_path)
    assert boom.status is Status.ERROR and "RuntimeError: nope" in boom.error
    hang = run_one("{type: python, function: 'badchecks:hang', timeout: 0.2}", "x", allow_code=True, base=tmp_path)
    assert hang.status is Status.ERROR and "did not finish" in hang.error


def test_python_check_receives_context_by_parameter_name(tmp_path: Path):
    _write_module(tmp_path, "ctxchecks", "def same(text, ground_truth):\n    return 1.0 if text == ground_truth else 0.0\n")
    rubric = parse_rubric("name: t\ncriteria:\n  - id: k\n    check: {type: python, function: 'ctxchecks:same'}\n", str(tmp_path / "r.yaml"))
    runner = CheckRunner(rubric, allow_code=True, base_dir=tmp_path)
    assert runner.run_sample(Sample(id="s", output="42", ground_truth="42"))["k"].status is Status.MET


def test_command_check_reads_stdin_and_prints_a_score(tmp_path: Path):
    script = tmp_path / "score.py"
    script.write_text("import sys\ntext = sys.stdin.read()\nprint(0.25 if 'short' in text else 1.0, 'scored by script')\n")
    check = f"{{type: command, command: ['{sys.executable}', '{script}']}}"
    result = run_one(check, "a short answer", allow_code=True)
    assert result.score == pytest.approx(0.25) and result.rationale == "scored by script"
    assert run_one(check, "x", allow_code=False).status is Status.UNJUDGED


def test_command_check_failures_are_error_cells(tmp_path: Path):
    failing = run_one(f"{{type: command, command: ['{sys.executable}', '-c', 'import sys; sys.exit(4)']}}", "x", allow_code=True)
    assert failing.status is Status.ERROR and "exited with 4" in failing.error
    missing = run_one("{type: command, command: 'no-such-program-xyz'}", "x", allow_code=True)
    assert missing.status is Status.ERROR and "could not start" in missing.error
    garbage = run_one(f"{{type: command, command: ['{sys.executable}', '-c', 'print(\"high\")']}}", "x", allow_code=True)
    assert garbage.status is Status.ERROR and "expected a score" in garbage.error


def test_score_text_api_for_pipelines():
    rubric = parse_rubric(
        "name: t\npass_threshold: 0.5\ncriteria:\n  - id: short\n    check: {type: length, max_words: 5}\n"
        "  - id: kw\n    check: {type: keywords, required: [refund]}\n"
    )
    result = score_text(rubric, "Your refund is on its way")
    assert result.passed is True and result.total == pytest.approx((falloff(6, None, 5) + 1.0) / 2)
    assert result.details["kw"].evidence[0].quote == "refund"
    result = score_text(rubric, "We cannot help with that request today, sorry")
    assert result.passed is False and result.total == 0.0  # 8 words ≥ 1.5 × 5, no keyword


CATASTROPHIC = "'^(a|a)+$'"  # exponential on "aaaa…!" for both re and regex


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "schema",
    [
        f"{{type: object, properties: {{a: {{type: string, pattern: {CATASTROPHIC}}}}}}}",
        f"{{type: object, patternProperties: {{{CATASTROPHIC}: {{type: string}}}}}}",
        f"{{type: object, patternProperties: {{{CATASTROPHIC}: {{}}}}, additionalProperties: false}}",
        f"{{type: object, propertyNames: {{pattern: {CATASTROPHIC}}}}}",
    ],
    ids=["pattern", "patternProperties", "additionalProperties", "propertyNames"],
)
def test_catastrophic_schema_pattern_ends_in_error_instead_of_freezing(schema: str):
    evil = "a" * 40 + "!"
    result = run_one(f"{{type: json, timeout: 0.2, schema: {schema}}}", json.dumps({"a": evil, evil: evil}))
    assert result.status is Status.ERROR
    assert "schema pattern '^(a|a)+$' took longer than 0.2s" in result.error


def test_schema_patterns_still_decide_met_and_unmet():
    digits = "{type: json, schema: {type: object, properties: {code: {type: string, pattern: '^[0-9]+$'}}}}"
    assert run_one(digits, '{"code": "123"}').status is Status.MET
    assert "does not match" in run_one(digits, '{"code": "12a"}').rationale
    keys = "{type: json, schema: {type: object, patternProperties: {'^x-': {type: number}}, additionalProperties: false}}"
    assert run_one(keys, '{"x-a": 1}').status is Status.MET
    assert run_one(keys, '{"x-a": "one"}').status is Status.UNMET
    extra = run_one(keys, '{"x-a": 1, "y": 2}')
    assert extra.status is Status.UNMET and "'y' does not match any of the regexes" in extra.rationale


@pytest.mark.timeout(30)
def test_schema_refs_are_never_fetched(tmp_path: Path):
    import os

    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)  # fetching it would block forever
    for ref in (pipe.as_uri(), "http://127.0.0.1:9/schema.json"):
        result = run_one(f"{{type: json, schema: {{$ref: '{ref}'}}}}", "{}")
        assert result.status is Status.ERROR and "cannot be resolved" in result.error


def test_schema_ref_cycle_and_unreadable_json_are_error_cells():
    cycle = run_one("{type: json, schema: {$ref: '#'}}", "{}")
    assert cycle.status is Status.ERROR and "recursed too deeply" in cycle.error
    deep = run_one("{type: json, schema: {type: array}}", "[" * 100_000 + "]" * 100_000)
    assert deep.status is Status.ERROR and "nested too deeply" in deep.error
    huge = run_one("{type: json, schema: {type: number}}", "9" * 5000)
    assert huge.status is Status.ERROR and "more than 4300 digits" in huge.error


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ("{type: object, properties: {a: " * 40 + "{}" + "}}" * 40, "nested deeper than 64 levels"),
        ("{pattern: '(((('}", "does not compile"),
        ("{pattern: '" + "(" * 1500 + ")" * 1500 + "'}", "schema pattern"),
        ("{maximum: 0x" + "f" * 5000 + "}", "more than 4300 digits"),
        ("{const: 2024-01-01}", "expected plain JSON data, got a date"),
        ("{unevaluatedProperties: false, patternProperties: {'^a': {}}}", "do not support that combination"),
    ],
    ids=["deep", "bad-pattern", "deep-pattern", "huge-int", "date", "unevaluated"],
)
def test_unusable_schemas_are_reported_when_the_rubric_loads(schema: str, expected: str):
    with pytest.raises(RubricError) as caught:
        parse_rubric(f"name: t\ncriteria:\n  - id: k\n    check: {{type: json, schema: {schema}}}\n", "r.yaml")
    assert any(expected in p.message and p.line == 4 for p in caught.value.problems), caught.value.problems


def test_schemas_from_any_source_are_bounded_before_jsonschema_sees_them():
    from rubric_studio.core.checks import schema_problem

    assert "more than 4300 digits" in schema_problem({"maximum": 10**5000})
    assert "lone surrogate" in schema_problem({"const": "\ud800"})
    assert "keys must be text" in schema_problem({"properties": {1: {}}})
    assert schema_problem({"type": "object", "properties": {"a": {"pattern": "^[a-z]+$"}}}) is None
