"""The Anthropic judge: the messages API with a forced tool whose input is the reply.

The tool's ``input_schema`` is the reply schema and ``tool_choice`` forces it, so the
reply is the tool_use input (serialised to JSON text for :class:`JudgeReply`). A reply
with no tool_use falls back to its text (parsed tolerantly, repaired once);
``stop_reason == "refusal"`` is a refusal. The fenced sample gets a ``cache_control``
breakpoint so the other criteria of the same sample read it from the prompt cache.
``messages.create`` in this SDK has no ``temperature`` parameter, so it goes in
``extra_body``. ``reasoning_effort`` is ignored: extended thinking cannot be combined
with a forced tool. The SDK is imported when a judge is made.
"""

from __future__ import annotations

import json
import time
from typing import Any

from rubric_studio.judges.base import Judge, JudgeConfig, JudgeError, JudgeReply, JudgeRequest
from rubric_studio.judges.retry import guard, with_retries
from rubric_studio.judges.sdk_errors import map_sdk_error

OFFICIAL_BASE_URL = "https://api.anthropic.com"
TOOL_DESCRIPTION = "Record your judgement of the submission against the criteria, in the required format."


class AnthropicJudge(Judge):
    """A judge on the Anthropic messages API (or a compatible endpoint)."""

    def __init__(self, config: JudgeConfig):
        super().__init__(config)
        import anthropic

        self._sdk = anthropic
        base = (config.base_url or OFFICIAL_BASE_URL).rstrip("/")
        self.base_url = base[:-3] if base.endswith("/v1") else base  # the SDK adds /v1/messages
        self._client = anthropic.AsyncAnthropic(
            api_key=config.api_key or "not-needed", base_url=self.base_url, max_retries=0, timeout=config.timeout
        )

    def body(self, request: JudgeRequest) -> dict[str, Any]:
        """The request body as sent (no key); ``temperature`` is added via extra_body."""
        prefix = request.cache_prefix
        if 0 < prefix < len(request.user):
            content: Any = [
                {"type": "text", "text": request.user[:prefix], "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": request.user[prefix:]},
            ]
        else:
            content = request.user
        return {
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": content}],
            "tools": [{"name": request.schema_name, "description": TOOL_DESCRIPTION, "input_schema": request.schema}],
            "tool_choice": {"type": "tool", "name": request.schema_name},
        }

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        body = self.body(request)
        extra = {"temperature": self.config.temperature}

        async def attempt() -> tuple[Any, float]:
            started = time.perf_counter()
            try:
                async with guard(self.config.timeout):
                    response = await self._client.messages.create(**body, extra_body=extra, timeout=self.config.timeout)
            except Exception as exc:
                raise map_sdk_error(exc, self._sdk, self.base_url, self.config.timeout, "ANTHROPIC_API_KEY") from None
            return response, time.perf_counter() - started

        response, latency = await with_retries(attempt, self.config)
        return self._reply(response, latency, {**body, **extra})

    def _reply(self, response: Any, latency: float, body: dict[str, Any]) -> JudgeReply:
        try:
            dump = response.model_dump(mode="json")
        except Exception:
            dump = {"repr": repr(response)}
        wire = {"url": f"{self.base_url}/v1/messages", "request": body, "response": dump}
        blocks = list(getattr(response, "content", None) or [])
        said = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", None) == "text")
        stop = getattr(response, "stop_reason", None)
        if stop == "refusal":
            reason = " ".join(said.split())[:200] or "no reason given"
            raise JudgeError("refusal", f"the judge refused: {reason}", raw=said or None)
        tool = next((b for b in blocks if getattr(b, "type", None) == "tool_use"), None)
        if stop == "max_tokens":
            raise JudgeError(
                "malformed", f"reply cut off at max_tokens ({self.config.max_tokens}); raise judge.max_tokens", raw=said
            )
        if tool is not None:
            text = json.dumps(tool.input, ensure_ascii=False)
        elif said.strip():
            text = said
        else:
            raise JudgeError("malformed", "the judge sent neither a tool call nor any text", raw=str(dump))
        usage = getattr(response, "usage", None)
        input_tokens = sum(
            getattr(usage, name, 0) or 0 for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        return JudgeReply(
            text=text,
            input_tokens=input_tokens,
            output_tokens=getattr(usage, "output_tokens", 0) or 0,
            latency_s=latency,
            model=getattr(response, "model", None) or self.config.model,
            wire=wire,
        )

    async def aclose(self) -> None:
        await self._client.close()
