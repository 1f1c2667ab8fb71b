"""Grading through a provider's Batch API: plan, submit or resume, wait, collect.

:func:`plan_requests` lists the requests a live run of the same grader would send now —
built by the grader itself (``build_requests`` with the resolved judge, cache keys, trust,
repeats, batch mode) and minus what the cache answers. A :class:`BatchRun` finds the
uncollected jobs that already carry some of them (:meth:`JobStore.pending_for`), submits
only the rest (split at the provider's limits; each batch recorded as soon as the provider
accepts it), polls with backoff, and downloads the results.

The results then go through a normal grading run: :class:`PrefetchedJudge`
(:mod:`.batch_replies`) answers each request with its downloaded reply (or raises the error
its line ended with), so replies are read, validated, cached, scored and reported exactly
like live ones, at the batch price. A reply is first checked with the live reader
(:func:`~rubric_studio.judges.run.read_reply`): a malformed one is an ``error`` cell, never
re-asked (a re-ask would be a live call the user did not ask for).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rubric_studio.engine.batch._jobs import (
    Job,
    JobStore,
    RequestRef,
    SubmittedBatch,
    endpoint_refusal,
    endpoint_seal,
    judge_fields,
    new_job_id,
)
from rubric_studio.engine.batch._replies import Collected, PrefetchedJudge, missing_result, not_in_a_job
from rubric_studio.judges.base import JudgeConfig, JudgeError, JudgeReply, JudgeRequest

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.core.samples import Sample
    from rubric_studio.engine.dispatch import RequestResult, Work
    from rubric_studio.engine.usage import Usage
    from rubric_studio.judges.batch_api import BatchJudge

__all__ = ["BatchRun", "Collected", "Inputs", "Planned", "PrefetchedJudge", "job_grader", "plan_requests",
           "poll_interval", "resolved"]

POLL_START, POLL_MAX, POLL_GROWTH = 5.0, 60.0, 1.5
#: Seconds between status polls, fixed (tests, impatient users); unset: POLL_START growing to POLL_MAX.
POLL_ENV = "RUBRIC_STUDIO_BATCH_POLL"
#: Status polls that may fail in a row (rate limits, 5xx, network) before waiting gives up.
POLL_FAILURES_TO_STOP = 10


class CacheLookup(Protocol):
    """The part of a grader's dispatcher planning reads: what the memo or cache already answers."""

    def lookup(self, key: str, request: Any, rubric: Rubric, sample: Sample, usage: Usage, *,
               remember: bool = True) -> RequestResult | None: ...


class PlanningGrader(Protocol):
    """What :func:`plan_requests` uses of a grader (an :class:`~rubric_studio.engine.grader.Grader`):
    its resolved judge, its dispatcher, and the requests a live run would build."""

    config: JudgeConfig | None
    dispatch: CacheLookup

    def _judge_work(self, rubric: Rubric, samples: list[Sample]) -> Work | None: ...


@dataclass
class Planned:
    """One request a live run would send: its cache key, the request, the sample it is built from."""

    key: str
    request: JudgeRequest
    sample: Any


@dataclass
class Inputs:
    """What a job records of the run that submitted it."""

    rubric: Any
    rubric_path: str
    samples_path: str
    extract: str = "last_assistant"
    repeat: int = 1
    #: The run's ``reuse_batch`` (see :class:`~rubric_studio.engine.batch._jobs.Job`).
    reuse_batch: bool = True


def plan_requests(grader: PlanningGrader, rubric: Rubric, samples: Sequence[Sample]) -> dict[str, Planned]:
    """The requests (by cache key) a live run of ``grader`` would send now, grouped as it would
    group them (batch mode: the uncached criteria of a sample and repeat in one request)."""
    from rubric_studio.engine.usage import Usage
    from rubric_studio.judges.prompts import batch_request

    work = grader._judge_work(rubric, list(samples))
    if work is None or grader.config is None:
        return {}
    config = grader.config
    usage = Usage()
    missing = [key for key, request in work.requests.items()
               if grader.dispatch.lookup(key, request, rubric, work.sample_for(key), usage, remember=False) is None]  # fmt: skip
    planned: dict[str, Planned] = {}
    for group in work.groups(missing, batch=config.mode == "batch"):
        sample, first = work.sample_for(group[0]), work.requests[group[0]]
        request = first if len(group) == 1 else batch_request(
            sample, [rubric.criterion(work.requests[key].criterion_ids[0]) for key in group], config,
            first.repeat_index)  # fmt: skip
        key = request.cache_key(config)
        planned[key] = Planned(key, request, sample)
    return planned


