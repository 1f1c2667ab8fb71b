"""``improve`` with a judge panel: a member far worse than the others on the labels is offered for
dropping, evaluated on the holdout without a judge call, and written into the rubric with --apply;
a single judge gets no such candidate (the scripted judges of tests/panels/judges.py)."""

from __future__ import annotations

import json
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
