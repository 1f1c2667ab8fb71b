"""The Anthropic judge: the messages API with a forced tool whose input is the reply.

The tool's ``input_schema`` is the reply schema and ``tool_choice`` forces it, so the
reply is the tool_use input (serialised to JSON text for :class:`JudgeReply`);
``judge.structured_output: none`` sends no tool. A reply
with no tool_use falls back to its text (parsed tolerantly, repaired once);
``stop_reason == "refusal"`` is a refusal. The fenced sample gets a ``cache_control``
breakpoint so the other criteria of the same sample read it from the prompt cache.
The body is sent with the SDK's generic ``post`` (it is plain JSON already, so the
per-call typed transform of ``messages.create`` is skipped) and holds only fields the SDK's
``MessageCreateParams`` declares: no ``temperature`` and no ``reasoning_effort``
(:mod:`rubric_studio.judges.capabilities` says why; a rubric that sets them is warned once). The SDK is imported when a request is first sent
(:mod:`rubric_studio.judges.sdk_judge`).
"""

from __future__ import annotations

import json
from typing import Any

from rubric_studio.judges.base import JudgeConfig, JudgeError, JudgeReply, JudgeRequest
from rubric_studio.judges.bodies import anthropic_body
from rubric_studio.judges.replies import cut_off, expected_keys, prose_cut_off, refused, with_tokens
from rubric_studio.judges.sdk_judge import SDKJudge

OFFICIAL_BASE_URL = "https://api.anthropic.com"
#: The code of the built-in provider ``anthropic``, by part, as ``"module:attr"`` references
#: imported on first use (:func:`rubric_studio.judges.provider_code.code`).
CODE = {
    "judge": "rubric_studio.judges.anthropic:AnthropicJudge",
    "body": "rubric_studio.judges.bodies:anthropic_body",
    "capabilities": "rubric_studio.judges.capabilities:anthropic_capabilities",
    "batch": "rubric_studio.judges.batch_api:AnthropicBatches",
}


class AnthropicJudge(SDKJudge):
    """A judge on the Anthropic messages API (or a compatible endpoint)."""

    sdk_module = "anthropic"
    endpoint = "/v1/messages"
    key_var = "ANTHROPIC_API_KEY"

    def reply_type(self, sdk: Any) -> Any:
        return sdk.types.Message

    def __init__(self, config: JudgeConfig):
        super().__init__(config)
        base = (config.base_url or OFFICIAL_BASE_URL).rstrip("/")
        self.base_url = base[:-3] if base.endswith("/v1") else base  # the SDK adds /v1/messages

    def new_client(self, sdk: Any) -> Any:
        return sdk.AsyncAnthropic(
            api_key=self.config.api_key or "not-needed", base_url=self.base_url, max_retries=0, timeout=self.config.timeout,
            http_client=self.http_client(sdk)
        )

    def body(self, request: JudgeRequest) -> dict[str, Any]:
        """The request body as sent (no key): parameters per the capability table."""
        return anthropic_body(self.config, request)

    def _reply(self, response: Any, latency: float, body: dict[str, Any],
               request: JudgeRequest | None = None) -> JudgeReply:
        wire = {"url": f"{self.base_url}/v1/messages", "request": body, "response": response}
        usage = getattr(response, "usage", None)
        # input_tokens excludes the cache: every prompt token is the sum, the cached ones billed at their own rates
        read = getattr(usage, "cache_read_input_tokens", 0) or 0
        written = getattr(usage, "cache_creation_input_tokens", 0) or 0
        tokens = ((getattr(usage, "input_tokens", 0) or 0) + read + written, getattr(usage, "output_tokens", 0) or 0,
                  read, written)
        blocks = list(getattr(response, "content", None) or [])
        said = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", None) == "text")
        stop = getattr(response, "stop_reason", None)
        if stop == "refusal":
            raise refused(said, said or None, *tokens)
        tool = next((b for b in blocks if getattr(b, "type", None) == "tool_use"), None)
        if stop == "max_tokens" and tool is None and self.config.structured_output == "none":
            prose = prose_cut_off(said, expected_keys(request.schema) if request is not None else [],
                                  self.config.max_tokens)
            if prose is not None:
                raise with_tokens(prose, *tokens)
        if stop == "max_tokens":
            raise cut_off(said or (json.dumps(tool.input) if tool is not None else ""), self.config.max_tokens, *tokens)
        if tool is not None:
            text = json.dumps(tool.input, ensure_ascii=False)
        elif said.strip():
            text = said
        else:
            raise with_tokens(JudgeError("malformed", "the judge sent neither a tool call nor any text", raw=repr(response)), *tokens)
        return JudgeReply(
            text=text,
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            cached_input_tokens=tokens[2],
            cache_write_tokens=tokens[3],
            latency_s=latency,
            model=getattr(response, "model", None) or self.config.model,
            wire=wire,
        )
