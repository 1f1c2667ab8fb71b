"""A tie of a cell's ``--repeat`` votes never helps a sample pass: counted by the same rule as a
panel's tie (``judge.ties``; by default unmet on an ordinary criterion, met on a penalty)."""

from __future__ import annotations

import asyncio
import json

import pytest

from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.samples import Sample
from rubric_studio.engine.grader import Grader
from rubric_studio.engine.votes import aggregate_votes
from rubric_studio.judges import Judge, JudgeConfig, JudgeReply, JudgeRequest

RUBRIC = parse_rubric(
    "name: r\npass_threshold: 0.5\ncriteria:\n"
    "  - {id: good, outcome: Answers the question}\n"
    "  - {id: rude, outcome: Is rude to the customer, weight: -1}\n"
)
GOOD, RUDE = RUBRIC.criterion("good"), RUBRIC.criterion("rude")


def votes(criterion_id: str, *statuses: str) -> list[CriterionResult]:
    return [CriterionResult(criterion_id, Status(status), score=1.0 if status == "met" else 0.0,
                            rationale=f"repeat {n} says {status}", source="judge")
            for n, status in enumerate(statuses)]


def test_a_tie_on_a_penalty_counts_as_met_and_says_so():
    cell = aggregate_votes(RUDE, votes("rude", "unmet", "met"))
    assert (cell.status, cell.score, cell.tie) == (Status.MET, 1.0, True)
    assert cell.rationale == "[tie 1–1: counted as met (penalty)] repeat 1 says met"
    four = aggregate_votes(RUDE, votes("rude", "unmet", "met", "unmet", "met"))
    assert four.status is Status.MET and four.rationale.startswith("[tie 2–2: counted as met (penalty)]")


def test_a_tie_on_an_ordinary_criterion_stays_unmet():
    cell = aggregate_votes(GOOD, votes("good", "met", "unmet"))
    assert (cell.status, cell.score, cell.tie) == (Status.UNMET, 0.0, True)
    assert cell.rationale == "[tie 1–1: counted as unmet] repeat 1 says unmet"


@pytest.mark.parametrize(
    ("ties", "criterion", "status", "words"),
    [
        ("unmet", RUDE, Status.UNMET, "[tie 1–1: counted as unmet (judge.ties: unmet)] repeat 0 says unmet"),
        ("met", GOOD, Status.MET, "[tie 1–1: counted as met (judge.ties: met)] repeat 1 says met"),
        ("against_pass", GOOD, Status.UNMET, "[tie 1–1: counted as unmet] repeat 0 says unmet"),
    ],
)
def test_judge_ties_chooses_how_a_tie_counts(ties, criterion, status, words):
    cell = aggregate_votes(criterion, votes(criterion.key, "unmet", "met"), ties)
    assert cell.status is status and cell.tie and cell.rationale == words


def test_a_majority_is_not_a_tie_whatever_the_rule():
    for ties in ("against_pass", "unmet", "met"):
        cell = aggregate_votes(RUDE, votes("rude", "unmet", "met", "unmet"), ties)
        assert (cell.status, cell.tie) == (Status.UNMET, False)
        assert cell.rationale == "repeat 0 says unmet" and cell.agreement == pytest.approx(2 / 3)


class SplitJudge(Judge):
    """Says met to every cell on the first repeat and unmet on the second: every cell a 1–1 tie."""

    def __init__(self) -> None:
        super().__init__(JudgeConfig(provider="openai", model="split", concurrency=2))

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        verdict = "met" if request.repeat_index % 2 == 0 else "unmet"
        return JudgeReply(text=json.dumps({"rationale": "looked", "evidence": [], "verdict": verdict}),
                          input_tokens=10, output_tokens=5)


async def test_a_graded_penalty_tie_costs_the_sample_its_penalty():
    report = await Grader(judge=SplitJudge(), repeat=2).run(RUBRIC, [Sample(id="s0", output="Here you go.")])
    sample = report.samples[0]
    assert sample.cell("good").status is Status.UNMET and sample.cell("good").tie
    rude = sample.cell("rude")
    assert rude.status is Status.MET and rude.tie and rude.votes == ["met", "unmet"]
    assert "counted as met (penalty)" in rude.rationale


def test_judge_ties_in_the_rubric_decides_a_repeat_tie():
    rubric = parse_rubric(
        "name: r\npass_threshold: 0.5\njudge: {model: openai:gpt-4o-mini, ties: unmet}\ncriteria:\n"
        "  - {id: good, outcome: Answers the question}\n"
        "  - {id: rude, outcome: Is rude to the customer, weight: -1}\n"
    )
    report = asyncio.run(Grader(judge=SplitJudge(), repeat=2).run(rubric, [Sample(id="s0", output="Here you go.")]))
    rude = report.samples[0].cell("rude")
    assert rude.status is Status.UNMET and rude.tie
    assert "counted as unmet (judge.ties: unmet)" in rude.rationale
