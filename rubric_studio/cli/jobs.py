"""``grade --batch-api`` and ``rubric-studio jobs status|wait|cancel``: provider Batch API jobs.

``grade --batch-api`` plans the judge requests the cache lacks, resumes the uncollected jobs
that already carry some of them, submits the rest as a job (see
:mod:`rubric_studio.engine.batch._run`), waits for it (unless ``--no-wait``) and prints the
report exactly as a live ``grade`` would. ``jobs wait`` collects a job submitted earlier —
after ``--no-wait``, Ctrl-C or a machine that stopped — and ``jobs cancel`` cancels one.
Exit codes as ``grade``; an unknown job or an unusable job file exits 2.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from argparse import Namespace
from pathlib import Path
from typing import Any

from rubric_studio.cli.common import echo, fail_usage, print_problems
from rubric_studio.core.problems import RubricError


def _wait_command(job_id: str, cache_arg: str | None) -> str:
    extra = f" --cache-path {shlex.quote(cache_arg)}" if cache_arg else ""
    return f"rubric-studio jobs wait {job_id}{extra}"


def _progress(jobs: list[Any], statuses: dict[str, Any]) -> None:
    """One line on stderr while waiting, redrawn in place (only on a terminal)."""
    if not jobs or not sys.stderr.isatty():
        return
    known = list(statuses.values())
    succeeded, errored = sum(s.succeeded for s in known), sum(s.errored for s in known)
    processing = sum(s.processing for s in known)
    ended = sum(1 for s in known if s.ended)
    total = sum(len(job.batches) for job in jobs)
    names = ", ".join(job.id for job in jobs)
    line = (f"batch job {names}: {succeeded} succeeded, {errored} errored, {processing} processing "
            f"({ended}/{total} batches ended) {time.strftime('%H:%M:%S')}")  # fmt: skip
    sys.stderr.write("\r\x1b[2K" + line + ("\n" if ended == total else ""))
    sys.stderr.flush()


async def _collected_grader(run: Any, grader: Any, cache_arg: str | None) -> Any:
    """Wait for ``run``'s jobs, collect them, and a grader whose judge serves their replies."""
    from rubric_studio.engine.batch import PrefetchedJudge
    from rubric_studio.engine.grader import Grader

    try:
        statuses = await run.wait(_progress)
        collected = await run.collect(statuses)
    except asyncio.CancelledError:  # Ctrl-C: the jobs keep running at the provider
        for job in run.jobs:
            echo(f"\nstopped waiting; batch job {job.id} keeps running: {_wait_command(job.id, cache_arg)}", sys.stderr)
        raise
    finally:
        await run.aclose()
        await grader.judge.aclose()
    if run.stop_reason and run.jobs:
        echo(f"stopped waiting: {run.stop_reason}", sys.stderr)
    for job in run.jobs:
        unused = collected.unused.get(job.id, 0)
        note = f"; {unused} replies answer requests these inputs no longer make (not used)" if unused else ""
        echo(f"replies from batch job {job.id} ({job.label}, Batch API: cost at half price){note}", sys.stderr)

    def done() -> None:
        finished = {job.id for job in run.finish(collected)}
        _say_warnings(run)
        for job in run.jobs:
            if job.id not in finished and collected.unused.get(job.id):
                echo(f"batch job {job.id} also answers other samples and stays pending: "
                     f"{_wait_command(job.id, cache_arg)}", sys.stderr)  # fmt: skip

    judge = PrefetchedJudge(grader.config, collected, jobs=[job.id for job in run.jobs], on_done=done)
    return Grader(judge=judge, cache=grader.cache, allow_code=grader.allow_code, repeat=grader.repeat,
                  reuse_batch=grader.dispatch.reuse_batch)


def _batch_run(grader: Any, rubric: Any, samples: list[Any], inputs: Any) -> tuple[Any, dict]:
    from rubric_studio.engine.batch import BatchRun, JobStore, plan_requests

    plan = plan_requests(grader, rubric, samples)
    return BatchRun(JobStore(grader.cache.path), grader.judge, plan, inputs, grader.deadline), plan


