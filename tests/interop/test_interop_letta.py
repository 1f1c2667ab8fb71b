"""Letta evals: model_judge suite export, current and legacy suite import, round trip."""

from __future__ import annotations

import json
import string

import pytest
import yaml

from rubric_studio.core.problems import RubricError
from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import export_rubric, import_rubric

ROUND_TRIP_FIELDS = ("outcome", "weight", "required", "operator", "score_ranges", "min_score", "tags")


def _export(rubric):
    result = export_rubric(rubric, "letta")
    return yaml.safe_load(result.text), result


def test_export_is_a_model_judge_suite(support_reply):
    data, result = _export(support_reply)
    assert result.suggested_suffix == ".suite.yaml"
    assert data["name"] == "support-reply" and data["dataset"] and data["target"] == {"kind": "letta_code"}
    (key, grader), = data["graders"].items()
    assert data["reward"] == {"kind": "metric", "metric_key": key}
    assert grader["kind"] == "model_judge"
    assert (grader["model"], grader["provider"], grader["temperature"], grader["max_retries"], grader["timeout"]) == \
        ("gpt-6-luna", "openai", 0, 3, 60)
    assert grader["extractor"] == "last_assistant"
    assert data["max_concurrent"] == 8


def test_prompt_fills_like_letta_does(support_reply):
    """Letta substitutes with str.format rules; every other brace must survive as a literal."""
    rubric = Rubric.model_validate({
        "name": "braces",
        "criteria": [{"id": "json-shape", "outcome": 'Replies with {"ok": true} exactly'}, *support_reply.model_dump()["criteria"][:2]],
    })
    data, _ = _export(rubric)
    prompt = next(iter(data["graders"].values()))["prompt"]
    filled = string.Formatter().vformat(prompt, (), {"input": "Q?", "ground_truth": "", "submission": "ANSWER"})
    assert "Response to grade:\nANSWER" in filled and "Input:\nQ?" in filled
    assert '{"ok": true}' in filled and '{"score": <number from 0.0 to 1.0>' in filled
    assert "[json-shape] (weight 1)" in filled
    assert "PASS when total >= 0.8 and every required criterion is met" in filled


def test_checks_and_threshold_are_reported(support_reply):
    _, result = _export(support_reply)
    for check_id in ("short", "no-boilerplate", "no-internal-links"):
        assert any(f"'{check_id}'" in w and "not exported" in w for w in result.warnings)
    assert any("no per-sample pass/fail" in w for w in result.warnings)


def test_ollama_judge_points_at_openai_base_url():
    rubric = Rubric.model_validate({"name": "local", "judge": {"model": "ollama:llama3.1"}, "criteria": ["Is short"]})
    data, result = _export(rubric)
    grader = next(iter(data["graders"].values()))
    assert (grader["provider"], grader["model"]) == ("openai", "llama3.1")
    assert any("OPENAI_BASE_URL=http://localhost:11434/v1" in w for w in result.warnings)


def test_round_trip_keeps_every_field_letta_expresses(sample_rubric, compare):
    result = export_rubric(sample_rubric, "letta")
    imported = import_rubric(result.text, "letta")
    judged = [c.key for c in sample_rubric.judge_criteria]
    assert compare(sample_rubric, imported.rubric, ROUND_TRIP_FIELDS, ids=judged) == []
    assert [c.key for c in imported.rubric.criteria] == judged
    assert imported.rubric.pass_threshold == sample_rubric.pass_threshold
    assert imported.rubric.description == sample_rubric.description
    before, after = sample_rubric.judge, imported.rubric.judge
    for name in ("model", "temperature", "timeout", "max_retries", "concurrency"):
        assert getattr(after, name) == getattr(before, name), name


