"""json_path checks in every export: promptfoo and AgentV get a ``javascript`` assertion that
computes the same verdict (run in the real promptfoo when it is installed); Letta, Docent and
HealthBench cannot run a check and warn naming the criterion; Markdown lists its parameters."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.core.loading import parse_rubric
from rubric_studio.interop import ExportRefused, export_rubric
from tests._timing import scaled

RUBRIC = """\
name: status
pass_threshold: 0.99
criteria:
  - id: done
    check: {type: json_path, pointer: /answer/status, equals: done}
    required: true
  - id: ticket
    check: {type: json_path, pointer: /answer/a~1b, matches: '^T-\\d+$'}
  - id: no-error
    check: {type: json_path, pointer: /error, exists: false}
  - id: items
    check: {type: json_path, pointer: /answer/items, value_type: array}
  - id: ok-flag
    check: {type: json_path, pointer: /ok, equals: true}
    weight: -1
"""

SAMPLES = [
    {"id": "all-good", "output": '{"answer": {"status": "done", "a/b": "T-12", "items": []}}'},
    {"id": "fenced", "output": '```json\n{"answer": {"status": "done", "a/b": "T-7", "items": [1]}}\n```'},
    {"id": "wrong-status", "output": '{"answer": {"status": "open", "a/b": "T-1", "items": []}}'},
    {"id": "has-error", "output": '{"answer": {"status": "done", "a/b": "T-1", "items": []}, "error": "x"}'},
    {"id": "bool-not-number", "output": '{"answer": {"status": "done", "a/b": "T-1", "items": {}}, "ok": 1}'},
    {"id": "penalised", "output": '{"answer": {"status": "done", "a/b": "T-3", "items": []}, "ok": true}'},
    {"id": "not-json", "output": "status: done"},
]


def _write(folder: Path) -> Path:
    path = folder / "status.yaml"
    path.write_text(RUBRIC)
    (folder / "status.samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES))
    return path


def test_promptfoo_and_agentv_get_a_javascript_assertion_per_json_path_check():
    rubric = parse_rubric(RUBRIC, "status.yaml")
    promptfoo = yaml.safe_load(export_rubric(rubric, "promptfoo").text)
    asserts = [a for a in promptfoo["defaultTest"]["assert"] if a.get("metric") == "done"]
    assert [a["type"] for a in asserts] == ["javascript"]
    assert asserts[0]["value"].startswith('// rubric-studio: {"check": {"type": "json_path", "pointer": "/answer/status"')
    agentv = export_rubric(rubric, "agentv", agentv_version=5)
    assert "json_path" in agentv.text and not [w for w in agentv.warnings if "json_path" in w]


def test_the_exported_javascript_imports_back_to_the_same_checks(tmp_path):
    from rubric_studio.interop import import_rubric

    rubric = parse_rubric(RUBRIC, "status.yaml")
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(export_rubric(rubric, "promptfoo").text)
    back = import_rubric(path).rubric
    assert [c.check for c in back.criteria] == [c.check for c in rubric.criteria]


@pytest.mark.parametrize("target, says", [
    ("letta", "deterministic json_path check has no Letta model-judge form"),
    ("docent", "deterministic json_path check cannot run inside a Docent judge"),
    ("healthbench", "deterministic json_path check has no HealthBench form"),
])
def test_formats_that_cannot_run_checks_warn_naming_the_criterion(target, says):
    rubric = parse_rubric(RUBRIC + "  - id: judged\n    outcome: Answers the question\n", "status.yaml")
    warnings = export_rubric(rubric, target).warnings
    assert any(w.startswith("criterion 'done': " + says) for w in warnings), warnings


def test_agentv4_cannot_run_javascript_and_refuses_saying_why():
    rubric = parse_rubric(RUBRIC, "status.yaml")  # every criterion is a javascript assertion there
    with pytest.raises(ExportRefused) as refused:
        export_rubric(rubric, "agentv", agentv_version=4)
    assert "criterion 'done': AgentV 4 has no inline javascript assertion" in str(refused.value)
    assert "nothing is written" in str(refused.value)


def test_markdown_lists_the_pointer_and_the_assertion():
    text = export_rubric(parse_rubric(RUBRIC, "status.yaml"), "markdown").text
    assert "json_path(pointer='/answer/status', equals='done')" in text


def test_json_path_samples_grade_in_the_real_promptfoo_as_they_grade_here(tmp_path, capsys):
    promptfoo = os.environ.get("PROMPTFOO") or shutil.which("promptfoo")
    if promptfoo is None:
        pytest.skip("promptfoo not installed (npm install -g promptfoo@0.121.20; set $PROMPTFOO)")
    rubric = _write(tmp_path)
    config = tmp_path / "promptfooconfig.yaml"
    assert main(["export", str(rubric), "--to", "promptfoo", "-o", str(config)]) == 0
    capsys.readouterr()
    main(["grade", str(rubric), str(tmp_path / "status.samples.jsonl"), "--format", "json", "--no-cache"])
    ours = {s["id"]: s["verdict"] for s in json.loads(capsys.readouterr().out)["samples"]}
    assert ours == {"all-good": "pass", "fenced": "pass", "wrong-status": "fail", "has-error": "fail",
                    "bool-not-number": "fail", "penalised": "fail", "not-json": "fail"}
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_CACHE_ENABLED": "false"}
    done = subprocess.run([promptfoo, "eval", "-c", str(config), "-o", str(tmp_path / "out.json"), "--no-progress-bar"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=scaled(240))
    assert (tmp_path / "out.json").is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    theirs = {r["testCase"]["description"]: "pass" if r["success"] else "fail" for r in results}
    assert theirs == ours


ANCHORED = """\
name: code
criteria:
  - id: upper
    check: {type: json_path, pointer: /code, matches: '^[A-Z]+$'}
"""


def _node_verdict(body: str, output: str) -> bool:
    """What the exported ``javascript`` assertion says of ``output``, run by node as promptfoo runs it."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed")
    script = "const r = (function (output) {\n" + body + "\n})(process.argv[1]);\nconsole.log(JSON.stringify(r.pass));"
    done = subprocess.run([node, "-e", script, output], capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("value, met", [("AB", True), ("AB\n", False), ("A\nB", False), ("xAB", False)])
def test_matches_dollar_is_the_very_end_here_as_in_the_exported_javascript(value, met):
    from rubric_studio.core.grading import score_text

    rubric = parse_rubric(ANCHORED, "code.yaml")
    output = json.dumps({"code": value})
    assert score_text(rubric, output).details["upper"].status.value == ("met" if met else "unmet")
    asserts = yaml.safe_load(export_rubric(rubric, "promptfoo").text)["defaultTest"]["assert"]
    asserts += [inner for a in asserts for inner in a.get("assert", [])]
    [body] = [a["value"] for a in asserts if a.get("type") == "javascript"]
    assert _node_verdict(body, output) is met