def poll_interval() -> float | None:
    """The fixed poll interval from :data:`POLL_ENV`, or None (back off)."""
    try:
        value = float(os.environ.get(POLL_ENV, ""))
    except ValueError:
        return None
    return value if 0 < value <= 3600 else None


class BatchRun:
    """The jobs that answer one run's planned requests: resumed, submitted, waited for, collected."""

    def __init__(self, store: JobStore, judge: BatchJudge, plan: dict[str, Planned], inputs: Inputs,
                 deadline: float | None = None):
        """``deadline``: seconds from now that submitting, waiting and collecting may take in all."""
        from rubric_studio.judges.batch_api import batch_client

        self.store, self.judge, self.plan, self.inputs = store, judge, plan, inputs
        self.client = batch_client(judge, deadline)
        self.jobs: list[Job] = []
        #: Planned requests that were not submitted, with the reason.
        self.unsent: dict[str, JudgeError] = {}
        #: Why waiting stopped before every batch ended (deadline, status unavailable), or None.
        self.stop_reason: str | None = None
        #: Problems saving job files (the run goes on; the user is told it cannot be resumed).
        self.warnings: list[str] = []

    def resume(self, also: Sequence[Job] = ()) -> list[str]:
        """Adopt the uncollected jobs carrying planned requests (and ``also``); unusable job files."""
        found, problems = self.store.pending_for(set(self.plan))
        self.jobs = list({job.id: job for job in [*also, *found]}.values())
        return problems

    def uncovered(self) -> list[str]:
        """Planned requests no adopted job carries."""
        covered = set().union(*(job.keys() for job in self.jobs)) if self.jobs else set()
        return [key for key in self.plan if key not in covered]

    async def submit(self, keys: Sequence[str], limits: tuple[int, int] | None = None) -> Job | None:
        """Submit ``keys`` as a new job, in batches within the provider's limits; each batch is
        saved in the job file the moment the provider accepts it. None if nothing was accepted."""
        from rubric_studio.judges.batch_api import line_error, split

        config, inputs = self.judge.config, self.inputs
        limits = limits or self.client.limits
        unwritable = self._unwritable()
        if unwritable:  # a batch that cannot be recorded could be paid for twice: send nothing
            self.unsent.update({key: line_error("request", f"not submitted: {unwritable}", requests=0) for key in keys})
            return None
        job = Job(new_job_id(), judge_fields(config), self.store.cache_path, inputs.rubric_path,
                  inputs.rubric.content_hash(), inputs.samples_path, inputs.extract, inputs.repeat,
                  reuse_batch=inputs.reuse_batch)  # fmt: skip
        job.endpoint_seal = endpoint_seal(job.id, config)
        lines, refs = self._encode(keys, limits)
        chunks = split([(cid, len(line)) for cid, line in lines.items()], limits)
        for index, chunk in enumerate(chunks):
            try:
                batch_id = await self.client.submit(job.id, [lines[cid] for cid in chunk])
            except JudgeError as exc:
                for rest in chunks[index:]:
                    self.unsent.update({refs[cid].key: line_error(exc.kind, f"not submitted: {exc.message}", requests=0)
                                        for cid in rest})  # fmt: skip
                break
            job.requests.update({cid: refs[cid] for cid in chunk})
            job.batches.append(SubmittedBatch(batch_id, chunk))
            self._save(job)
        if not job.batches:
            return None
        self.jobs.append(job)
        return job

    def _encode(self, keys: Sequence[str], limits: tuple[int, int]) -> tuple[dict[str, bytes], dict[str, RequestRef]]:
        """Each request as its batch line (the live judge's body), by custom id, and what it answers.
        A request too large for any batch is not submitted (said in :attr:`unsent`)."""
        from rubric_studio.judges.batch_api import line_error, too_large

        lines: dict[str, bytes] = {}
        refs: dict[str, RequestRef] = {}
        for number, key in enumerate(keys):
            planned, custom_id = self.plan[key], f"r{number}"
            line = self.client.encode(custom_id, self.judge.body(planned.request))
            if too_large(len(line), limits):
                self.unsent[key] = line_error(
                    "request", f"not submitted: this request ({len(line) / 1e6:.1f} MB) is larger than a batch may be "
                    f"({limits[1] / 1e6:.0f} MB)", requests=0)  # fmt: skip
                continue
            lines[custom_id] = line
            refs[custom_id] = RequestRef(key, planned.sample.id, list(planned.request.criterion_ids))
        return lines, refs

    def _unwritable(self) -> str | None:
        """Why job files cannot be written beside the cache, or None."""
        try:
            self.store.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return f"cannot create {self.store.folder}: {exc.strerror or exc}"
        if not os.access(self.store.folder, os.W_OK | os.X_OK):
            return f"cannot write batch job files in {self.store.folder}"
        return None

    def _save(self, job: Job) -> None:
        """Write ``job``'s file; if that fails the run goes on with the job in memory, and says so."""
        try:
            self.store.save(job)
        except OSError as exc:
            self.warnings.append(f"cannot save batch job {job.id} in {self.store.folder} ({exc}): "
                                 "if this run stops, the job cannot be resumed")  # fmt: skip

    async def wait(self, on_status: Callable[[list[Job], dict[str, Any]], None] | None = None,
                   deadline_at: float | None = None) -> dict[str, Any]:
        """Poll until every batch ended (or the deadline passed, or status stayed unavailable:
        :attr:`stop_reason` says which); the last status of each batch."""
        deadline_at = deadline_at if deadline_at is not None else self.client.deadline_at
        statuses: dict[str, Any] = {}
        fixed = poll_interval()
        delay, failures = fixed or POLL_START, 0
        while True:
            try:
                await self._poll(statuses)
                failures = 0
            except JudgeError as exc:
                failures += 1
                if not exc.retryable or failures >= POLL_FAILURES_TO_STOP:
                    self.stop_reason = f"its status could not be read: {exc.message}"
                    return statuses
            if on_status is not None:
                on_status(self.jobs, statuses)
            if all(batch.id in statuses and statuses[batch.id].ended for batch in self._batches()):
                return statuses
            left = None if deadline_at is None else deadline_at - time.monotonic()
            if left is not None and left <= 0:
                self.stop_reason = "the run's deadline passed (judge.deadline / --deadline)"
                return statuses
            await asyncio.sleep(delay if left is None else min(delay, left))
            delay = fixed or min(POLL_MAX, delay * POLL_GROWTH)

    def _batches(self) -> list[SubmittedBatch]:
        return [batch for job in self.jobs for batch in job.batches]

    async def _poll(self, statuses: dict[str, Any]) -> None:
        from rubric_studio.judges.batch_api import BatchStatus

        for batch in self._batches():
            if batch.id in statuses and statuses[batch.id].ended:
                continue
            try:
                statuses[batch.id] = await self.client.status(batch.id)
            except JudgeError as exc:
                if exc.status != 404:
                    raise
                statuses[batch.id] = BatchStatus("failed", detail=f"the provider does not know batch {batch.id}: "
                                                                  f"{exc.message}")  # fmt: skip

    async def collect(self, statuses: dict[str, Any]) -> Collected:
        """Every planned request's reply or error, from the jobs' results (validated like live replies)."""
        out = Collected()
        for job in self.jobs:
            finished = True
            for batch in job.batches:
                finished &= await self._collect_batch(job, batch, statuses.get(batch.id), out)
            if finished:
                out.finished.add(job.id)
        for key, error in self.unsent.items():
            out.errors.setdefault(key, error)
        for key in self.plan:
            if key not in out.replies and key not in out.errors:
                out.errors[key] = not_in_a_job()
        return out

    async def _collect_batch(self, job: Job, batch: SubmittedBatch, status: Any, out: Collected) -> bool:
        """Read one batch into ``out``; False when it has not ended or its results are out of reach for now."""
        from rubric_studio.judges.batch_api import BatchResults, line_error

        if status is None or not status.ended:
            why = self.stop_reason or "the batch has not ended"
            hint = f"batch job {job.id} keeps running: collect it with rubric-studio jobs wait {job.id}"
            for cid in batch.custom_ids:
                self._take(job, cid, line_error("stopped", f"not judged yet: {why}; {hint}", requests=0), out)
            return False
        results, finished = BatchResults(), True
        if status.state != "failed":
            try:
                results = await self.client.results(batch.id)
            except JudgeError as exc:
                finished = exc.kind == "request"  # gone for good (404, 410): the job is over
                for cid in batch.custom_ids:
                    self._take(job, cid, line_error(exc.kind, f"batch results unavailable: {exc.message}"), out)
                return finished
        for cid in batch.custom_ids:
            outcome = results.replies.get(cid) or results.errors.get(cid) or missing_result(status)
            if isinstance(outcome, JudgeReply):
                outcome.wire = {**outcome.wire, "batch": {"job": job.id, "batch": batch.id, "custom_id": cid}}
            self._take(job, cid, outcome, out)
        return finished

    def _take(self, job: Job, custom_id: str, outcome: JudgeReply | JudgeError, out: Collected) -> None:
        """File one line's outcome under its cache key; a reply first passes the live reader."""
        from rubric_studio.judges.run import read_reply

        key = job.requests[custom_id].key
        planned = self.plan.get(key)
        if planned is None:
            if isinstance(outcome, JudgeReply):
                out.unused[job.id] = out.unused.get(job.id, 0) + 1
            return
        if key in out.replies:
            return
        if isinstance(outcome, JudgeReply):
            read = read_reply(planned.request, outcome.text, self.inputs.rubric, planned.sample)
            if read.problems and not read.cells:  # nothing usable: an error cell, never a re-ask
                problem = next(iter(read.problems.values()))
                error = JudgeError("malformed", f"malformed: {problem.message}", raw=outcome.text)
                error.input_tokens, error.output_tokens = outcome.input_tokens, outcome.output_tokens
                out.errors[key] = error
                return
            outcome.wire["request"] = self.judge.body(planned.request)  # what the inspector shows as sent
            out.replies[key] = outcome
            out.errors.pop(key, None)
        else:
            out.errors.setdefault(key, outcome)

    def finish(self, collected: Collected) -> list[Job]:
        """Mark collected the jobs this run used up: every batch read, and every reply used (or the
        run was over the job's own rubric and samples, so the rest can never be used)."""
        done = []
        for job in self.jobs:
            own = (job.rubric_path, job.samples_path) == (self.inputs.rubric_path, self.inputs.samples_path)
            if job.id in collected.finished and (own or not collected.unused.get(job.id)):
                job.state = "collected"
                self._save(job)
                done.append(job)
        return done

    async def aclose(self) -> None:
        await self.client.aclose()


