"""judge.structured_output: how the reply's shape is enforced, and a server that cannot do it.

A server that answers 400 to ``response_format: json_schema`` is detected once per run,
said in plain words, and never silently switched to another mode.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.results import Status
from rubric_studio.core.samples import Sample
from rubric_studio.engine.api import make_grader
from rubric_studio.judges import (
    JudgeConfig,
    NoJudge,
    build_requests,
    judge_request,
    make_judge,
    resolve_judge,
)
from tests.fakellm import HTTPError

pytestmark = pytest.mark.timeout(60)
RUBRIC = parse_rubric("name: s\ncriteria:\n  - {id: hello, outcome: Says hello}\n")
SAMPLE = Sample(id="s", output="Hello there!")


async def judge_once(config, fake_llm):
    judge = make_judge(config)
    try:
        (request,) = build_requests(RUBRIC, SAMPLE, RUBRIC.judge_criteria, config)
        return await judge_request(judge, request, RUBRIC, SAMPLE)
    finally:
        await judge.aclose()


def config_for(fake_llm, provider: str) -> JudgeConfig:
    url = fake_llm.base_url_openai if provider == "openai" else fake_llm.base_url_anthropic
    model = "gpt-4o-mini" if provider == "openai" else "claude-haiku-4-5"
    return JudgeConfig(provider=provider, model=model, base_url=url, api_key="k", timeout=5, max_retries=0)


async def test_a_server_without_json_schema_is_named_once_and_stops_the_run(fake_llm, tmp_path):
    fake_llm.always(HTTPError(400, "response_format type json_schema is not supported by this server"))
    rubric = parse_rubric("name: s\njudge: {concurrency: 1}\ncriteria:\n  - {id: hello, outcome: Says hello}\n")
    grader = make_grader(rubric, judge="openai-compatible:local", base_url=fake_llm.base_url_openai, env={},
                         use_cache=False)  # fmt: skip
    items = [Sample(id=f"s{i}", output=f"hello {i}") for i in range(8)]
    try:
        report = await grader.run(rubric, items)
    finally:
        await grader.aclose()
    assert fake_llm.calls() == 1  # not 8 times the same 400
    assert "this server does not support json_schema structured output" in report.judge_stopped
    assert "judge.structured_output to json_object, tool, none" in report.judge_stopped
    assert all(s.criteria[0].status is Status.ERROR for s in report.samples)


@pytest.mark.parametrize(
    ("mode", "expect"),
    [
        ("json_object", lambda body: body["response_format"] == {"type": "json_object"} and "tools" not in body),
        ("tool", lambda body: body["tool_choice"]["function"]["name"] == "judgement" and "response_format" not in body),
        ("none", lambda body: "response_format" not in body and "tools" not in body),
    ],
)
async def test_openai_modes_send_what_they_say_and_read_the_reply(fake_llm, mode, expect):
    outcome = await judge_once(replace(config_for(fake_llm, "openai"), structured_output=mode), fake_llm)
    body = fake_llm.requests[-1].body
    assert expect(body)
    assert outcome.results["hello"].status is Status.MET and outcome.error is None


async def test_anthropic_none_sends_no_tool_and_parses_the_text(fake_llm):
    outcome = await judge_once(replace(config_for(fake_llm, "anthropic"), structured_output="none"), fake_llm)
    assert "tools" not in fake_llm.requests[-1].body
    assert outcome.results["hello"].status is Status.MET


def test_settings_are_checked_per_provider_and_default_modes_keep_cache_keys():
    settings = parse_rubric(
        "name: s\njudge: {model: 'anthropic:claude-haiku-4-5', structured_output: json_object}\n"
        "criteria:\n  - {id: a, outcome: x}\n"
    ).judge
    resolved = resolve_judge(settings, env={"ANTHROPIC_API_KEY": "k"})
    assert isinstance(resolved, NoJudge) and resolved.invalid and "supports tool or none" in resolved.reason
    explicit = parse_rubric(
        "name: s\njudge: {model: 'openai:gpt-4o-mini', structured_output: json_schema}\ncriteria:\n  - {id: a, outcome: x}\n"
    ).judge
    plain = parse_rubric("name: s\njudge: {model: 'openai:gpt-4o-mini'}\ncriteria:\n  - {id: a, outcome: x}\n").judge
    env = {"OPENAI_API_KEY": "k"}
    # writing the default out does not change any request, so it does not re-judge anything
    assert resolve_judge(explicit, env=env).identity() == resolve_judge(plain, env=env).identity()
    other = replace(resolve_judge(plain, env=env), structured_output="json_object")
    assert json.dumps(other.identity()) != json.dumps(resolve_judge(plain, env=env).identity())


# -- a reply that ignored the mode says so ------------------------------------------------

GARBAGE_KEYS = '{"name": "Sam", "greeting_style": "cheerful", "notes": ["hi", "hello"], "more": "and then some more'


async def test_json_object_mode_cut_off_with_garbage_keys_is_not_a_max_tokens_problem(fake_llm):
    from tests.fakellm import CutOff

    fake_llm.always(CutOff(GARBAGE_KEYS))
    outcome = await judge_once(replace(config_for(fake_llm, "openai"), structured_output="json_object"), fake_llm)
    cell = outcome.results["hello"]
    assert cell.status is Status.ERROR
    assert cell.error.startswith("the model did not follow json_object mode: its reply ran to max_tokens (1024)")
    assert "verdict" in cell.error and "raise judge.max_tokens" not in cell.error


async def test_json_object_mode_reply_that_is_not_an_object_or_lacks_every_key_says_so(fake_llm):
    fake_llm.queue("Sure! The submission says hello, so it is met.")
    first = await judge_once(replace(config_for(fake_llm, "openai"), structured_output="json_object"), fake_llm)
    assert "the model did not follow json_object mode: the reply is not a JSON object" in first.results["hello"].error
    fake_llm.queue('{"name": "Sam", "mood": "happy"}')
    second = await judge_once(replace(config_for(fake_llm, "openai"), structured_output="json_object"), fake_llm)
    assert "did not follow json_object mode: the reply has none of the expected keys" in second.results["hello"].error


async def test_json_object_mode_cut_off_inside_the_judgement_still_asks_for_more_tokens(fake_llm):
    from tests.fakellm import CutOff

    fake_llm.always(CutOff('{"rationale": "The submission greets the'))
    outcome = await judge_once(replace(config_for(fake_llm, "openai"), structured_output="json_object"), fake_llm)
    assert "raise judge.max_tokens" in outcome.results["hello"].error


@pytest.mark.parametrize("provider", ["openai"])
async def test_tool_mode_without_a_tool_call_names_the_forced_call(fake_llm, provider):
    fake_llm.always("I think the submission says hello, which meets the criterion.")  # prose, no tool call
    outcome = await judge_once(replace(config_for(fake_llm, provider), structured_output="tool"), fake_llm)
    error = outcome.results["hello"].error
    assert "no tool call came back; this server may not support forced tool calls — try" in error
    assert "json_schema" in error and "no JSON object found" not in error


async def test_tool_mode_prose_cut_off_names_the_forced_call_not_max_tokens(fake_llm):
    # a small model on llama.cpp ignores the forced call and loops in prose until max_tokens:
    # "raise judge.max_tokens" sent the user the wrong way
    from tests.fakellm import CutOff

    fake_llm.always(CutOff("The criteria for the verdict are:\n1. The invoice is attached.\n2. The invoice"))
    outcome = await judge_once(replace(config_for(fake_llm, "openai"), structured_output="tool"), fake_llm)
    error = outcome.results["hello"].error
    assert error.startswith("no tool call came back (the reply was text that ran to max_tokens (1024)); this server")
    assert "raise judge.max_tokens" not in error


async def test_tool_mode_judgement_as_text_cut_off_still_asks_for_more_tokens(fake_llm):
    from tests.fakellm import CutOff

    fake_llm.always(CutOff('{"rationale": "The submission greets the'))
    outcome = await judge_once(replace(config_for(fake_llm, "openai"), structured_output="tool"), fake_llm)
    assert "raise judge.max_tokens" in outcome.results["hello"].error


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_tool_mode_reply_with_the_judgement_as_text_is_still_read(fake_llm, provider):
    fake_llm.always('{"verdict": "met", "rationale": "says hello", "evidence": ["Hello"]}')
    outcome = await judge_once(replace(config_for(fake_llm, provider), structured_output="tool"), fake_llm)
    assert outcome.results["hello"].status is Status.MET


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_none_mode_prose_that_runs_to_max_tokens_is_not_a_max_tokens_problem(fake_llm, provider):
    from tests.fakellm import CutOff

    fake_llm.always(CutOff("I think the submission says hello, which meets the criterion, and what is more"))
    outcome = await judge_once(replace(config_for(fake_llm, provider), structured_output="none"), fake_llm)
    error = outcome.results["hello"].error
    assert error.startswith("the judge answered in prose and ran to max_tokens (1024)")
    assert "raise judge.max_tokens" not in error and "judge.structured_output: json_schema" in error


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_none_mode_cut_off_inside_the_judgement_still_asks_for_more_tokens(fake_llm, provider):
    from tests.fakellm import CutOff

    fake_llm.always(CutOff('```json\n{"rationale": "The submission greets the'))
    outcome = await judge_once(replace(config_for(fake_llm, provider), structured_output="none"), fake_llm)
    assert "raise judge.max_tokens" in outcome.results["hello"].error
