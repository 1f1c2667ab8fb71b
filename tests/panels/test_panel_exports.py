"""A judge panel in the exports: promptfoo and AgentV write one grader per member and restate the
pooling rule; the real promptfoo run of an exported 3-member panel gives the verdicts ``grade``
gives (the three scripted judges of tests/panels/judges.py on the fake server play both sides)."""

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
from rubric_studio.core.loading import parse_rubric
from rubric_studio.interop import export_rubric
from tests._timing import scaled
from tests.fakellm import Call, FakeLLM
from tests.panels.judges import COIN, LONG, RIGHT, Judges, decide, sample_text

PANEL = [f"openai:{m}" for m in (LONG, COIN, RIGHT)]


def rubric_text(*, aggregate: str = "majority", required: bool = True, extra: str = "") -> str:
    members = "".join(f"    - {m}\n" for m in PANEL)
    return (f"name: refunds\npass_threshold: 0.6\njudge:\n  max_retries: 0\n  panel:\n{members}"
            f"  aggregate: {aggregate}\ncriteria:\n"
            f"  - {{id: timeline, outcome: Says the refund takes 5 days, required: {str(required).lower()}}}\n"
            f"{extra}")


def _promptfoo_asserts(text: str) -> list[dict]:
    return yaml.safe_load(export_rubric(parse_rubric(text), "promptfoo").text)["defaultTest"]["assert"]


# -- the shape of the promptfoo export -------------------------------------------------------------
@pytest.mark.parametrize(("aggregate", "threshold"), [("majority", 0.500001), ("all", 1), ("any", 0.0001)])
def test_promptfoo_gates_a_required_panel_criterion_with_an_assert_set_of_its_members(aggregate, threshold):
    result = export_rubric(parse_rubric(rubric_text(aggregate=aggregate)), "promptfoo")
    (gate,) = yaml.safe_load(result.text)["defaultTest"]["assert"]
    assert gate["type"] == "assert-set" and gate["metric"] == "timeline" and gate["threshold"] == threshold
    assert [a["provider"] for a in gate["assert"]] == PANEL
    assert {a["type"] for a in gate["assert"]} == {"llm-rubric"}
    assert "provider" not in yaml.safe_load(result.text)["defaultTest"]["options"]  # no single judge
    assert not [w for w in result.warnings if "panel" in w]  # nothing about the panel is lost


def test_promptfoo_splits_a_scored_panel_criterions_weight_among_its_members():
    asserts = _promptfoo_asserts(rubric_text(aggregate="mean", required=False).replace(
        "required: false}", "required: false, weight: 3}"))
    (scored,) = asserts
    members = [a for a in scored["assert"] if a["metric"] == "timeline"]
    assert [a["provider"] for a in members] == PANEL and [a["weight"] for a in members] == [1, 1, 1]


def test_promptfoo_warns_what_a_scored_majority_panel_loses():
    result = export_rubric(parse_rubric(rubric_text(required=False)), "promptfoo")
    lost = [w for w in result.warnings if w.startswith("criterion 'timeline'")]
    assert len(lost) == 1 and "share of members saying met" in lost[0] and "checklist majority" in lost[0]


def test_promptfoo_writes_each_members_own_base_url_and_warns_its_other_settings():
    text = rubric_text().replace(f"    - {PANEL[1]}\n",
                                 f"    - {{model: {PANEL[1]}, base_url: 'http://b.example/v1', max_tokens: 300}}\n")
    result = export_rubric(parse_rubric(text), "promptfoo")
    (gate,) = yaml.safe_load(result.text)["defaultTest"]["assert"]
    assert gate["assert"][1]["provider"] == {"id": PANEL[1], "config": {"apiBaseUrl": "http://b.example/v1"}}
    assert gate["assert"][0]["provider"] == PANEL[0]
    assert any("member 2 (openai:judge-coin)" in w and "max_tokens=300" in w for w in result.warnings)


