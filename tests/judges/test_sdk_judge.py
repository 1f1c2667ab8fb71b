"""SDKJudge: the SDK's import (first request only) is not charged against the request timeout."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from rubric_studio.judges import JudgeConfig, JudgeReply, JudgeRequest
from rubric_studio.judges.sdk_judge import SDKJudge


class _Client:
    async def post(self, endpoint: str, *, body: Any, cast_to: Any, options: Any) -> str:
        await asyncio.sleep(0.01)  # a real request waits on the network (where a timeout would fire)
        return "reply"

    async def close(self) -> None:
        pass


class SlowImportJudge(SDKJudge):
    """A provider whose SDK takes 1.2 s to load (a loaded machine importing ``anthropic``)."""

    sdk_module = "json"

    def new_client(self, sdk: Any) -> Any:
        time.sleep(1.2)  # blocking, like a real import
        return _Client()

    def body(self, request: JudgeRequest) -> dict[str, Any]:
        return {"user": request.user}

    def reply_type(self, sdk: Any) -> Any:
        return str

    def _reply(self, response: Any, latency: float, body: dict[str, Any], request: Any = None) -> JudgeReply:
        return JudgeReply(text=response)


async def test_a_slow_sdk_import_does_not_time_out_the_first_request():
    # guard(timeout) allows 2 × timeout + 1 s = 1.02 s: the 1.2 s load alone would exceed it if it were on the clock
    judge = SlowImportJudge(JudgeConfig(provider="openai", model="m", timeout=0.01, max_retries=0))
    reply = await judge.complete(JudgeRequest("s", ("a",), "sys", "user", {}))
    assert reply.text == "reply" and reply.requests == 1
