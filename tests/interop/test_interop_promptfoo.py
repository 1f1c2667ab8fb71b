"""promptfoo: runnable config, assertion mapping, import, round trip, same verdicts."""

from __future__ import annotations

import pytest
import yaml

from rubric_studio.core.check_runner import CheckRunner
from rubric_studio.core.problems import RubricError
from rubric_studio.core.results import Verdict
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.core.scoring import score_sample
from rubric_studio.interop import export_rubric, import_rubric

ROUND_TRIP_FIELDS = ("outcome", "check", "weight", "required", "operator", "score_ranges", "min_score")


def _export(rubric):
    result = export_rubric(rubric, "promptfoo")
    return yaml.safe_load(result.text), result


def _flat(assertions):
    for entry in assertions:
        yield entry
        if entry["type"] == "assert-set":
            yield from _flat(entry["assert"])


def test_export_is_a_runnable_promptfoo_config(support_reply):
    data, result = _export(support_reply)
    assert result.suggested_suffix == ".promptfooconfig.yaml"
    assert result.text.startswith("# yaml-language-server: $schema=https://promptfoo.dev/config-schema.json")
    assert data["prompts"] == ["{{output}}"] and data["providers"] == ["echo"]
    assert data["tests"] and "output" in data["tests"][0]["vars"]
    assert data["defaultTest"]["options"]["provider"] == "openai:gpt-6-luna"  # no temperature set: none passed on
    warm = support_reply.model_copy(update={"judge": support_reply.judge.model_copy(update={"temperature": 0.3})})
    assert _export(warm)[0]["defaultTest"]["options"]["provider"] == {"id": "openai:gpt-6-luna",
                                                                     "config": {"temperature": 0.3}}
    assert data["evaluateOptions"] == {"maxConcurrency": 8}


def test_one_llm_rubric_per_criterion_with_weights_and_threshold(support_reply):
    data, _ = _export(support_reply)
    rubrics = {e["metric"]: e for e in _flat(data["defaultTest"]["assert"]) if e["type"].endswith("llm-rubric")}
    assert set(rubrics) == {"resolves-issue", "policy-accurate", "tone", "asks-for-credentials"}
    assert rubrics["resolves-issue"]["weight"] == 3
    assert rubrics["policy-accurate"]["value"].startswith("Passes unless the output contradicts")
    tone = rubrics["tone"]
    assert tone["threshold"] == 0.699999 and "- 0.7-0.9: Friendly and professional" in tone["value"]
    assert rubrics["asks-for-credentials"]["type"] == "not-llm-rubric"
    assert rubrics["asks-for-credentials"]["weight"] == 3


def test_required_criteria_are_top_level_and_the_rest_is_a_thresholded_set(support_reply):
    data, _ = _export(support_reply)
    top = data["defaultTest"]["assert"]
    assert [e.get("metric") for e in top[:2]] == ["resolves-issue", "policy-accurate"]
    scored = top[-1]
    assert scored["type"] == "assert-set"
    # positive 9, required 5 (always 1 when the test can pass), penalties 3, set weight 7
    assert scored["threshold"] == pytest.approx((0.8 * 9 - 5 + 3) / 7 - 1e-6, abs=1e-6)
    assert scored["threshold"] < (0.8 * 9 - 5 + 3) / 7  # never above ours: boundary scores pass there too


def test_deterministic_checks_map_to_native_asserts(support_reply):
    data, result = _export(support_reply)
    by_metric = {}
    for entry in _flat(data["defaultTest"]["assert"]):
        by_metric.setdefault(entry.get("metric"), []).append(entry)
    assert [e["type"] for e in by_metric["no-boilerplate"]] == ["not-icontains"] * 3
    assert [e["value"] for e in by_metric["no-boilerplate"]] == ["As an AI", "apologize for any inconvenience",
                                                                 "Dear valued customer"]
    warning = next(w for w in result.warnings if "no-boilerplate" in w)
    assert "fraction" in warning and "each word as its own pass/fail" in warning
    # promptfoo's regex has no flags, so the case-insensitive check runs as javascript
    assert by_metric["no-internal-links"][0]["type"] == "javascript"
    assert by_metric["short"][0]["type"] == "javascript"


