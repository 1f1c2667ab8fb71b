"""A judge panel in the AgentV export: every member its own judge (a 4.x header target with its own
model variable, a 5.x ``providers`` entry), every judged criterion a group of one grader per member
that pools them by the panel's rule; and the real AgentV 4 run of an exported 3-member panel gives
the verdicts ``grade`` gives (the scripted judges of tests/panels/judges.py play both sides)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.core.loading import parse_rubric
from rubric_studio.interop import export_rubric, import_rubric
from tests.fakellm import Call, FakeLLM
from tests.interop.test_interop_exports_run import (
    _AGENTV_ANSWER,
    _AGENTV_ITEM,
    _agentv,
    _agentv4_header_targets,
    _agentv_verdicts,
    _header,
    _run_agentv4,
)
from tests.panels.judges import COIN, LONG, RIGHT, Judges, decide, sample_text
from tests.panels.test_panel_exports import PANEL, rubric_text

MODELS = [LONG, COIN, RIGHT]
LABELS = ["rubric-judge-1", "rubric-judge-2", "rubric-judge-3"]
TONE = "  - {id: tone, outcome: Tone, score_ranges: {0: bad, 5: fine}, min_score: 0.5, required: true}\n"


def _export(text: str, version: int):
    return export_rubric(parse_rubric(text), "agentv", agentv_version=version)


def _suite(text: str, version: int) -> list[dict]:
    data = yaml.safe_load(_export(text, version).text)
    return data["assertions" if version == 4 else "assert"]


# -- the shape of the export -----------------------------------------------------------------------
@pytest.mark.parametrize(("aggregate", "share"), [("majority", 0.500001), ("all", 1), ("any", 0.0001)])
def test_agentv4_writes_a_required_panel_criterion_as_a_threshold_composite_of_one_grader_per_member(
    aggregate, share
):
    result = _export(rubric_text(aggregate=aggregate), 4)
    (group,) = yaml.safe_load(result.text)["assertions"]
    assert group["type"] == "composite" and group["name"] == "timeline"
    assert group["aggregator"] == {"type": "threshold", "threshold": share}
    assert group["required"] is True and group["min_score"] == share  # the gate fails the sample
    assert [m["target"] for m in group["assertions"]] == LABELS
    assert {m["type"] for m in group["assertions"]} == {"rubrics"}
    assert [m["criteria"][0]["outcome"] for m in group["assertions"]] == ["Says the refund takes 5 days"] * 3
    assert len({m["name"] for m in group["assertions"]}) == 3  # AgentV needs a name per member
    assert not [w for w in result.warnings if "not exported to AgentV" in w]


def test_agentv4_header_gives_each_member_a_target_with_its_own_model_variable():
    result = _export(rubric_text(), 4)
    targets = _agentv4_header_targets(result.text)
    assert [t["name"] for t in targets] == LABELS
    assert [t["model"] for t in targets] == [f"${{{{ RUBRIC_JUDGE_MODEL_{i} }}}}" for i in (1, 2, 3)]
    assert all(t["provider"] == "openai" and t["api_key"] == "${{ OPENAI_API_KEY }}" for t in targets)
    dotenv = [line for line in _header(result.text) if line.startswith("RUBRIC_JUDGE_MODEL")]
    assert dotenv == [f"RUBRIC_JUDGE_MODEL_{i}={m}" for i, m in enumerate(MODELS, start=1)]


@pytest.mark.parametrize(("aggregate", "share"), [("majority", 0.500001), ("all", 1), ("any", 0.0001)])
def test_agentv5_writes_a_panel_criterion_as_an_assert_set_whose_graders_name_inline_providers(aggregate, share):
    result = _export(rubric_text(aggregate=aggregate), 5)
    data = yaml.safe_load(result.text)
    (group,) = data["assert"]
    assert group["type"] == "assert-set" and group["threshold"] == share and group["min_score"] == share
    assert [m["provider"] for m in group["assert"]] == LABELS
    assert {m["type"] for m in group["assert"]} == {"llm-rubric"}
    providers = data["providers"]
    assert [(p["label"], p["id"], p["config"]["model"]) for p in providers] == [
        (label, "openai", model) for label, model in zip(LABELS, MODELS, strict=True)
    ]
    assert all(p["config"]["api_key"] == "{{ env.OPENAI_API_KEY }}" for p in providers)
    assert "options" not in data["default_test"]  # no single judge for every grader
    assert any("AgentV 5's assert-set counts a panel member whose grader failed" in w for w in result.warnings)


def test_a_member_carries_its_own_temperature_and_base_url_and_warns_the_rest():
    text = rubric_text().replace(
        f"    - {PANEL[1]}\n",
        f"    - {{model: {PANEL[1]}, base_url: 'http://b.example/v1', temperature: 0.3, max_tokens: 300}}\n",
    )
    for version in (4, 5):
        result = _export(text, version)
        if version == 5:
            config = yaml.safe_load(result.text)["providers"][1]["config"]
        else:
            config = _agentv4_header_targets(result.text)[1]
        assert config["base_url"] == "http://b.example/v1" and config["temperature"] == 0.3
        assert any("member 2 (openai:judge-coin)" in w and "max_tokens=300" in w for w in result.warnings)


def test_analytic_mean_is_the_members_mean_against_min_score_and_median_is_warned():
    extra = TONE
    tone4 = next(g for g in _suite(rubric_text(extra=extra), 4) if g["name"] == "tone")
    assert tone4["aggregator"] == {"type": "weighted_average"} and tone4["min_score"] == 0.499999
    assert all(m["criteria"][0]["score_ranges"] for m in tone4["assertions"])
    tone5 = next(g for g in _suite(rubric_text(extra=extra), 5) if g["metric"] == "tone")
    assert tone5["threshold"] == 0.499999 and tone5["min_score"] == 0.499999 and len(tone5["assert"]) == 3
    mean = _export(rubric_text(aggregate="{checklist: majority, analytic: mean}", extra=extra), 4).warnings
    assert not [w for w in mean if w.startswith("criterion 'tone'")]
    for aggregate in ("median", "majority"):  # the analytic default is the median
        median = _export(rubric_text(aggregate=aggregate, extra=extra), 4).warnings
        assert any(w.startswith("criterion 'tone'") and "median" in w for w in median)
    # of two members the median is their mean: nothing lost, nothing said
    two = rubric_text(extra=extra).replace(f"    - {PANEL[2]}\n", "")
    assert len(parse_rubric(two).judge.panel) == 2
    assert not [w for w in _export(two, 4).warnings if w.startswith("criterion 'tone'")]


def test_what_a_group_score_changes_is_warned_per_criterion():
    scored = _export(rubric_text(required=False), 4).warnings
    (note,) = [w for w in scored if w.startswith("criterion 'timeline'")]
    assert "share of members saying met" in note and "checklist majority" in note
    gate = _export(rubric_text(required=True), 4).warnings
    (note,) = [w for w in gate if w.startswith("criterion 'timeline'")]
    assert "gates this required criterion as the panel does" in note and "not 1" in note
    mean = _export(rubric_text(aggregate="mean", required=False), 4).warnings
    assert not [w for w in mean if w.startswith("criterion 'timeline'")]  # a share is what mean scores


def test_a_penalty_panel_criterion_is_a_negated_group_and_checks_stay_outside_the_panel():
    extra = ("  - {id: rude, outcome: Is rude, weight: -1}\n"
             "  - {id: kw, check: {type: keywords, required: [refund]}}\n")
    suite = _suite(rubric_text(extra=extra), 4)
    rude = next(g for g in suite if g["name"] == "rude")
    assert rude["negate"] is True and rude["type"] == "composite" and "required" not in rude
    kw = next(g for g in suite if g["name"] == "kw")
    assert kw["type"] == "icontains" and "target" not in kw


# -- the exported panel in the real AgentV 4 --------------------------------------------------------
N = 12


class BothSides(Judges):
    """The scripted judges, answering AgentV 4's rubric grader with the same decisions by model."""

    def __call__(self, call: Call):
        if "[[ ## answer ## ]]" not in call.user:
            return super().__call__(call)
        model = call.body["model"]
        self.calls[model] = self.calls.get(model, 0) + 1
        met = decide(model, _AGENTV_ANSWER.search(call.user).group(1))
        return {"checks": [{"id": item, "satisfied": met, "reasoning": f"{model} scripted"}
                           for item in _AGENTV_ITEM.findall(call.user)], "overall_reasoning": "scripted"}


