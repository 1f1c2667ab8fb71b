"""Both providers, through the real SDKs, against the fake server on 127.0.0.1."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest

from rubric_studio.core.results import Status
from rubric_studio.judges import build_requests, interpret, judge_request, make_judge
from tests.fakellm import (
    FakeLLM,
    HTTPError,
    Omit,
    Refuse,
    Reply,
    Slow,
    Text,
    rate_limited,
    server_error,
    unused_port_url,
)


async def run(config, rubric, sample, criteria=None):
    """Judge every judge criterion of ``sample``; returns (cells, outcomes)."""
    judge = make_judge(config)
    try:
        cells, outcomes = {}, []
        for request in build_requests(rubric, sample, criteria or rubric.judge_criteria, config):
            outcome = await judge_request(judge, request, rubric, sample)
            outcomes.append(outcome)
            cells.update(outcome.results)
        return cells, outcomes
    finally:
        await judge.aclose()


def one(rubric, criterion_id):
    return [rubric.criterion(criterion_id)]


async def test_happy_path_checklist_analytic_and_penalty(config, rubric, sample, fake_llm):
    cells, outcomes = await run(config, rubric, sample)
    assert set(cells) == {"refund", "password", "tone"}  # the length check is not the judge's
    assert cells["refund"].status is Status.MET and cells["refund"].score == 1.0
    assert cells["password"].status is Status.UNMET and cells["password"].score == 0.0
    assert cells["tone"].raw_score == 7 and cells["tone"].score == pytest.approx(0.7)
    assert cells["tone"].status is Status.MET  # default analytic min_score 0.7, float-tolerant
    assert all(c.source == "judge" and c.error is None for c in cells.values())
    assert fake_llm.calls() == 3
    first = outcomes[0]
    assert first.calls == 1 and first.input_tokens > 0 and first.output_tokens > 0
    assert first.cost_usd is not None and first.cost_usd > 0
    assert first.reply is not None and json.loads(first.reply.text)["verdict"] == "met"


async def test_evidence_found_with_offsets_and_invented_quote_not_found(config, rubric, sample, fake_llm):
    fake_llm.queue(Reply({"rationale": "r", "evidence": ["refund  POLICY gives", "we pay double"], "verdict": "met"}))
    cells, _ = await run(config, rubric, sample, one(rubric, "refund"))
    found, invented = cells["refund"].evidence
    assert found.found and sample.output[found.start : found.end] == "refund policy gives"
    assert not invented.found and invented.start is None


async def test_detail_keeps_request_reply_and_usage_but_never_the_key(config, rubric, sample, fake_llm):
    cells, _ = await run(config, rubric, sample, one(rubric, "refund"))
    detail = cells["refund"].detail
    assert set(detail["request"]) == {"system", "user", "schema"}
    assert json.loads(detail["reply"])["verdict"] == "met"
    assert detail["input_tokens"] > 0 and detail["latency_s"] >= 0 and detail["model"]
    assert "sk-test" not in json.dumps(detail, default=str)
    sent = fake_llm.requests[-1]
    if config.provider == "openai":
        assert sent.path == "/v1/chat/completions" and sent.api_key == "sk-test"
        assert sent.body["response_format"]["json_schema"]["strict"] is True
        assert sent.body["temperature"] == 0
    else:
        assert sent.path == "/v1/messages" and sent.api_key == "sk-test"
        assert sent.body["tool_choice"] == {"type": "tool", "name": "judgement"}
        assert "temperature" not in sent.body  # the SDK's MessageCreateParams declares none
        first_block = sent.body["messages"][0]["content"][0]
        assert "<sample-" in first_block["text"] and first_block["cache_control"] == {"type": "ephemeral"}


async def test_429_retry_after_beyond_the_cap_fails_at_once_and_stops_the_run(config, rubric, sample, fake_llm):
    fake_llm.queue(rate_limited(retry_after=3600))
    cells, outcomes = await run(config, rubric, sample, one(rubric, "refund"))  # the server asks for 3600 s
    assert cells["refund"].status is Status.ERROR and "asks to wait 3600 s" in cells["refund"].error
    assert outcomes[0].error.stops_run  # a day-long quota will not lift within the run
    assert fake_llm.calls() == 1 and outcomes[0].requests == 1


async def test_retries_are_counted_as_requests(config, rubric, sample, fake_llm):
    fake_llm.queue(rate_limited(retry_after_ms=10), server_error())
    cells, outcomes = await run(config, rubric, sample, one(rubric, "refund"))
    assert cells["refund"].status is Status.MET
    assert fake_llm.calls() == 3 and outcomes[0].calls == 1 and outcomes[0].requests == 3


async def test_429_retry_after_is_honoured_below_the_cap(config, rubric, sample, fake_llm):
    fake_llm.queue(rate_limited(retry_after_ms=300))
    started = time.monotonic()
    cells, _ = await run(replace(config, max_retry_wait=5), rubric, sample, one(rubric, "refund"))
    assert time.monotonic() - started >= 0.29
    assert cells["refund"].status is Status.MET


async def test_500_then_success(config, rubric, sample, fake_llm):
    fake_llm.queue(server_error(500), server_error(503))
    cells, _ = await run(config, rubric, sample, one(rubric, "refund"))
    assert cells["refund"].status is Status.MET
    assert fake_llm.calls() == 3


async def test_500_forever_is_an_error_cell_not_unmet(config, rubric, sample, fake_llm):
    fake_llm.always(server_error(500))
    cells, outcomes = await run(config, rubric, sample, one(rubric, "refund"))
    cell = cells["refund"]
    assert cell.status is Status.ERROR and cell.score is None
    assert cell.error.startswith("500 from ") and "after 3 attempts" in cell.error
    assert outcomes[0].error.kind == "server" and outcomes[0].reply is None
    assert fake_llm.calls() == config.max_retries + 1


async def test_slow_reply_times_out_within_bounds(config, rubric, sample, fake_llm):
    fake_llm.always(Slow(5))
    cells, outcomes = await run(replace(config, timeout=0.3, max_retries=1), rubric, sample, one(rubric, "refund"))
    assert cells["refund"].status is Status.ERROR and outcomes[0].error.kind == "timeout"
    assert "within 0.3 s" in cells["refund"].error


async def test_malformed_reply_is_repaired_once(config, rubric, sample, fake_llm):
    fake_llm.queue(Text("I think it is met, honestly."))
    cells, outcomes = await run(config, rubric, sample, one(rubric, "refund"))
    assert cells["refund"].status is Status.MET
    assert outcomes[0].calls == 2 and outcomes[0].reply is not None
    repair = fake_llm.requests[-1].body
    text = json.dumps(repair)
    assert "<previous-reply>" in text and "I think it is met, honestly." in text and "no JSON object" in text
    assert cells["refund"].detail["first_reply"] == "I think it is met, honestly."


async def test_schema_violation_is_repaired(config, rubric, sample, fake_llm):
    fake_llm.queue(Omit(field="verdict"))
    cells, outcomes = await run(config, rubric, sample, one(rubric, "refund"))
    assert cells["refund"].status is Status.MET and outcomes[0].calls == 2
    assert 'no \\"verdict\\" field' in json.dumps(fake_llm.requests[-1].body)


async def test_malformed_twice_is_an_error_with_the_raw_reply(config, rubric, sample, fake_llm):
    fake_llm.queue(Text("{not json"), Text("still { not json"))
    cells, outcomes = await run(config, rubric, sample, one(rubric, "refund"))
    cell = cells["refund"]
    assert cell.status is Status.ERROR and cell.score is None
    assert cell.error.startswith("malformed reply after one repair")
    assert cell.detail["raw_reply"] == "still { not json" and cell.detail["first_reply"] == "{not json"
    assert outcomes[0].calls == 2 and outcomes[0].reply is None


async def test_refusal_is_an_error_cell(config, rubric, sample, fake_llm):
    fake_llm.queue(Refuse("I won't grade this."))
    cells, outcomes = await run(config, rubric, sample, one(rubric, "refund"))
    assert cells["refund"].status is Status.ERROR
    assert outcomes[0].error.kind == "refusal" and "I won't grade this." in cells["refund"].error
    assert outcomes[0].calls == 1  # a refusal is not repaired


async def test_batch_omitted_criterion_errors_alone(config, rubric, sample, fake_llm):
    fake_llm.queue(Omit(criterion="password"), Omit(field="verdict"))
    cells, outcomes = await run(replace(config, mode="batch"), rubric, sample)
    assert fake_llm.calls() == 2 and len(outcomes) == 1  # one re-ask, then it gives up
    error = cells["password"].error
    assert cells["password"].status is Status.ERROR and error.startswith("malformed reply after one repair") and "verdict" in error
    assert cells["refund"].status is Status.MET and cells["tone"].raw_score == 7
    # the criteria it did answer are kept, each as a text to cache on its own
    assert outcomes[0].error.kind == "malformed" and set(outcomes[0].texts) == {"refund", "tone"}


async def test_batch_reasks_only_for_what_is_missing(config, rubric, sample, fake_llm):
    fake_llm.queue(Omit(criterion="password"))
    cells, outcomes = await run(replace(config, mode="batch"), rubric, sample)
    assert fake_llm.calls() == 2
    second = fake_llm.requests[1].body
    asked_again = json.dumps(second)
    assert "left out criterion password" in asked_again  # the judge is told what was missing
    assert [cells[c].status for c in ("refund", "password", "tone")] == [Status.MET, Status.UNMET, Status.MET]
    assert outcomes[0].error is None and set(outcomes[0].texts) == {"refund", "password", "tone"}


async def test_batch_happy_path_one_call(config, rubric, sample, fake_llm):
    cells, outcomes = await run(replace(config, mode="batch"), rubric, sample)
    assert fake_llm.calls() == 1
    assert [cells[c].status for c in ("refund", "password", "tone")] == [Status.MET, Status.UNMET, Status.MET]
    assert outcomes[0].reply is not None


async def test_401_is_an_auth_error_and_not_retried(config, rubric, sample):
    with FakeLLM(api_key="the-right-key") as server:
        url = server.base_url_openai if config.provider == "openai" else server.base_url_anthropic
        cells, outcomes = await run(replace(config, base_url=url), rubric, sample, one(rubric, "refund"))
        assert server.calls() == 1
    assert outcomes[0].error.kind == "auth" and outcomes[0].error.status == 401
    assert cells["refund"].error == f"401 from {url.rstrip('/')}: invalid API key (check {config.provider.upper()}_API_KEY)"


async def test_400_is_not_retried(config, rubric, sample, fake_llm):
    fake_llm.always(HTTPError(400, "response_format is not supported"))
    cells, outcomes = await run(config, rubric, sample, one(rubric, "refund"))
    assert fake_llm.calls() == 1 and outcomes[0].error.kind == "request"
    assert "response_format is not supported" in cells["refund"].error


async def test_connection_refused(config, rubric, sample):
    url = unused_port_url("/v1" if config.provider == "openai" else "")
    cells, outcomes = await run(replace(config, base_url=url), rubric, sample, one(rubric, "refund"))
    assert outcomes[0].error.kind == "connection"
    assert cells["refund"].status is Status.ERROR and "connection refused" in cells["refund"].error


async def test_interpret_serves_a_cached_reply_without_a_call(config, rubric, sample, fake_llm):
    _, outcomes = await run(config, rubric, sample, one(rubric, "tone"))
    request = build_requests(rubric, sample, one(rubric, "tone"), config)[0]
    cells = interpret(request, outcomes[0].reply.text, rubric, sample)
    assert cells["tone"].raw_score == 7 and cells["tone"].evidence[0].found
    assert fake_llm.calls() == 1