def test_regex_json_and_keyword_variants():
    rubric = Rubric.model_validate({"name": "shapes", "criteria": [
        {"id": "has-date", "check": {"type": "regex", "pattern": r"\d{4}-\d{2}"}},
        {"id": "no-date", "check": {"type": "regex", "pattern": r"\d{4}", "expect_match": False}},
        {"id": "valid", "check": {"type": "json", "schema": {"type": "object", "required": ["a"]}}},
        {"id": "mentions", "check": {"type": "keywords", "required": ["Acme"], "case_sensitive": True}},
        {"id": "custom", "check": {"type": "python", "function": "checks:tone"}},
        "Is helpful",
    ]})
    data, result = _export(rubric)
    entries = {e.get("metric"): e for e in _flat(data["defaultTest"]["assert"])}
    assert entries["has-date"]["type"] == "regex" and entries["has-date"]["value"] == r"\d{4}-\d{2}"
    assert entries["no-date"]["type"] == "not-regex"
    assert entries["valid"] == {"type": "is-json", "metric": "valid", "value": {"type": "object", "required": ["a"]},
                                "weight": 1}
    assert entries["mentions"]["type"] == "contains"
    assert "custom" not in entries
    assert any("'custom'" in w and "python check" in w for w in result.warnings)
    assert any("'valid'" in w and "code fence" in w for w in result.warnings)


def test_template_syntax_in_criteria_is_kept_literal():
    rubric = Rubric.model_validate({"name": "t", "criteria": ["Mentions the {{name}} placeholder literally"]})
    data, _ = _export(rubric)
    value = next(e for e in _flat(data["defaultTest"]["assert"]) if e["type"] == "llm-rubric")["value"]
    assert value == "{% raw %}Mentions the {{name}} placeholder literally{% endraw %}"
    back = import_rubric(export_rubric(rubric, "promptfoo").text, "promptfoo").rubric
    assert back.criteria[0].outcome == "Mentions the {{name}} placeholder literally"


def test_javascript_checks_compute_our_scores(run_js):
    rubric = Rubric.model_validate({"name": "js", "criteria": [
        {"id": "len", "check": {"type": "length", "min_words": 4, "max_words": 8}, "min_score": 0.5},
        {"id": "words", "check": {"type": "keywords", "forbidden": ["foo", "bar baz"], "whole_words": True}},
        {"id": "re", "check": {"type": "regex", "pattern": "^hello", "flags": "im"}},
        "Is fine",
    ]})
    data, _ = _export(rubric)
    js = [e for e in _flat(data["defaultTest"]["assert"]) if e["type"] == "javascript"]
    assert [e["metric"] for e in js] == ["len", "words", "re"]
    texts = ["one two", "Hello there, foo and food, and then some words more than eight here yes",
             "x\nhello bar baz", "ok then four words"]
    results = run_js([(e["value"], t) for t in texts for e in js])
    runner = CheckRunner(rubric)
    for n, text in enumerate(texts):
        ours = runner.run_sample(Sample(id=str(n), output=text))
        for k, entry in enumerate(js):
            got = results[n * len(js) + k]
            assert got["score"] == pytest.approx(ours[entry["metric"]].score), (entry["metric"], text)
            assert got["pass"] == (ours[entry["metric"]].status == "met")


def test_round_trip_keeps_every_field_promptfoo_expresses(sample_rubric, compare):
    result = export_rubric(sample_rubric, "promptfoo")
    imported = import_rubric(result.text, "promptfoo")
    assert compare(sample_rubric, imported.rubric, ROUND_TRIP_FIELDS) == []
    assert imported.rubric.pass_threshold == pytest.approx(sample_rubric.pass_threshold)
    assert imported.rubric.judge.model == sample_rubric.judge.model
    assert imported.rubric.name == sample_rubric.name


