"""The grader's incremental contract (docs/concepts/judges-and-cache.md#what-a-change-re-judges),
with an in-process judge.

The judge here implements the one-method Judge interface directly, so these tests
count requests exactly; the same properties are checked end to end through the
real SDKs and HTTP in test_grader_http.py.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.results import Status, Verdict
from rubric_studio.core.samples import Sample
from rubric_studio.engine.cache import ReplyCache
from rubric_studio.engine.events import RunStarted, SamplesUpdated
from rubric_studio.engine.grader import Grader
from rubric_studio.judges import Judge, JudgeConfig, JudgeError, JudgeReply, JudgeRequest
from tests._timing import scaled

RUBRIC = """\
name: demo
criteria:
  - id: polite        # judged
    outcome: Says thank you
  - id: refund
    outcome: Mentions the refund
  - id: tone
    outcome: Warm tone
    score_ranges: {0: cold, 5: neutral, 8: warm}
  - id: short
    check: {type: length, max_words: 12}
"""


class ScriptedJudge(Judge):
    """Answers from the sample text: 'met' when the criterion's first word appears."""

    def __init__(self, delay: float = 0.0, fail_for: set[str] | None = None):
        super().__init__(JudgeConfig(provider="openai", model="scripted", concurrency=4))
        self.calls: list[JudgeRequest] = []
        self.cancelled = 0
        self.delay = delay
        self.fail_for = fail_for or set()

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.calls.append(request)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        (criterion_id,) = request.criterion_ids
        if criterion_id in self.fail_for:
            raise JudgeError("server", "503 from scripted judge")
        text = request.user.lower()
        hit = {"polite": "thank", "refund": "refund", "tone": "glad"}[criterion_id] in text
        if "score" in request.schema["properties"]:
            body = {"rationale": "tone", "evidence": [], "score": 9 if hit else 3}
        else:
            body = {"rationale": "looked", "evidence": ["thank you"] if hit else [], "verdict": "met" if hit else "unmet"}
        return JudgeReply(text=json.dumps(body), input_tokens=100, output_tokens=20)


async def _until(condition, what: str, timeout: float = 10.0) -> None:
    """Wait for ``condition`` on the loop (a hang fails after ``timeout`` seconds, scaled)."""
    deadline = time.monotonic() + scaled(timeout)
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.005)


def samples(n: int = 4) -> list[Sample]:
    texts = ["Thank you! Your refund is on its way, glad to help.", "No.", "Thanks, refund sent.", "Thank you for waiting."]
    return [Sample(id=f"s{i}", output=texts[i % len(texts)] + (" x" * i)) for i in range(n)]


def rubric(text: str = RUBRIC):
    return parse_rubric(text, "demo.yaml")


async def test_first_run_judges_every_cell_then_a_rerun_makes_no_calls():
    judge = ScriptedJudge()
    grader = Grader(judge=judge)
    report = await grader.run(rubric(), samples())
    assert len(judge.calls) == 4 * 3
    assert report.usage.judge_calls == 12
    first = report.samples[0]
    assert first.verdict is Verdict.PASS
    assert first.cell("polite").evidence[0].found is True
    assert first.cell("tone").raw_score == 9
    again = await grader.run(rubric(), samples())
    assert len(judge.calls) == 12 and again.usage.judge_calls == 0
    assert [s.verdict for s in again.samples] == [s.verdict for s in report.samples]


async def test_comment_only_edit_makes_no_calls_and_no_stale_cells():
    judge = ScriptedJudge()
    grader = Grader(judge=judge)
    await grader.run(rubric(), samples())
    events = []
    await grader.run(rubric(RUBRIC.replace("# judged", "# judged by the model, see docs")), samples(), events.append)
    assert len(judge.calls) == 12
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.stale_cells == 0 and started.to_send == 0


async def test_editing_one_outcome_rejudges_exactly_that_criterion():
    judge = ScriptedJudge()
    grader = Grader(judge=judge)
    await grader.run(rubric(), samples())
    events = []
    await grader.run(rubric(RUBRIC.replace("Mentions the refund", "Mentions the refund amount")), samples(), events.append)
    new_calls = judge.calls[12:]
    assert len(new_calls) == 4
    assert {r.criterion_ids for r in new_calls} == {("refund",)}
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.plan.stale_criteria == {"refund"} and len(started.plan.stale) == 4