def resolved(path: str | Path) -> str:
    """An absolute path, so a job is found and used from any working folder."""
    return str(Path(path).expanduser().resolve())


def job_grader(job: Job, rubric: Any, allow_code: bool = False, chosen_url: str | None = None) -> Any:
    """A grader with the judge ``job`` was sent with (key from the environment, as then), its
    cache and repeats, and code checks trusted as for a live run; or a reason there is none
    (no key, or an endpoint the user did not choose: see :func:`endpoint_refusal`)."""
    from rubric_studio.core.trust import code_trusted, effective_trust
    from rubric_studio.engine.cache import ReplyCache
    from rubric_studio.engine.grader import Grader
    from rubric_studio.judges import NoJudge, make_judge, resolve_judge

    refusal = endpoint_refusal(job, chosen_url)
    if refusal is not None:
        return refusal
    config = job.config
    # The key only: the job's own settings (prompt, parameters, endpoint) make the same requests again.
    keyed = resolve_judge(None, cli_model=job.label, cli_base_url=config.base_url)
    if isinstance(keyed, NoJudge):
        return f"cannot reach {job.label}: {keyed.reason}"
    judge = make_judge(replace(config, api_key=keyed.api_key))
    trusted = code_trusted(rubric, effective_trust(rubric, allow_code))
    return Grader(judge=judge, cache=ReplyCache(job.cache_path), allow_code=trusted, repeat=job.repeat,
                  reuse_batch=job.reuse_batch)
