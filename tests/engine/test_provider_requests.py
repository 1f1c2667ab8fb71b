"""What each provider is sent comes from one capability table, the cache is keyed on that body,
cached verdicts remember whether a batch call gave them, and a cache that cannot be written
never stops grading. Real SDKs over HTTP to the local fake server."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.api import make_grader
from rubric_studio.engine.cache import ReplyCache
from tests.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(60)

KEYS = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
SAMPLES = [Sample(id=f"s{i}", output=f"Thanks! Your refund {i} is on its way, warm regards.") for i in range(5)]
CRITERIA = """\
criteria:
  - {id: refund, outcome: Mentions the refund}
  - {id: thanks, outcome: Thanks the customer}
  - {id: tone, outcome: Warm tone, score_ranges: {0: cold, 5: neutral, 8: warm}}
"""


def rubric_with(judge_block: str):
    return parse_rubric(f"name: caps\njudge: {{{judge_block}}}\n{CRITERIA}")


async def grade(server: FakeLLM, judge: str, tmp_path: Path, rubric, samples=SAMPLES, cache_path=None, **options):
    url = server.base_url_anthropic if judge.startswith("anthropic") else server.base_url_openai
    cache_path = cache_path or tmp_path / "c.sqlite"
    grader = make_grader(rubric, judge=judge, base_url=url, env=KEYS, cache_path=cache_path, **options)
    try:
        report = await grader.run(rubric, samples)
    finally:
        await grader.aclose()
    return report, grader


def anthropic_declared_keys() -> set[str]:
    from anthropic.types import message_create_params

    return set(typing.get_type_hints(message_create_params.MessageCreateParamsNonStreaming))


# -- what is sent ---------------------------------------------------------------------


async def test_anthropic_bodies_hold_only_what_the_sdk_declares(server, tmp_path):
    rubric = rubric_with("temperature: 0.3, reasoning_effort: high, max_tokens: 400")
    report, grader = await grade(server, "anthropic:claude-haiku-4-5", tmp_path, rubric)
    assert report.summary.errors == 0 and server.calls() == 15
    declared = anthropic_declared_keys()
    for sent in server.requests:
        assert set(sent.body) <= declared, set(sent.body) - declared
        assert "temperature" not in sent.body and "reasoning_effort" not in sent.body
        assert sent.body["max_tokens"] == 400
    # one warning per dropped setting for the whole run, naming the setting, the judge and why
    warnings = grader.take_warnings()
    assert len(warnings) == 2, warnings
    assert any("judge.temperature" in w and "anthropic:claude-haiku-4-5" in w for w in warnings)
    assert any("judge.reasoning_effort" in w and "forced tool" in w for w in warnings)
    assert grader.take_warnings() == []


async def test_anthropic_batch_bodies_hold_only_what_the_sdk_declares(server, tmp_path):
    rubric = rubric_with("temperature: 0.3, mode: batch")
    await grade(server, "anthropic:claude-haiku-4-5", tmp_path, rubric)
    assert server.calls() == 5
    assert all(set(r.body) <= anthropic_declared_keys() for r in server.requests)


async def test_openai_reasoning_models_get_no_temperature_but_their_reasoning_effort(server, tmp_path):
    rubric = rubric_with("temperature: 0.7, reasoning_effort: low")
    _, grader = await grade(server, "openai:o3-mini", tmp_path, rubric)
    assert server.calls() == 15
    for sent in server.requests:
        assert "temperature" not in sent.body and sent.body["reasoning_effort"] == "low"
    (warning,) = grader.take_warnings()
    assert "judge.temperature" in warning and "openai:o3-mini" in warning and "reasoning models" in warning


async def test_a_compatible_server_gets_temperature_and_a_default_gives_no_warning(server, tmp_path):
    _, grader = await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with("temperature: 0.7"))
    assert all(r.body["temperature"] == 0.7 for r in server.requests)
    assert grader.take_warnings() == []
    server.reset()
    _, grader = await grade(server, "anthropic:claude-haiku-4-5", tmp_path / "b", rubric_with("max_tokens: 300"))
    assert server.calls() == 15 and grader.take_warnings() == []  # temperature not written: nothing to warn about


def test_official_openai_models_get_reasoning_effort_only_when_they_reason():
    from rubric_studio.judges import JudgeConfig, build_requests
    from rubric_studio.judges.bodies import openai_body

    rubric = rubric_with("")
    chat = JudgeConfig(provider="openai", model="gpt-4o-mini", reasoning_effort="high", temperature=0.5)
    reasoning = JudgeConfig(provider="openai", model="gpt-5-mini", reasoning_effort="high", temperature=0.5)
    (request, *_) = build_requests(rubric, SAMPLES[0], rubric.judge_criteria, chat)
    assert "reasoning_effort" not in openai_body(chat, request) and openai_body(chat, request)["temperature"] == 0.5
    body = openai_body(reasoning, request)
    assert body["reasoning_effort"] == "high" and "temperature" not in body and "max_completion_tokens" in body


# -- the cache key is the body as sent --------------------------------------------------


async def test_a_setting_that_is_not_sent_does_not_re_judge(server, tmp_path):
    await grade(server, "anthropic:claude-haiku-4-5", tmp_path, rubric_with("max_tokens: 500"))
    assert server.calls() == 15
    server.reset()
    report, _ = await grade(server, "anthropic:claude-haiku-4-5", tmp_path, rubric_with("max_tokens: 500, reasoning_effort: high"))
    assert server.calls() == 0 and report.usage.cache_hits == 15  # before: 15 of 15 bought again


async def test_temperature_of_a_reasoning_model_does_not_re_judge_but_a_sent_one_does(server, tmp_path):
    await grade(server, "openai:o3-mini", tmp_path, rubric_with("temperature: 0"))
    server.reset()
    await grade(server, "openai:o3-mini", tmp_path, rubric_with("temperature: 0.7"))
    assert server.calls() == 0  # before: 15
    await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with("temperature: 0"))
    server.reset()
    await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with("temperature: 0.7"))
    assert server.calls() == 15  # sent, so every cell is judged again


async def test_transport_settings_do_not_re_judge(server, tmp_path):
    await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with("timeout: 30, max_retries: 1"))
    server.reset()
    await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with("timeout: 45, max_retries: 4, concurrency: 2"))
    assert server.calls() == 0


def test_an_older_cache_file_opens_and_its_entries_simply_miss(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL, text TEXT NOT "
               "NULL, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, created REAL)")
    db.execute("INSERT INTO replies VALUES ('old', 'openai', 'm', '{\"verdict\": \"met\"}', 1, 2, 0)")
    db.commit()
    db.close()
    cache = ReplyCache(path)
    assert cache.get("old").origin is None and cache.get("old").text == '{"verdict": "met"}'
    cache.put("new", "openai", "m", "{}", origin={"mode": "single"})
    assert cache.get("new").origin == {"mode": "single"}
    cache.close()


# -- where a verdict came from ------------------------------------------------------------


async def test_verdicts_from_a_batch_call_say_so_when_served_from_the_cache(server, tmp_path):
    await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with("mode: batch"))
    batch_bodies = [r.body for r in server.requests]  # one per sample, in whatever order they arrived
    server.reset()
    report, _ = await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with(""))
    assert server.calls() == 0
    cell = report.samples[0].criteria[0]
    data = cell.to_dict()
    assert data["source"] == "cache"
    assert data["provenance"] == {"mode": "batch", "criteria": 3, "ids": ["refund", "thanks", "tone"]}
    # the inspector shows the batch request that was sent, not a per-criterion one never sent
    assert "request" not in cell.detail
    assert cell.detail["wire"]["request"] in batch_bodies
    assert SAMPLES[0].output in str(cell.detail["wire"]["request"])  # the batch call of that sample
    assert cell.detail["wire"]["url"].endswith("/chat/completions")


async def test_no_reuse_batch_judges_those_cells_again_one_call_each(server, tmp_path):
    await grade(server, "anthropic:claude-haiku-4-5", tmp_path, rubric_with("mode: batch"))
    server.reset()
    report, _ = await grade(server, "anthropic:claude-haiku-4-5", tmp_path, rubric_with(""), reuse_batch=False)
    assert server.calls() == 15 and all(not r.body.get("tools") or len(r.body["tools"]) == 1 for r in server.requests)
    assert {c.to_dict()["provenance"]["mode"] for s in report.samples for c in s.criteria} == {"single"}
    server.reset()
    again, _ = await grade(server, "anthropic:claude-haiku-4-5", tmp_path, rubric_with("reuse_batch: false"))
    assert server.calls() == 0 and again.usage.cache_hits == 15  # now cached from per-criterion calls


async def test_the_rubric_setting_reuse_batch_false_works_like_the_flag(server, tmp_path):
    await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with("mode: batch"))
    server.reset()
    await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with("reuse_batch: false"))
    assert server.calls() == 15


# -- a cache on a full disk ---------------------------------------------------------------


async def test_a_cache_that_cannot_be_opened_grades_without_it(server, tmp_path, monkeypatch):
    monkeypatch.setattr(ReplyCache, "max_pages", 1)  # a fresh file needs more: SQLite reports a full disk
    report, grader = await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with(""))
    assert report.summary.errors == 0 and server.calls() == 15
    (warning,) = grader.take_warnings()
    assert warning == f"judge cache not opened: disk full ({tmp_path / 'c.sqlite'}) — grading without the cache"


async def test_a_cache_under_a_device_grades_without_it(server, tmp_path):
    report, grader = await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with(""),
                                 cache_path="/dev/full/c.sqlite")  # fmt: skip
    assert report.summary.errors == 0 and server.calls() == 15
    (warning,) = grader.take_warnings()
    assert warning == "judge cache not opened: /dev/full is not a folder (/dev/full/c.sqlite) — grading without the cache"


async def test_a_cache_that_fills_up_mid_run_says_so_once_and_grading_goes_on(server, tmp_path, monkeypatch):
    ReplyCache(tmp_path / "c.sqlite").close()  # the file exists with its tables
    pages = 6
    monkeypatch.setattr(ReplyCache, "max_pages", pages)
    big = [Sample(id=f"b{i}", output=("Thanks! Your refund is on its way. " * 80) + str(i)) for i in range(8)]
    report, grader = await grade(server, "openai:gpt-4o-mini", tmp_path, rubric_with(""), samples=big)
    assert report.summary.errors == 0 and server.calls() == 24
    (warning,) = grader.take_warnings()
    assert warning == f"judge cache not written: disk full ({tmp_path / 'c.sqlite'}) — grading without the cache"