def test_analytic_median_is_written_as_the_mean_with_a_warning():
    extra = "  - {id: tone, outcome: Tone, score_ranges: {0: bad, 5: fine}, min_score: 0.5, required: true}\n"
    result = export_rubric(parse_rubric(rubric_text(aggregate="median", extra=extra)), "promptfoo")
    gates = yaml.safe_load(result.text)["defaultTest"]["assert"]
    tone = next(g for g in gates if g.get("metric") == "tone" and g["type"] == "assert-set")
    assert tone["threshold"] == 0.499999 and len(tone["assert"]) == 3
    assert any(w.startswith("criterion 'tone'") and "median" in w for w in result.warnings)


@pytest.mark.parametrize("target", ["letta", "docent", "healthbench"])
def test_targets_without_several_graders_still_name_the_panel_they_drop(target):
    warnings = export_rubric(parse_rubric(rubric_text()), target).warnings
    assert any("judge.panel " + "+".join(PANEL) in w for w in warnings), warnings


# -- the exported panel in the real promptfoo -------------------------------------------------------
_PROMPTFOO_OUTPUT = re.compile(r"<Output>\n(.*?)\n</Output>", re.S)
N = 12


class BothSides(Judges):
    """The scripted judges, answering promptfoo's llm-rubric requests with the same decisions."""

    def __call__(self, call: Call):
        if "<Output>" not in call.user:
            return super().__call__(call)
        model = call.body["model"]
        self.calls[model] = self.calls.get(model, 0) + 1
        return {"reason": "scripted", "pass": decide(model, _PROMPTFOO_OUTPUT.search(call.user).group(1))}


def _promptfoo() -> str:
    promptfoo = os.environ.get("PROMPTFOO") or shutil.which("promptfoo")
    if promptfoo is None:
        pytest.skip("promptfoo not installed (npm install -g promptfoo@0.121.20; set $PROMPTFOO)")
    return promptfoo


def _ours(folder: Path, capsys) -> tuple[dict[str, str], dict]:
    capsys.readouterr()
    main(["grade", str(folder / "r.yaml"), str(folder / "r.samples.jsonl"), "--format", "json", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    return {s["id"]: s["verdict"] for s in report["samples"]}, report


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("aggregate", "required"), [("majority", True), ("all", True), ("mean", False)])
def test_an_exported_three_member_panel_gives_in_promptfoo_the_verdicts_grade_gives(
    tmp_path, capsys, monkeypatch, aggregate, required
):
    promptfoo = _promptfoo()
    (tmp_path / "r.yaml").write_text(rubric_text(aggregate=aggregate, required=required))
    (tmp_path / "r.samples.jsonl").write_text("".join(json.dumps({"id": f"s{i:02d}", "output": sample_text(i)}) + "\n"
                                              for i in range(N)))
    config = tmp_path / "promptfooconfig.yaml"
    assert main(["export", str(tmp_path / "r.yaml"), "--to", "promptfoo", "-o", str(config)]) == 0
    brain = BothSides()
    with FakeLLM(brain=brain) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url_openai)
        ours, report = _ours(tmp_path, capsys)
        brain.calls.clear()
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-only-the-key",
               "OPENAI_BASE_URL": server.base_url_openai, "PROMPTFOO_DISABLE_TELEMETRY": "1",
               "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_CACHE_ENABLED": "false"}
        done = subprocess.run([promptfoo, "eval", "-c", str(config), "-o", str(tmp_path / "out.json"),
                               "--no-progress-bar"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=scaled(300))
    assert (tmp_path / "out.json").is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    assert brain.calls == {LONG: N, COIN: N, RIGHT: N}  # every member graded every sample in promptfoo
    results = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    theirs = {r["testCase"]["description"]: "pass" if r["success"] else "fail" for r in results}
    assert set(ours.values()) == {"pass", "fail"}
    split = [s["id"] for s in report["samples"] if s["criteria"][0]["panel"]["split"]]
    assert split  # the members disagree on some samples, so pooling is exercised
    alone = {f"s{i:02d}": "pass" if decide(LONG, sample_text(i)) else "fail" for i in range(N)}
    assert alone != ours  # one member alone would not give these verdicts
    assert theirs == ours
