"""The grader: runs checks and judge calls for a rubric over samples, incrementally.

One :class:`Grader` lives as long as a studio session (or one CLI run). Each
:meth:`Grader.run` grades the current rubric + samples:

* check cells are computed at once (memoised by criterion and sample fingerprint);
* judge cells are served from the session memo, then the persistent cache, and only
  then sent to the judge, at most ``concurrency`` at a time;
* a judge request already in flight from an earlier run is adopted if the new run
  still wants it, and cancelled if not (stale cells are not paid for);
* every change is reported through ``on_event`` (see :mod:`rubric_studio.engine.events`).

Judge errors end as ``error`` cells with a one-line reason, never as fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.checks import CheckRunner
from rubric_studio.core.results import CriterionResult, SampleResult, Status
from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.core.scoring import cell_status, score_sample
from rubric_studio.engine.cache import ReplyCache
from rubric_studio.engine.events import Event, Progress, RunFinished, RunStarted, SamplesUpdated
from rubric_studio.engine.offloop import in_daemon_thread
from rubric_studio.engine.plan import CellKey, Snapshot, combine, plan
from rubric_studio.engine.report import Report
from rubric_studio.engine.usage import Usage

EventSink = Callable[[Event], Any]


@dataclass
class _RequestResult:
    results: dict[str, CriterionResult]
    valid: bool = True
    #: (calls, input tokens, output tokens, cost) of a fresh call, counted once then cleared.
    usage: tuple[int, int, int, float | None] | None = None
    failure: str | None = None


@dataclass
class _Work:
    """The judge requests one run needs, grouped by cell."""

    requests: dict[str, Any] = field(default_factory=dict)  # key -> JudgeRequest
    #: key -> every sample whose cells that request answers. Samples with identical text
    #: make identical requests: one request serves all of them (the first is sent).
    samples_of: dict[str, list[Sample]] = field(default_factory=dict)
    cell_keys: dict[CellKey, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, key: str, request: Any, sample: Sample) -> None:
        """Record that ``sample``'s cells for ``request.criterion_ids`` are answered by request ``key``."""
        self.requests[key] = request
        sharing = self.samples_of.setdefault(key, [])
        if not sharing or sharing[-1] is not sample:
            sharing.append(sample)
        for criterion_id in request.criterion_ids:
            self.cell_keys[(sample.id, criterion_id)].append(key)

    def sample_for(self, key: str) -> Sample:
        """The sample a request is built from (any of those sharing it has the same text)."""
        return self.samples_of[key][0]


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
    ):
        self.judge = judge
        self.config = judge.config if judge is not None else None
        self.no_judge_reason = no_judge_reason or "no judge configured"
        self.cache = cache
        self.allow_code = allow_code
        self.repeat = max(1, repeat)
        limit = concurrency or (self.config.concurrency if self.config else 8)
        self._slots: asyncio.Semaphore | None = None  # created in the running loop
        self._limit = limit
        self._use_memo = memo
        self._memo: dict[str, _RequestResult] = {}
        self._check_memo: dict[tuple[str, str], CriterionResult] = {}
        self._inflight: dict[str, asyncio.Task[_RequestResult]] = {}
        self.session_usage = Usage()
        self.previous: Snapshot | None = None
        self.cancelled_requests = 0

    # -- public ------------------------------------------------------------
    def trust(self, allow: bool = True) -> None:
        """Trust (or stop trusting) the rubric's code checks from now on."""
        if allow != self.allow_code:
            self.allow_code = allow
            self._check_memo.clear()

    def forget_errors(self) -> int:
        """Drop memoised error results so the next run retries them."""
        bad = [key for key, value in self._memo.items() if not value.valid]
        for key in bad:
            del self._memo[key]
        return len(bad)

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
        resolved: dict[str, _RequestResult] = {}
        to_send: list[str] = []
        if work is None:
            for sample in samples:
                for criterion in rubric.judge_criteria:
                    cells[sample.id][criterion.key] = CriterionResult(
                        criterion.key, Status.UNJUDGED, source="none", rationale=self.no_judge_reason
                    )
        else:
            for key, request in work.requests.items():
                found = self._lookup(key, request, rubric, work.sample_for(key), usage)
                if found is not None:
                    resolved[key] = found
                else:
                    to_send.append(key)
            self._cancel_unwanted(set(to_send))
            for sample in samples:
                for criterion in rubric.judge_criteria:
                    cells[sample.id][criterion.key] = self._cell_from(criterion, sample.id, work, resolved)

        results = {s.id: self._score(rubric, s.id, cells[s.id]) for s in samples}
        emit(RunStarted(total_requests=len(work.requests) if work else 0, to_send=len(to_send),
                        stale_cells=len(stale.stale), plan=stale))
        emit(SamplesUpdated(list(results.values()), final=not to_send))

        if to_send:
            assert work is not None
            tasks = {key: self._task_for(key, work.requests[key], rubric, work.sample_for(key)) for key in to_send}
            key_of = {task: key for key, task in tasks.items()}
            pending = set(tasks.values())
            emit(Progress(done=0, total=len(tasks), in_flight=self.in_flight))
            # If the caller cancels this run, the tasks live on in ``_inflight``: the next
            # run adopts the ones it still wants and cancels the rest.
            while pending:
                finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                touched: set[str] = set()
                for task in finished:
                    key = key_of[task]
                    resolved[key] = self._collect(task, key, usage)
                    touched.update(sample.id for sample in work.samples_of[key])
                for sample_id in touched:
                    for criterion in rubric.judge_criteria:
                        cells[sample_id][criterion.key] = self._cell_from(criterion, sample_id, work, resolved)
                    results[sample_id] = self._score(rubric, sample_id, cells[sample_id])
                emit(SamplesUpdated([results[i] for i in touched], final=not pending))
                emit(Progress(done=len(tasks) - len(pending), total=len(tasks), in_flight=self.in_flight))

        usage.wall_seconds = time.perf_counter() - started
        self.session_usage.merge(usage)
        report = Report(
            rubric_name=rubric.name,
            rubric_path=rubric.path,
            rubric_hash=rubric.content_hash(),
            judge={"provider": self.config.provider, "model": self.config.model} if self.config else None,
            samples=[results[s.id] for s in samples],
            usage=usage,
            judge_note=None if work is not None or not rubric.judge_criteria else self.no_judge_reason,
            repeat=self.repeat,
        )
        emit(RunFinished(report))
        return report

    @property
    def in_flight(self) -> int:
        return sum(1 for task in self._inflight.values() if not task.done())

    async def aclose(self) -> None:
        """Cancel everything in flight and close the judge."""
        self._cancel_unwanted(set())
        if self.judge is not None:
            with contextlib.suppress(Exception):
                await self.judge.aclose()

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
    def _judge_work(self, rubric: Rubric, samples: Iterable[Sample]) -> _Work | None:
        if self.judge is None or not rubric.judge_criteria:
            return None
        from rubric_studio.judges import build_requests

        work = _Work()
        criteria = rubric.judge_criteria
        for sample in samples:
            for repeat_index in range(self.repeat):
                for request in build_requests(rubric, sample, criteria, self.config, repeat_index):
                    work.add(request.cache_key(self.config), request, sample)
        return work

    def _snapshot_from(
        self, rubric: Rubric, samples: list[Sample], work: _Work | None, sample_fps: dict[str, str]
    ) -> Snapshot:
        snap = Snapshot()
        trusted = str(self.allow_code)
        criterion_fps = {c.key: c.fingerprint() for c in rubric.criteria}
        for sample in samples:
            sample_fp = sample_fps[sample.id]
            for criterion in rubric.criteria:
                cell = (sample.id, criterion.key)
                if not criterion.is_judged:
                    snap.cells[cell] = combine("check", criterion_fps[criterion.key], sample_fp, trusted)
                elif work is None:
                    snap.cells[cell] = combine("unjudged", criterion_fps[criterion.key], sample_fp)
                else:
                    snap.cells[cell] = combine("judge", *work.cell_keys.get(cell, []))
        return snap

    def _lookup(self, key: str, request: Any, rubric: Rubric, sample: Sample, usage: Usage) -> _RequestResult | None:
        if self._use_memo and key in self._memo:
            return self._memo[key]
        if self.cache is None:
            return None
        cached = self.cache.get(key)
        if cached is None:
            return None
        from rubric_studio.judges import JudgeError, interpret

        try:
            results = interpret(request, cached.text, rubric, sample)
        except JudgeError:
            return None  # a reply the current parser rejects: ask again
        for result in results.values():
            result.source = "cache"
            result.detail.setdefault("reply", cached.text)
            result.detail["input_tokens"] = cached.input_tokens
            result.detail["output_tokens"] = cached.output_tokens
        usage.cache_hits += 1
        outcome = _RequestResult(results)
        if self._use_memo:
            self._memo[key] = outcome
        return outcome

    def _task_for(self, key: str, request: Any, rubric: Rubric, sample: Sample) -> asyncio.Task[_RequestResult]:
        task = self._inflight.get(key)
        if task is not None and not task.cancelled():
            return task
        task = asyncio.ensure_future(self._call(key, request, rubric, sample))
        self._inflight[key] = task
        return task

    async def _call(self, key: str, request: Any, rubric: Rubric, sample: Sample) -> _RequestResult:
        from rubric_studio.judges import judge_request

        if self._slots is None:
            self._slots = asyncio.Semaphore(self._limit)
        async with self._slots:
            outcome = await judge_request(self.judge, request, rubric, sample)
        valid = outcome.error is None and outcome.reply is not None
        if valid and self.cache is not None:
            reply = outcome.reply
            self.cache.put(key, self.config.provider, self.config.model, reply.text, reply.input_tokens, reply.output_tokens)
        usage = (outcome.calls, outcome.input_tokens, outcome.output_tokens, outcome.cost_usd)
        return _RequestResult(outcome.results, valid=valid, usage=usage)

    def _collect(self, task: asyncio.Task[_RequestResult], key: str, usage: Usage) -> _RequestResult:
        self._inflight.pop(key, None)
        try:
            outcome = task.result()
        except asyncio.CancelledError:
            return _RequestResult({}, valid=False, failure="cancelled: superseded by a newer edit")
        except Exception as exc:  # a bug in a provider must not take down the run
            outcome = _RequestResult({}, valid=False, failure=f"internal error: {type(exc).__name__}: {exc}")
        if outcome.usage is not None:
            usage.add_call(*outcome.usage)
            outcome.usage = None  # count each paid call once
        if self._use_memo:
            self._memo[key] = outcome
        return outcome

    def _cancel_unwanted(self, wanted: set[str]) -> None:
        for key, task in list(self._inflight.items()):
            if key not in wanted and not task.done():
                task.cancel()
                self.cancelled_requests += 1
                del self._inflight[key]

    # -- cells -------------------------------------------------------------
    def _cell_from(self, criterion: Criterion, sample_id: str, work: _Work, resolved: dict[str, _RequestResult]) -> CriterionResult:
        keys = work.cell_keys.get((sample_id, criterion.key), [])
        votes: list[CriterionResult] = []
        for key in keys:
            outcome = resolved.get(key)
            if outcome is None:
                return CriterionResult(criterion.key, Status.PENDING, source="none")
            result = outcome.results.get(criterion.key)
            if result is None:
                reason = outcome.failure or f"judge gave no result for {criterion.key}"
                result = CriterionResult(criterion.key, Status.ERROR, source="judge", error=reason)
            votes.append(result)
        if not votes:
            return CriterionResult(criterion.key, Status.PENDING, source="none")
        if len(votes) == 1:
            return votes[0]
        return aggregate_votes(criterion, votes)

    def _score(self, rubric: Rubric, sample_id: str, cells: dict[str, CriterionResult]) -> SampleResult:
        return SampleResult.from_outcome(sample_id, score_sample(rubric, cells))