async def through_batch_api(args: Namespace, grader: Any, rubric: Any, samples: list[Any], samples_path: str) -> Any:
    """Submit (or resume) the jobs for what the cache lacks; the grader to report with, or an exit code."""
    from rubric_studio.engine.batch import Inputs, resolved

    if grader.judge is None:
        return grader  # no judge: the run says why its judge cells are unjudged
    from rubric_studio.judges.providers import no_batch_api

    no_batch = no_batch_api(grader.config)
    if no_batch is not None:
        await grader.aclose()
        return fail_usage(no_batch)
    inputs = Inputs(rubric, resolved(rubric.path), resolved(samples_path), args.extract, grader.repeat,
                    grader.dispatch.reuse_batch)
    run, plan = _batch_run(grader, rubric, samples, inputs)
    if not plan:
        what = "every judge cell is in the cache" if rubric.judge_criteria else "no judge criteria"
        echo(f"{what}: nothing to submit", sys.stderr)
        return grader
    for problem in run.resume():
        echo(f"warning: {problem}", sys.stderr)
    for job in run.jobs:
        echo(f"resuming batch job {job.id} (submitted {_when(job.created)}; nothing is sent twice)", sys.stderr)
    keys = run.uncovered()
    if keys:
        try:
            job = await run.submit(keys)
        except asyncio.CancelledError:  # Ctrl-C: what the provider accepted is in the job file
            echo("\ninterrupted while submitting: batches the provider accepted are saved; the same command "
                 "resumes them", sys.stderr)  # fmt: skip
            raise
        if job is not None:
            echo(f"submitted batch job {job.id}: {len(job.requests)} requests in {len(job.batches)} provider "
                 f"batch(es) to {job.label}", sys.stderr)  # fmt: skip
    _say_unsent(run)
    if args.no_wait:
        await run.aclose()
        await grader.aclose()
        for job in run.jobs:
            echo(f"batch job {job.id} submitted; collect it with: {_wait_command(job.id, args.cache_path)}")
        return 3 if run.unsent else 0
    return await _collected_grader(run, grader, args.cache_path)


def _say_warnings(run: Any) -> None:
    for warning in run.warnings:
        echo(f"warning: {warning}", sys.stderr)
    run.warnings.clear()


def _say_unsent(run: Any) -> None:
    _say_warnings(run)
    if run.unsent:
        reasons = list(dict.fromkeys(error.message for error in run.unsent.values()))
        echo(f"{len(run.unsent)} requests not submitted: {reasons[0]}", sys.stderr)


def _when(created: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(created))


# -- rubric-studio jobs ----------------------------------------------------------------


def run(args: Namespace) -> int:
    from rubric_studio.engine.batch import JobFileError, JobStore
    from rubric_studio.engine.cache import default_cache_path

    store = JobStore(args.cache_path or default_cache_path())
    try:
        if args.action == "status":
            return asyncio.run(_status(store, args.job, args.base_url))
        job = store.load(args.job) if args.job else _default_job(store, args.action)
        if args.action == "cancel":
            return asyncio.run(_cancel(store, job, args.base_url))
        return asyncio.run(_wait(args, store, job))
    except JobFileError as exc:
        return fail_usage(str(exc))
    except RubricError as exc:
        print_problems(exc.problems)
        return 2


def _default_job(store: Any, action: str) -> Any:
    """The job ``jobs wait`` / ``jobs cancel`` act on when none is named."""
    from rubric_studio.engine.batch import JobFileError

    jobs, problems = store.scan()
    for problem in problems:
        echo(f"warning: {problem}", sys.stderr)
    pending = [job for job in jobs if job.pending]
    if not pending:
        raise JobFileError(f"no pending batch job in {store.folder}")
    if action == "cancel" and len(pending) > 1:
        raise JobFileError(f"{len(pending)} pending batch jobs: name the one to cancel ({', '.join(j.id for j in pending)})")
    if len(pending) > 1:
        echo(f"also pending: {', '.join(job.id for job in pending[:-1])}", sys.stderr)
    return pending[-1]


def _client(job: Any, chosen_url: str | None) -> Any:
    """The Batch API client for ``job``'s judge (key from the environment), or why there is none."""
    from dataclasses import replace

    from rubric_studio.engine.batch import endpoint_refusal
    from rubric_studio.judges import NoJudge, make_judge, resolve_judge
    from rubric_studio.judges.batch_api import batch_client

    refusal = endpoint_refusal(job, chosen_url)
    if refusal is not None:
        return refusal
    keyed = resolve_judge(None, cli_model=job.label, cli_base_url=job.config.base_url)
    if isinstance(keyed, NoJudge):
        return f"cannot reach {job.label}: {keyed.reason}"
    return batch_client(make_judge(replace(job.config, api_key=keyed.api_key, extra=keyed.extra)))