def test_import_promptfoo_docs_style_config(fixtures):
    result = import_rubric(fixtures / "promptfoo" / "promptfooconfig.yaml")
    rubric = result.rubric
    assert result.detected == "promptfoo"
    assert rubric.pass_threshold == 0.7  # the test threshold: every assertion is scored
    assert rubric.judge.model == "openai:gpt-4.1"
    polite = rubric.criterion("is-polite-and-does")
    assert polite.weight == 2 and not polite.required
    assert rubric.criterion("offers-a-replacement-or").weight == 3
    checks = {c.key: c.check.model_dump(by_alias=True, exclude_defaults=True) for c in rubric.check_criteria}
    assert checks["keywords-as-an-ai"] == {"type": "keywords", "forbidden": ["as an AI language model"]}
    assert checks["keywords-acme"]["case_sensitive"] is True
    assert checks["regex-b-d-5"]["pattern"] == r"\b\d{5}\b"
    assert checks["json"]["schema"]["required"] == ["reply"]
    assert any("javascript" in w and "skipped" in w for w in result.warnings)


def test_import_without_threshold_makes_every_assert_required(fixtures):
    result = import_rubric(fixtures / "promptfoo" / "all-must-pass.yaml", "promptfoo")
    rubric = result.rubric
    assert all(c.required for c in rubric.criteria)
    assert rubric.criterion("adds-commentary-about-the").outcome.startswith("The output does NOT")
    natural = rubric.criterion("sounds-natural-to-a")
    assert natural.min_score == 0.8 and natural.score_ranges
    assert rubric.pass_threshold == 0
    assert any("does NOT" in w for w in result.warnings)


# -- same verdicts -------------------------------------------------------------
def _run(entry, results, text, js, deterministic):
    kind = entry["type"]
    if kind == "assert-set":
        parts = [(m.get("weight", 1), *_run(m, results, text, js, deterministic)) for m in entry["assert"]]
        score = sum(w * s for w, _, s in parts) / sum(w for w, _, _ in parts)
        passed = score >= entry["threshold"] if "threshold" in entry else all(p for _, p, _ in parts)
        return passed, score
    negated = kind.startswith("not-")
    base = kind[4:] if negated else kind
    if base == "llm-rubric":
        cell = results[entry["metric"]]
        score = cell.score
        passed = score >= entry["threshold"] if "threshold" in entry else score >= 0.5
        return (not passed, 1 - score) if negated else (passed, score)
    if base == "javascript":
        got = js[(entry["value"], text)]
        return got["pass"], got["score"]
    return deterministic(base, negated, entry, text)


def test_promptfoo_export_gives_the_same_verdicts(graded_samples, run_js, deterministic):
    exports = {}
    pairs = []
    for rubric, sample, _ in graded_samples:
        exports.setdefault(rubric.name, _export(rubric)[0])
        for entry in _flat(exports[rubric.name]["defaultTest"]["assert"]):
            if entry["type"] == "javascript" and (entry["value"], sample.output) not in pairs:
                pairs.append((entry["value"], sample.output))
    js = dict(zip(pairs, run_js(pairs), strict=True))
    verdicts = []
    for rubric, sample, results in graded_samples:
        ours = score_sample(rubric, results)
        top = exports[rubric.name]["defaultTest"]["assert"]
        theirs = all(_run(entry, results, sample.output, js, deterministic)[0] for entry in top)
        assert theirs == (ours.verdict == Verdict.PASS), (rubric.name, sample.id, ours.score)
        verdicts.append(theirs)
    assert verdicts.count(True) > 5 and verdicts.count(False) > 5


