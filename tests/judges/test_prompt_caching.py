"""Prompt caching is read from every provider and billed at its own rates.

Through the real openai and anthropic SDKs against tests/fakellm.py with
``prompt_caching=True``: the shared prefix of a sample's requests (system prompt and the
fenced sample) is written on the first request of the sample and read on every later one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.cli.report._formats import usage_text
from rubric_studio.engine.usage import Usage
from rubric_studio.judges import cost_usd
from tests.fakellm import FakeLLM, _cache_prefix, parse_call

RUBRIC = """name: cached
judge:
  max_retries: 0
criteria:
  - id: greets
    outcome: Greets the customer by name
  - id: refund
    outcome: Confirms the refund amount
  - id: apology
    outcome: Apologises for the delay
"""
SAMPLE_TEXT = "Hello Dana, we are sorry for the delay. Your refund of $40 is confirmed. " * 40


def test_cached_tokens_are_priced_at_their_own_rates():
    # claude-haiku-4-5: input 1.0, output 5.0; reads 0.1×, writes 1.25×
    assert cost_usd("anthropic", "claude-haiku-4-5", 1000, 50, 600, 300) == pytest.approx(
        (100 * 1.0 + 600 * 0.1 + 300 * 1.25 + 50 * 5.0) / 1e6)
    # gpt-4o-mini: 0.15 / 0.60, cached at half the input price
    assert cost_usd("openai", "gpt-4o-mini", 1000, 50, 800) == pytest.approx((200 * 0.15 + 800 * 0.075 + 50 * 0.6) / 1e6)
    # gpt-4.1 has its own cached rate (0.50 of 2.00), and Azure prices as OpenAI does
    assert cost_usd("openai", "gpt-4.1", 1000, 0, 1000) == pytest.approx(1000 * 0.5 / 1e6)
    assert cost_usd("azure", "gpt-4.1-2025-04-14", 1000, 0, 1000) == cost_usd("openai", "gpt-4.1", 1000, 0, 1000)
    # without caching, nothing changes
    assert cost_usd("openai", "gpt-4o-mini", 1000, 50) == pytest.approx((1000 * 0.15 + 50 * 0.6) / 1e6)
    # a count larger than the prompt is clipped, never negative input
    assert cost_usd("openai", "gpt-4o-mini", 100, 0, 500) == pytest.approx(100 * 0.075 / 1e6)


def test_the_user_price_table_sets_cache_rates(judge_home):
    judge_home.mkdir(parents=True, exist_ok=True)
    (judge_home / "prices.yaml").write_text(
        "anthropic:my-claude: {input: 2, output: 4, cached_input: 0.5, cache_write: 3}\n"
        "openai:plain: {input: 2, output: 4}\n", encoding="utf-8")
    assert cost_usd("anthropic", "my-claude", 1000, 0, 400, 100) == pytest.approx((500 * 2 + 400 * 0.5 + 100 * 3) / 1e6)
    # no cache figures given: the provider's factors apply to the user's input price (OpenAI: 0.5×)
    assert cost_usd("openai", "plain", 1000, 0, 1000) == pytest.approx(1000 * 1.0 / 1e6)


def _project(tmp_path: Path, judge_home: Path, model: str, price: str) -> Path:
    (tmp_path / "r.yaml").write_text(RUBRIC, encoding="utf-8")
    lines = [json.dumps({"id": f"s{i}", "output": f"Ticket {i}. " + SAMPLE_TEXT}) for i in range(2)]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    judge_home.mkdir(parents=True, exist_ok=True)
    (judge_home / "prices.yaml").write_text(f"'{model}': {price}\n", encoding="utf-8")
    return tmp_path


def _expected(server: FakeLLM, api: str) -> dict[str, int]:
    """The tokens the fake reported, recomputed from the requests it recorded, in the order it saw them."""
    seen: set[str] = set()
    total = read = written = 0
    for recorded in server.requests:
        call = parse_call(api, recorded.body)
        prompt = max(1, len(json.dumps(recorded.body)) // 4)
        prefix = _cache_prefix(api, call)
        tokens = min(prompt - 1, len(prefix) // 4) if prefix else 0
        if prefix in seen:
            read += tokens
        elif prefix:
            written += tokens if api == "anthropic" else 0
            seen.add(prefix)
        total += prompt
    return {"input": total, "read": read, "written": written}


@pytest.mark.parametrize(("provider", "model", "price"), [
    ("openai", "cache-gpt", "{input: 2.0, output: 8.0, cached_input: 0.5}"),
    ("anthropic", "cache-claude", "{input: 3.0, output: 15.0, cached_input: 0.3, cache_write: 3.75}"),
])
def test_grade_reports_cached_tokens_and_bills_them_at_their_rates(
    tmp_path, judge_home, monkeypatch, capsys, provider, model, price
):
    project = _project(tmp_path, judge_home, f"{provider}:{model}", price)
    with FakeLLM(prompt_caching=True) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        base = server.base_url_openai if provider == "openai" else server.base_url_anthropic
        code = main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--judge", f"{provider}:{model}",
                     "--base-url", base, "--no-cache", "--format", "json"])
        captured = capsys.readouterr()
        assert code in (0, 1), captured.err
        usage = json.loads(captured.out)["usage"]
        expected = _expected(server, provider)
    assert usage["judge_calls"] == 6 and len(server.requests) == 6
    assert usage["input_tokens"] == expected["input"]
    assert usage["cached_input_tokens"] == expected["read"] > 0  # 2 of each sample's 3 requests read the prefix
    assert usage["cache_write_tokens"] == expected["written"]
    if provider == "anthropic":
        assert expected["written"] > 0 and expected["read"] == pytest.approx(2 * expected["written"], rel=0.01)
    else:
        assert expected["written"] == 0
    rates = {"openai": (2.0, 8.0, 0.5, 2.0), "anthropic": (3.0, 15.0, 0.3, 3.75)}[provider]
    full = usage["input_tokens"] - usage["cached_input_tokens"] - usage["cache_write_tokens"]
    billed = (full * rates[0] + usage["output_tokens"] * rates[1] + usage["cached_input_tokens"] * rates[2]
              + usage["cache_write_tokens"] * rates[3]) / 1e6
    assert usage["cost_usd"] == pytest.approx(billed, abs=2e-6)
    at_full_price = (usage["input_tokens"] * rates[0] + usage["output_tokens"] * rates[1]) / 1e6
    assert usage["cost_usd"] < at_full_price * 0.8  # the cache is most of the prompt here
    # the summary line says so
    counted = Usage(judge_calls=6, input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"],
                    cached_input_tokens=usage["cached_input_tokens"], cache_write_tokens=usage["cache_write_tokens"])
    line = usage_text({"provider": provider, "model": model}, counted)
    assert f"{usage['input_tokens']}+{usage['output_tokens']} tokens ({usage['cached_input_tokens']} cached" in line
    assert ("cache write" in line) == (provider == "anthropic")


def test_a_server_without_prompt_caching_reports_none(tmp_path, judge_home, monkeypatch, capsys):
    project = _project(tmp_path, judge_home, "openai:cache-gpt", "{input: 2.0, output: 8.0}")
    with FakeLLM() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--judge", "openai:cache-gpt",
              "--base-url", server.base_url_openai, "--no-cache", "--format", "json"])
        usage = json.loads(capsys.readouterr().out)["usage"]
    assert usage["cached_input_tokens"] == 0 and usage["cache_write_tokens"] == 0
    assert usage["cost_usd"] == pytest.approx((usage["input_tokens"] * 2 + usage["output_tokens"] * 8) / 1e6, abs=2e-6)


def test_the_status_bar_shows_cached_tokens():
    from rubric_studio.tui.statusbar import StatusState, status_text

    cached = Usage(judge_calls=6, input_tokens=12_000, output_tokens=300, cached_input_tokens=9_000)
    assert "12k tokens (9.0k cached)" in status_text(StatusState(judge="openai:x", usage=cached)).plain
    plain = Usage(judge_calls=6, input_tokens=12_000, output_tokens=300)
    assert "cached" not in status_text(StatusState(judge="openai:x", usage=plain)).plain