async def test_adding_one_sample_judges_exactly_its_judge_cells():
    judge = ScriptedJudge()
    grader = Grader(judge=judge)
    await grader.run(rubric(), samples(4))
    await grader.run(rubric(), samples(5))
    assert len(judge.calls) == 12 + 3
    assert {r.sample_id for r in judge.calls[12:]} == {"s4"}


async def test_check_edit_makes_no_judge_calls():
    judge = ScriptedJudge()
    grader = Grader(judge=judge)
    await grader.run(rubric(), samples())
    report = await grader.run(rubric(RUBRIC.replace("max_words: 12", "max_words: 3")), samples())
    assert len(judge.calls) == 12
    assert report.samples[0].cell("short").status is Status.UNMET


async def test_persistent_cache_serves_a_new_session(tmp_path: Path):
    cache = ReplyCache(tmp_path / "c.sqlite")
    first = ScriptedJudge()
    await Grader(judge=first, cache=cache).run(rubric(), samples())
    second = ScriptedJudge()
    report = await Grader(judge=second, cache=ReplyCache(tmp_path / "c.sqlite")).run(rubric(), samples())
    assert second.calls == []
    assert report.usage.cache_hits == 12
    assert {c.source for s in report.samples for c in s.criteria if c.id != "short"} == {"cache"}


async def test_errors_are_error_cells_not_fails_and_are_not_cached(tmp_path: Path):
    cache = ReplyCache(tmp_path / "c.sqlite")
    judge = ScriptedJudge(fail_for={"refund"})
    report = await Grader(judge=judge, cache=cache).run(rubric(), samples())
    cell = report.samples[0].cell("refund")
    assert cell.status is Status.ERROR and "503" in cell.error and cell.score is None
    assert all(s.verdict is Verdict.ERROR for s in report.samples)
    assert report.exit_code() == 3
    assert cache.stats().entries == 8


async def test_stale_in_flight_requests_are_cancelled_and_fresh_ones_adopted():
    judge = ScriptedJudge(delay=0.3)
    grader = Grader(judge=judge)
    first = asyncio.create_task(grader.run(rubric(), samples()))
    await _until(lambda: len(judge.calls) >= 4, "the first run's first requests in flight")  # concurrency 4
    first.cancel()  # the studio moves on to a newer version
    edited = rubric(RUBRIC.replace("Mentions the refund", "Mentions the refund amount"))
    report = await grader.run(edited, samples())
    assert grader.cancelled_requests == 4  # the old 'refund' requests
    sent = {r.criterion_ids for r in judge.calls}
    assert ("refund",) in sent
    # polite/tone requests were adopted, not sent twice
    assert sum(1 for r in judge.calls if r.criterion_ids == ("polite",)) == 4
    assert all(s.verdict in (Verdict.PASS, Verdict.FAIL) for s in report.samples)
    await asyncio.sleep(0)
    assert judge.cancelled >= 1


async def test_progress_events_stream_samples_as_cells_finish():
    judge = ScriptedJudge(delay=0.01)
    events = []
    await Grader(judge=judge).run(rubric(), samples(), events.append)
    updates = [e for e in events if isinstance(e, SamplesUpdated)]
    assert updates[0].final is False
    assert {c.status for c in updates[0].samples[0].criteria if c.id != "short"} == {Status.PENDING}
    assert updates[-1].final is True


async def test_repeats_take_the_majority_and_report_flip_rates():
    class Flaky(ScriptedJudge):
        async def complete(self, request):
            reply = await super().complete(request)
            if request.criterion_ids == ("polite",) and request.repeat_index == 1:
                body = json.loads(reply.text)
                body["verdict"] = "unmet" if body["verdict"] == "met" else "met"
                reply.text = json.dumps(body)
            return reply

    judge = Flaky()
    report = await Grader(judge=judge, repeat=3).run(rubric(), samples())
    assert len(judge.calls) == 4 * 3 * 3
    cell = report.samples[0].cell("polite")
    assert cell.status is Status.MET and cell.votes == ["met", "unmet", "met"]
    assert cell.agreement == pytest.approx(2 / 3)
    rates = report.flip_rates()
    assert rates["polite"]["flip_rate"] == 1.0 and rates["refund"]["flip_rate"] == 0.0
    assert report.to_dict()["flip_rates"]["polite"]["flipped_samples"] == ["s0", "s1", "s2", "s3"]


