"""Retries for provider calls: exponential backoff with jitter, Retry-After honoured but bounded.

The SDKs' own retries are switched off (``max_retries=0``) so there is one policy for
both providers: retry rate limits (429), 5xx and connection failures up to
``config.max_retries`` times; never retry 400/401/403/404, and never a timeout (a slow
server drops the work when the client gives up, so a retry would re-send the same long
generation from the start). A server's Retry-After (or ``retry-after-ms``) is obeyed
when it is within ``config.max_retry_wait``; a longer one (``Retry-After: 86400``: a
quota, not a burst) fails the call at once and stops the run, so it cannot hang.
The final error carries ``requests``: how many attempts were sent.
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from rubric_studio.judges.base import JudgeConfig, JudgeError

T = TypeVar("T")
BASE_DELAY = 0.5  # seconds before the first retry; doubles each time
#: Told of every failed attempt of the calls made in this context (the run's adaptive
#: concurrency lowers itself on a 429 the moment it arrives, not after the retries).
ATTEMPT_FAILED: contextvars.ContextVar[Callable[[JudgeError], None] | None] = contextvars.ContextVar(
    "attempt_failed", default=None)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def wall_clock(timeout: float) -> float:
    """Seconds one attempt may take in all, when each network step may take ``timeout``."""
    return timeout * 2 + 1


def guard(timeout: float) -> asyncio.Timeout:
    """A hard wall-clock bound on one attempt (raises TimeoutError).

    The SDK timeouts bound each network phase (connect, each read), not the whole
    exchange; a server that trickles bytes could otherwise outlast them.
    """
    return asyncio.timeout(wall_clock(timeout))


def backoff(attempt: int, error: JudgeError, cap: float) -> float:
    """The wait before retry number ``attempt`` (1-based), never above ``cap``."""
    if error.retry_after is not None:
        return min(cap, error.retry_after)
    delay = BASE_DELAY * 2 ** (attempt - 1)
    return min(cap, delay * random.uniform(0.5, 1.0))


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    config: JudgeConfig,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> tuple[T, int]:
    """Run ``attempt`` (which raises JudgeError) until it succeeds or retrying is pointless.

    Returns the value and the number of attempts sent. The final JudgeError's message says
    how many attempts were made and its ``requests`` holds that number.
    """
    tries = 0
    while True:
        tries += 1
        try:
            return await attempt(), tries
        except JudgeError as error:
            error.requests = tries
            listener = ATTEMPT_FAILED.get()
            if listener is not None:
                listener(error)
            wait = backoff(tries, error, config.max_retry_wait)
            if error.retryable and error.retry_after is not None and error.retry_after > config.max_retry_wait:
                error.stops_run = True
                error.reword(
                    f"{error.message}; the server asks to wait {error.retry_after:g} s, more than judge.max_retry_wait "
                    f"({config.max_retry_wait:g} s)"
                )
                raise
            if not error.retryable or tries > config.max_retries:
                if tries > 1:
                    error.reword(f"{error.message} (after {tries} attempts)")
                raise
            await sleep(wait)
