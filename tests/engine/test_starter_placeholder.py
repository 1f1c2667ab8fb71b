"""A new rubric's starter criterion is not judged until the user writes a real outcome.

Counts are taken at the fake judge server: the placeholder never costs a request.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.loading import load_rubric, parse_rubric
from rubric_studio.core.results import Status, Verdict
from rubric_studio.core.samples import Sample
from rubric_studio.engine.api import make_grader
from rubric_studio.engine.starter import PLACEHOLDER_OUTCOME, create_starter_rubric
from tests.engine.conftest import judge_and_url

SAMPLES = [Sample(id=f"s{i}", output=f"Your refund of {i} dollars is on its way.") for i in range(3)]


def _grader(rubric, server, provider_name: str, tmp_path: Path, **options):
    judge, base_url = judge_and_url(server, provider_name)
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    return make_grader(rubric, judge=judge, base_url=base_url, env=env, cache_path=tmp_path / "c.sqlite", **options)


async def test_the_starter_criterion_sends_nothing_until_its_outcome_is_written(server, provider_name, tmp_path):
    path = tmp_path / "fresh.yaml"
    create_starter_rubric(path)
    rubric = load_rubric(path)
    grader = _grader(rubric, server, provider_name, tmp_path)
    try:
        report = await grader.run(rubric, SAMPLES)
        assert server.calls() == 0
        for sample in report.samples:
            (cell,) = sample.criteria
            assert cell.status is Status.UNJUDGED
            assert "outcome" in cell.rationale and "save" in cell.rationale
            assert sample.verdict is Verdict.UNJUDGED
        assert report.judge_note is None  # a judge is configured: nothing to say about one

        path.write_text(path.read_text().replace(PLACEHOLDER_OUTCOME, "Mentions the refund"))
        edited = load_rubric(path)
        report = await grader.run(edited, SAMPLES)
        assert server.calls() == len(SAMPLES)
        assert {s.criteria[0].status for s in report.samples} == {Status.MET}
    finally:
        await grader.aclose()


@pytest.mark.parametrize("batch", [False, True])
async def test_beside_real_criteria_only_the_real_ones_are_judged(server, tmp_path, batch: bool):
    text = f"name: mixed\ncriteria:\n  - id: todo\n    outcome: {PLACEHOLDER_OUTCOME}\n  - id: refund\n    outcome: Mentions the refund\n"
    rubric = parse_rubric(text, str(tmp_path / "mixed.yaml"))
    grader = _grader(rubric, server, "openai", tmp_path, batch=batch)
    try:
        report = await grader.run(rubric, SAMPLES)
        assert server.calls() == len(SAMPLES)  # one per sample for `refund`, none for `todo`
        assert not any(PLACEHOLDER_OUTCOME in json.dumps(request.body) for request in server.requests)
        assert all("Mentions the refund" in json.dumps(request.body) for request in server.requests)
        for sample in report.samples:
            statuses = {c.id: c.status for c in sample.criteria}
            assert statuses == {"todo": Status.UNJUDGED, "refund": Status.MET}
        assert grader.request_keys(rubric, SAMPLES) and len(grader.request_keys(rubric, SAMPLES)) == len(SAMPLES)
    finally:
        await grader.aclose()


async def test_without_a_judge_the_placeholder_still_says_what_to_do(tmp_path):
    path = tmp_path / "nojudge.yaml"
    create_starter_rubric(path)
    rubric = load_rubric(path)
    grader = make_grader(rubric, env={}, use_cache=False)
    report = await grader.run(rubric, SAMPLES)
    assert "save" in report.samples[0].criteria[0].rationale
    assert report.judge_note is None  # no real judged criterion needs a judge yet


def test_grade_json_on_a_starter_rubric_makes_no_request(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("RUBRIC_STUDIO_CACHE", str(tmp_path / "c.sqlite"))
    create_starter_rubric(tmp_path / "r.yaml")
    (tmp_path / "s.jsonl").write_text('{"id": "a", "output": "hello"}\n')
    code = main(["grade", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--judge", "openai:gpt-4o-mini",
                 "--base-url", server.base_url_openai, "--format", "json"])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert server.calls() == 0
    assert data["samples"][0]["verdict"] == "unjudged" and code == 1
    assert data["samples"][0]["criteria"][0]["status"] == "unjudged"
