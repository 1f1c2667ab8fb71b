"""``grade --batch-api`` and ``rubric-studio jobs status|wait|cancel``: provider Batch API jobs.

``grade --batch-api`` submits the judge requests the cache lacks as a job (see
:mod:`rubric_studio.engine.jobs`), waits for it (unless ``--no-wait``) and prints the report
exactly as a live ``grade`` would. ``jobs wait`` collects a job submitted earlier — after a
``--no-wait``, a Ctrl-C or a machine that stopped — and ``jobs cancel`` cancels one.
Exit codes as ``grade``; an unknown job or an unusable job file exits 2.
"""

from __future__ import annotations

import asyncio
import sys
import time
from argparse import Namespace
from pathlib import Path
from typing import Any

from rubric_studio.cli.common import echo, fail_usage, print_problems
from rubric_studio.core.problems import RubricError


def _progress(job: Any, statuses: list[Any]) -> None:
    """One line on stderr while waiting (redrawn in place on a terminal)."""
    done = sum(s.done for s in statuses)
    failed = sum(s.failed for s in statuses)
    total = sum(s.total for s in statuses) or len(job.requests)
    states = ", ".join(sorted({s.state for s in statuses}))
    line = f"batch job {job.id}: {done}/{total} done, {failed} failed ({states}) {time.strftime('%H:%M:%S')}"
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[2K" + line)
        if all(s.ended for s in statuses):
            sys.stderr.write("\n")
        sys.stderr.flush()


async def collected_grader(job: Any, grader: Any, store: Any) -> Any:
    """Wait for ``job``, then a grader whose judge serves its replies (validated and cached as
    live replies when the run goes through them); the job is marked collected once that run is over."""
    from rubric_studio.engine.grader import Grader
    from rubric_studio.engine.jobs import PrefetchedJudge, collect, wait

    statuses = await wait(job, grader.judge, on_status=_progress)
    replies, errors = await collect(job, grader.judge, statuses)
    await grader.judge.aclose()
    echo(f"batch job {job.id}: {len(replies)} replies, {len(errors)} errors; cost at the batch price", sys.stderr)

    def collected() -> None:
        job.state = "collected"
        store.save(job)

    judge = PrefetchedJudge(grader.judge, replies, errors, on_done=collected)
    return Grader(judge=judge, cache=grader.cache, allow_code=grader.allow_code, repeat=grader.repeat)


async def through_batch_api(args: Namespace, grader: Any, rubric: Any, samples: list[Any], samples_path: str) -> Any:
    """Submit (or resume) the job for what the cache lacks; the grader to report with, or None."""
    from rubric_studio.engine.jobs import JobStore, submit

    if grader.judge is None:
        return grader  # no judge: the run says why its judge cells are unjudged
    needed = grader.uncached(rubric, samples)
    if not needed:
        echo("every judge cell is in the cache: nothing to submit", sys.stderr)
        return grader
    store = JobStore(grader.cache.path)
    job = store.pending_covering(set(needed), grader.config.provider, grader.config.model)
    if job is None:
        job = await submit(grader.judge, needed, store, rubric, samples_path)
        echo(f"submitted batch job {job.id}: {len(needed)} requests in {len(job.batches)} provider batch(es)",
             sys.stderr)
    else:
        echo(f"resuming batch job {job.id} (already submitted)", sys.stderr)
    if args.no_wait:
        echo(f"batch job {job.id} submitted; collect it with: rubric-studio jobs wait {job.id}")
        await grader.aclose()
        return None
    return await collected_grader(job, grader, store)


def run(args: Namespace) -> int:
    from rubric_studio.engine.cache import default_cache_path
    from rubric_studio.engine.jobs import JobStore

    store = JobStore(args.cache_path or default_cache_path())
    try:
        if args.action == "status":
            return asyncio.run(_status(store, args.job))
        job = store.load(args.job) if args.job else _latest_pending(store)
    except ValueError as exc:
        return fail_usage(str(exc))
    if args.action == "cancel":
        return asyncio.run(_cancel(store, job))
    try:
        return asyncio.run(_wait(args, store, job))
    except RubricError as exc:
        print_problems(exc.problems)
        return 2


def _latest_pending(store: Any) -> Any:
    pending = [job for job in store.all() if job.state == "submitted"]
    if not pending:
        raise ValueError(f"no pending batch job in {store.folder}")
    return pending[-1]


def _live_judge(job: Any) -> Any:
    """The judge a job was submitted with (key from the environment), or None."""
    from rubric_studio.judges import NoJudge, make_judge, resolve_judge

    resolved = resolve_judge(None, cli_model=f"{job.provider}:{job.model}", cli_base_url=job.base_url)
    return None if isinstance(resolved, NoJudge) else make_judge(resolved)


async def _status(store: Any, job_id: str | None) -> int:
    from rubric_studio.judges.batch_api import batch_client

    jobs = [store.load(job_id)] if job_id else store.all()
    if not jobs:
        echo(f"no batch jobs in {store.folder}")
    for job in jobs:
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(job.created))
        line = f"{job.id}  {job.state:<9}  {job.provider}:{job.model}  {len(job.requests)} requests  {created}"
        judge = _live_judge(job) if job.state == "submitted" else None
        if judge is not None:
            client = batch_client(judge)
            for batch_id in job.batches:
                status = await client.status(batch_id)
                line += f"\n    {batch_id}: {status.state}, {status.done}/{status.total} done, {status.failed} failed"
            await judge.aclose()
        echo(line)
    return 0


async def _cancel(store: Any, job: Any) -> int:
    from rubric_studio.judges.batch_api import batch_client

    judge = _live_judge(job)
    if judge is None:
        return fail_usage(f"cannot reach {job.provider}: set its API key to cancel {job.id}")
    try:
        for batch_id in job.batches:
            await batch_client(judge).cancel(batch_id)
    finally:
        await judge.aclose()
    job.state = "cancelled"
    store.save(job)
    echo(f"cancelled batch job {job.id}")
    return 0


async def _wait(args: Namespace, store: Any, job: Any) -> int:
    """Collect ``job`` into the cache and print the report of its rubric over its samples."""
    from rubric_studio.cli.grade import report_run
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.samples import load_samples
    from rubric_studio.engine.api import make_grader

    if job.state != "submitted":
        return fail_usage(f"batch job {job.id} is {job.state}")
    if not job.rubric_path or not job.samples_path or not Path(job.rubric_path).is_file():
        return fail_usage(f"batch job {job.id}: its rubric {job.rubric_path} is gone")
    rubric = load_rubric(job.rubric_path)
    if rubric.content_hash() != job.rubric_hash:
        echo("warning: the rubric changed since the job was submitted; replies to edited criteria are not used",
             sys.stderr)
    sample_set = load_samples(job.samples_path)
    grader = make_grader(rubric, judge=f"{job.provider}:{job.model}", base_url=job.base_url, cache_path=args.cache_path)
    if grader.judge is None:
        return fail_usage(f"cannot reach {job.provider}: {grader.no_judge_reason}")
    grader = await collected_grader(job, grader, store)
    args.extract = "last_assistant"
    return await report_run(args, grader, rubric, sample_set, None)