async def _status(store: Any, job_id: str | None, chosen_url: str | None) -> int:
    """List jobs (or one) with their provider status; 2 for unusable job files, 3 if a status could not be read."""
    jobs, problems = ([store.load(job_id)], []) if job_id else store.scan()
    for problem in problems:
        echo(problem, sys.stderr)
    if not jobs and not problems:
        echo(f"no batch jobs in {store.folder}")
    unreadable = False
    for job in jobs:
        echo(f"{job.id}  {job.state:<9}  {job.label}  {len(job.requests)} requests  {_when(job.created)}  "
             f"{job.rubric_path}")  # fmt: skip
        if job.pending:
            unreadable |= not await _batch_lines(job, chosen_url)
    return 2 if problems else 3 if unreadable else 0


async def _batch_lines(job: Any, chosen_url: str | None) -> bool:
    """One line per provider batch of ``job``; False when some status could not be read."""
    from rubric_studio.judges.base import JudgeError

    client = _client(job, chosen_url)
    if isinstance(client, str):
        echo(f"    provider status unavailable: {client}")
        return False
    ok = True
    try:
        for batch in job.batches:
            try:
                status = await client.status(batch.id)
            except JudgeError as exc:
                echo(f"    {batch.id}: status unavailable: {exc.message}")
                ok = False
                continue
            echo(f"    {batch.id}: {status.detail}, {status.succeeded} succeeded, {status.errored} errored, "
                 f"{status.processing} processing")  # fmt: skip
    finally:
        await client.aclose()
    return ok


async def _cancel(store: Any, job: Any, chosen_url: str | None) -> int:
    """Ask the provider to cancel every batch of ``job``; what already finished stays collectable."""
    from rubric_studio.judges.base import JudgeError

    if not job.pending:
        return fail_usage(f"batch job {job.id} was collected already: nothing to cancel")
    client = _client(job, chosen_url)
    if isinstance(client, str):
        return fail_usage(f"cannot cancel {job.id}: {client}")
    failed = []
    try:
        for batch in job.batches:
            try:
                await client.cancel(batch.id)
            except JudgeError as exc:
                failed.append(f"{batch.id}: {exc.message}")
    finally:
        await client.aclose()
    for line in failed:
        echo(f"could not cancel {line}", sys.stderr)
    if len(failed) == len(job.batches):
        return 3
    job.state = "cancelled"
    store.save(job)
    echo(f"cancelled batch job {job.id}; requests answered before the cancel are billed: collect them with "
         f"rubric-studio jobs wait {job.id}")  # fmt: skip
    return 3 if failed else 0


async def _wait(args: Namespace, store: Any, job: Any) -> int:
    """Collect ``job`` (and any other pending job its inputs need) and print the report of its
    rubric over its samples (its pass rate corrected by the labels beside the rubric, as in
    ``grade``); a job collected already is reported from the cache."""
    from rubric_studio.cli.report import rate_labels, report_run
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.samples import load_samples
    from rubric_studio.engine.batch import BatchRun, Inputs, JobStore, job_grader, plan_requests

    for path, what in ((job.rubric_path, "rubric"), (job.samples_path, "samples")):
        if not Path(path).exists():
            return fail_usage(f"batch job {job.id}: its {what} {path} is gone (moved or deleted)")
    rubric = load_rubric(job.rubric_path)
    if rubric.content_hash() != job.rubric_hash:
        echo(f"warning: {job.rubric_path} changed since batch job {job.id} was submitted: cells of edited criteria "
             "are not in the job", sys.stderr)  # fmt: skip
    sample_set = load_samples(job.samples_path, extractor=job.extract)
    print_problems(sample_set.problems)
    grader = job_grader(job, rubric, args.allow_code, args.base_url)
    if isinstance(grader, str):
        return fail_usage(grader)
    if not job.pending:
        echo(f"batch job {job.id} was collected already: the report comes from the cache", sys.stderr)
    inputs = Inputs(rubric, job.rubric_path, job.samples_path, job.extract, job.repeat, job.reuse_batch)
    run = BatchRun(JobStore(job.cache_path), grader.judge, plan_requests(grader, rubric, sample_set.samples), inputs,
                   grader.deadline)
    for problem in run.resume(also=[job] if job.pending else []):
        echo(f"warning: {problem}", sys.stderr)
    grader = await _collected_grader(run, grader, args.cache_path)
    labels = rate_labels(job.rubric_path, None, sample_set.samples)  # those beside the rubric, as grade reads them
    return await report_run(args, grader, rubric, sample_set, None, rate_labels=labels)
