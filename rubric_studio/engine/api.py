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
from rubric_studio.core.samples._samples import Sample
from rubric_studio.core.trust import Trust, code_trusted, effective_trust, load_user_config
from rubric_studio.engine.cache import CacheUnavailable, ReplyCache
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
    trust: Trust | None = None,
    batch: bool = False,
    env: Mapping[str, str] | None = None,
    memo: bool = True,
    timeout: float | None = None,
    deadline: float | None = None,
    reuse_batch: bool | None = None,
) -> Grader:
    """A grader for ``rubric``: the judge resolved from the rubric, flags, user config and environment.

    Trust (:mod:`rubric_studio.core.trust`): ``allow_code`` trusts every gated setting of the
    rubric for this grader; otherwise what the trust store holds for the rubric's path, plus
    ``trust``. Code checks run only when every one of them is trusted. ``timeout`` and
    ``deadline`` (seconds) override the rubric's ``judge.timeout`` / ``judge.deadline``;
    ``reuse_batch`` (None: the rubric's ``judge.reuse_batch``) False judges again, one call per
    criterion, the cells whose cached verdict came from a batch call. ``grader.warnings`` holds
    what the user should hear once: rubric settings the provider is not sent, a cache that
    cannot be opened or written (grading goes on without it).
    """
    from rubric_studio.judges import NoJudge, make_judge, resolve_judge

    base_dir = Path(rubric.path).resolve().parent if rubric.path else None
    trusted = effective_trust(rubric, allow_code, trust)
    resolved = resolve_judge(
        rubric.judge, cli_model=judge, cli_base_url=base_url, env=os.environ if env is None else env,
        base_dir=base_dir, user_config=load_user_config(), trust=trusted,
    )  # fmt: skip
    if isinstance(resolved, NoJudge):
        judge_obj, reason = None, resolved.reason
    else:
        judge_obj, reason = make_judge(_with_overrides(resolved, batch, concurrency, timeout, deadline)), None
    warnings = _dropped_settings(rubric, judge_obj)
    cache = _open_cache(cache_path, warnings) if use_cache and judge_obj is not None else None
    if reuse_batch is None:
        reuse_batch = rubric.judge.reuse_batch if rubric.judge is not None else True
    grader = Grader(
        judge=judge_obj,
        no_judge_reason=reason,
        cache=cache,
        allow_code=code_trusted(rubric, trusted),
        repeat=repeat,
        concurrency=concurrency,
        memo=memo,
        reuse_batch=reuse_batch,
    )
    grader.warnings = warnings  # the cache reports a later write failure into the same list
    return grader


def _dropped_settings(rubric: Rubric, judge: Any) -> list[str]:
    """A warning per judge setting the rubric writes that its provider is not sent."""
    if judge is None or rubric.judge is None:
        return []
    from rubric_studio.judges.capabilities import dropped_settings

    return dropped_settings(judge.config, rubric.judge.model_fields_set)


def _with_overrides(config: Any, batch: bool, concurrency: int | None, timeout: float | None,
                    deadline: float | None) -> Any:
    """``config`` with the command line's mode, concurrency, timeout and deadline."""
    if batch:
        config = replace(config, mode="batch")
    if concurrency:
        config = replace(config, concurrency=concurrency)
    if timeout:
        config = replace(config, timeout=timeout)
    if deadline:
        config = replace(config, deadline=deadline)
    return config


def _open_cache(cache_path: str | Path | None, warnings: list[str]) -> ReplyCache | None:
    """The reply cache, or None (and a warning) when it cannot be opened."""
    try:
        return ReplyCache(cache_path, on_failure=warnings.append)
    except CacheUnavailable as exc:
        warnings.append(str(exc))
        return None


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
