"""The request body each provider is sent, built from the config and the request alone.

The live judges, the Batch API lines and the cache key all use these functions, so what a
verdict is cached under is exactly what was sent: a parameter the provider is not sent
(:mod:`rubric_studio.judges.capabilities`) cannot change a key, and one that is sent does.
The identity of a request is its body plus where it goes (provider and base URL) and the
repeat index; keys, timeouts and retry settings are transport and never part of it.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from rubric_studio.judges.capabilities import capabilities, sent_parameters

if TYPE_CHECKING:
    from rubric_studio.judges.call_shape import CallConfig, CallRequest

TOOL_DESCRIPTION = "Record your judgement of the submission against the criteria, in the required format."
#: Bumped when the key's make-up changes: older cache entries simply miss.
KEY_SCHEME = 2


def _openai_reply_format(mode: str, request: CallRequest) -> dict[str, Any]:
    """The body fields that enforce the reply's shape (``judge.structured_output``)."""
    if mode == "json_schema":
        schema = {"name": request.schema_name, "schema": request.schema, "strict": True}
        return {"response_format": {"type": "json_schema", "json_schema": schema}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object"}}
    if mode == "tool":
        function = {"name": request.schema_name, "description": TOOL_DESCRIPTION, "parameters": request.schema,
                    "strict": True}
        return {"tools": [{"type": "function", "function": function}],
                "tool_choice": {"type": "function", "function": {"name": request.schema_name}}}
    return {}  # "none": the prompt describes the format; the reply is parsed tolerantly


def openai_body(config: CallConfig, request: CallRequest) -> dict[str, Any]:
    """A chat-completions body (no key)."""
    body: dict[str, Any] = {
        "model": config.model,
        "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}],
        **_openai_reply_format(config.structured_output or "json_schema", request),
    }
    params = sent_parameters(config)
    if "temperature" in params:
        body["temperature"] = params["temperature"]
    body[capabilities(config).max_tokens_field] = config.max_tokens
    if "reasoning_effort" in params:
        body["reasoning_effort"] = params["reasoning_effort"]
    return body


def anthropic_body(config: CallConfig, request: CallRequest) -> dict[str, Any]:
    """A messages-API body (no key): only fields the SDK's ``MessageCreateParams`` declares."""
    prefix = request.cache_prefix
    if 0 < prefix < len(request.user):
        content: Any = [
            {"type": "text", "text": request.user[:prefix], "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": request.user[prefix:]},
        ]
    else:
        content = request.user
    body: dict[str, Any] = {
        "model": config.model,
        "max_tokens": config.max_tokens,
        **sent_parameters(config),  # empty today: see the capability table
        "system": request.system,
        "messages": [{"role": "user", "content": content}],
    }
    if (config.structured_output or "tool") == "tool":
        body["tools"] = [{"name": request.schema_name, "description": TOOL_DESCRIPTION, "input_schema": request.schema}]
        body["tool_choice"] = {"type": "tool", "name": request.schema_name}
    return body


def request_body(config: CallConfig, request: CallRequest) -> dict[str, Any]:
    """The body ``config``'s provider is sent for ``request`` (its registered body builder)."""
    from rubric_studio.judges.provider_code import code

    body: dict[str, Any] = code(config.provider, "body")(config, request)
    return body


def request_key(config: CallConfig, request: CallRequest) -> str:
    """The cache key: a hash of the body as sent, the provider and base URL, and the repeat index."""
    payload = {
        "scheme": KEY_SCHEME,
        "provider": config.provider,
        "base_url": config.base_url,
        "body": request_body(config, request),
        "repeat": request.repeat_index,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()
