"""Criterion ``examples:`` (few-shot corrections): validated with positions, rendered after their
criterion in its requests, and re-judging exactly that criterion's cells when edited."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.problems import RubricError
from rubric_studio.core.samples import load_samples
from rubric_studio.engine.api import make_grader
from tests.fakellm import FakeLLM, parse_call

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "sample_rubrics/support_reply"

EXAMPLES = """\
    examples:
      - sample: "We have refunded the charge; it reaches your card in 5-7 business days."
        verdict: met
        note: A refund already issued is a concrete resolution.
      - sample: Please contact billing.
        verdict: fail
        note: Pointing elsewhere is not a resolution.
"""


def with_examples(text: str) -> str:
    """The bundled rubric with two examples on its first criterion (``resolves-issue``)."""
    anchor = "    tags: [axis:completeness]\n"
    assert text.count(anchor) == 1
    return text.replace(anchor, anchor + EXAMPLES)


@pytest.fixture
def server():
    with FakeLLM() as fake:
        yield fake


async def test_editing_examples_rejudges_exactly_that_criterions_cells(server, tmp_path: Path):
    text = (SUPPORT / "support_reply.yaml").read_text()
    rubric = parse_rubric(text, "r.yaml")
    samples = load_samples(SUPPORT / "support_reply.samples.jsonl").samples
    n_samples, n_judged = len(samples), len(rubric.judge_criteria)
    grader = make_grader(rubric, judge="openai:gpt-4o-mini", base_url=server.base_url_openai,
                         env={"OPENAI_API_KEY": "k"}, cache_path=tmp_path / "cache.sqlite")
    try:
        await grader.run(rubric, samples)
        assert server.calls() == n_samples * n_judged
        server.requests.clear()

        edited = parse_rubric(with_examples(text), "r.yaml")
        assert [e.verdict for e in edited.criterion("resolves-issue").examples] == ["met", "unmet"]
        await grader.run(edited, samples)
        assert server.calls() == n_samples  # one criterion's cells, nothing else
        users = [parse_call(r.api, r.body).user for r in server.requests]
        assert all("Please contact billing." in u and "Pointing elsewhere is not a resolution." in u
                   for u in users)
        assert all(u.index("Directly answers") < u.index("Correct grade: unmet") for u in users)

        # the same examples again: served from the cache; removing them: the old cells, cached too
        await grader.run(parse_rubric(with_examples(text), "r.yaml"), samples)
        await grader.run(rubric, samples)
        assert server.calls() == n_samples
    finally:
        await grader.aclose()


@pytest.mark.parametrize("example, message", [
    ("{sample: hi}", "exactly one of 'verdict'"),
    ("{sample: hi, verdict: met, score: 3}", "exactly one of 'verdict'"),
    ("{sample: hi, score: 7}", "gives a 'verdict'"),
    ("{sample: hi, verdict: maybe}", "verdict"),
    ("{sample: '  ', verdict: met}", "example sample is empty"),
    ("{sample: hi, verdict: met, sampel: x}", "unknown key 'sampel'"),
])
def test_bad_examples_are_refused_with_their_position(example, message):
    text = f"name: r\ncriteria:\n  - id: a\n    outcome: Is polite\n    examples:\n      - {example}\n"
    with pytest.raises(RubricError) as caught:
        parse_rubric(text, "r.yaml")
    problem = caught.value.problems[0]
    assert message in problem.message and problem.line in (3, 5, 6)  # the criterion, or the example


def test_analytic_examples_take_a_score_and_checks_take_none():
    analytic = ("name: r\ncriteria:\n  - id: a\n    outcome: Warm tone\n    score_ranges: {0: cold, 7: warm}\n"
                "    examples:\n      - {sample: hi, score: 8, note: friendly}\n")
    assert parse_rubric(analytic, "r.yaml").criterion("a").examples[0].decision_text() == "score 8"
    check = ("name: r\ncriteria:\n  - id: a\n    outcome: x\n  - id: b\n    check: {type: length, max_words: 3}\n"
             "    examples:\n      - {sample: hi, verdict: met}\n")
    with pytest.raises(RubricError, match="not to deterministic checks"):
        parse_rubric(check, "r.yaml")
