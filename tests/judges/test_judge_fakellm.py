"""The fake server itself: wire shapes, scripting order, recording, clean shutdown."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from tests.fakellm import FakeLLM, Omit, Refuse, Slow, rate_limited, unused_port_url

OPENAI_BODY = {
    "model": "m",
    "messages": [{"role": "user", "content": "<sample-ab12>\nrefund in 30 days\n</sample-ab12>\n\n"
                  "### Criterion `refund` (met / unmet)\nOutcome: Mentions the refund\n"}],
    "response_format": {"type": "json_schema", "json_schema": {"name": "judgement", "schema": {
        "type": "object", "properties": {"rationale": {}, "evidence": {}, "verdict": {}}}}},
}  # fmt: skip
ANTHROPIC_BODY = {
    "model": "m",
    "max_tokens": 100,
    "messages": OPENAI_BODY["messages"],
    "tools": [{"name": "judgement", "input_schema": OPENAI_BODY["response_format"]["json_schema"]["schema"]}],
}


def post(url, body, headers=None):
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_brain_answers_in_each_api_shape_and_requests_are_recorded():
    with FakeLLM() as server:
        status, _, body = post(f"{server.base_url_openai}/chat/completions", OPENAI_BODY, {"authorization": "Bearer k1"})
        assert status == 200
        answer = json.loads(body["choices"][0]["message"]["content"])
        assert answer["verdict"] == "met" and answer["evidence"] == ["refund"]
        status, _, body = post(f"{server.base_url_anthropic}/v1/messages", ANTHROPIC_BODY, {"x-api-key": "k2"})
        assert body["stop_reason"] == "tool_use" and body["content"][0]["input"]["verdict"] == "met"
        assert [(r.api, r.path, r.api_key) for r in server.requests] == [
            ("openai", "/v1/chat/completions", "k1"),
            ("anthropic", "/v1/messages", "k2"),
        ]
        assert server.requests[0].body == OPENAI_BODY and server.calls("anthropic") == 1


def test_queue_is_consumed_in_order_then_always_then_brain():
    with FakeLLM() as server:
        server.queue(rate_limited(retry_after=7), Refuse("no"), {"verdict": "unmet"}, "plain text")
        url = f"{server.base_url_openai}/chat/completions"
        status, headers, body = post(url, OPENAI_BODY)
        assert status == 429 and headers["Retry-After"] == "7" and body["error"]["type"] == "rate_limit_error"
        assert post(url, OPENAI_BODY)[2]["choices"][0]["message"]["refusal"] == "no"
        assert json.loads(post(url, OPENAI_BODY)[2]["choices"][0]["message"]["content"]) == {"verdict": "unmet"}
        assert post(url, OPENAI_BODY)[2]["choices"][0]["message"]["content"] == "plain text"
        assert server.pending == 0
        server.always(Omit(field="evidence"))
        assert "evidence" not in json.loads(post(url, OPENAI_BODY)[2]["choices"][0]["message"]["content"])
        server.always(None)
        assert "evidence" in json.loads(post(url, OPENAI_BODY)[2]["choices"][0]["message"]["content"])


def test_anthropic_refusal_and_auth_errors():
    with FakeLLM(api_key="right") as server:
        url = f"{server.base_url_anthropic}/v1/messages"
        status, _, body = post(url, ANTHROPIC_BODY, {"x-api-key": "wrong"})
        assert status == 401 and body["error"]["type"] == "authentication_error"
        server.queue(Refuse())
        assert post(url, ANTHROPIC_BODY, {"x-api-key": "right"})[2]["stop_reason"] == "refusal"


def test_close_does_not_wait_for_sleeping_handlers():
    server = FakeLLM().start()
    server.always(Slow(30))
    request = urllib.request.Request(f"{server.base_url_openai}/chat/completions", json.dumps(OPENAI_BODY).encode())
    with pytest.raises(OSError):
        urllib.request.urlopen(request, timeout=0.2)
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 2


def test_unused_port_refuses():
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(unused_port_url("/v1/x"), timeout=2)


def test_stream_requests_get_server_sent_events_the_sdks_read():
    """``stream: true`` is answered as SSE (chunked), as the real APIs do: a JSON body there is what
    AgentV's streaming judge client reported as "Stream ended without finish_reason"."""
    import anthropic
    import openai

    with FakeLLM() as server:
        client = openai.OpenAI(base_url=server.base_url_openai, api_key="k", max_retries=0)
        stream = client.chat.completions.create(**OPENAI_BODY, stream=True, stream_options={"include_usage": True})
        chunks = list(stream)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert json.loads(text)["verdict"] == "met"
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
        assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
        server.queue(Refuse("no"))
        refused = list(client.chat.completions.create(**OPENAI_BODY, stream=True))
        assert "".join(c.choices[0].delta.refusal or "" for c in refused if c.choices) == "no"
        plain = client.chat.completions.create(**OPENAI_BODY)  # the same connection, not streamed
        assert json.loads(plain.choices[0].message.content)["verdict"] == "met"
        messages = anthropic.Anthropic(base_url=server.base_url_anthropic, api_key="k", max_retries=0)
        with messages.messages.stream(**ANTHROPIC_BODY) as streamed:
            final = streamed.get_final_message()
        assert final.stop_reason == "tool_use" and final.content[0].input["verdict"] == "met"
        assert final.usage.output_tokens > 0


def test_a_brain_that_cannot_read_a_request_answers_500_not_a_dropped_connection():
    def brain(call):
        raise KeyError("no criteria")

    with FakeLLM(brain=brain) as server:
        status, _, body = post(f"{server.base_url_openai}/chat/completions", OPENAI_BODY)
    assert status == 500 and "KeyError" in body["error"]["message"]
