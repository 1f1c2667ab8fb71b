"""Judges at the edges: a run stops sending when every further call would fail alike,
a deadline bounds a run, timeouts are not re-sent, and usage counts what was really sent.

Real SDKs over real HTTP to the local fake server; counts are taken at the server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.results import Status
from rubric_studio.core.samples import Sample
from rubric_studio.engine.api import make_grader
from tests.engine.conftest import judge_and_url
from tests.fakellm import CutOff, FakeLLM, HTTPError, Refuse, Slow, rate_limited, unused_port_url

pytestmark = pytest.mark.timeout(60)


def rubric_with(judge: str = "", criteria: int = 4):
    lines = [f"  - {{id: c{i}, outcome: Mentions the word topic{i}}}" for i in range(criteria)]
    return parse_rubric("name: edge\n" + (f"judge: {{{judge}}}\n" if judge else "") + "criteria:\n" + "\n".join(lines) + "\n")


def samples(n: int = 10) -> list[Sample]:
    return [Sample(id=f"s{i}", output=f"Reply {i} about topic{i % 4}.") for i in range(n)]


@pytest.fixture
def provider(provider_name):
    return provider_name


def grader(server: FakeLLM | None, provider: str, tmp_path: Path, rubric, base_url: str | None = None, **options):
    judge = "openai:gpt-4o-mini" if provider == "openai" else "anthropic:claude-haiku-4-5"
    if base_url is None:
        judge, base_url = judge_and_url(server, provider)
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    return make_grader(rubric, judge=judge, base_url=base_url, env=env, cache_path=tmp_path / "c.sqlite", **options)


async def run(grader, rubric, items):
    try:
        return await grader.run(rubric, items)
    finally:
        await grader.aclose()


async def test_a_rejected_key_stops_the_run_after_the_first_calls(server, provider, tmp_path):
    server.always(HTTPError(401, "Incorrect API key provided"))
    rubric = rubric_with("concurrency: 2")
    report = await run(grader(server, provider, tmp_path, rubric), rubric, samples(10))
    cells = [c for s in report.samples for c in s.criteria]
    assert len(cells) == 40 and all(c.status is Status.ERROR for c in cells)  # errors, never fails
    assert server.calls() <= 4  # not 40: only what was in flight when the first 401 came back
    assert report.usage.requests == server.calls() and report.usage.judge_calls == server.calls()
    assert "401" in report.judge_stopped and "calls not sent" in report.judge_stopped
    assert sum("not sent: judging stopped: 401" in (c.error or "") for c in cells) >= 36


async def test_a_missing_model_stops_the_run(server, provider, tmp_path):
    server.always(HTTPError(404, "The model `gpt-nope` does not exist"))
    rubric = rubric_with("concurrency: 1")
    report = await run(grader(server, provider, tmp_path, rubric), rubric, samples(5))
    assert server.calls() == 1 and "check the model name" in report.judge_stopped


async def test_connection_refused_stops_the_run(provider, tmp_path):
    rubric = rubric_with("concurrency: 4, max_retries: 1")
    url = unused_port_url("/v1" if provider == "openai" else "")
    report = await run(grader(None, provider, tmp_path, rubric, base_url=url), rubric, samples(50))
    assert "connection refused" in report.judge_stopped
    # 200 cells; only the first wave (4 calls × 2 attempts) was tried
    assert report.usage.judge_calls <= 4 and report.usage.requests <= 8
    assert report.summary.errors == 50


async def test_a_judge_that_never_answers_is_given_up_on(server, provider, tmp_path):
    server.always(Slow(30))
    rubric = rubric_with("concurrency: 2, timeout: 0.3, max_retries: 3")
    report = await run(grader(server, provider, tmp_path, rubric), rubric, samples(10))
    # timeouts are not re-sent, and three of them with no reply at all stop the run
    assert server.calls() <= 4 and report.usage.requests == server.calls()
    assert "raise judge.timeout" in report.judge_stopped and "none answered" in report.judge_stopped


async def test_a_timeout_is_not_re_sent(server, provider, tmp_path):
    server.queue(Slow(5))
    rubric = rubric_with("concurrency: 1, timeout: 0.3, max_retries: 3", criteria=1)
    report = await run(grader(server, provider, tmp_path, rubric), rubric, samples(2))
    first, second = (s.criteria[0] for s in report.samples)
    assert first.status is Status.ERROR and "raise judge.timeout (or --timeout)" in first.error
    assert "attempts" not in first.error  # sent once: the server dropped that generation
    assert second.status in (Status.MET, Status.UNMET)  # one slow call does not stop a run
    assert server.calls() == 2 and report.judge_stopped is None


async def test_a_day_long_retry_after_stops_at_once(server, provider, tmp_path):
    server.always(rate_limited(retry_after=86400))
    rubric = rubric_with("concurrency: 1")
    report = await run(grader(server, provider, tmp_path, rubric), rubric, samples(10))
    assert server.calls() == 1 and "asks to wait 86400 s" in report.judge_stopped


async def test_the_deadline_bounds_the_whole_run(server, provider, tmp_path):
    server.always(Slow(20))
    rubric = rubric_with("concurrency: 2, timeout: 60", criteria=2)
    report = await run(grader(server, provider, tmp_path, rubric, deadline=0.5), rubric, samples(4))
    cells = [c for s in report.samples for c in s.criteria]
    assert all(c.status is Status.ERROR and "deadline (0.5 s)" in c.error for c in cells)
    assert "raise judge.deadline" in report.judge_stopped
    assert report.usage.requests == 2  # the two calls on the wire when the deadline passed count as sent


async def test_the_deadline_comes_from_the_rubric(server, provider, tmp_path):
    server.always(Slow(20))
    rubric = rubric_with("concurrency: 1, deadline: 0.4", criteria=1)
    report = await run(grader(server, provider, tmp_path, rubric), rubric, samples(2))
    assert "deadline (0.4 s)" in report.judge_stopped


async def test_cut_off_and_refused_replies_are_counted_and_priced(server, provider, tmp_path):
    server.queue(CutOff('{"rationale": "The reply'), Refuse("no"))
    rubric = rubric_with("concurrency: 1, max_retries: 0", criteria=1)
    report = await run(grader(server, provider, tmp_path, rubric), rubric, samples(2))
    first, second = (s.criteria[0] for s in report.samples)
    assert "cut off at max_tokens (1024); raise judge.max_tokens" in first.error
    assert second.status is Status.ERROR and "refused" in second.error
    # both replies arrived and were billed: their tokens are in the usage, and so is their cost
    assert report.usage.input_tokens > 100 and report.usage.output_tokens > 0
    assert report.usage.cost_usd > 0


async def test_a_looping_reply_is_called_a_loop(server, provider, tmp_path):
    server.queue(CutOff('{"rationale": "' + "the reply is polite and " * 40))
    rubric = rubric_with("concurrency: 1, max_tokens: 256", criteria=1)
    report = await run(grader(server, provider, tmp_path, rubric), rubric, samples(1))
    error = report.samples[0].criteria[0].error
    assert "repeating itself" in error and "the reply is polite" in error and "raise judge.max_tokens" not in error


def test_grade_cli_says_why_judging_stopped_once(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", "bad")
    server.always(HTTPError(401, "Incorrect API key provided"))
    (tmp_path / "r.yaml").write_text(
        "name: r\njudge: {model: 'openai:gpt-4o-mini', concurrency: 1}\ncriteria:\n"
        "  - {id: a, outcome: Says hello}\n  - {id: b, outcome: Says goodbye}\n"
    )
    (tmp_path / "s.jsonl").write_text("".join(json.dumps({"id": f"s{i}", "output": f"hi {i}"}) + "\n" for i in range(6)))
    code = main(["grade", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--base-url", server.base_url_openai,
                 "--cache-path", str(tmp_path / "c.sqlite")])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 3 and server.calls() == 1
    assert err.count("judging stopped: 401") == 1
    # the table names each distinct reason once, with the cells it covers
    assert out.count("not sent: judging stopped") == 1 and "11 cells" in out


def test_grade_timeout_flag_overrides_the_rubric(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    server.always(Slow(5))
    (tmp_path / "r.yaml").write_text("name: r\njudge: {timeout: 600}\ncriteria:\n  - {id: a, outcome: Says hello}\n")
    (tmp_path / "s.jsonl").write_text(json.dumps({"id": "s", "output": "hi"}) + "\n")
    code = main(["grade", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--base-url", server.base_url_openai,
                 "--timeout", "0.3", "--format", "json", "--no-cache"])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 3 and "within 0.3 s" in data["samples"][0]["criteria"][0]["error"]
    assert main(["grade", str(tmp_path / "r.yaml"), "--timeout", "-1"]) == 2
