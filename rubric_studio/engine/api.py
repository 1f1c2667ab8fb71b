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
from rubric_studio.core.trust import (
    NO_TRUST,
    TRUST_ALL,
    Gate,
    Trust,
    UserJudge,
    code_gates,
    rubric_gates,
    untrusted,
)
from rubric_studio.engine.cache import CacheUnavailable, ReplyCache
from rubric_studio.engine.grader import EventSink, Grader
from rubric_studio.engine.report import Report, Summary
from rubric_studio.engine.usage import Usage


def user_choices(
    judge: str | None = None, base_url: str | None = None, env: Mapping[str, str] | None = None
) -> UserJudge:
    """The user's own judge choices (:class:`~rubric_studio.core.trust.UserJudge`): flags, user config, environment."""
    from rubric_studio.judges.config import user_judge
    from rubric_studio.judges.user_config import load_user_config

    return user_judge(judge, base_url, os.environ if env is None else env, load_user_config())


def effective_trust(rubric: Rubric, allow_code: bool = False, trust: Trust | None = None) -> Trust:
    """What is trusted of ``rubric``: everything with ``allow_code``, else the trust store's
    values for its path plus ``trust`` (e.g. what the user trusted in this session)."""
    if allow_code:
        return TRUST_ALL
    from rubric_studio.engine.trust_store import load_trust

    return load_trust(rubric.path).plus(trust or NO_TRUST)


def untrusted_settings(
    rubric: Rubric,
    *,
    judge: str | None = None,
    base_url: str | None = None,
    allow_code: bool = False,
    trust: Trust | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Gate]:
    """The trust-gated settings of ``rubric`` that will not take effect (what to warn about or offer to trust)."""
    gates = rubric_gates(rubric, user_choices(judge, base_url, env))
    return untrusted(gates, effective_trust(rubric, allow_code, trust))


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
    from rubric_studio.judges.user_config import load_user_config

    if (members := panel_members(rubric, judge)) is not None:  # one grader per member, these same options
        return _panel_grader(rubric, members, judge, {k: v for k, v in locals().items() if k in _GRADER_OPTIONS})
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


_GRADER_OPTIONS = ("base_url", "concurrency", "repeat", "use_cache", "cache_path", "allow_code", "trust", "batch",
                   "env", "memo", "timeout", "deadline", "reuse_batch")


def _panel_grader(rubric: Rubric, members: list[Any], judge: str | None, options: dict[str, Any]) -> Any:
    from rubric_studio.engine.panel import make_panel_grader

    return make_panel_grader(rubric, members, make_grader, judge=judge, **options)


def panel_members(rubric: Rubric, judge: str | None) -> list[Any] | None:
    """The panel to grade with: ``--judge A,B,C`` (or ``A+B+C``), else the rubric's ``judge.panel``
    unless ``--judge`` names one judge; None for a single judge."""
    if judge is not None:
        from rubric_studio.core.panel import split_judges

        named = split_judges(judge)
        return named if len(named) > 1 else None
    if rubric.judge is not None and rubric.judge.panel:
        return list(rubric.judge.panel)
    return None


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


def code_trusted(rubric: Rubric, trust: Trust) -> bool:
    """True when ``rubric`` has code checks and ``trust`` covers every one of them."""
    gates = code_gates(rubric)
    return trust.everything or (bool(gates) and not untrusted(gates, trust))


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