# -- foreign configs shaped like promptfoo's public examples ---------------------------
def _pf(fixtures, name):
    return import_rubric(fixtures / "promptfoo" / name, "promptfoo")


def test_a_metric_repeated_across_tests_gets_numbered_ids_and_repeated_asserts_fold(fixtures):
    result = _pf(fixtures, "structured-output.yaml")  # refused before: duplicate criterion id
    rubric = result.rubric
    assert [c.key for c in rubric.criteria] == ["ValidJSON", "SummaryAccuracy", "SummaryAccuracy-2"]
    assert rubric.criterion("ValidJSON").tags == ["test:1", "test:2"]  # one is-json, run in both tests
    assert "charged twice" in rubric.criterion("SummaryAccuracy").outcome
    assert "password" in rubric.criterion("SummaryAccuracy-2").outcome
    assert any("SummaryAccuracy (SummaryAccuracy-2)" in w and "named score" in w for w in result.warnings)


def test_duplicate_id_and_judge_model_messages_show_the_value():
    with pytest.raises(ValueError) as dup:
        Rubric.model_validate({"name": "d", "criteria": [{"id": "quality", "outcome": "a"},
                                                         {"id": "quality", "outcome": "b"}]})
    assert "duplicate criterion id 'quality'" in str(dup.value) and "!r" not in str(dup.value)
    with pytest.raises(ValueError) as model:
        Rubric.model_validate({"name": "m", "judge": {"model": "gpt-4o"}, "criteria": ["a"]})
    assert "got 'gpt-4o'" in str(model.value) and "!r" not in str(model.value)


def test_tests_with_different_thresholds_are_named_and_the_one_used_is_said(fixtures):
    result = _pf(fixtures, "thresholds-per-test.yaml")
    rubric = result.rubric
    # two tests of three pass only when every assertion passes; before, test 3's 0.5 applied to all
    assert all(c.required for c in rubric.criteria) and rubric.pass_threshold == 0.8
    warning = next(w for w in result.warnings if "tests use different thresholds" in w)
    assert "0.5 in 'lenient peru'" in warning and "'france', 'japan'" in warning
    assert "so none (every assertion must pass) is used" in warning


def _all_pass(assertions, text):
    """promptfoo's verdict for a test without threshold: every assertion passes."""
    low = text.lower()
    for a in assertions:
        words = a["value"] if isinstance(a["value"], list) else [a["value"]]
        hits = [w.lower() in low for w in words]
        passed = {"icontains": all, "icontains-any": any}.get(a["type"].removeprefix("not-"))(hits)
        if passed == a["type"].startswith("not-"):
            return False
    return True


def test_assertions_share_a_criterion_only_when_the_verdicts_stay_the_same(fixtures):
    result = _pf(fixtures, "shared-metric.yaml")
    rubric = result.rubric
    relevance = rubric.criterion("ActionRelevance")
    assert relevance.check.required == ["refund", "reimburse"] and relevance.min_score == 0.5
    assert rubric.criterion("ActionRelevance-2").check.required == ["order"]
    boilerplate = rubric.criterion("no-boilerplate")  # the export's split: one check again, weight exactly 1
    assert len(boilerplate.check.forbidden) == 6 and boilerplate.weight == 1
    mentions = rubric.criterion("mentions")
    assert mentions.check.required == ["invoice", "receipt"] and mentions.tags == ["test:first", "test:second"]
    data = yaml.safe_load((fixtures / "promptfoo" / "shared-metric.yaml").read_text())
    assertions = data["defaultTest"]["assert"] + [a for t in data["tests"] for a in t["assert"]]
    runner = CheckRunner(rubric)
    texts = ["We refund or reimburse; invoice and receipt attached.",  # no 'order': promptfoo fails it
             "Refund for your order; invoice and receipt attached.", "Your order: invoice, receipt, sincerely",
             "order reimburse invoice receipt", "refund order invoice"]
    for n, text in enumerate(texts):
        ours = score_sample(rubric, runner.run_sample(Sample(id=str(n), output=text)))
        assert (ours.verdict == Verdict.PASS) == _all_pass(assertions, text), text


