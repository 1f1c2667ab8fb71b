"""``improve`` with a judge panel: a member far worse than the others on the labels is offered for
dropping, evaluated on the holdout without a judge call, and written into the rubric with --apply;
a single judge gets no such candidate (the scripted judges of tests/panels/judges.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from tests.fakellm import FakeLLM
from tests.panels.judges import LONG, RIGHT, Judges, sample_text, truth

pytestmark = pytest.mark.timeout(120)
N = 120
RIGHT_B = "judge-right-b"  # any model the scripted server does not bias answers the truth

RUBRIC = f"""\
name: refunds
judge:
  max_retries: 0
  panel:
    - openai:{LONG}   # rewards length
    - openai:{RIGHT}
    - {{model: openai:{RIGHT_B}, temperature: 0}}
  aggregate: any
criteria:
  - id: timeline
    outcome: Says the refund takes 5 days
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "r.samples.jsonl").write_text(
        "".join(json.dumps({"id": f"s{i:03d}", "output": sample_text(i)}) + "\n" for i in range(N)))
    (tmp_path / "r.labels.yaml").write_text("".join(
        f"s{i:03d}: {{criteria: {{timeline: {'met' if truth(i) else 'unmet'}}}}}\n" for i in range(N)))
    return tmp_path


@pytest.fixture
def server(monkeypatch):
    judges = Judges()
    with FakeLLM(brain=judges) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        yield judges


def improve(project: Path, capsys, *extra: str) -> dict:
    capsys.readouterr()
    code = main(["improve", str(project / "r.yaml"), "--kinds", "panel", "--format", "json",
                 "--cache-path", str(project / "c.sqlite"), *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_the_member_that_disagrees_with_the_labels_is_offered_for_dropping(project, server, capsys):
    report = improve(project, capsys)
    assert report["criterion"] == "timeline"
    (candidate,) = report["candidates"]
    assert candidate["kind"] == "panel" and candidate["change"]["drop_member"] == f"openai:{LONG}"
    assert candidate["calls"] == 0  # pooled again from the cells the baseline holds
    assert candidate["holdout"]["broke"] == 0 and candidate["holdout"]["fixed"] > 0
    assert candidate["holdout"]["kappa_after"] == 1.0  # the two right members agree with every label
    assert candidate["status"] == "improves holdout", candidate
    assert server.calls == {LONG: N, RIGHT: N, RIGHT_B: N}  # the baseline only: one call per member and sample


def test_apply_writes_the_panel_without_the_member_and_keeps_the_others_as_written(project, server, capsys):
    improve(project, capsys, "--apply", "1")
    text = (project / "r.yaml").read_text()
    panel = yaml.safe_load(text)["judge"]["panel"]
    assert panel == [f"openai:{RIGHT}", {"model": f"openai:{RIGHT_B}", "temperature": 0}]
    assert "aggregate: any" in text and LONG not in text


def test_a_panel_whose_members_agree_alike_gets_no_candidate(project, server, capsys):
    (project / "r.yaml").write_text(RUBRIC.replace(f"openai:{LONG}   # rewards length", "openai:judge-right-c"))
    report = improve(project, capsys)
    assert report["candidates"] == []


def test_a_single_judge_gets_no_panel_candidate(project, server, capsys):
    (project / "r.yaml").write_text(f"name: refunds\njudge:\n  model: openai:{LONG}\n  max_retries: 0\n"
                                    "criteria:\n  - id: timeline\n    outcome: Says the refund takes 5 days\n")
    report = improve(project, capsys)
    assert report["criterion"] == "timeline" and report["candidates"] == []


ANALYTIC = f"""\
name: refunds
judge:
  max_retries: 0
  panel: [openai:{LONG}, openai:{RIGHT}, openai:{RIGHT_B}]
criteria:
  - id: timeline
    outcome: Says the refund takes 5 days
    score_ranges: {{0: vague, 7: says 5 days}}
    min_score: 0.7
"""


class Scores(Judges):
    """The scripted judges on a 0–10 criterion: 9 where the model says met, 2 where it says unmet."""

    def __call__(self, call):
        reply = super().__call__(call)
        if isinstance(reply, dict) and call.criteria and call.criteria[0].kind == "analytic":
            reply = {"rationale": reply["rationale"], "evidence": reply["evidence"],
                     "score": 9 if reply.pop("verdict") == "met" else 2}
        return reply


def test_an_analytic_criterion_is_offered_dropping_the_member_that_disagrees(project, monkeypatch, capsys):
    # judge-long scores 9 on long outputs, 2 on short: met/unmet (min_score 0.7) by length, which is right on
    # half the tickets (kappa 0 against the labels); the two others score the truth (kappa 1). Pooled by the
    # median the panel already follows the two (9, 9, 2 → 9; 2, 2, 9 → 2), so dropping judge-long changes no
    # verdict (no criterion disagrees, so it is named): offered, evaluated without a call, fixing and
    # breaking nothing — a member the panel can do without.
    (project / "r.yaml").write_text(ANALYTIC)
    judges = Scores()
    with FakeLLM(brain=judges) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        report = improve(project, capsys, "--criterion", "timeline")
    (candidate,) = report["candidates"]
    assert candidate["kind"] == "panel" and candidate["change"]["drop_member"] == f"openai:{LONG}"
    assert candidate["calls"] == 0 and judges.calls == {LONG: N, RIGHT: N, RIGHT_B: N}
    # length says nothing about the truth: near 0 on the fitting labels (how near depends on the split)
    kappa = float(re.search(r"kappa (-?[\d.]+) on timeline", candidate["description"]).group(1))
    assert abs(kappa) < 0.2 and "the others 1.00" in candidate["description"]
    assert candidate["holdout"]["broke"] == 0 and candidate["holdout"]["fixed"] == 0
    assert candidate["holdout"]["kappa_after"] == 1.0


def test_under_the_mean_the_analytic_drop_fixes_what_the_outlier_broke(project, monkeypatch, capsys):
    # aggregate mean: 9, 9, 2 → 6.67 (unmet, wrong) on every short true ticket and 2, 2, 9 → 4.33 (right);
    # without judge-long every pooled verdict is right, so the drop fixes cells on the holdout
    (project / "r.yaml").write_text(ANALYTIC.replace("judge:\n", "judge:\n  aggregate: mean\n"))
    with FakeLLM(brain=Scores()) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        report = improve(project, capsys)
    (candidate,) = report["candidates"]
    assert candidate["change"]["drop_member"] == f"openai:{LONG}"
    assert candidate["holdout"]["fixed"] > 0 and candidate["holdout"]["broke"] == 0
    assert candidate["holdout"]["kappa_after"] == 1.0 and candidate["status"] == "improves holdout"