def test_import_current_suite_with_prompt_path(fixtures):
    result = import_rubric(fixtures / "letta" / "suite.yaml")
    rubric = result.rubric
    assert result.detected == "letta"
    assert rubric.name == "capital-cities-rubric"
    (quality,) = rubric.criteria
    assert quality.key == "quality" and quality.kind == "analytic"
    assert quality.outcome.startswith("You are grading an answer about world capitals.")
    assert "- 0.5: names the correct capital but adds a false detail" in quality.outcome
    assert "{submission}" not in quality.outcome and "{input}" not in quality.outcome
    assert rubric.judge.model == "openai:gpt-4.1-mini"
    assert (rubric.judge.timeout, rubric.judge.max_retries) == (90.0, 3)
    assert any("ascii_only" in w and "tool" in w for w in result.warnings)


def test_import_legacy_rubric_kind_and_gate(fixtures):
    result = import_rubric(fixtures / "letta" / "legacy_suite.yaml", "letta")
    rubric = result.rubric
    assert rubric.pass_threshold == 0.75  # gate: creativity gte 0.75
    assert rubric.criteria[0].key == "calm_tone"
    assert rubric.criteria[0].outcome.startswith("Decide how soothing this bedtime story is")
    assert rubric.judge.model == "openai:gpt-4o-mini"
    assert (rubric.judge.max_retries, rubric.judge.timeout) == (5, 120.0)  # Letta's defaults, made explicit
    assert any("kind: rubric" in w for w in result.warnings)
    assert any("gate" in w for w in result.warnings)


