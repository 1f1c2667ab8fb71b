"""Turn an OpenAI / Anthropic SDK exception into a JudgeError with a one-line message.

Both SDKs share one exception design (APIStatusError with ``status_code``, ``body``
and ``response``; APITimeoutError; APIConnectionError), so one mapping serves both.
The ``sdk`` argument is the already-imported SDK module; nothing is imported here.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from rubric_studio.judges.base import JudgeError
from rubric_studio.judges.retry import retry_after_seconds


def _server_message(body: Any) -> str | None:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
        if isinstance(body.get("message"), str):
            return body["message"]
    if isinstance(body, str) and body.strip():
        return body.strip()
    return None


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _connection_reason(exc: BaseException) -> str:
    """The most specific reason in the cause chain: "connection refused" beats "Connection error."."""
    reasons = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, OSError) and current.strerror:
            return current.strerror.lower()
        if str(current):
            reasons.append(str(current))
        current = current.__cause__ or current.__context__
    return reasons[-1] if reasons else "connection failed"


#: What a timeout says to raise (a command without a rubric says its own flag instead).
TIMEOUT_HINT = "raise judge.timeout (or --timeout)"


def _kind_for(status: int) -> str:
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server"
    return "request"


def _redirect_error(status: int, headers: dict[str, str], where: str) -> JudgeError:
    """A 3xx answer: never followed (the request carries the key), the same for every call."""
    location = next((value for name, value in headers.items() if name.lower() == "location"), None)
    to = f"redirects to {_one_line(location, 120)}" if location else "answers with a redirect"
    return JudgeError("request", f"{status} from {where}: the server {to}; a request that carries the key is never "
                                 "sent on to another address (set the base URL to it if you trust it)",
                      status=status, stops_run=True)


def map_sdk_error(exc: Exception, sdk: ModuleType, where: str, timeout: float, key_var: str = "the API key") -> JudgeError:
    """A JudgeError for ``exc`` raised while calling ``where`` (the base URL)."""
    if isinstance(exc, JudgeError):
        return exc
    if isinstance(exc, sdk.APITimeoutError | TimeoutError):
        return JudgeError("timeout", f"no reply from {where} within {timeout:g} s; {TIMEOUT_HINT}")
    if isinstance(exc, sdk.APIConnectionError):
        reason = _connection_reason(exc)
        # Nothing listens there, or the name does not resolve: every call would fail alike.
        final = reason == "connection refused" or "name" in reason or "resolution" in reason
        return JudgeError("connection", f"cannot connect to {where}: {_one_line(reason)}", stops_run=final)
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        message = _server_message(exc.body) or exc.message
        headers = dict(exc.response.headers) if getattr(exc, "response", None) is not None else {}
        if 300 <= status < 400:
            return _redirect_error(status, headers, where)
        hint = ""
        if status == 401:
            hint = f" (check {key_var})"
        elif status == 404:
            hint = " (check the model name and base URL)"
        return JudgeError(
            _kind_for(status),
            f"{status} from {where}: {_one_line(message)}{hint}",
            raw=str(exc.body) if exc.body is not None else None,
            status=status,
            retry_after=retry_after_seconds(headers),
            stops_run=status == 404,  # no such model or endpoint: the same for every call
        )
    if isinstance(exc, sdk.APIError):
        return JudgeError("request", f"{where}: {_one_line(str(exc))}")
    return JudgeError("request", f"{where}: {type(exc).__name__}: {_one_line(str(exc))}")