@pytest.mark.parametrize("target", ["promptfoo", "agentv"])
def test_a_split_keywords_check_comes_back_with_its_exact_weight(target):
    rubric = Rubric.model_validate({"name": "w", "criteria": [
        {"id": "no-filler", "check": {"type": "keywords", "forbidden": ["a1", "a2", "a3", "a4", "a5", "a6"]}},
        {"id": "polite", "outcome": "Is polite", "weight": 2}]})
    back = import_rubric(export_rubric(rubric, target).text, target).rubric
    assert back.criterion("no-filler").weight == 1.0  # was 1.00001: rounded after every addition
    assert back.criterion("no-filler").check.forbidden == ["a1", "a2", "a3", "a4", "a5", "a6"]


def test_a_grader_prompt_or_provider_on_one_assertion_is_warned_naming_it(fixtures):
    result = _pf(fixtures, "fairness.yaml")
    assert result.rubric.criterion("factual_correctness").outcome == "factual_correctness"
    label = next(w for w in result.warnings if "fairness.yaml:12:7" in w)
    assert "rubricPrompt" in label and "provider" in label and "only a label" in label
    own = next(w for w in result.warnings if "fairness.yaml:19:7" in w)
    assert "rubricPrompt" in own and "only a label" not in own


def test_checks_on_transformed_output_are_skipped_and_judges_warned(fixtures):
    result = _pf(fixtures, "transforms.yaml")
    rubric = result.rubric
    kept = {c.key for c in rubric.criteria}
    assert kept == {"json", "keywords-sea-ice", "lists-countries-that-grow"}  # trim() cannot change these
    warnings = "\n".join(result.warnings)
    assert "transforms.yaml:18:9: contains-any runs on the output after transform 'JSON.parse(output)'" in warnings
    assert "transforms.yaml:24:9: icontains runs on the output after transform 'JSON.parse(output).tweet'" in warnings
    assert "transforms.yaml:27:9: starts-with runs on the output after transform 'output.trim()'" in warnings
    assert "transforms.yaml:20:9: promptfoo's judge grades the output after transform" in warnings


def test_template_values_are_filled_where_one_value_holds_and_otherwise_not_used_as_literals(fixtures):
    result = _pf(fixtures, "templates.yaml")
    rubric = result.rubric
    assert not any("{{" in word for c in rubric.check_criteria for word in c.check.required or [])
    assert rubric.criterion("keywords-tokyo").check.required == ["Tokyo"]  # the test's own vars
    judged = rubric.judge_criteria[0]
    assert judged.outcome == "Answers in English and names {{capital}} as the capital of {{country}}"
    warnings = "\n".join(result.warnings)
    assert "templates.yaml:9:7: icontains value uses {{capital}} (it has 2 different values in 2 tests)" in warnings
    assert "{{language}} filled with 'English', the value all 2 tests give it" in warnings
    assert "llm-rubric text uses {{capital}}" in warnings and "{{country}}" in warnings
    assert "regex value uses {{capital | lower}}" in warnings


def test_when_every_assertion_is_skipped_the_refusal_counts_the_reasons(fixtures):
    with pytest.raises(RubricError) as refused:
        _pf(fixtures, "nothing-imports.yaml")
    message = refused.value.problems[0].message
    assert message.startswith("no rubric criteria found: every assertion was skipped")
    assert "search-rubric (no rubric-studio equivalent): 2" in message
    assert "javascript (code is not run from an imported file): 1" in message and "cost" in message


