"""The Python API for notebooks and pytest: ``rubric_studio.grade`` inside a running loop, samples as
strings and mappings, a malformed ``judge=``, keyword-only options, ``Report`` conveniences, the
top-level agreement / fit / improve / compare_judges / export / import, and the README's snippet."""

from __future__ import annotations

import asyncio
import json
import re
import warnings
from pathlib import Path

import pytest
import yaml

import rubric_studio as rs
from tests.fakellm import FakeLLM

ROOT = Path(__file__).resolve().parent.parent
CHECKS = ROOT / "tests" / "golden" / "checks.yaml"
SUPPORT = ROOT / "sample_rubrics" / "support_reply"


def test_grade_works_inside_a_running_event_loop_without_a_runtime_warning():
    rubric = rs.load_rubric(CHECKS)

    async def notebook_cell():  # Jupyter runs a cell's code inside its own running loop
        return rs.grade(rubric, ["thanks merci", "done 2026-01-01"])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = asyncio.run(notebook_cell())
    assert [(s.id, s.verdict.value) for s in report.samples] == [("1", "pass"), ("2", "fail")]
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []


def test_grade_async_is_awaited_where_a_loop_runs():
    rubric = rs.load_rubric(CHECKS)
    report = asyncio.run(rs.grade_async(rubric, [{"id": "a", "output": "merci thanks"}]))
    assert report.samples[0].id == "a" and report.passed


def test_samples_may_be_samples_strings_and_mappings():
    rubric = rs.load_rubric(CHECKS)
    given = [rs.Sample(id="kept", output="thanks merci"), "merci thanks",
             {"output": "done", "input": "q?", "metadata": {"k": 1}}, {"id": 7, "submission": "merci, thanks"}]
    report = rs.grade(rubric, given)
    assert [s.id for s in report.samples] == ["kept", "2", "3", "7"]
    assert [s.id for s in report.failed] == ["3"]
    assert rs.as_samples(given)[2].input == "q?" and rs.as_samples(given)[2].metadata == {"k": 1}


@pytest.mark.parametrize(("samples", "message"), [
    ([{"id": "a", "output": "x"}, {"id": "b", "outptu": "y"}],
     r"samples\[1\]: record has no 'output' .*is 'outptu' a misspelling of 'output'"),
    ([{"output": "x", "metadata": [1]}], r"samples\[0\]: 'metadata' must be a mapping"),
    (["first", 42], r"samples\[1\]: expected a Sample, a string .* got int"),
    (["first", {"id": "1", "output": "again"}], r"samples\[1\]: id '1' is already the id of samples\[0\]"),
    ("one output", r"samples: expected a list of samples, got a single str \(wrap it in a list\)"),
])
def test_a_bad_sample_is_a_value_error_naming_its_index(samples, message):
    with pytest.raises(ValueError, match=message):
        rs.grade(rs.load_rubric(CHECKS), samples)


def test_a_judge_without_provider_is_a_value_error_with_the_fix():
    rubric = rs.load_rubric(CHECKS)
    with pytest.raises(ValueError, match=r"write provider:model, e\.g\. openai:gpt-4o-mini"):
        rs.grade(rubric, ["x"], judge="gpt-4o-mini")
    with pytest.raises(ValueError, match=r"unknown provider 'opnai'; expected one of openai, ollama, openai-compatible, anthropic, azure"):
        rs.grade(rubric, ["x"], judge="opnai:gpt-4o-mini")


def test_options_are_keyword_only_and_named():
    rubric = rs.load_rubric(CHECKS)
    with pytest.raises(TypeError):
        rs.grade(rubric, ["x"], "openai:gpt-4o-mini")  # type: ignore[misc]
    with pytest.raises(TypeError, match="use_cache"):
        rs.grade(rubric, ["x"], use_cache=False)  # type: ignore[call-arg]
    assert rs.grade(rubric, ["thanks merci"], cache=False, repeat=2).repeat == 2


def test_report_passed_failed_and_json():
    rubric = rs.load_rubric(CHECKS)
    assert rs.grade(rubric, ["thanks merci", "merci, thanks"]).passed
    report = rs.grade(rubric, ["thanks merci", "done 2026-01-01"])
    assert not report.passed and [s.id for s in report.failed] == ["2"]
    assert json.loads(report.to_json()) == report.to_dict()
    assert report.to_json(indent=None).count("\n") == 0


