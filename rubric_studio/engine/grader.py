"""The grader: runs checks and judge calls for a rubric over samples, incrementally.

One :class:`Grader` lives as long as a studio session (or one CLI run). Each
:meth:`Grader.run` grades the current rubric + samples:

* check cells are computed at once (memoised by criterion and sample fingerprint);
* a judge criterion whose outcome is still the starter's placeholder
  (:mod:`rubric_studio.engine.starter`) is ``unjudged``: no request is planned for it;
* judge cells are served from the session memo, then the persistent cache, and only
  then sent to the judge, at most ``concurrency`` at a time;
* a judge request already in flight from an earlier run is adopted if the new run
  still wants it, and cancelled if not (stale cells are not paid for);
* every change is reported through ``on_event`` (see :mod:`rubric_studio.engine.events`).

Judge errors end as ``error`` cells with a one-line reason, never as fails.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rubric_studio.core.check_runner import CheckRunner
from rubric_studio.core.results import CriterionResult, SampleResult, Status
from rubric_studio.core.rubric import DEFAULT_TIE_RULE, Criterion, Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.core.scoring import score_sample
from rubric_studio.engine.cache import ReplyCache
from rubric_studio.engine.dispatch import Dispatcher, RequestResult, Work, error_result
from rubric_studio.engine.events import Event, Progress, RunFinished, RunStarted, SamplesUpdated
from rubric_studio.engine.offloop import in_daemon_thread
from rubric_studio.engine.plan import Snapshot, plan, snapshot_of
from rubric_studio.engine.report import Report
from rubric_studio.engine.starter import PLACEHOLDER_RATIONALE, awaits_outcome
from rubric_studio.engine.usage import Usage
from rubric_studio.engine.votes import aggregate_votes

__all__ = ["EventSink", "Grader", "aggregate_votes"]

EventSink = Callable[[Event], Any]


class Grader:
    """Grades rubrics over samples; keeps what it learned for the next run."""

    def __init__(
        self,
        *,
        judge: Any = None,
        no_judge_reason: str | None = None,
        cache: ReplyCache | None = None,
        allow_code: bool = False,
        repeat: int = 1,
        concurrency: int | None = None,
        memo: bool = True,
        deadline: float | None = None,
        reuse_batch: bool = True,
    ):
        self.judge = judge
        self.config = judge.config if judge is not None else None
        self.no_judge_reason = no_judge_reason or "no judge configured"
        #: Why the judge's settings can never work as written (a line break in its URL), or None.
        self.unusable: str | None = None
        self.cache = cache
        self.allow_code = allow_code
        self.repeat = max(1, repeat)
        limit = concurrency or (self.config.concurrency if self.config else 8)
        self.dispatch = Dispatcher(judge, cache, limit, use_memo=memo, reuse_batch=reuse_batch)
        #: Things the user should hear once (a rubric setting the provider is not sent, a cache
        #: that cannot be written); :meth:`take_warnings` hands out each one once.
        self.warnings: list[str] = []
        self._warned = 0
        self._use_memo = memo
        self._check_memo: dict[tuple[str, str], CriterionResult] = {}
        self.session_usage = Usage()
        self.previous: Snapshot | None = None
        #: Seconds a run may take (judge.deadline unless given); calls unanswered then end as errors.
        self.deadline = deadline if deadline is not None else (self.config.deadline if self.config else None)
        self._shared: tuple[Any, float | None] | None = None  # (breaker, deadline time) across runs
        #: Why the last run stopped judging early (breaker, deadline), or None.
        self.last_stopped: str | None = None
        #: Added to every request's repeat index (part of the cache key, never sent): a run that
        #: must not share verdicts with the normal ones (a probe's reordered batch, whose
        #: per-criterion requests read the same) files them under an identity of its own.
        self.cache_variant = 0

    # -- public ------------------------------------------------------------
    def trust(self, allow: bool = True) -> None:
        """Trust (or stop trusting) the rubric's code checks from now on."""
        if allow != self.allow_code:
            self.allow_code = allow
            self._check_memo.clear()

    def forget_errors(self) -> int:
        """Drop memoised error results so the next run retries them."""
        memo = self.dispatch.memo
        bad = [key for key, value in memo.items() if not value.valid]
        for key in bad:
            del memo[key]
        return len(bad)

    def one_invocation(self) -> None:
        """From now on every run shares one circuit breaker and one deadline (a command that
        grades in chunks); by default each run gets its own (a studio re-grade tries again)."""
        from rubric_studio.judges.breaker import Breaker

        deadline_at = time.monotonic() + self.deadline if self.deadline else None
        self._shared = (Breaker(), deadline_at)

    def hand_over(self, successor: Grader) -> None:
        """Pass the judge memo and calls in flight to ``successor`` (same rubric, edited judge
        settings): requests it would send again are adopted, not re-sent."""
        self.dispatch.hand_over(successor.dispatch)

    def take_warnings(self) -> list[str]:
        """The warnings not handed out yet."""
        fresh = self.warnings[self._warned:]
        self._warned = len(self.warnings)
        return fresh

    @property
    def cancelled_requests(self) -> int:
        return self.dispatch.cancelled_requests

    def request_keys(self, rubric: Rubric, samples: Sequence[Sample]) -> list[str]:
        """The cache keys of every judge request a run asks for (one per cell and repeat)."""
        work = self._judge_work(rubric, list(samples))
        return [] if work is None else list(work.requests)

    def uncached(self, rubric: Rubric, samples: Sequence[Sample]) -> dict[str, Any]:
        """The judge requests (cache key -> request) a run would have to send: neither the
        session memo nor the persistent cache answers them."""
        work = self._judge_work(rubric, list(samples))
        if work is None:
            return {}
        usage = Usage()
        return {key: request for key, request in work.requests.items()
                if self.dispatch.lookup(key, request, rubric, work.sample_for(key), usage, remember=False) is None}  # fmt: skip

    def snapshot(self, rubric: Rubric, samples: Sequence[Sample]) -> Snapshot:
        """Fingerprints of every cell (see :mod:`rubric_studio.engine.plan`)."""
        samples = list(samples)
        sample_fps = {s.id: s.fingerprint() for s in samples}
        return self._snapshot_from(rubric, samples, self._judge_work(rubric, samples), sample_fps)

    async def run(self, rubric: Rubric, samples: Sequence[Sample], on_event: EventSink | None = None) -> Report:
        """Grade everything; return the report once every cell is final."""
        started = time.perf_counter()
        emit = on_event or (lambda event: None)
        usage = Usage()
        samples = list(samples)

        sample_fps = {s.id: s.fingerprint() for s in samples}
        check_results = await in_daemon_thread(
            lambda stop: self._run_checks(rubric, samples, sample_fps, stop), name="rubric-studio-checks")
        work = self._judge_work(rubric, samples)
        snapshot = self._snapshot_from(rubric, samples, work, sample_fps)
        stale = plan(self.previous, snapshot)
        self.previous = snapshot

        cells: dict[str, dict[str, CriterionResult]] = {s.id: dict(check_results[s.id]) for s in samples}
        resolved, to_send = self._resolve_known(rubric, work, usage)
        for sample in samples:
            for criterion in rubric.judge_criteria:
                cells[sample.id][criterion.key] = self._judge_cell(criterion, sample.id, work, resolved, rubric)

        results = {s.id: self._score(rubric, s.id, cells[s.id]) for s in samples}
        emit(RunStarted(total_requests=len(work.requests) if work else 0, to_send=len(to_send),
                        stale_cells=len(stale.stale), plan=stale))
        emit(SamplesUpdated(list(results.values()), final=not to_send))
        stopped = None
        if to_send:
            assert work is not None
            stopped = await self._send(rubric, work, to_send, resolved, cells, results, usage, emit)

        self.last_stopped = stopped
        usage.wall_seconds = time.perf_counter() - started
        self.session_usage.merge(usage)
        report = self._report(rubric, [results[s.id] for s in samples], usage, stopped)
        emit(RunFinished(report))
        return report

    def _resolve_known(self, rubric: Rubric, work: Work | None, usage: Usage) -> tuple[dict[str, RequestResult], list[str]]:
        """(requests the memo or the cache answers, keys still to send); cancels calls in flight
        that the run no longer wants."""
        resolved: dict[str, RequestResult] = {}
        to_send: list[str] = []
        if work is None:
            return resolved, to_send
        for key, request in work.requests.items():
            found = self.dispatch.lookup(key, request, rubric, work.sample_for(key), usage)
            if found is not None:
                resolved[key] = found
            else:
                to_send.append(key)
        self.dispatch.cancel_unwanted(set(to_send), usage)
        return resolved, to_send

    def _report(self, rubric: Rubric, samples: list[SampleResult], usage: Usage, stopped: str | None) -> Report:
        needs_judge = self.judge is None and any(not awaits_outcome(c) for c in rubric.judge_criteria)
        return Report(
            rubric_name=rubric.name,
            rubric_path=rubric.path,
            rubric_hash=rubric.content_hash(),
            # the provider as the user wrote it (openai-compatible, ollama), not the one it runs on
            judge={"provider": self.config.alias or self.config.provider, "model": self.config.model}
            if self.config else None,
            samples=samples,
            usage=usage,
            judge_note=self.no_judge_reason if needs_judge else None,
            judge_stopped=stopped,
            repeat=self.repeat,
        )

    async def _send(
        self,
        rubric: Rubric,
        work: Work,
        to_send: list[str],
        resolved: dict[str, RequestResult],
        cells: dict[str, dict[str, CriterionResult]],
        results: dict[str, SampleResult],
        usage: Usage,
        emit: EventSink,
    ) -> str | None:
        """Send what the run needs, updating cells as replies arrive; the reason judging
        stopped early (breaker, deadline), or None."""
        breaker, deadline_at = self._breaker_and_deadline()
        await self.dispatch.ask_server_slots()  # bounded; the first progress then shows the limit in use
        tasks = self.dispatch.start(to_send, work, rubric, breaker)
        waiting = dict(tasks)
        emit(Progress(done=0, total=len(tasks), in_flight=self.in_flight, concurrency=self.concurrency_text))
        arrived = _arrivals(tasks)
        limit_fell, limit = functools.partial(arrived.put_nowait, ""), self.dispatch.concurrency
        limit.listeners.append(limit_fell)
        try:
            overdue = None
            # If the caller cancels this run, the tasks live on in the dispatcher: the next
            # run adopts the ones it still wants and cancels the rest.
            while waiting:
                finished = await _next_arrivals(arrived, deadline_at)
                if not finished:
                    overdue = f"the run's deadline ({self.deadline:g} s) passed; raise judge.deadline (or --deadline)"
                    for task in set(waiting.values()):
                        self.dispatch.abort(task, usage)
                    for key in waiting:
                        resolved[key] = error_result(work.requests[key].criterion_ids, f"not judged: {overdue}", stopped=True)
                    finished, waiting = list(waiting), {}
                touched: set[str] = set()
                for key in finished:
                    if not key:
                        continue  # the concurrency fell
                    task = waiting.pop(key, None)
                    if task is not None:
                        resolved[key] = self.dispatch.collect(task, key, usage)
                    touched.update(sample.id for sample in work.samples_of[key])
                for sample_id in touched:
                    for criterion in rubric.judge_criteria:
                        cells[sample_id][criterion.key] = self._judge_cell(criterion, sample_id, work, resolved, rubric)
                    results[sample_id] = self._score(rubric, sample_id, cells[sample_id])
                if touched or not waiting:
                    emit(SamplesUpdated([results[i] for i in touched], final=not waiting))
                emit(Progress(done=len(tasks) - len(waiting), total=len(tasks), in_flight=self.in_flight,
                              concurrency=self.concurrency_text))
            if breaker.tripped:
                return f"{breaker.reason} ({breaker.not_sent} calls not sent)"
            return overdue
        finally:
            limit.listeners.remove(limit_fell)

    def _breaker_and_deadline(self) -> tuple[Any, float | None]:
        if self._shared is not None:
            return self._shared
        from rubric_studio.judges.breaker import Breaker

        return Breaker(), (time.monotonic() + self.deadline if self.deadline else None)

    @property
    def in_flight(self) -> int:
        return self.dispatch.in_flight

    @property
    def concurrency_now(self) -> int:
        """Judge calls allowed in flight at this moment (lowered on timeouts and 429s)."""
        return self.dispatch.concurrency.current

    @property
    def concurrency_text(self) -> str | None:
        """Judge calls allowed in flight now / at most (``2/6``); None without a judge."""
        return self.dispatch.concurrency.text if self.judge is not None else None

    async def aclose(self) -> None:
        """Cancel everything in flight (calls handed to a successor finish first) and close the judge."""
        await self.dispatch.aclose()

    # -- checks ------------------------------------------------------------
    def _run_checks(
        self, rubric: Rubric, samples: list[Sample], sample_fps: dict[str, str], stop: threading.Event
    ) -> dict[str, dict[str, CriterionResult]]:
        """Every sample's check results (memoised), in a worker thread: stops early once ``stop`` is set
        (the run was cancelled and nobody reads the result)."""
        runner = CheckRunner(rubric, allow_code=self.allow_code)
        out: dict[str, dict[str, CriterionResult]] = {}
        if not self._use_memo:
            for sample in samples:
                if stop.is_set():
                    break
                out[sample.id] = runner.run_sample(sample)
            return out
        fingerprints = {c.key: c.fingerprint() for c in runner.criteria}
        for sample in samples:
            if stop.is_set():
                break
            sample_fp = sample_fps[sample.id]
            found: dict[str, CriterionResult] = {}
            missing: set[str] = set()
            for criterion_id, criterion_fp in fingerprints.items():
                hit = self._check_memo.get((criterion_fp, sample_fp))
                if hit is None:
                    missing.add(criterion_id)
                else:
                    found[criterion_id] = hit
            if missing:
                fresh = runner.run_sample(sample, only=missing)
                for criterion_id, result in fresh.items():
                    self._check_memo[(fingerprints[criterion_id], sample_fp)] = result
                found.update(fresh)
            out[sample.id] = found
        return out

    # -- judge work --------------------------------------------------------
    def _judge_work(self, rubric: Rubric, samples: Iterable[Sample]) -> Work | None:
        """One per-criterion request per judge cell (and repeat), whatever the mode: batch mode
        only sends them together (:mod:`rubric_studio.engine.dispatch`)."""
        criteria = [criterion for criterion in rubric.judge_criteria if not awaits_outcome(criterion)]
        if self.judge is None or not criteria:
            return None
        from dataclasses import replace

        from rubric_studio.judges import build_requests

        config = self.config if self.config.mode == "per_criterion" else replace(self.config, mode="per_criterion")
        work = Work()
        for sample in samples:
            for repeat in range(self.repeat):
                for request in build_requests(rubric, sample, criteria, config, repeat + self.cache_variant):
                    work.add(request.cache_key(config), request, sample)
        return work

    def _snapshot_from(
        self, rubric: Rubric, samples: list[Sample], work: Work | None, sample_fps: dict[str, str]
    ) -> Snapshot:
        return snapshot_of(rubric, [s.id for s in samples], sample_fps, None if work is None else work.cell_keys,
                           trusted=self.allow_code)  # fmt: skip

    # -- cells -------------------------------------------------------------
    def _judge_cell(
        self, criterion: Criterion, sample_id: str, work: Work | None, resolved: dict[str, RequestResult],
        rubric: Rubric,
    ) -> CriterionResult:
        """A judge criterion's cell: unjudged while its outcome is the starter's placeholder or
        there is no judge, else from the replies resolved so far."""
        if awaits_outcome(criterion):
            return CriterionResult(criterion.key, Status.UNJUDGED, source="none", rationale=PLACEHOLDER_RATIONALE)
        if work is None:
            return CriterionResult(criterion.key, Status.UNJUDGED, source="none", rationale=self.no_judge_reason)
        return self._cell_from(criterion, sample_id, work, resolved, rubric)

    def _cell_from(self, criterion: Criterion, sample_id: str, work: Work, resolved: dict[str, RequestResult],
                   rubric: Rubric) -> CriterionResult:
        keys = work.cell_keys.get((sample_id, criterion.key), [])
        votes: list[CriterionResult] = []
        for key in keys:
            outcome = resolved.get(key)
            if outcome is None:
                return CriterionResult(criterion.key, Status.PENDING, source="none")
            result = outcome.answer(criterion.key)
            if result is None:
                reason = outcome.failure or f"judge gave no result for {criterion.key}"
                result = CriterionResult(criterion.key, Status.ERROR, source="judge", error=reason)
            votes.append(result)
        if not votes:
            return CriterionResult(criterion.key, Status.PENDING, source="none")
        if len(votes) == 1:
            return votes[0]
        # an even split of the repeats counts as a panel's tie does (judge.ties)
        return aggregate_votes(criterion, votes, rubric.judge.ties if rubric.judge is not None else DEFAULT_TIE_RULE)

    def _score(self, rubric: Rubric, sample_id: str, cells: dict[str, CriterionResult]) -> SampleResult:
        return SampleResult.from_outcome(sample_id, score_sample(rubric, cells))


def _arrivals(tasks: dict[str, asyncio.Task[Any]]) -> asyncio.Queue[str]:
    """The queue each task's key is put on when it finishes: O(1) per reply, where asyncio.wait
    over everything pending would cost O(pending) per reply. ``""`` put on it wakes the run
    with no key finished: a fall of the concurrency is shown when it happens, not only with
    the next reply (after a wave of timeouts that may be seconds later)."""
    arrived: asyncio.Queue[str] = asyncio.Queue()
    for key, task in tasks.items():
        task.add_done_callback(lambda _task, key=key: arrived.put_nowait(key))
    return arrived


async def _next_arrivals(arrived: asyncio.Queue[str], deadline_at: float | None) -> list[str]:
    """Every key that has finished by now (waiting for at least one); [] once the deadline passes."""
    try:
        if deadline_at is None:
            first = await arrived.get()
        else:
            async with asyncio.timeout_at(asyncio.get_running_loop().time() + max(0.0, deadline_at - time.monotonic())):
                first = await arrived.get()
    except TimeoutError:
        return []
    keys = [first]
    while not arrived.empty():
        keys.append(arrived.get_nowait())
    return keys

