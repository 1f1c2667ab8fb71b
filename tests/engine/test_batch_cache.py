"""Batch mode caches every valid verdict on its own, and edits that do not change what the
judge is asked do not re-judge. Real SDKs over HTTP to the local fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.results import Status
from rubric_studio.core.samples import Sample
from rubric_studio.engine.api import make_grader
from tests.engine.conftest import judge_and_url
from tests.fakellm import Omit, Slow

pytestmark = pytest.mark.timeout(60)

RUBRIC = """\
name: batch
judge: {{concurrency: 4{mode}}}
criteria:
  - {{id: {first}, outcome: "{outcome}"}}
  - {{id: thanks, outcome: Thanks the customer}}
  - {{id: tone, outcome: Warm tone, score_ranges: {{0: cold, 5: neutral, 8: warm}}}}
"""
SAMPLES = [Sample(id=f"s{i}", output=f"Thanks! Your refund {i} is on its way, warm regards.") for i in range(5)]


def rubric(batch: bool = True, first: str = "refund", outcome: str = "Mentions the refund"):
    return parse_rubric(RUBRIC.format(mode=", mode: batch" if batch else "", first=first, outcome=outcome))


@pytest.fixture
def provider(provider_name):
    return provider_name


async def grade(server, provider, tmp_path: Path, graded_rubric, **options):
    judge, url = judge_and_url(server, provider)
    grader = make_grader(graded_rubric, judge=judge, base_url=url, env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"},
                         cache_path=tmp_path / "c.sqlite", **options)  # fmt: skip
    try:
        return await grader.run(graded_rubric, SAMPLES)
    finally:
        await grader.aclose()


async def test_a_batch_that_leaves_one_out_is_re_asked_for_it_alone_and_then_cached(server, provider, tmp_path):
    server.always(lambda call: Omit(criterion="thanks") if call.batch else None)
    first = await grade(server, provider, tmp_path, rubric())
    assert server.calls() == 10  # 5 batches + 5 re-asks, each for `thanks` only
    re_asks = [str(r.body) for r in server.requests if "### Criterion `" not in str(r.body)]
    assert len(re_asks) == 5 and all("Outcome: Thanks the customer" in body for body in re_asks)
    assert all("left out criterion thanks" in body and "Warm tone" not in body for body in re_asks)
    assert first.summary.errors == 0
    # judge_calls counts cells sent (5 samples x 3 criteria), requests what went over HTTP
    assert first.usage.judge_calls == 15 and first.usage.requests == 10
    server.reset()
    again = await grade(server, provider, tmp_path, rubric())
    assert server.calls() == 0 and again.usage.cache_hits == 15  # before: a partial batch was never cached


async def test_batch_and_per_criterion_runs_share_verdicts(server, provider, tmp_path):
    await grade(server, provider, tmp_path, rubric(batch=True))
    assert server.calls() == 5
    server.reset()
    per_cell = await grade(server, provider, tmp_path, rubric(batch=False))
    assert server.calls() == 0 and per_cell.usage.cache_hits == 15


async def test_a_batch_run_sends_only_the_criteria_the_cache_lacks(server, provider, tmp_path):
    await grade(server, provider, tmp_path, rubric(batch=False))
    server.reset()
    edited = rubric(batch=True, outcome="Mentions the refund and its timeline")
    await grade(server, provider, tmp_path, edited)
    assert server.calls() == 5  # one per sample, each for the edited criterion only
    asked = [str(r.body) for r in server.requests]
    assert all("Mentions the refund and its timeline" in body and "Thanks the customer" not in body for body in asked)


async def test_renaming_a_criterion_or_trailing_space_does_not_re_judge(server, provider, tmp_path):
    await grade(server, provider, tmp_path, rubric(batch=False))
    server.reset()
    renamed = await grade(server, provider, tmp_path, rubric(batch=False, first="mentions-refund"))
    assert server.calls() == 0 and renamed.usage.cache_hits == 15
    spaced = await grade(server, provider, tmp_path, rubric(batch=False, outcome="Mentions the refund  \\n"))
    assert server.calls() == 0 and spaced.summary.errors == 0


@pytest.mark.parametrize("batch", [False, True], ids=["per-criterion", "batch"])
async def test_a_run_of_spaces_inside_an_outcome_does_not_re_judge(server, provider, tmp_path, batch):
    await grade(server, provider, tmp_path, rubric(batch=batch))
    sent = server.calls()
    assert sent == (5 if batch else 15)
    for spaced in ("Mentions  the refund", "Mentions the     refund", "Mentions\\tthe refund", "Mentions the refund  "):
        server.reset()
        again = await grade(server, provider, tmp_path, rubric(batch=batch, outcome=spaced))
        assert server.calls() == 0, spaced  # the same request: its verdicts come from the cache
        assert again.summary.errors == 0 and again.usage.cache_hits == 15  # every cell
    server.reset()
    await grade(server, provider, tmp_path, rubric(batch=batch, outcome="Mentions  the  full refund"))
    assert server.calls() == 5  # a changed word is a new question: that criterion's cells go again


async def test_a_judge_setting_edit_adopts_the_calls_in_flight(server, provider, tmp_path):
    """The studio builds a new grader when judge.timeout changes; the calls the old one has on
    the wire answer the same requests, so the new one adopts them instead of re-sending."""
    import asyncio

    judge, url = judge_and_url(server, provider)
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    server.always(Slow(0.5))
    graded = rubric(batch=False)
    old = make_grader(graded, judge=judge, base_url=url, env=env, use_cache=False)
    first = asyncio.ensure_future(old.run(graded, SAMPLES))
    while server.calls() < 4:  # concurrency 4: the first wave is on the wire
        await asyncio.sleep(0.02)
    first.cancel()
    new = make_grader(graded, judge=judge, base_url=url, env=env, use_cache=False, timeout=30)
    old.hand_over(new)
    closing = asyncio.ensure_future(old.aclose())  # waits for the handed-over calls, then closes
    report = await new.run(graded, SAMPLES)
    await closing
    await new.aclose()
    assert server.calls() == 15  # every cell asked once, none twice
    assert all(c.status is not Status.ERROR for s in report.samples for c in s.criteria)
