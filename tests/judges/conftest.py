"""Fixtures for the judge tests: a private config folder, the fake LLM server, builders."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # so `tests.fakellm` imports however pytest was started
    sys.path.insert(0, str(ROOT))

from rubric_studio.core.rubric import Rubric  # noqa: E402
from rubric_studio.core.samples import Sample  # noqa: E402
from rubric_studio.judges import JudgeConfig  # noqa: E402
from tests._timing import scaled  # noqa: E402
from tests.fakellm import FakeLLM  # noqa: E402

MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}


@pytest.fixture(autouse=True)
def judge_home(tmp_path, monkeypatch):
    """Each test gets its own config folder (secret, prices.yaml)."""
    home = tmp_path / "rs-home"
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(home))
    return home


@pytest.fixture
def fake_llm():
    with FakeLLM() as server:
        yield server


@pytest.fixture(params=["openai", "anthropic"])
def provider(request):
    return request.param


@pytest.fixture
def config(fake_llm, provider):
    """A judge config pointing at the fake server, with tiny timeouts and waits."""
    url = fake_llm.base_url_openai if provider == "openai" else fake_llm.base_url_anthropic
    return JudgeConfig(
        provider=provider, model=MODELS[provider], base_url=url, api_key="sk-test",
        timeout=scaled(2.0), max_retries=2, max_retry_wait=0.02,
    )  # fmt: skip


@pytest.fixture
def rubric():
    return Rubric.model_validate(
        {
            "name": "support",
            "criteria": [
                {"id": "refund", "outcome": "States the refund policy", "required": True},
                {"id": "password", "outcome": "Asks for the customer's password", "weight": -3},
                {
                    "id": "tone",
                    "outcome": "Warm friendly tone",
                    "score_ranges": {0: "Rude", 4: "Neutral", 7: "Friendly", 10: "Warm and personal"},
                },
                {"id": "short", "check": {"type": "length", "max_words": 100}},
            ],
        }
    )


@pytest.fixture
def sample():
    return Sample(
        id="s1",
        output="Hi Sam! Our refund policy gives you 30 days.\nWarm regards, and have a friendly day.",
        input="Can I get my money back?",
        ground_truth="Refunds within 30 days.",
    )