def test_model_graded_closedqa_and_g_eval_import_factuality_is_skipped(fixtures):
    result = _pf(fixtures, "model-graded.yaml")
    rubric = result.rubric
    closedqa = rubric.criterion("does-not-include-any")
    assert closedqa.kind == "checklist" and closedqa.required
    coherence = rubric.criterion("coherence-the-reply-is")
    assert coherence.score_ranges and coherence.min_score == 0.7  # promptfoo's default g-eval threshold
    fluency, relevance = rubric.criterion("fluency-grammar-spelling-and"), rubric.criterion("relevance-only-important-information")
    assert fluency.weight == relevance.weight == 0.5 and fluency.min_score == 0.8  # "0.8" quoted
    assert rubric.criterion("evaluate-overall-quality").min_score == 0.6  # threshold: "0.6" on llm-rubric
    assert not any("Sacramento" in (c.outcome or "") and "capital" in (c.outcome or "") for c in rubric.criteria)
    warnings = "\n".join(result.warnings)
    assert "factuality grades the output against the reference answer" in warnings
    assert "promptfoo's own grading prompt" in warnings and "G-Eval prompt" in warnings


# -- the graded samples as promptfoo tests ------------------------------------------------
def _rubric_with_samples(folder):
    """A checks-only rubric (deterministic in promptfoo too) with samples beside it."""
    rubric = folder / "reply.yaml"
    rubric.write_text("name: reply\npass_threshold: 0.5\ncriteria:\n"
                      "  - id: short\n    check: {type: length, max_words: 5}\n    required: true\n"
                      "  - id: polite\n    check: {type: keywords, required: [thanks]}\n")
    (folder / "reply.samples.jsonl").write_text(
        '{"id": "brief", "input": "Hi?", "output": "Thanks, done {{ not_a_var }}."}\n'
        '{"id": "rambling", "output": "Thanks a lot, this is a much longer reply than five words."}\n')
    return rubric


def test_cli_export_carries_the_samples_beside_the_rubric_as_promptfoo_tests(tmp_path, capsys):
    from rubric_studio.cli import main

    rubric = _rubric_with_samples(tmp_path)
    out = tmp_path / "promptfooconfig.yaml"
    assert main(["export", str(rubric), "--to", "promptfoo", "-o", str(out)]) == 0
    tests = yaml.safe_load(out.read_text())["tests"]
    assert [t["description"] for t in tests] == ["brief", "rambling"]
    assert tests[0]["vars"] == {"output": "Thanks, done {{ not_a_var }}.", "input": "Hi?"}
    assert "reply.samples.jsonl" in capsys.readouterr().err  # says where the tests came from
    assert main(["export", str(rubric), "--to", "promptfoo", "--no-samples", "-o", str(out)]) == 0
    assert len(yaml.safe_load(out.read_text())["tests"]) == 1  # the one example to replace


def test_exported_samples_grade_in_the_real_promptfoo_as_they_grade_here(tmp_path):
    import json
    import os
    import shutil
    import subprocess

    from tests._timing import scaled

    promptfoo = os.environ.get("PROMPTFOO") or shutil.which("promptfoo")
    if promptfoo is None:
        pytest.skip("promptfoo not installed (npm install -g promptfoo@0.121.20; set $PROMPTFOO)")
    from rubric_studio.cli import main

    rubric = _rubric_with_samples(tmp_path)
    config = tmp_path / "promptfooconfig.yaml"
    assert main(["export", str(rubric), "--to", "promptfoo", "-o", str(config)]) == 0
    env = {**os.environ, "HOME": str(tmp_path), "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_CACHE_ENABLED": "false"}
    subprocess.run([promptfoo, "eval", "-c", str(config), "-o", str(tmp_path / "out.json"), "--no-progress-bar"],
                   cwd=tmp_path, env=env, capture_output=True, text=True, timeout=scaled(240))
    results = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    theirs = {r["testCase"]["description"]: (r["success"], r["response"]["output"]) for r in results}
    assert theirs == {"brief": (True, "Thanks, done {{ not_a_var }}."),
                      "rambling": (False, "Thanks a lot, this is a much longer reply than five words.")}