def test_missing_prompt_file_is_a_positioned_error(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text("name: s\ndataset: d.jsonl\ngraders:\n  q:\n    kind: model_judge\n    prompt_path: nope.txt\n")
    with pytest.raises(RubricError) as caught:
        import_rubric(suite, "letta")
    problem = caught.value.problems[0]
    assert problem.file == str(suite) and (problem.line, problem.column) == (6, 18)
    assert "nope.txt" in problem.message


@pytest.mark.parametrize("prompt_path", ["../secret.txt", "/etc/hostname", "~/.bashrc"])
def test_prompt_file_outside_the_suite_folder_is_never_read(tmp_path, prompt_path):
    """A suite from someone else must not pull a private file into the rubric (and so into judge requests)."""
    folder = tmp_path / "suite"
    folder.mkdir()
    (tmp_path / "secret.txt").write_text("SECRET-TOKEN {input} {output}\n")
    suite = folder / "suite.yaml"
    suite.write_text(f"name: s\ndataset: d.jsonl\ngraders:\n  q:\n    kind: model_judge\n    prompt_path: {prompt_path}\n")
    with pytest.raises(RubricError) as caught:
        import_rubric(suite, "letta")
    problem = caught.value.problems[0]
    assert (problem.line, problem.column) == (6, 18)
    assert "outside the suite's folder" in problem.message
    assert "SECRET-TOKEN" not in str(caught.value)


def _suite_with_prompt_one_folder_up(tmp_path):
    """A suite in suites/ whose grader reads ../rubric.txt, as public Letta suites do."""
    (tmp_path / "suites").mkdir()
    (tmp_path / "rubric.txt").write_text("Rate the answer for accuracy.\n\nInput: {input}\nAnswer: {submission}\n")
    suite = tmp_path / "suites" / "suite.yaml"
    suite.write_text("name: s\ndataset: d.jsonl\ngraders:\n  q:\n    kind: model_judge\n"
                     "    prompt_path: ../rubric.txt\n")
    return suite


def test_prompt_file_one_folder_up_imports_once_the_suite_is_trusted(tmp_path, capsys):
    from rubric_studio.cli import main

    suite = _suite_with_prompt_one_folder_up(tmp_path)
    assert main(["import", str(suite)]) == 2  # untrusted: nothing read, the way to trust it named
    err = capsys.readouterr().err
    assert f"{suite}:6:18:" in err and str(tmp_path / "rubric.txt") in err and "--allow-code" in err
    assert "accuracy" not in err
    out = tmp_path / "imported.yaml"
    assert main(["import", str(suite), "--allow-code", "-o", str(out)]) == 0
    assert "Rate the answer for accuracy." in out.read_text()


def test_a_trusted_prompt_path_reads_that_file_only(tmp_path):
    from rubric_studio.core.trust import Trust

    suite = _suite_with_prompt_one_folder_up(tmp_path)
    trusted = Trust(values=frozenset({("judge.prompt_path", str((tmp_path / "rubric.txt").resolve()))}))
    assert "accuracy" in import_rubric(suite, "letta", trust=trusted).rubric.criteria[0].outcome
    suite.write_text(suite.read_text().replace("../rubric.txt", "../other.txt"))
    (tmp_path / "other.txt").write_text("SECRET-TOKEN {input}\n")
    with pytest.raises(RubricError) as caught:  # trust covers the path it was given for, nothing else
        import_rubric(suite, "letta", trust=trusted)
    assert "SECRET-TOKEN" not in str(caught.value) and "other.txt" in str(caught.value)


# -- per-sample rubric_vars ------------------------------------------------------------
def _suite(folder, prompt, dataset="dataset.jsonl", rows=None, name="dataset.jsonl"):
    """A Letta suite in ``folder`` with one model judge using ``prompt``, and its dataset rows (text lines)."""
    folder.mkdir(parents=True, exist_ok=True)
    if rows is not None:
        (folder / name).write_text("".join(f"{row}\n" for row in rows))
    suite = folder / "suite.yaml"
    graders = {"q": {"kind": "model_judge", "prompt": prompt}}
    suite.write_text(yaml.safe_dump({"name": "s", "dataset": dataset, "graders": graders}))
    return suite


def _vars_row(**variables):
    return json.dumps({"input": "Q?", "rubric_vars": variables})


def test_rubric_var_every_sample_shares_is_filled(fixtures):
    result = import_rubric(fixtures / "letta" / "rubric_vars" / "suite.yaml")
    clarity = next(c for c in result.rubric.criteria if c.key == "clarity")
    assert clarity.outcome.startswith("Judge how clear this recipe is for a beginner cook.")
    assert '{"score": 0.5, "rationale": "..."}' in clarity.outcome  # doubled braces still read as literal ones
    assert "{audience}" not in clarity.outcome
    (filled,) = [w for w in result.warnings if "{audience}" in w]
    assert "grader 'clarity'" in filled and "filled" in filled and "dataset.jsonl" in filled


def test_rubric_var_that_differs_per_sample_is_kept_and_named(fixtures):
    result = import_rubric(fixtures / "letta" / "rubric_vars" / "suite.yaml")
    task = next(c for c in result.rubric.criteria if c.key == "task_completion")
    assert "{rubric_task_completion}" in task.outcome
    assert "lists flour" not in task.outcome
    (kept,) = [w for w in result.warnings if "{rubric_task_completion}" in w]
    assert "grader 'task_completion'" in kept and "rubric_vars" in kept
    assert "differs across the 3 samples" in kept and "kept as literal text" in kept


def test_missing_dataset_warns_for_each_placeholder(tmp_path):
    suite = _suite(tmp_path, "Check {first} and {second}.\nAnswer: {submission}\n", dataset="nope.jsonl")
    result = import_rubric(suite, "letta")
    (criterion,) = result.rubric.criteria
    assert "{first}" in criterion.outcome and "{second}" in criterion.outcome
    for name in ("{first}", "{second}"):
        (warning,) = [w for w in result.warnings if name in w]
        assert "nope.jsonl" in warning and "cannot be read" in warning and "kept as literal text" in warning


def test_placeholder_missing_from_some_samples_is_kept(tmp_path):
    rows = [_vars_row(level="B2"), _vars_row(level="B2"), json.dumps({"input": "Q?"})]
    result = import_rubric(_suite(tmp_path, "Graded at level {level}.\nAnswer: {submission}\n", rows=rows), "letta")
    assert "{level}" in result.rubric.criteria[0].outcome
    assert any("{level}" in w and "missing from 1 of the 3 samples" in w for w in result.warnings)


@pytest.mark.parametrize("where", ["../x.jsonl", "absolute", "symlink"])
def test_dataset_outside_the_suite_folder_is_never_read(tmp_path, where):
    """A suite from someone else must not pull a private file's text into the rubric."""
    outside = tmp_path / "x.jsonl"
    outside.write_text(_vars_row(secret="SECRET-TOKEN") + "\n")
    folder = tmp_path / "suite"
    folder.mkdir()
    dataset = {"../x.jsonl": "../x.jsonl", "absolute": str(outside), "symlink": "link.jsonl"}[where]
    if where == "symlink":
        (folder / "link.jsonl").symlink_to(outside)
    result = import_rubric(_suite(folder, "Use {secret}.\nAnswer: {submission}\n", dataset=dataset), "letta")
    assert "{secret}" in result.rubric.criteria[0].outcome
    assert "SECRET-TOKEN" not in result.rubric.model_dump_json() and "SECRET-TOKEN" not in str(result.warnings)
    assert any("{secret}" in w and "outside the suite's folder" in w for w in result.warnings)


def test_malformed_dataset_lines_are_warned_with_file_and_line(tmp_path):
    rows = [_vars_row(v="same"), "{not json", "[1, 2]", json.dumps({"input": "Q", "rubric_vars": ["x"]}),
            json.dumps({"input": "Q", "rubric_vars": {"input": "shadow"}}), _vars_row(v="same")]
    result = import_rubric(_suite(tmp_path, "Keep {v}.\nAnswer: {submission}\n", rows=rows), "letta")
    file = str(tmp_path / "dataset.jsonl")
    for line in (2, 3, 4, 5):
        assert any(w.startswith(f"{file}:{line}:") and "row skipped" in w for w in result.warnings), line
    assert "{v}" in result.rubric.criteria[0].outcome
    assert any("{v}" in w and "4 row(s)" in w and "could not be read" in w for w in result.warnings)


def test_csv_dataset_rubric_vars_column_and_own_rubric_rows(tmp_path):
    rows = ["input,rubric_vars,rubric", '"Q1","{""tone"": ""friendly {and} warm""}",',
            '"Q2","{""tone"": ""friendly {and} warm""}",', '"Q3",,Grade this one on its own terms']
    suite = _suite(tmp_path, "Expect a {tone} reply.\nAnswer: {submission}\n", dataset="data.csv", rows=rows, name="data.csv")
    result = import_rubric(suite, "letta")
    assert result.rubric.criteria[0].outcome.startswith("Expect a friendly {and} warm reply")
    assert any("{tone}" in w and "all 2 samples" in w for w in result.warnings)
    assert any("1 sample(s) carry their own rubric" in w for w in result.warnings)


def test_bad_csv_rubric_vars_cell_is_warned_with_its_line(tmp_path):
    rows = ["input,rubric_vars", '"Q1","{""a"": 1}"', '"Q2","{oops"']
    suite = _suite(tmp_path, "Mention {a}.\nAnswer: {submission}\n", dataset="data.csv", rows=rows, name="data.csv")
    result = import_rubric(suite, "letta")
    assert any(w.startswith(f"{tmp_path / 'data.csv'}:3:") and "rubric_vars" in w for w in result.warnings)
    assert "{a}" in result.rubric.criteria[0].outcome


def test_suite_given_as_text_keeps_placeholders_with_a_warning():
    text = "name: s\ndataset: d.jsonl\ngraders:\n  q:\n    kind: model_judge\n    prompt: \"Use {style}.\\nAnswer: {submission}\"\n"
    result = import_rubric(text, "letta")
    assert "{style}" in result.rubric.criteria[0].outcome
    assert any("{style}" in w and "given as text" in w for w in result.warnings)


def test_suite_without_custom_placeholders_never_reads_its_dataset(tmp_path):
    (tmp_path / "dataset.jsonl").write_text("{broken\n")
    result = import_rubric(_suite(tmp_path, "Is it polite?\nAnswer: {submission}\n"), "letta")
    assert not any("dataset.jsonl" in w for w in result.warnings)
