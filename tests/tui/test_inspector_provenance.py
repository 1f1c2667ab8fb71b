"""The inspector says when a cached verdict came from a batch call, and shows the request that was sent."""

from __future__ import annotations

import pytest

from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.api import make_grader
from rubric_studio.tui.results._inspector import _exchange, source_words
from tests.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(60)

RUBRIC = """\
name: p
judge: {{concurrency: 2{mode}}}
criteria:
  - {{id: refund, outcome: Mentions the refund}}
  - {{id: thanks, outcome: Thanks the customer}}
  - {{id: tone, outcome: Warm tone}}
"""
SAMPLES = [Sample(id="s1", output="Thanks! Your refund is on its way, warm regards.")]


async def grade(server, tmp_path, batch: bool):
    rubric = parse_rubric(RUBRIC.format(mode=", mode: batch" if batch else ""))
    grader = make_grader(rubric, judge="openai:gpt-4o-mini", base_url=server.base_url_openai,
                         env={"OPENAI_API_KEY": "k"}, cache_path=tmp_path / "c.sqlite")  # fmt: skip
    try:
        return await grader.run(rubric, SAMPLES)
    finally:
        await grader.aclose()


async def test_a_cached_batch_verdict_shows_the_batch_call_that_was_sent(tmp_path):
    with FakeLLM() as server:
        await grade(server, tmp_path, batch=True)
        report = await grade(server, tmp_path, batch=False)
        assert server.calls() == 1
    cell = report.samples[0].criteria[1]
    assert source_words(cell) == "cache, from a batch call of 3 criteria"
    shown = _exchange(cell).plain
    # the request sent asked about all three criteria; a per-criterion request was never sent
    assert all(outcome in shown for outcome in ("Mentions the refund", "Thanks the customer", "Warm tone"))
    assert "reply (this criterion)" in shown


async def test_a_verdict_from_its_own_call_reads_plainly(tmp_path):
    with FakeLLM() as server:
        report = await grade(server, tmp_path, batch=False)
    assert source_words(report.samples[0].criteria[0]) == "judge"
