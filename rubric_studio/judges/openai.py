"""The OpenAI judge: chat completions via the official SDK, the reply's shape enforced.

``judge.structured_output`` picks how: ``json_schema`` (default; strict schema),
``json_object`` (JSON mode), ``tool`` (a forced function call whose arguments are the
reply) or ``none`` (the prompt's format description only; parsed tolerantly). A server
that answers 400 to the chosen mode says so once and stops the run (never a silent switch:
a small model may give garbage in another mode). Also serves every OpenAI-compatible
server (vLLM, llama.cpp, LM Studio, Ollama ...) through ``base_url``. The SDK is imported
when a request is first sent, never at package import. The SDK's own retries are off;
:mod:`rubric_studio.judges.retry` retries instead, and a ``timeout`` is always passed (the
SDK default is 600 s). The request goes through the SDK's generic ``post`` with the body
as built here (plain JSON, so ``create``'s per-call typed transform is skipped); the reply
text is kept raw (not ``parse``d) so a malformed reply can be shown and repaired; a refusal
arrives as ``message.refusal``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rubric_studio.judges.base import (
    STRUCTURED_OUTPUTS,
    JudgeConfig,
    JudgeError,
    JudgeReply,
    JudgeRequest,
)
from rubric_studio.judges.bodies import openai_body
from rubric_studio.judges.capabilities import OPENAI_OFFICIAL_URL
from rubric_studio.judges.replies import (
    cut_off,
    expected_keys,
    json_mode_ignored,
    no_tool_call,
    prose_cut_off,
    refused,
    starts_an_object,
    with_tokens,
)
from rubric_studio.judges.sdk_judge import SDKJudge

OFFICIAL_BASE_URL = OPENAI_OFFICIAL_URL
#: The code of the built-in provider ``openai`` (and its aliases), by part, as ``"module:attr"``
#: references imported on first use (:func:`rubric_studio.judges.provider_code.code`).
CODE = {
    "judge": "rubric_studio.judges.openai:OpenAIJudge",
    "body": "rubric_studio.judges.bodies:openai_body",
    "capabilities": "rubric_studio.judges.capabilities:openai_capabilities",
    "batch": "rubric_studio.judges.batch_api:OpenAIBatches",
}
# How servers word "I cannot do that response_format" in a 400.
_UNSUPPORTED = re.compile(r"response_format|json_schema|structured|grammar|tool|function", re.I)


def _dump(response: Any) -> str:
    try:
        return json.dumps(response.model_dump(mode="json"))
    except Exception:
        return repr(response)


class OpenAIJudge(SDKJudge):
    """A judge on the OpenAI chat-completions API (or a compatible server)."""

    sdk_module = "openai"
    endpoint = "/chat/completions"
    key_var = "OPENAI_API_KEY"

    def __init__(self, config: JudgeConfig):
        super().__init__(config)
        self.base_url = (config.base_url or OFFICIAL_BASE_URL).rstrip("/")

    def new_client(self, sdk: Any) -> Any:
        return sdk.AsyncOpenAI(
            api_key=self.config.api_key or "not-needed", base_url=self.base_url, max_retries=0, timeout=self.config.timeout,
            http_client=self.http_client(sdk)
        )

    def reply_type(self, sdk: Any) -> Any:
        return sdk.types.chat.ChatCompletion

    @property
    def wire_url(self) -> str:
        """The URL a request is sent to (shown with the request in the inspector)."""
        return f"{self.base_url}/chat/completions"

    @property
    def official(self) -> bool:
        return self.base_url == OFFICIAL_BASE_URL

    def body(self, request: JudgeRequest) -> dict[str, Any]:
        """The request body as sent (no key): parameters per the capability table."""
        return openai_body(self.config, request)

    def _error(self, exc: Exception) -> JudgeError:
        error = super()._error(exc)
        mode = self.config.structured_output or "json_schema"
        if error.status == 400 and mode in ("json_schema", "tool") and _UNSUPPORTED.search(error.message):
            what = "json_schema structured output" if mode == "json_schema" else "tool calls"
            error.reword(
                f"this server does not support {what} ({error.message}); set judge.structured_output to "
                + ", ".join(m for m in STRUCTURED_OUTPUTS if m != mode)
            )
            error.stops_run = True
        return error

    def _shape_ignored(self, text: str, called: bool, cut: bool, request: JudgeRequest | None) -> JudgeError | None:
        """Why the reply is not in the shape the mode asked for (json_object, a forced tool call), or None."""
        mode = self.config.structured_output or "json_schema"
        if not text.strip():
            return None  # said as an empty reply
        if mode == "json_object" and request is not None:
            return json_mode_ignored(text, expected_keys(request.schema), cut, self.config.max_tokens)
        if mode == "tool" and not called and not (cut and _starts_an_object(text)):
            return no_tool_call(text, cut_at=self.config.max_tokens if cut else None)
        if mode == "none" and cut:
            return prose_cut_off(text, expected_keys(request.schema) if request is not None else [],
                                 self.config.max_tokens)
        return None

    def _reply(self, response: Any, latency: float, body: dict[str, Any],
               request: JudgeRequest | None = None) -> JudgeReply:
        wire = {"url": self.wire_url, "request": body, "response": response}
        if not getattr(response, "choices", None):
            raise JudgeError("malformed", f"{self.base_url} sent a reply with no choices", raw=_dump(response))
        usage = response.usage
        details = getattr(usage, "prompt_tokens_details", None)
        tokens = (getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0,
                  getattr(details, "cached_tokens", 0) or 0, 0)  # prompt_tokens includes the cached ones
        choice = response.choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise refused(refusal, refusal, *tokens)
        calls = getattr(message, "tool_calls", None) or []
        text = calls[0].function.arguments if calls and getattr(calls[0], "function", None) else message.content or ""
        ignored = self._shape_ignored(text, bool(calls), choice.finish_reason == "length", request)
        if ignored is not None:
            raise with_tokens(ignored, *tokens)
        if choice.finish_reason == "length":
            raise cut_off(text, self.config.max_tokens, *tokens)
        if choice.finish_reason == "content_filter":
            raise with_tokens(JudgeError("refusal", "the provider's content filter stopped the reply", raw=text), *tokens)
        if not text.strip():
            raise with_tokens(JudgeError("malformed", "the judge sent an empty reply", raw=text), *tokens)
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


def _starts_an_object(text: str) -> bool:
    """Whether a cut-off reply began a JSON object (the judgement as text, cut short), not prose."""
    return starts_an_object(text)