def test_agreement_and_fit_take_labels_as_a_mapping_or_a_file(tmp_path):
    rubric = rs.load_rubric(CHECKS)
    report = rs.grade(rubric, ["thanks merci", "done 2026-01-01", "merci thanks", "thanks merci and on and on and on and on and on"])
    labels = {"1": "pass", "2": {"verdict": "fail"}, "3": True, "4": "pass"}
    result = rs.agreement(CHECKS, report, labels)
    assert result.overall.n == 4 and result.disagreeing_ids() == ["4"]
    path = tmp_path / "labels.yaml"
    path.write_text("'1': pass\n'2': fail\n'3': pass\n'4': pass\n")
    assert rs.agreement(rubric, report, path).overall.to_dict() == result.overall.to_dict()
    with pytest.raises(ValueError, match=r"labels\['2'\]: verdict must be pass or fail"):
        rs.agreement(rubric, report, {"2": "maybe"})
    fitted = rs.fit(rubric, report, labels, holdout=0.0)
    assert fitted.all["fitted"].accuracy >= fitted.all["current"].accuracy


def test_export_and_import_at_the_top_level():
    markdown = rs.export(CHECKS, "markdown")
    assert markdown.text.startswith("# Rubric: golden-checks") and markdown.suggested_suffix == ".md"
    promptfoo = rs.export(CHECKS, "promptfoo", samples=["thanks", {"id": "b", "output": "merci"}])
    assert [t["description"] for t in yaml.safe_load(promptfoo.text)["tests"]] == ["1", "b"]
    with pytest.raises(ValueError, match="docent does not carry samples"):
        rs.export(CHECKS, "docent", samples=["x"])
    with pytest.raises(ValueError, match="agentv_version= applies to target 'agentv' only"):
        rs.export(CHECKS, "markdown", agentv_version=4)
    assert rs.import_rubric(promptfoo.text).detected == "promptfoo"
    assert "healthbench" in rs.FORMATS


def test_compare_judges_and_improve_against_the_fake_server(monkeypatch):
    samples = [s for s in rs.load_samples(SUPPORT / "support_reply.samples.jsonl")][:6]
    labels = SUPPORT / "support_reply.labels.yaml"
    with FakeLLM() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        compared = rs.compare_judges(SUPPORT / "support_reply.yaml", samples, labels,
                                     judges=["openai:judge-a", "openai:judge-b"], base_url=server.base_url_openai)
        assert [f.judge for f in compared.judges] == ["openai:judge-a", "openai:judge-b"]
        labelled = [s for s in samples if s.id in rs.load_labels(labels).labels]
        assert 0 < len(labelled) < len(samples)  # only the labelled samples are graded
        assert all(f.judge_calls > 0 and f.samples == len(labelled) for f in compared.judges)
        assert compared.to_dict()["recommendation"] == compared.why
        assert compared.to_dict()["recommendation_basis"] == compared.basis != ""
        improved = rs.improve(SUPPORT / "support_reply.yaml", samples, labels, judge="openai:judge-a",
                              base_url=server.base_url_openai, kinds=["required", "scoring"])
        assert improved.calls >= 0 and improved.rubric_hash == rs.load_rubric(SUPPORT / "support_reply.yaml").content_hash()
    with pytest.raises(ValueError, match="write provider:model"):
        rs.compare_judges(CHECKS, [], {}, judges=["gpt-4o-mini"])


def _readme_snippet() -> str:
    """The notebook example of the Python API reference page (the block that computes kappa)."""
    section = (ROOT / "docs" / "reference" / "python-api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    return next(block for block in blocks if "kappa" in block and "rs.grade(" in block)


def test_the_documented_notebook_snippet_runs(monkeypatch):
    snippet = _readme_snippet()
    monkeypatch.chdir(ROOT)
    with FakeLLM() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url_openai)
        namespace: dict = {}

        async def in_a_notebook():  # a cell runs inside Jupyter's loop
            exec(compile(snippet, "README.md", "exec"), namespace)

        asyncio.run(in_a_notebook())
    report, agreement = namespace["report"], namespace["agreement"]
    assert [s.id for s in report.samples] == ["1", "2", "3", "4"] and report.usage.judge_calls > 0
    assert agreement.overall.n == 4 and isinstance(namespace["kappa"], float)


def test_a_panel_given_to_grade_is_checked_member_by_member():
    rubric = rs.load_rubric(CHECKS)
    with pytest.raises(ValueError, match=r"'nope' is not provider:model"):
        rs.grade(rubric, ["x"], judge="openai:a,nope")
    with pytest.raises(ValueError, match=r"an empty entry"):
        rs.grade(rubric, ["x"], judge="openai:a,,openai:b")
