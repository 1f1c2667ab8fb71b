"""Verdicts at the edges, under the target tool's own arithmetic: a score of exactly the
threshold (which JavaScript computes as 0.7999999999999999), and a judge that passes a
criterion with a fractional score (promptfoo then averages that score)."""

from __future__ import annotations

import pytest
import yaml

from rubric_studio.core.results import CriterionResult, Status, Verdict
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.scoring import score_sample
from rubric_studio.interop import export_rubric, import_rubric
from tests.interop import agentv_semantics

# 0.7 + 0.1 is 0.7999999999999999 in IEEE doubles: exactly the 0.8 threshold on paper.
BOUNDARY = Rubric.model_validate({
    "name": "boundary",
    "pass_threshold": 0.8,
    "criteria": [
        {"id": "main", "outcome": "Answers the question", "weight": 0.7},
        {"id": "source", "outcome": "Names a source", "weight": 0.1},
        {"id": "extra", "outcome": "Adds an example", "weight": 0.2},
    ],
})
MET = {"main": True, "source": True, "extra": False}


def _ours(rubric, met):
    results = {key: CriterionResult(key, Status.MET if ok else Status.UNMET, score=1.0 if ok else 0.0, source="judge")
               for key, ok in met.items()}
    return score_sample(rubric, results)


def test_the_boundary_sample_passes_here():
    outcome = _ours(BOUNDARY, MET)
    assert 0.7 + 0.1 < 0.8  # the float noise the exports must survive
    assert outcome.verdict == Verdict.PASS


def test_agentv_export_passes_the_boundary_sample():
    result = export_rubric(BOUNDARY, "agentv")
    data = yaml.safe_load(result.text)
    passed = agentv_semantics.passes(data, {}, lambda entry, item: 1.0 if MET[item["id"]] else 0.0)
    assert passed
    assert data["default_test"]["threshold"] < 0.8
    assert any("0.799999" in w for w in result.warnings)


def _promptfoo_reply(prompt, rubric_text, met):
    """A judge that follows the grading prompt it is given and grades "partly" with a 0.6:
    promptfoo's default prompt asks every judge for a score; the exported one asks only banded rubrics."""
    system = prompt[0]["content"] if prompt else ""
    if "Do not add a score" in system and "from 0.0 to 1.0 using these bands" not in rubric_text:
        return {"reason": "r", "pass": met}
    return {"reason": "r", "pass": met, "score": 0.6 if met else 0.0}


def _promptfoo_passes(data, met):
    """promptfoo's verdict for the exported defaultTest (``runJsonGradingPrompt`` + assert-set rules)."""
    options = data["defaultTest"].get("options", {})
    prompt = options.get("rubricPrompt")

    def run(entry):
        kind = entry["type"]
        if kind == "assert-set":
            parts = [(m.get("weight", 1), *run(m)) for m in entry["assert"]]
            score = sum(s * w for w, _, s in parts) / sum(w for w, _, _ in parts)
            return (score >= entry["threshold"] if "threshold" in entry else all(p for _, p, _ in parts)), score
        reply = _promptfoo_reply(prompt, entry["value"], MET[entry["metric"]] if met is None else met[entry["metric"]])
        passed = reply["pass"]
        score = reply["score"] if isinstance(reply.get("score"), int | float) else float(passed)
        if "threshold" in entry:
            passed = passed and score >= entry["threshold"]
        return (not passed, 1 - score) if kind.startswith("not-") else (passed, score)

    return all(run(entry)[0] for entry in data["defaultTest"]["assert"])


def test_promptfoo_export_passes_the_boundary_sample():
    result = export_rubric(BOUNDARY, "promptfoo")
    assert _promptfoo_passes(yaml.safe_load(result.text), None)


@pytest.mark.parametrize("met", [
    {"main": True, "source": True, "extra": True},
    {"main": True, "source": False, "extra": True},
    {"main": True, "source": True, "extra": False},
    {"main": False, "source": True, "extra": True},
])
def test_a_judge_passing_with_a_fractional_score_counts_as_a_pass_in_promptfoo(met):
    data = yaml.safe_load(export_rubric(BOUNDARY, "promptfoo").text)
    assert _promptfoo_passes(data, met) == (_ours(BOUNDARY, met).verdict == Verdict.PASS)


def test_promptfoos_default_prompt_would_have_failed_a_met_rubric():
    data = yaml.safe_load(export_rubric(BOUNDARY, "promptfoo").text)
    data["defaultTest"]["options"].pop("rubricPrompt")
    everything = {"main": True, "source": True, "extra": True}
    assert not _promptfoo_passes(data, everything)  # 0.6 on average: below 0.8
    assert _ours(BOUNDARY, everything).verdict == Verdict.PASS


@pytest.mark.parametrize("target", ["agentv", "promptfoo"])
def test_boundary_nudge_is_undone_on_import(target):
    imported = import_rubric(export_rubric(BOUNDARY, target).text, target).rubric
    assert imported.pass_threshold == 0.8
    assert _ours(imported, MET).verdict == Verdict.PASS
