"""Adaptive concurrency against a server with fewer slots than calls in flight.

The fake server is llama.cpp-like (``slots=N``): requests beyond N wait in its queue while
their client's timeout runs, and a request whose client gave up is dropped. Real SDKs over
real HTTP; what is asserted is what the server saw (peak of concurrent requests) and the
final verdicts, never wall time.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rubric_studio.core.results import Status
from rubric_studio.core.samples import Sample
from rubric_studio.engine.api import make_grader
from rubric_studio.engine.events import Progress
from rubric_studio.judges.server_slots import local_root, published_slots
from tests._timing import scaled
from tests.engine.conftest import judge_and_url
from tests.engine.test_fail_fast import rubric_with
from tests.fakellm import FakeLLM, Slow, rate_limited

pytestmark = [pytest.mark.timeout(90), pytest.mark.long]


def samples(n: int) -> list[Sample]:
    return [Sample(id=f"s{i}", output=f"Reply {i} about topic{i % 4}.") for i in range(n)]


def expected(n: int) -> dict[str, Status]:
    """What the keyword judge answers for "Mentions the word topic0" (unhurried)."""
    return {f"s{i}": Status.MET if i % 4 == 0 else Status.UNMET for i in range(n)}


def grader_on(server: FakeLLM, provider: str, tmp_path: Path, rubric):
    judge, base_url = judge_and_url(server, provider)
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    return make_grader(rubric, judge=judge, base_url=base_url, env=env, cache_path=tmp_path / "c.sqlite")


async def grade(grader, rubric, items, events=None):
    try:
        return await grader.run(rubric, items, (events.append if events is not None else None))
    finally:
        await grader.aclose()


def statuses(report) -> dict[str, Status]:
    return {s.id: s.criteria[0].status for s in report.samples}


async def test_timeouts_in_a_server_queue_lower_the_concurrency_and_no_cell_is_lost(provider_name, tmp_path):
    # 2 slots, 0.8 s a generation, 1.2 s timeout: at 6 in flight the third pair waits 1.6 s
    with FakeLLM(slots=2, publish_slots=False, latency=0.8) as server:
        rubric = rubric_with("concurrency: 6, timeout: 1.2, max_retries: 0", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        events: list = []
        report = await grade(grader, rubric, samples(6), events)
    assert statuses(report) == expected(6)  # every cell judged, none lost to a timeout
    assert report.summary.errors == 0 and report.judge_stopped is None
    assert server.dropped >= 1  # the first wave did time out in the queue ...
    assert grader.dispatch.concurrency.lowest <= 2  # ... and the run came down to what the server holds
    assert report.usage.requests == server.calls()  # every send counted, re-sends included
    shown = [e.concurrency for e in events if isinstance(e, Progress)]
    assert shown[0] == "6/6" and any(text.split("/")[0] in ("1", "2") for text in shown)


async def test_a_published_slot_count_caps_the_concurrency_from_the_start(provider_name, tmp_path):
    with FakeLLM(slots=2, latency=0.8) as server:
        rubric = rubric_with("concurrency: 6, timeout: 1.2, max_retries: 0", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        report = await grade(grader, rubric, samples(6))
    assert "/props" in server.probes
    assert server.peak_concurrent == 2 and server.dropped == 0  # never more sent than it runs at once
    assert server.calls() == 6 and statuses(report) == expected(6)
    assert grader.dispatch.concurrency.text == "2/6"


async def test_one_grader_asks_the_server_for_its_slots_once_across_runs(provider_name, tmp_path):
    """The slot count is a property of the server: a grader asks once, not on every run or call."""
    with FakeLLM(slots=2, latency=0.05) as server:
        rubric = rubric_with("concurrency: 6, timeout: 5, max_retries: 0", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        try:
            for first in (0, 6, 12):  # new samples each run: every run sends
                await grader.run(rubric, samples(18)[first:first + 6])
        finally:
            await grader.aclose()
    assert server.calls() == 18
    assert len(server.probes) == 1 and grader.dispatch.concurrency.text == "2/6"


async def test_the_progress_shows_the_published_slot_count_from_the_first_line(provider_name, tmp_path):
    # the first progress line came before the slot question was answered, and said 6/6 until a reply came
    with FakeLLM(slots=2, latency=0.3) as server:
        rubric = rubric_with("concurrency: 6, max_retries: 0", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        events: list = []
        await grade(grader, rubric, samples(4), events)
    shown = [e.concurrency for e in events if isinstance(e, Progress)]
    assert shown and set(shown) == {"2/6"}


async def test_a_429_burst_lowers_the_concurrency_and_every_call_then_succeeds(provider_name, tmp_path):
    # a provider limit of 2 concurrent requests: the third at once gets 429 (Retry-After 0.2 s)
    with FakeLLM(publish_slots=False) as server:
        server.always(lambda call: rate_limited(retry_after=0.2) if server._active > 2 else Slow(0.3))
        rubric = rubric_with("concurrency: 6, max_retries: 1", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        report = await grade(grader, rubric, samples(8))
    assert statuses(report) == expected(8) and report.summary.errors == 0
    assert grader.dispatch.concurrency.lowest <= 2
    assert report.usage.requests == server.calls()


async def test_the_first_call_of_a_wave_rate_limited_goes_again_like_the_others(provider_name, tmp_path):
    # the first call is sent alone, the rest of the wave right after it: it shared the server,
    # and its 429 was lost as "alone" (never re-sent) while the same 429 on a later call was re-sent
    first_sample: list[str] = []

    def act(call):
        if "Reply 0 " in call.sample:
            first_sample.append(call.sample)
            if len(first_sample) == 1:
                deadline = time.monotonic() + scaled(10)
                while server.calls() < 6 and time.monotonic() < deadline:  # the other calls of the wave arrive meanwhile
                    time.sleep(0.01)
                return rate_limited(retry_after=0.05)
        return Slow(0.2)

    with FakeLLM(publish_slots=False) as server:
        server.always(act)
        rubric = rubric_with("concurrency: 6, max_retries: 0", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        report = await grade(grader, rubric, samples(6))
    assert statuses(report) == expected(6) and report.summary.errors == 0
    assert len(first_sample) == 2 and report.usage.requests == server.calls() == 7


async def test_the_concurrency_grows_back_after_answers(provider_name, tmp_path):
    with FakeLLM() as server:
        server.queue(rate_limited(retry_after=0.05), rate_limited(retry_after=0.05))
        server.always(Slow(0.05))
        rubric = rubric_with("concurrency: 4, max_retries: 2", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        report = await grade(grader, rubric, samples(24))
    limit = grader.dispatch.concurrency
    assert report.summary.errors == 0
    assert limit.lowest == 2 and limit.current == 4  # halved once, grown back to --concurrency


async def test_a_lone_timeout_is_still_not_re_sent(provider_name, tmp_path):
    with FakeLLM() as server:
        server.queue(Slow(5))
        rubric = rubric_with("concurrency: 4, timeout: 0.3", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        report = await grade(grader, rubric, samples(1))
    assert report.samples[0].criteria[0].status is Status.ERROR and server.calls() == 1


# -- the slot question ---------------------------------------------------------------


async def test_slots_are_read_from_props_or_slots_of_a_local_server_only():
    with FakeLLM(slots=3) as server:
        assert await published_slots(server.base_url_openai, 5) == 3
        assert await published_slots(server.url, 5) == 3
    with FakeLLM(slots=3, publish_slots=False) as server:  # vLLM and others: nothing published
        assert await published_slots(server.base_url_openai, 5) is None
    assert local_root("https://api.openai.com/v1") is None
    assert local_root("http://10.0.0.5:8080/v1") is None
    assert local_root("http://[::1]:8080/v1") == ("::1", 8080, "")
    assert local_root("http://localhost:8080/proxy/v1") == ("localhost", 8080, "/proxy")


async def test_a_slot_question_to_a_server_that_never_answers_is_bounded():
    import socket
    import time

    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        started = time.monotonic()
        assert await published_slots(f"http://127.0.0.1:{port}/v1", 0.5) is None
        assert time.monotonic() - started < 3 * 0.5 + 1  # one bound, not one per path


def test_the_progress_line_shows_the_concurrency_in_use(tmp_path, monkeypatch):
    from tests.test_cli_reports import _grade_with_pty_stderr

    monkeypatch.setenv("OPENAI_API_KEY", "k")

    (tmp_path / "r.yaml").write_text("name: r\ncriteria:\n  - {id: a, outcome: Mentions the word topic0}\n")
    (tmp_path / "s.jsonl").write_text("".join(f'{{"id": "s{i}", "output": "Reply {i} about topic{i % 4}"}}\n'
                                              for i in range(8)))
    with FakeLLM(slots=2, latency=0.4) as server:
        code, _, terminal = _grade_with_pty_stderr([
            str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--judge", "openai:gpt-4o-mini", "--base-url",
            server.base_url_openai, "--concurrency", "6", "--no-cache", "--format", "json"])
    assert code in (0, 1) and server.calls() == 8
    assert "concurrency 2/6" in terminal  # the server's two slots, of the six asked for


# -- a server that queues and publishes nothing ------------------------------------------


async def test_a_first_wave_timed_out_in_a_silent_queue_is_re_sent_lower_and_no_cell_is_lost(provider_name, tmp_path):
    # 2 slots sharing one compute, no slot count published: a lone call takes 0.5 s, two at once
    # 1 s each; the 0.8 s timeout fits one call and not two, so all six of the first wave time out
    with FakeLLM(slots=2, shared_compute=True, publish_slots=False, latency=0.5) as server:
        rubric = rubric_with("concurrency: 6, timeout: 0.8, max_retries: 0", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        events: list = []
        report = await grade(grader, rubric, samples(8), events)
    assert report.judge_stopped is None and report.summary.errors == 0
    assert statuses(report) == expected(8)  # 0 cells lost
    assert server.dropped >= 6  # the whole first wave did time out on the server
    assert grader.dispatch.concurrency.lowest == 1
    assert report.usage.requests == server.calls()
    shown = [e.concurrency for e in events if isinstance(e, Progress)]
    assert shown[0] == "6/6" and "3/6" in shown and "1/6" in shown  # the limit falling, as progress shows it


async def test_a_server_that_answers_no_call_even_alone_is_still_stopped(provider_name, tmp_path):
    with FakeLLM(publish_slots=False) as server:
        server.always(Slow(30))
        rubric = rubric_with("concurrency: 6, timeout: 0.4, max_retries: 0", criteria=1)
        grader = grader_on(server, provider_name, tmp_path, rubric)
        report = await grade(grader, rubric, samples(12))
    assert report.judge_stopped is not None and "none answered" in report.judge_stopped
    assert grader.dispatch.concurrency.lowest == 1
    # six at once, three at once, then one alone: the breaker stops the run at the lone call
    assert server.calls() == 6 + 3 + 1
    assert all(s.criteria[0].status is Status.ERROR for s in report.samples)


# -- one call at a time fits: no cell is given up before the limit has come down to 1 ------------


def _on_one_server(server: FakeLLM, tmp_path: Path, rubric, judges: str):
    return make_grader(rubric, judge=judges, base_url=server.base_url_openai, env={"OPENAI_API_KEY": "k"},
                       cache_path=tmp_path / "c.sqlite")


@pytest.mark.parametrize(("judges", "samples_n"), [
    ("openai:gpt-4o-mini", 24),
    ("openai:judge-a,openai:judge-b", 12),  # a panel whose two members share the one server
])
async def test_no_cell_is_lost_where_one_call_at_a_time_fits(tmp_path, judges, samples_n):
    # 2 slots sharing one compute, no slot count published: a lone call 0.2 s, two at once 0.4 s each,
    # a third waits; the 0.32 s timeout fits one call at a time and never two. 24 cells at --concurrency 6.
    with FakeLLM(slots=2, shared_compute=True, publish_slots=False, latency=0.2) as server:
        rubric = rubric_with("concurrency: 6, timeout: 0.32", criteria=1)
        grader = _on_one_server(server, tmp_path, rubric, judges)
        report = await grade(grader, rubric, samples(samples_n))
    members = [member for _, member in getattr(grader, "members", [(None, grader)])]
    cells = [c for s in report.samples for c in s.criteria]
    assert sum(c.status is Status.ERROR for c in cells) == 0 and report.judge_stopped is None
    assert all(not (c.panel or {}).get("errors") for c in cells)  # no member lost a cell either
    assert statuses(report) == expected(samples_n)
    limits = {id(member.dispatch.concurrency): member.dispatch.concurrency for member in members}
    assert len(limits) == 1  # the members of a panel on one server hold one limit between them
    assert next(iter(limits.values())).lowest == 1