async def test_no_judge_leaves_judge_cells_unjudged_with_the_reason():
    report = await Grader(judge=None, no_judge_reason="set OPENAI_API_KEY").run(rubric(), samples())
    cell = report.samples[0].cell("polite")
    assert cell.status is Status.UNJUDGED and "OPENAI_API_KEY" in cell.rationale
    assert report.samples[0].cell("short").status is Status.MET
    assert report.judge_note == "set OPENAI_API_KEY"
    assert report.exit_code() == 1


def test_plan_lists_exactly_the_stale_cells_without_grading():
    from rubric_studio.engine.plan import plan

    grader = Grader(judge=ScriptedJudge())
    before = grader.snapshot(rubric(), samples())
    edited = rubric(RUBRIC.replace("Mentions the refund", "Mentions the refund amount").replace("max_words: 12", "max_words: 9"))
    after = grader.snapshot(edited, samples(5))
    result = plan(before, after)
    expected = {(f"s{i}", c) for i in range(4) for c in ("refund", "short")} | {("s4", c) for c in ("polite", "refund", "tone", "short")}
    assert result.stale == expected
    assert result.removed == set()
    assert plan(after, grader.snapshot(edited, samples(5))).stale == set()
    assert plan(after, grader.snapshot(edited, samples(3))).removed == {(f"s{i}", c) for i in (3, 4) for c in ("polite", "refund", "tone", "short")}


async def test_checks_run_off_the_event_loop(tmp_path: Path):
    """A slow check must not freeze the loop (the studio's redraws and ctrl+q run on it).

    The check waits for a flag file that a coroutine on the loop writes: run on the loop,
    the check would wait out its timeout and end in error.
    """
    flag = tmp_path / "flag"
    (tmp_path / "waitchecks.py").write_text(
        "import time\nfrom pathlib import Path\n\n"
        f"FLAG = Path({str(flag)!r})\n\n"
        "def wait_for_flag(output):\n"
        f"    deadline = time.monotonic() + {scaled(3)}\n"
        "    while time.monotonic() < deadline:\n"
        "        if FLAG.exists():\n            return True\n"
        "        time.sleep(0.01)\n"
        "    return False\n"
    )
    waiting = parse_rubric("name: w\ncriteria:\n  - id: k\n    check: {type: python, function: 'waitchecks:wait_for_flag'}\n",
                           str(tmp_path / "r.yaml"))

    async def raise_flag() -> None:
        await asyncio.sleep(0.05)
        flag.touch()

    ticker = asyncio.create_task(raise_flag())
    report = await Grader(judge=None, allow_code=True).run(waiting, [Sample(id="s", output="x")])
    await ticker
    assert report.samples[0].cell("k").status is Status.MET


async def test_a_cancelled_run_stops_its_checks_at_the_next_sample(tmp_path: Path):
    (tmp_path / "slowchecks.py").write_text(
        "import time\nSEEN = []\n\ndef slow(output):\n    SEEN.append(output)\n    time.sleep(0.05)\n    return True\n")
    slow = parse_rubric("name: w\ncriteria:\n  - id: k\n    check: {type: python, function: 'slowchecks:slow'}\n",
                        str(tmp_path / "r.yaml"))
    run = asyncio.create_task(Grader(judge=None, allow_code=True).run(slow, [Sample(id=f"s{i}", output=str(i)) for i in range(200)]))
    await _until(lambda: "slowchecks" in sys.modules and sys.modules["slowchecks"].SEEN, "the checks running")
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    seen = sys.modules["slowchecks"].SEEN
    count = len(seen)
    await asyncio.sleep(0.3)
    assert len(seen) <= count + 1 < 100  # stopped, not grading the 200 samples to the end
