"""The price table: built-in prices, dated names, the user's prices.yaml."""

from __future__ import annotations

import os

import pytest

from rubric_studio.judges import cost_usd, price_for


def test_builtin_price_and_cost():
    assert price_for("openai", "gpt-4o-mini")[:2] == (0.15, 0.60)
    assert cost_usd("openai", "gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert cost_usd("anthropic", "claude-haiku-4-5", 2000, 500) == pytest.approx((2000 * 1.0 + 500 * 5.0) / 1e6)


def test_dated_names_match_their_family_longest_prefix_first():
    assert price_for("openai", "gpt-4o-mini-2024-07-18") == price_for("openai", "gpt-4o-mini")
    assert price_for("openai", "gpt-4o-2024-08-06") == price_for("openai", "gpt-4o") != price_for("openai", "gpt-4o-mini")
    assert price_for("anthropic", "claude-sonnet-4-5-20250929")[:2] == (3.0, 15.0)
    assert price_for("anthropic", "claude-opus-4-5-20251101")[:2] == (5.0, 25.0)
    assert price_for("anthropic", "claude-opus-4-1-20250805")[:2] == (15.0, 75.0)
    assert price_for("openai", "gpt-4oops") is None  # a prefix must end at a boundary


def test_unknown_and_local_models_cost_none():
    assert cost_usd("openai", "my-finetune", 10, 10) is None
    assert cost_usd("ollama", "llama3.1:8b", 10, 10) is None
    assert cost_usd("ollama", "gpt-4o", 10, 10) is None  # a local model named like a paid one is not priced


def test_user_prices_override_and_extend(judge_home):
    judge_home.mkdir(parents=True, exist_ok=True)
    (judge_home / "prices.yaml").write_text(
        "gpt-4o-mini: {input: 1, output: 2}\n"
        "ollama:*: {input: 0, output: 0}\n"
        "openai-compatible:qwen3: {input: 0.1, output: 0.2}\n"
        "broken: {input: cheap}\n",
        encoding="utf-8",
    )
    assert price_for("openai", "gpt-4o-mini-2024-07-18")[:2] == (1.0, 2.0)
    assert cost_usd("ollama", "llama3.1:8b", 1000, 1000) == 0.0
    assert price_for("openai-compatible", "qwen3")[:2] == (0.1, 0.2)
    assert price_for("openai", "broken") is None
    assert price_for("openai", "gpt-4o")[:2] == (2.5, 10.0)  # untouched built-ins still apply


@pytest.mark.parametrize("text", ["- " * 30_000 + "x\n", "a: &a [" + "*a, " * 10 + "]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + f"*{chr(97 + i)}, " * 10 + "]\n" for i in range(8))],
    ids=["deep list", "alias bomb"])
def test_a_hostile_price_file_is_ignored_quickly_and_prices_stay_builtin(judge_home, text, caplog):
    judge_home.mkdir(parents=True, exist_ok=True)
    (judge_home / "prices.yaml").write_text(text, encoding="utf-8")
    assert price_for("openai", "gpt-4o-mini")[:2] == (0.15, 0.60)
    assert "ignoring the price table" in caplog.text and "prices.yaml:" in caplog.text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_price_file_that_is_a_named_pipe_is_ignored_without_blocking(judge_home, caplog):
    judge_home.mkdir(parents=True, exist_ok=True)
    os.mkfifo(judge_home / "prices.yaml")
    assert price_for("openai", "gpt-4o-mini")[:2] == (0.15, 0.60)
    assert "named pipe" in caplog.text
