"""One smoke test per real provider. Skipped unless the key is set (and `-m live` is given)."""

from __future__ import annotations

import os

import pytest

from rubric_studio.core.results import Status
from rubric_studio.core.rubric import JudgeSettings, Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.judges import JudgeConfig, build_requests, judge_request, make_judge, resolve_judge

# Read at import: the shared autouse fixture removes provider keys from os.environ during tests.
LIVE_ENV = {name: value for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY") if (value := os.environ.get(name))}
RUBRIC = Rubric.model_validate({"name": "live", "criteria": [{"id": "refund", "outcome": "States that refunds are possible within 30 days"}]})
SAMPLE = Sample(id="s", output="You can get a full refund within 30 days of purchase.")


@pytest.mark.live
@pytest.mark.parametrize(("model", "key"), [("openai:gpt-4o-mini", "OPENAI_API_KEY"), ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY")])
async def test_live_provider_judges_an_obvious_case(model, key):
    if key not in LIVE_ENV:
        pytest.skip(f"{key} is not set")
    config = resolve_judge(JudgeSettings(model=model, timeout=60), env=LIVE_ENV)
    assert isinstance(config, JudgeConfig)
    judge = make_judge(config)
    try:
        (request,) = build_requests(RUBRIC, SAMPLE, RUBRIC.judge_criteria, config)
        outcome = await judge_request(judge, request, RUBRIC, SAMPLE)
    finally:
        await judge.aclose()
    cell = outcome.results["refund"]
    assert outcome.error is None, outcome.error
    assert cell.status is Status.MET and outcome.input_tokens > 0 and outcome.cost_usd is not None
    assert all(e.found for e in cell.evidence)
