"""Batch API jobs: plan what the cache lacks, submit it, survive a stop, collect the replies.

A job is a JSON file in ``batch-jobs/`` beside the judge cache: provider, model and base URL
(never the key), the provider batch ids, and which cache key each request answers. So
``rubric-studio jobs wait`` — or running ``grade --batch-api`` again — picks a job up after
the process or the machine stopped, and a request already submitted is never submitted
twice. Collected replies go through the normal grader (:class:`PrefetchedJudge` serves them
as if they had just arrived): validated, cached and scored exactly like live replies, at
the batch price; a line that errored, expired or was cancelled is an ``error`` cell with
its reason.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from rubric_studio.judges.base import Judge, JudgeError, JudgeReply, JudgeRequest

POLL_START, POLL_MAX = 5.0, 60.0


@dataclass
class Job:
    """One submitted set of requests (one or more provider batches)."""

    id: str
    provider: str
    model: str
    base_url: str | None
    rubric_path: str | None
    rubric_hash: str
    samples_path: str | None
    batches: list[str] = field(default_factory=list)
    #: custom id -> cache key of the request it carries
    requests: dict[str, str] = field(default_factory=dict)
    state: str = "submitted"  # submitted | collected | cancelled
    created: float = field(default_factory=time.time)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)


class JobStore:
    """The job files beside a cache file."""

    def __init__(self, cache_path: str | Path):
        self.folder = Path(cache_path).parent / "batch-jobs"

    def save(self, job: Job) -> None:
        from rubric_studio.core.atomic import write_text_safely

        self.folder.mkdir(parents=True, exist_ok=True)
        write_text_safely(self.folder / f"{job.id}.json", json.dumps(asdict(job), indent=1))

    def load(self, job_id: str) -> Job:
        """The job ``job_id``; raises ValueError with a message a user can act on."""
        if not job_id.replace("-", "").isalnum():
            raise ValueError(f"no batch job {job_id!r} (job ids look like job-20261122-ab12cd)")
        path = self.folder / f"{job_id}.json"
        if not path.is_file():
            raise ValueError(f"no batch job {job_id!r} in {self.folder}")
        try:
            return Job.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}: not a batch job file ({exc})") from None

    def all(self) -> list[Job]:
        jobs = []
        for path in sorted(self.folder.glob("job-*.json")):
            try:
                jobs.append(self.load(path.stem))
            except ValueError:
                continue
        return sorted(jobs, key=lambda job: job.created)

    def pending_covering(self, keys: set[str], provider: str, model: str) -> Job | None:
        """A submitted, uncollected job for this judge that already carries some of ``keys``."""
        for job in reversed(self.all()):
            same_judge = (job.provider, job.model) == (provider, model)
            if job.state == "submitted" and same_judge and keys & set(job.requests.values()):
                return job
        return None


def new_job_id() -> str:
    return f"job-{time.strftime('%Y%m%d')}-{secrets.token_hex(3)}"


async def submit(judge: Any, requests: dict[str, JudgeRequest], store: JobStore, rubric: Any,
                 samples_path: str | None, limits: tuple[int, int] | None = None) -> Job:
    """Submit ``requests`` (cache key -> request), split at the provider's limits; the job is
    saved before and after each batch is created, so a stop never loses a submitted batch."""
    from rubric_studio.judges.batch_api import batch_client, bodies, split

    config = judge.config
    job = Job(new_job_id(), config.provider, config.model, config.base_url, rubric.path, rubric.content_hash(),
              samples_path)  # fmt: skip
    job.requests = {f"r{index}": key for index, key in enumerate(requests)}
    lines = bodies(judge, ((cid, requests[key]) for cid, key in job.requests.items()))
    store.save(job)
    client = batch_client(judge)
    for chunk in split(lines, config.provider, limits):
        job.batches.append(await client.submit(chunk))
        store.save(job)
    return job


async def wait(job: Job, judge: Any, on_status: Callable[[Job, list[Any]], None] | None = None) -> list[Any]:
    """Poll every batch of ``job`` until all have ended; returns their last statuses."""
    from rubric_studio.judges.batch_api import batch_client

    client = batch_client(judge)
    fixed = os.environ.get("RUBRIC_STUDIO_BATCH_POLL")
    delay = float(fixed) if fixed else POLL_START
    while True:
        statuses = [await client.status(batch_id) for batch_id in job.batches]
        if on_status is not None:
            on_status(job, statuses)
        if all(status.ended for status in statuses):
            return statuses
        await asyncio.sleep(delay)
        if not fixed:
            delay = min(POLL_MAX, delay * 1.5)


async def collect(job: Job, judge: Any, statuses: list[Any]) -> tuple[dict[str, JudgeReply], dict[str, JudgeError]]:
    """Replies and errors of every request of ``job``, keyed by cache key."""
    from rubric_studio.judges.batch_api import batch_client

    client = batch_client(judge)
    replies: dict[str, JudgeReply] = {}
    errors: dict[str, JudgeError] = {}
    for batch_id, status in zip(job.batches, statuses, strict=True):
        results = await client.results(batch_id)
        replies.update({job.requests[cid]: reply for cid, reply in results.replies.items() if cid in job.requests})
        errors.update({job.requests[cid]: error for cid, error in results.errors.items() if cid in job.requests})
        if status.state != "ended":
            why = {"expired": "the batch expired (24 h) before this request ran",
                   "cancelled": "the batch was cancelled before this request ran"}.get(
                status.state, f"the batch failed: {status.detail}")  # fmt: skip
            for key in job.requests.values():
                if key not in replies and key not in errors:
                    errors[key] = JudgeError("stopped", why)
    for key in job.requests.values():
        if key not in replies and key not in errors:
            errors[key] = JudgeError("malformed", "the batch returned no result for this request")
    return replies, errors


class PrefetchedJudge(Judge):
    """A judge whose replies already arrived through a Batch API: the grader validates,
    caches and scores them exactly as live replies (cost at the batch price)."""

    def __init__(self, live: Judge, replies: dict[str, JudgeReply], errors: dict[str, JudgeError],
                 on_done: Callable[[], None] | None = None):
        from rubric_studio.judges.batch_api import BATCH_PRICE

        super().__init__(replace(live.config, price_factor=BATCH_PRICE))
        self.replies, self.errors = replies, errors
        #: Called once the run through this judge is over (its replies are in the cache).
        self.on_done = on_done

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        key = request.cache_key(self.config)
        if key in self.replies:
            return self.replies[key]
        if key in self.errors:
            error = self.errors[key]
            raise JudgeError(error.kind, error.message, raw=error.raw)
        raise JudgeError("stopped", "not part of the batch job (a re-ask after a malformed batch reply, or a "
                                    "request added since): run grade --batch-api again, or grade live")  # fmt: skip
