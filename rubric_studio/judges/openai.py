"""The OpenAI judge: chat completions with a strict JSON schema, via the official SDK.

Also serves every OpenAI-compatible server (vLLM, llama.cpp, LM Studio, Ollama ...)
through ``base_url``. The SDK is imported when a judge is made, never at package import.
The SDK's own retries are off; :mod:`rubric_studio.judges.retry` retries instead, and a
``timeout`` is always passed (the SDK default is 600 s). The reply text is kept raw
(``chat.completions.create``, not ``parse``) so a malformed reply can be shown and repaired;
a refusal arrives as ``message.refusal``.
"""

from __future__ import annotations

import re
import time
from typing import Any

from rubric_studio.judges.base import Judge, JudgeConfig, JudgeError, JudgeReply, JudgeRequest
from rubric_studio.judges.retry import guard, with_retries
from rubric_studio.judges.sdk_errors import map_sdk_error

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
# Reasoning models accept only the default temperature.
_REASONING = re.compile(r"^(o\d|gpt-5)")


class OpenAIJudge(Judge):
    """A judge on the OpenAI chat-completions API (or a compatible server)."""

    def __init__(self, config: JudgeConfig):
        super().__init__(config)
        import openai

        self._sdk = openai
        self.base_url = (config.base_url or OFFICIAL_BASE_URL).rstrip("/")
        self._client = openai.AsyncOpenAI(
            api_key=config.api_key or "not-needed", base_url=self.base_url, max_retries=0, timeout=config.timeout
        )

    @property
    def official(self) -> bool:
        return self.base_url == OFFICIAL_BASE_URL

    def body(self, request: JudgeRequest) -> dict[str, Any]:
        """The request body as sent (no key)."""
        config = self.config
        body: dict[str, Any] = {
            "model": config.model,
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": True},
            },
        }
        if not _REASONING.match(config.model):
            body["temperature"] = config.temperature
        # Reasoning models reject max_tokens; many compatible servers only know max_tokens.
        body["max_completion_tokens" if self.official else "max_tokens"] = config.max_tokens
        if config.reasoning_effort:
            body["reasoning_effort"] = config.reasoning_effort
        return body

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        body = self.body(request)

        async def attempt() -> tuple[Any, float]:
            started = time.perf_counter()
            try:
                async with guard(self.config.timeout):
                    response = await self._client.chat.completions.create(**body, timeout=self.config.timeout)
            except Exception as exc:
                raise map_sdk_error(exc, self._sdk, self.base_url, self.config.timeout, "OPENAI_API_KEY") from None
            return response, time.perf_counter() - started

        response, latency = await with_retries(attempt, self.config)
        return self._reply(response, latency, body)

    def _reply(self, response: Any, latency: float, body: dict[str, Any]) -> JudgeReply:
        try:
            dump = response.model_dump(mode="json")
        except Exception:
            dump = {"repr": repr(response)}
        wire = {"url": f"{self.base_url}/chat/completions", "request": body, "response": dump}
        if not getattr(response, "choices", None):
            raise JudgeError("malformed", f"{self.base_url} sent a reply with no choices", raw=str(dump))
        choice = response.choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise JudgeError("refusal", f"the judge refused: {' '.join(refusal.split())[:200]}", raw=refusal)
        text = message.content or ""
        if choice.finish_reason == "length":
            raise JudgeError(
                "malformed", f"reply cut off at max_tokens ({self.config.max_tokens}); raise judge.max_tokens", raw=text
            )
        if choice.finish_reason == "content_filter":
            raise JudgeError("refusal", "the provider's content filter stopped the reply", raw=text)
        if not text.strip():
            raise JudgeError("malformed", "the judge sent an empty reply", raw=text)
        usage = response.usage
        return JudgeReply(
            text=text,
            input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            output_tokens=getattr(usage, "completion_tokens", 0) or 0,
            latency_s=latency,
            model=getattr(response, "model", None) or self.config.model,
            wire=wire,
        )

    async def aclose(self) -> None:
        await self._client.close()
