"""Retry policy pieces: Retry-After parsing, capped backoff, which errors retry."""

from __future__ import annotations

import email.utils
import time

from rubric_studio.judges import JudgeConfig, JudgeError
from rubric_studio.judges.retry import backoff, retry_after_seconds, with_retries


def test_retry_after_forms():
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < retry_after_seconds({"Retry-After": when}) <= 31
    assert retry_after_seconds({"Retry-After": "soon"}) is None and retry_after_seconds({}) is None


def test_backoff_grows_and_is_capped():
    error = JudgeError("server", "500")
    assert 0.25 <= backoff(1, error, cap=30) <= 0.5
    assert 2 <= backoff(4, error, cap=30) <= 4
    assert backoff(20, error, cap=1.5) == 1.5
    assert backoff(1, JudgeError("rate_limit", "429", retry_after=3600), cap=7) == 7


async def test_with_retries_stops_on_permanent_errors_and_counts_attempts():
    config = JudgeConfig(provider="openai", model="m", max_retries=3, max_retry_wait=0)
    attempts = []

    async def failing(kind):
        attempts.append(kind)
        raise JudgeError(kind, f"{kind} happened")

    for kind, expected in (("auth", 1), ("request", 1), ("server", 4), ("connection", 4)):
        attempts.clear()
        try:
            await with_retries(lambda kind=kind: failing(kind), config)
        except JudgeError as error:
            assert len(attempts) == expected
            assert error.message.endswith("(after 4 attempts)") == (expected == 4)
        else:
            raise AssertionError("should have raised")