def aggregate_votes(criterion: Criterion, votes: list[CriterionResult]) -> CriterionResult:
    """One cell from K repeated judgements: majority (checklist) or median (analytic)."""
    errors = [v for v in votes if v.status is Status.ERROR]
    if errors:
        return CriterionResult(
            criterion.key,
            Status.ERROR,
            source=errors[0].source,
            error=f"{len(errors)} of {len(votes)} repeats failed: {errors[0].error}",
            votes=[str(v.status) for v in votes],
        )
    source = "cache" if all(v.source == "cache" for v in votes) else "judge"
    if criterion.kind == "analytic":
        raws = [v.raw_score if v.raw_score is not None else (v.score or 0.0) * 10 for v in votes]
        median = float(statistics.median(raws))
        score = median / 10
        status = cell_status(criterion, score)
        statuses = [cell_status(criterion, r / 10) for r in raws]
        agreement = statuses.count(status) / len(statuses)
        representative = min(votes, key=lambda v: abs((v.raw_score or 0) - median))
        return CriterionResult(
            criterion.key, status, score=score, raw_score=median, rationale=representative.rationale,
            evidence=representative.evidence, source=source, votes=raws, agreement=agreement,
            tie=False, detail=representative.detail,
        )
    met = sum(1 for v in votes if v.status is Status.MET)
    unmet = len(votes) - met
    tie = met == unmet
    status = Status.MET if met > unmet else Status.UNMET
    representative = next(v for v in votes if v.status is status) if not tie else votes[0]
    rationale = representative.rationale
    if tie:
        rationale = f"[tie {met}–{unmet}: counted as unmet] {rationale}"
    return CriterionResult(
        criterion.key, status, score=1.0 if status is Status.MET else 0.0, raw_score=None, rationale=rationale,
        evidence=representative.evidence, source=source, votes=[str(v.status) for v in votes],
        agreement=max(met, unmet) / len(votes), tie=tie, detail=representative.detail,
    )
