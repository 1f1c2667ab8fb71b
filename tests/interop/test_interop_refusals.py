"""Clear refusals and detection at the edges of import/export: files that are not rubrics,
names the tools use, targets that cannot hold a rubric, Python-only regex anchors."""

from __future__ import annotations

import json

import pytest
import regex

from rubric_studio.cli import main
from rubric_studio.core.problems import RubricError
from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import ExportRefused, export_rubric, import_rubric
from rubric_studio.interop._checks import js_regex
from rubric_studio.interop._common import Warnings


def test_a_samples_jsonl_is_named_as_samples_not_a_bad_healthbench_item(tmp_path):
    samples = tmp_path / "samples.jsonl"
    samples.write_text('{"id": "s1", "output": "hello"}\n{"id": "s2", "output": "bye"}\n')
    for source in ("auto", "healthbench"):
        with pytest.raises(RubricError) as caught:
            import_rubric(samples, source)
        message = str(caught.value)
        assert "samples file" in message and "criterion' must be" not in message
        assert caught.value.problems[0].line == 1


@pytest.mark.parametrize("name, text", [
    ("notes.txt", "hello\n"),
    ("README.md", "# Title\n\n- item: one\n  * two\n"),
    ("grader.py", 'import os\n\ndef f():\n    return {"a": [1, 2}\n'),
])
def test_files_no_tool_reads_as_a_rubric_are_refused_by_kind_not_as_yaml(tmp_path, capsys, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert main(["import", str(path)]) == 2
    err = capsys.readouterr().err
    assert "YAML syntax error" not in err
    assert f"{path}:1:1: not a rubric file" in err and ".yaml" in err and "--from" in err


@pytest.mark.parametrize("name, expected", [
    ("promptfooconfig.yaml", "promptfoo"),
    ("support.promptfooconfig.yaml", "promptfoo"),
    ("support.eval.yaml", "agentv"),
])
def test_the_tools_file_names_settle_an_otherwise_ambiguous_file(tmp_path, name, expected):
    path = tmp_path / name
    path.write_text("tests:\n  - vars: {q: hi}\n    assert:\n      - type: llm-rubric\n        value: Is polite\n")
    with pytest.raises(RubricError, match="--from"):
        import_rubric(path.read_text())  # the same content without its name
    assert import_rubric(path).detected == expected


def test_healthbench_export_of_a_checks_only_rubric_is_refused_and_writes_nothing(tmp_path, capsys):
    rubric = tmp_path / "checks.yaml"
    rubric.write_text("name: nm\ncriteria:\n  - id: short\n    check: {type: length, max_words: 5}\n")
    out = tmp_path / "out.jsonl"
    assert main(["export", str(rubric), "--to", "healthbench", "-o", str(out)]) == 2
    assert "no judged criteria" in capsys.readouterr().err
    assert not out.exists()


def test_healthbench_export_says_name_and_description_are_not_kept():
    rubric = Rubric.model_validate({"name": "billing", "description": "Billing replies",
                                    "criteria": [{"id": "a", "outcome": "Says hello"}]})
    result = export_rubric(rubric, "healthbench")
    assert [json.loads(line)["criterion"] for line in result.text.splitlines()] == ["Says hello"]
    assert any("'billing'" in w and "description" in w for w in result.warnings)
    with pytest.raises(ExportRefused):
        export_rubric(Rubric.model_validate({"name": "n", "criteria": [{"id": "c", "check": {
            "type": "regex", "pattern": "x"}}]}), "healthbench")


TEXTS = ["foo bar", "x\nfoo", "bar foo", "foo\n", "a\\Afoo", "[A]", "]x", "bar"]


@pytest.mark.parametrize("pattern", [r"\Afoo", r"foo\Z", r"foo\Z|\Abar", r"\\Afoo", r"[\A]", r"\A[]A]"])
def test_python_anchors_match_the_same_texts_in_javascript(run_js, pattern):
    try:
        compiled = regex.compile(pattern)
    except regex.error:
        pytest.skip("not a valid Python pattern")
    warn = Warnings()
    converted = js_regex(pattern, "c", warn)
    assert r"\A" not in converted.replace("\\\\", "") or "[" in pattern
    body = f"return {{ pass: new RegExp({json.dumps(converted)}, 'u').test(output) }};"
    results = run_js([(body, text) for text in TEXTS])
    assert [r["pass"] for r in results] == [bool(compiled.search(t)) for t in TEXTS]


def test_exported_anchors_import_back_as_written(tmp_path, capsys):
    rubric = tmp_path / "r.yaml"
    rubric.write_text('name: n\ncriteria:\n  - id: r\n    check: {type: regex, pattern: "\\\\Afoo\\\\Z"}\n'
                      "  - id: j\n    outcome: says hi\n")
    exported = tmp_path / "promptfooconfig.yaml"
    assert main(["export", str(rubric), "--to", "promptfoo", "-o", str(exported)]) == 0
    assert "JavaScript lacks" not in capsys.readouterr().err
    back = {c.key: c for c in import_rubric(exported).rubric.criteria}
    assert back["r"].check.pattern == r"\Afoo\Z"


@pytest.mark.parametrize("target, suffix", [("letta", "suite.yaml"), ("docent", "docent.json"),
                                           ("healthbench", "jsonl")])
def test_judge_only_exports_of_a_checks_only_rubric_are_refused_and_write_nothing(tmp_path, capsys,
                                                                                     target, suffix):
    rubric = tmp_path / "checks.yaml"
    rubric.write_text("name: nm\ncriteria:\n  - id: short\n    check: {type: length, max_words: 5}\n")
    out = tmp_path / f"out.{suffix}"
    assert main(["export", str(rubric), "--to", target, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"cannot export to {target}" in err and "no judged criteria" in err and "short" in err
    assert not out.exists()
