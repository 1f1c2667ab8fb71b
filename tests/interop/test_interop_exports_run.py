"""Exports run as written: the graded samples are the exported file's test cases, and running the
export in the real tool (AgentV 4.42 through $AGENTV, promptfoo through $PROMPTFOO or PATH) gives
the verdicts ``rubric-studio grade`` gives - with checks only, and with a scripted judge that the
local fake server plays for both sides. The real-tool tests skip when the tool is absent."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.interop import export_rubric
from rubric_studio.interop.agentv import FIXTURE_SCHEMA, SAMPLES_TARGET
from tests._timing import scaled
from tests.fakellm import Call, FakeLLM

SAMPLES = [
    {"id": "on-time", "input": "Can I get my money back?", "output": "Thanks for asking: refunds are open for 30 days."},
    {"id": "no-window", "input": "Refund?", "output": "Thanks, we will look into a refund for you."},
    {"id": "curt", "output": "Refunds are open for 30 days. Dated 2024-01-02."},
    {"id": "curt-window", "output": "30 days, no exceptions"},
]


def _write(folder: Path, rubric: str) -> Path:
    path = folder / "reply.yaml"
    path.write_text(rubric)
    (folder / "reply.samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES))
    return path


CHECKS_ONLY = """\
name: reply
pass_threshold: 0.5
criteria:
  - id: polite
    check: {type: keywords, required: [thanks]}
    required: true
  - id: no-dates
    check: {type: regex, pattern: '\\d{4}-\\d{2}-\\d{2}', expect_match: false}
  - id: refund-words
    check: {type: keywords, required: [refund, days]}
"""

#: One judged criterion (required) beside a check; the scripted judge decides it.
WITH_JUDGE = """\
name: reply
pass_threshold: 0.6
judge:
  model: openai:gpt-4o-mini
criteria:
  - id: refund-window
    outcome: States the 30-day refund window
    required: true
  - id: polite
    check: {type: keywords, required: [thanks]}
"""


def _ours(rubric: Path, capsys, *extra: str) -> dict[str, str]:
    """``rubric-studio grade``'s verdict per sample."""
    capsys.readouterr()
    main(["grade", str(rubric), str(rubric.parent / "reply.samples.jsonl"), "--format", "json", "--no-cache", *extra])
    report = json.loads(capsys.readouterr().out)
    return {s["id"]: s["verdict"] for s in report["samples"]}