def _ours(folder: Path, capsys) -> tuple[dict[str, str], dict]:
    capsys.readouterr()
    main(["grade", str(folder / "r.yaml"), str(folder / "r.samples.jsonl"), "--format", "json", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    return {s["id"]: s["verdict"] for s in report["samples"]}, report


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("aggregate", "required"), [("majority", True), ("all", True), ("mean", False)])
def test_an_exported_three_member_panel_gives_in_agentv4_the_verdicts_grade_gives(
    tmp_path, capsys, monkeypatch, aggregate, required
):
    _agentv()
    (tmp_path / "r.yaml").write_text(rubric_text(aggregate=aggregate, required=required))
    (tmp_path / "r.samples.jsonl").write_text("".join(json.dumps({"id": f"s{i:02d}", "output": sample_text(i)}) + "\n"
                                              for i in range(N)))
    eval_file = tmp_path / "r.eval.yaml"
    assert main(["export", str(tmp_path / "r.yaml"), "--to", "agentv", "--agentv-version", "4",
                 "-o", str(eval_file)]) == 0
    brain = BothSides()
    with FakeLLM(brain=brain) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url_openai)
        ours, report = _ours(tmp_path, capsys)
        brain.calls.clear()
        rows, done = _run_agentv4(tmp_path, eval_file, {"OPENAI_API_KEY": "sk-only-the-key"}, server.base_url_openai)
    assert brain.calls == {LONG: N, COIN: N, RIGHT: N}, done.stderr[-2000:]  # each member graded each sample
    groups = [s for row in rows.values() for s in row["scores"] if s["type"] == "composite"]
    assert len(groups) == N and all(len(g["scores"]) == 3 for g in groups)  # one grader per member, pooled
    assert set(ours.values()) == {"pass", "fail"}
    split = [s["id"] for s in report["samples"] if s["criteria"][0]["panel"]["split"]]
    assert split  # the members disagree on some samples, so pooling is exercised
    alone = {f"s{i:02d}": "pass" if decide(LONG, sample_text(i)) else "fail" for i in range(N)}
    assert alone != ours  # one member alone would not give these verdicts
    assert _agentv_verdicts(rows, eval_file) == ours


def test_importing_an_agentv4_panel_export_reads_its_composites_and_says_the_panel_is_not_rebuilt():
    text = _export(rubric_text(required=False), 4).text
    result = import_rubric(text, "agentv")
    assert {c.outcome for c in result.rubric.criteria} == {"Says the refund takes 5 days"}  # read, not skipped
    assert not [w for w in result.warnings if "without an assert list" in w]
    assert any("composite aggregator threshold 0.500001" in w and "not rebuilt as a judge panel" in w
               for w in result.warnings)
