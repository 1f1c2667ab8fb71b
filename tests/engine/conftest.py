"""Fixtures shared by the engine tests: the fake judge server and the two providers."""

from __future__ import annotations

import pytest

from tests.fakellm import FakeLLM


@pytest.fixture
def server():
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(params=["openai", "anthropic"])
def provider_name(request):
    return request.param


def judge_and_url(server: FakeLLM, provider: str) -> tuple[str, str]:
    """(--judge, --base-url) of ``provider`` on ``server``."""
    if provider == "openai":
        return "openai:gpt-4o-mini", server.base_url_openai
    return "anthropic:claude-haiku-4-5", server.base_url_anthropic