# -- the samples as AgentV tests --------------------------------------------------------------
@pytest.mark.parametrize("version", ["4", "5"])
def test_agentv_export_carries_the_samples_as_tests_with_their_outputs_replayed(tmp_path, capsys, version):
    rubric = _write(tmp_path, CHECKS_ONLY)
    out = tmp_path / "suite.eval.yaml"
    assert main(["export", str(rubric), "--to", "agentv", "--agentv-version", version, "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    assert [t["id"] for t in data["tests"]] == [s["id"] for s in SAMPLES]
    fixtures = [json.loads(line) for line in (tmp_path / "suite.outputs.jsonl").read_text().splitlines()]
    assert {(r["test_id"], r["output"][0]["content"]) for r in fixtures} == {(s["id"], s["output"]) for s in SAMPLES}
    assert {r["schema_version"] for r in fixtures} == {FIXTURE_SCHEMA}
    assert {r["suite"] for r in fixtures} == {data["name"]} and {r["source_target"] for r in fixtures} == {SAMPLES_TARGET}
    if version == "4":
        assert data["execution"]["target"] == SAMPLES_TARGET
        assert all(t["input"] for t in data["tests"])  # AgentV 4 skips a test without one
        assert data["tests"][0]["input"] == SAMPLES[0]["input"]
        replay = _agentv4_header_targets(out.read_text())[0]
        assert replay["provider"] == "replay" and replay["fixtures"] == "./suite.outputs.jsonl"
    else:
        replay = data["providers"][0]
        assert replay["id"] == "replay" and replay["label"] == SAMPLES_TARGET
        assert replay["config"]["fixtures"] == "./suite.outputs.jsonl"
        assert f"--provider {SAMPLES_TARGET}" in out.read_text()
    assert main(["export", str(rubric), "--to", "agentv", "--agentv-version", version, "--no-samples",
                 "-o", str(tmp_path / "plain.eval.yaml")]) == 0
    assert [t["id"] for t in yaml.safe_load((tmp_path / "plain.eval.yaml").read_text())["tests"]] == ["example"]
    assert not (tmp_path / "plain.outputs.jsonl").exists()


def test_agentv_export_to_stdout_says_the_samples_need_a_file(tmp_path, capsys):
    rubric = _write(tmp_path, CHECKS_ONLY)
    assert main(["export", str(rubric), "--to", "agentv"]) == 0
    captured = capsys.readouterr()
    assert [t["id"] for t in yaml.safe_load(captured.out)["tests"]] == ["example"]
    assert "give -o FILE" in captured.err
    assert list(tmp_path.glob("*.outputs.jsonl")) == []


def test_export_says_which_sample_records_it_skipped(tmp_path, capsys):
    rubric = _write(tmp_path, CHECKS_ONLY)
    samples = tmp_path / "reply.samples.jsonl"
    samples.write_text(samples.read_text() + '{"id": "on-time", "output": "again"}\n{"id": "cut", "output": \n')
    out = tmp_path / "promptfooconfig.yaml"
    assert main(["export", str(rubric), "--to", "promptfoo", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{samples}:5:1: duplicate sample id 'on-time'" in err
    assert f"{samples}:6:" in err
    assert [t["description"] for t in yaml.safe_load(out.read_text())["tests"]] == [s["id"] for s in SAMPLES]


def test_export_api_returns_the_fixtures_as_a_companion_file(tmp_path):
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.samples import load_samples

    rubric = load_rubric(_write(tmp_path, CHECKS_ONLY))
    samples = list(load_samples(tmp_path / "reply.samples.jsonl"))
    result = export_rubric(rubric, "agentv", samples=samples)
    # the fixtures, and the provider catalog AgentV 5 needs for the replay provider
    assert list(result.files) == ["reply.outputs.jsonl", ".agentv/providers.yaml", ".agentv/config.yaml"]
    assert export_rubric(rubric, "agentv").files == {}


# -- running in the real AgentV 4 -----------------------------------------------------------------
def _agentv() -> str:
    agentv = os.environ.get("AGENTV") or shutil.which("agentv")
    if agentv is None:
        pytest.skip("AgentV 4 not installed (npm install agentv@4.42.4; set $AGENTV)")
    return agentv


def _header(text: str) -> list[str]:
    return [line[2:] if line.startswith("# ") else line[1:] for line in text.splitlines() if line.startswith("#")]


def _agentv4_header_targets(text: str) -> list[dict]:
    """The ``.agentv/targets.yaml`` entries the AgentV 4 export's header says to add."""
    header = _header(text)
    start = header.index("targets:")
    block = [header[start]]
    for line in header[start + 1:]:
        if not line.startswith("  "):
            break
        block.append(line)
    return yaml.safe_load("\n".join(block))["targets"]


def _run_agentv4(folder: Path, eval_file: Path, env_extra: dict[str, str], judge_url: str | None = None) -> tuple[dict, subprocess.CompletedProcess]:
    """Set AgentV 4 up as the export's header says, run it, and return its results by test id."""
    text = eval_file.read_text()
    targets = _agentv4_header_targets(text)
    for target in targets:
        if target["provider"] == "openai" and judge_url:
            target["base_url"] = judge_url  # the header's judge, pointed at the local fake server
    (folder / ".agentv").mkdir(exist_ok=True)
    (folder / ".agentv" / "targets.yaml").write_text(yaml.safe_dump({"targets": targets}))
    dotenv = [line for line in _header(text) if re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S+", line)]
    (folder / ".env").write_text("".join(line + "\n" for line in dotenv))
    subprocess.run(["git", "init", "-q", str(folder)], check=True)  # AgentV 4 runs inside a repository
    env = {"PATH": os.environ["PATH"], "HOME": str(folder), **env_extra}
    done = subprocess.run([_agentv(), "eval", "run", eval_file.name, "-o", "out"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=scaled(240))
    index = folder / "out" / "index.jsonl"
    assert index.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    rows = [json.loads(line) for line in index.read_text().splitlines() if line.strip()]
    return {row["test_id"]: row for row in rows}, done


def _agentv_verdicts(rows: dict, eval_file: Path) -> dict[str, str]:
    threshold = yaml.safe_load(eval_file.read_text())["execution"]["threshold"]
    verdicts = {}
    for test_id, row in rows.items():
        assert row["execution_status"] in ("ok", "quality_failure"), row  # graded, not an execution error
        passed = row["score"] >= threshold
        assert passed == (row["execution_status"] == "ok"), row  # AgentV's own mark agrees with the pass mark
        verdicts[test_id] = "pass" if passed else "fail"
    return verdicts


def test_checks_only_samples_grade_in_the_real_agentv4_as_they_grade_here(tmp_path, capsys):
    _agentv()
    rubric = _write(tmp_path, CHECKS_ONLY)
    eval_file = tmp_path / "reply.eval.yaml"
    assert main(["export", str(rubric), "--to", "agentv", "--agentv-version", "4", "-o", str(eval_file)]) == 0
    ours = _ours(rubric, capsys)
    assert set(ours.values()) == {"pass", "fail"}  # both verdicts are exercised
    rows, _ = _run_agentv4(tmp_path, eval_file, {})
    assert _agentv_verdicts(rows, eval_file) == ours
    for sample in SAMPLES:  # AgentV graded the sample's output as written
        answer = (tmp_path / "out" / rows[sample["id"]]["answer_path"]).read_text()
        assert answer.strip() == sample["output"]


# -- a scripted judge both sides ask ------------------------------------------------------------
def _window_met(text: str) -> bool:
    """The scripted judge's decision on refund-window."""
    return "30 days" in text


_AGENTV_ANSWER = re.compile(r"\[\[ ## answer ## \]\]\n(.*?)\n\n\[\[ ## ", re.S)
_AGENTV_ITEM = re.compile(r"^- \[([^\]]+)\]", re.M)
_PROMPTFOO_OUTPUT = re.compile(r"<Output>\n(.*?)\n</Output>", re.S)


def scripted_judge(call: Call) -> dict:
    """Answers rubric-studio's, AgentV 4's and promptfoo's judge requests with the same decision."""
    if "[[ ## answer ## ]]" in call.user:  # AgentV's rubric grader
        answer = _AGENTV_ANSWER.search(call.user).group(1)
        met = _window_met(answer)
        return {"checks": [{"id": item, "satisfied": met, "reasoning": "scripted"}
                           for item in _AGENTV_ITEM.findall(call.user)], "overall_reasoning": "scripted"}
    if "<Output>" in call.user:  # promptfoo's llm-rubric (the exported rubricPrompt)
        return {"reason": "scripted", "pass": _window_met(_PROMPTFOO_OUTPUT.search(call.user).group(1))}
    met = _window_met(call.sample)  # rubric-studio's own request
    answer = {"verdict": "met" if met else "unmet", "rationale": "scripted", "evidence": []}
    return answer if not call.batch else {item.id: answer for item in call.criteria}


def test_judged_samples_grade_in_the_real_agentv4_as_they_grade_here(tmp_path, capsys, monkeypatch):
    _agentv()
    rubric = _write(tmp_path, WITH_JUDGE)
    eval_file = tmp_path / "reply.eval.yaml"
    assert main(["export", str(rubric), "--to", "agentv", "--agentv-version", "4", "-o", str(eval_file)]) == 0
    with FakeLLM(brain=scripted_judge) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        ours = _ours(rubric, capsys, "--base-url", server.base_url_openai)
        assert set(ours.values()) == {"pass", "fail"}
        server.reset()
        rows, done = _run_agentv4(tmp_path, eval_file, {"OPENAI_API_KEY": "sk-only-the-key"}, server.base_url_openai)
        sent = [r for r in server.requests if r.api == "openai"]
    assert sent and all(r.body.get("stream") is True for r in sent)  # AgentV 4's judge streams its replies
    assert len(sent) == len(SAMPLES), done.stderr[-2000:]  # one call per sample: no retries, no parse failures
    assert "Connection error" not in done.stdout + done.stderr
    judged = [s for row in rows.values() for s in row["scores"] if s["type"] == "llm-grader"]  # the judged criterion
    assert len(judged) == len(SAMPLES) and all(s["verdict"] in ("pass", "fail") for s in judged)
    assert _agentv_verdicts(rows, eval_file) == ours


# -- promptfoo with an llm-rubric -------------------------------------------------------------
def test_judged_samples_grade_in_the_real_promptfoo_as_they_grade_here(tmp_path, capsys, monkeypatch):
    promptfoo = os.environ.get("PROMPTFOO") or shutil.which("promptfoo")
    if promptfoo is None:
        pytest.skip("promptfoo not installed (npm install -g promptfoo@0.121.20; set $PROMPTFOO)")
    rubric = _write(tmp_path, WITH_JUDGE)
    config = tmp_path / "promptfooconfig.yaml"
    assert main(["export", str(rubric), "--to", "promptfoo", "-o", str(config)]) == 0
    with FakeLLM(brain=scripted_judge) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        ours = _ours(rubric, capsys, "--base-url", server.base_url_openai)
        server.reset()
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-only-the-key",
               "OPENAI_BASE_URL": server.base_url_openai, "PROMPTFOO_DISABLE_TELEMETRY": "1",
               "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_CACHE_ENABLED": "false"}
        done = subprocess.run([promptfoo, "eval", "-c", str(config), "-o", str(tmp_path / "out.json"),
                               "--no-progress-bar"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=scaled(240))
        sent = [r for r in server.requests if r.api == "openai"]
    assert (tmp_path / "out.json").is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    assert len(sent) == len(SAMPLES)  # the llm-rubric reached the judge once per sample
    assert all(r.body["model"] == "gpt-4o-mini" for r in sent)
    results = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    assert not [r for r in results if r.get("error") and "Error" in str(r.get("error"))[:40]]
    theirs = {r["testCase"]["description"]: "pass" if r["success"] else "fail" for r in results}
    assert set(ours.values()) == {"pass", "fail"}
    assert theirs == ours


@pytest.mark.parametrize("version", ["4", "5"])
def test_an_export_with_samples_imports_back_to_the_same_rubric_without_warnings_per_test(tmp_path, capsys, version):
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.interop import import_rubric

    rubric = _write(tmp_path, WITH_JUDGE)
    out = tmp_path / "suite.eval.yaml"
    assert main(["export", str(rubric), "--to", "agentv", "--agentv-version", version, "-o", str(out)]) == 0
    result = import_rubric(out)
    original = load_rubric(rubric)
    assert [c.model_dump() for c in result.rubric.criteria] == [c.model_dump() for c in original.criteria]
    assert result.rubric.pass_threshold == original.pass_threshold
    assert not [w for w in result.warnings if "test-level criteria" in w]  # the samples' tests add no criteria


# -- letta-evals: the suite validates, and its own model_judge grader grades the samples ----------
_LETTA_GRADE = """\
import asyncio, json, os, sys
from pathlib import Path
import yaml
from letta_evals.graders.rubric import RubricGrader
from letta_evals.models import Sample
from letta_evals.models.specs import SuiteSpec

suite_path = Path(sys.argv[1])
spec = SuiteSpec.from_yaml(yaml.safe_load(suite_path.read_text()), base_dir=suite_path.parent, suite_path=suite_path)
(name, g), = spec.graders.items()
grader = RubricGrader(prompt=g.prompt, model=g.model, temperature=g.temperature, provider=g.provider,
                      max_retries=0, timeout=g.timeout, extractor=g.extractor, base_dir=g.base_dir)

async def grade_all():
    scores = {}
    for line in Path(sys.argv[2]).read_text().splitlines():
        s = json.loads(line)
        # the agent run is what needs a Letta server; its extracted submission is the sample's output
        grader.extract = lambda trajectory, state, s=s: (s["output"], 0.0, None)
        result, _ = await grader.grade(Sample(id=0, input=s.get("input") or "", ground_truth=s.get("ground_truth")), [])
        scores[s["id"]] = result.score
    return scores

print(json.dumps(asyncio.run(grade_all())))
"""


def test_letta_export_validates_and_its_model_judge_grades_the_samples_in_real_letta_evals(tmp_path, capsys,
                                                                                          monkeypatch):
    python = os.environ.get("LETTA_EVALS_PYTHON")  # a Python with letta-evals 0.26 installed
    if not python:
        pytest.skip("letta-evals not available (pip install letta-evals==0.26.0; set $LETTA_EVALS_PYTHON)")
    rubric = _write(tmp_path, WITH_JUDGE.replace("  - id: polite\n    check: {type: keywords, required: [thanks]}\n", ""))
    suite = tmp_path / "reply.suite.yaml"
    assert main(["export", str(rubric), "--to", "letta", "-o", str(suite)]) == 0
    (tmp_path / "dataset.jsonl").write_text("".join(json.dumps({"input": s.get("input") or "x"}) + "\n" for s in SAMPLES))
    cli = Path(python).parent / "letta-evals"
    done = subprocess.run([str(cli), "validate", str(suite)], capture_output=True, text=True, timeout=scaled(120))
    assert done.returncode == 0 and "model_judge" in done.stdout, done.stdout + done.stderr
    submissions = []

    def judge(call: Call) -> dict:
        submission = call.user.split("Response to grade:\n", 1)[1].split("\n\nReply with", 1)[0]
        submissions.append(submission)
        return {"score": 1.0 if _window_met(submission) else 0.0, "rationale": "scripted"}

    script = tmp_path / "grade.py"
    script.write_text(_LETTA_GRADE)
    with FakeLLM(brain=judge) as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url_openai}
        done = subprocess.run([python, str(script), str(suite), str(tmp_path / "reply.samples.jsonl")], env=env,
                              capture_output=True, text=True, timeout=scaled(120), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    scores = json.loads(done.stdout.strip().splitlines()[-1])
    assert submissions == [s["output"] for s in SAMPLES]  # {submission} filled in, braces unescaped
    with FakeLLM(brain=scripted_judge) as ours_server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        ours = _ours(rubric, capsys, "--base-url", ours_server.base_url_openai)
    assert set(ours.values()) == {"pass", "fail"}
    # the required criterion unmet scores 0.0 in Letta: its score against the threshold is our verdict
    assert {k: "pass" if v >= 0.6 else "fail" for k, v in scores.items()} == ours


# -- Docent: the export loads into docent's own Rubric and builds a judge prompt per sample ----------
_DOCENT_LOAD = """\
import json, sys
from docent.data_models.agent_run import AgentRun
from docent.data_models.chat.message import AssistantMessage, UserMessage
from docent.data_models.transcript import Transcript
from docent.judges.types import Rubric

rubric = Rubric(**json.load(open(sys.argv[1])))  # docent's validators: prompt templates, output-schema meta-schema
prompts = {}
for line in open(sys.argv[2]):
    s = json.loads(line)
    messages = ([UserMessage(content=s["input"])] if s.get("input") else []) + [AssistantMessage(content=s["output"])]
    run = AgentRun(transcripts=[Transcript(messages=messages)])
    prompts[s["id"]] = "\\n".join(str(m.content) for m in rubric.materialize_messages(run))
print(json.dumps({"model": rubric.judge_model.model_name, "provider": rubric.judge_model.provider, "prompts": prompts}))
"""


def test_docent_export_loads_into_docents_rubric_and_renders_each_sample(tmp_path):
    python = os.environ.get("DOCENT_PYTHON")  # a Python with docent installed
    if not python:
        pytest.skip("docent not available (pip install docent; set $DOCENT_PYTHON)")
    rubric = _write(tmp_path, WITH_JUDGE)
    exported = tmp_path / "reply.docent.json"
    assert main(["export", str(rubric), "--to", "docent", "-o", str(exported)]) == 0
    script = tmp_path / "load.py"
    script.write_text(_DOCENT_LOAD)
    done = subprocess.run([python, str(script), str(exported), str(tmp_path / "reply.samples.jsonl")],
                          capture_output=True, text=True, timeout=scaled(120))
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert (loaded["provider"], loaded["model"]) == ("openai", "gpt-4o-mini")
    for sample in SAMPLES:
        prompt = loaded["prompts"][sample["id"]]
        assert sample["output"] in prompt and "States the 30-day refund window" in prompt
