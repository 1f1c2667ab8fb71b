"""One-shot entry points: build a grader from a rubric and options, grade, stream.

``grade_async`` is what pipelines call; the CLI uses :func:`make_grader` and
:func:`stream_grade` (constant memory over any number of samples).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from rubric_studio.core.results import SampleResult
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.cache import ReplyCache
from rubric_studio.engine.grader import EventSink, Grader
from rubric_studio.engine.report import Report, Summary
from rubric_studio.engine.usage import Usage


def make_grader(
    rubric: Rubric,
    *,
    judge: str | None = None,
    base_url: str | None = None,
    concurrency: int | None = None,
    repeat: int = 1,
    use_cache: bool = True,
    cache_path: str | Path | None = None,
    allow_code: bool = False,
    batch: bool = False,
    env: Mapping[str, str] | None = None,
    memo: bool = True,
) -> Grader:
    """A grader for ``rubric``: the judge resolved from the rubric, flags and environment."""
    from rubric_studio.judges import NoJudge, make_judge, resolve_judge

    base_dir = Path(rubric.path).resolve().parent if rubric.path else None
    resolved = resolve_judge(
        rubric.judge, cli_model=judge, cli_base_url=base_url, env=os.environ if env is None else env, base_dir=base_dir
    )
    if isinstance(resolved, NoJudge):
        judge_obj, reason = None, resolved.reason
    else:
        config = resolved
        if batch:
            config = replace(config, mode="batch")
        if concurrency:
            config = replace(config, concurrency=concurrency)
        judge_obj, reason = make_judge(config), None
    cache = ReplyCache(cache_path) if use_cache and judge_obj is not None else None
    return Grader(
        judge=judge_obj,
        no_judge_reason=reason,
        cache=cache,
        allow_code=allow_code,
        repeat=repeat,
        concurrency=concurrency,
        memo=memo,
    )


async def grade_async(
    rubric: Rubric, samples: Iterable[Sample], *, on_event: EventSink | None = None, **options: Any
) -> Report:
    """Grade ``samples`` with ``rubric`` (checks and judges); options as :func:`make_grader`."""
    grader = make_grader(rubric, **options)
    try:
        return await grader.run(rubric, list(samples), on_event)
    finally:
        await grader.aclose()


def grade(rubric: Rubric, samples: Iterable[Sample], **options: Any) -> Report:
    """Synchronous :func:`grade_async`."""
    return asyncio.run(grade_async(rubric, samples, **options))


async def stream_grade(
    grader: Grader, rubric: Rubric, samples: Iterable[Sample], *, chunk: int = 256
) -> AsyncIterator[tuple[list[SampleResult], Summary, Usage]]:
    """Grade in chunks, yielding each chunk's results; memory stays flat.

    Yields ``(results, running_summary, running_usage)`` after every chunk.
    """
    summary = Summary()
    usage = Usage()
    batch: list[Sample] = []

    async def flush() -> tuple[list[SampleResult], Summary, Usage]:
        report = await grader.run(rubric, batch)
        assert report.summary is not None
        summary.add(report.summary)
        usage.merge(report.usage)
        batch.clear()
        return report.samples, summary, usage

    for sample in samples:
        batch.append(sample)
        if len(batch) >= chunk:
            yield await flush()
    if batch:
        yield await flush()
