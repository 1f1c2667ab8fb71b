"""One-shot entry points: build a grader from a rubric and options, grade, stream.

``grade_async`` is what pipelines call; the CLI uses :func:`make_grader` and
:func:`stream_grade` (constant memory over any number of samples).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from rubric_studio.core.rubric import Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.core.trust import Trust, code_trusted, effective_trust, load_user_config
from rubric_studio.engine.cache import CacheUnavailable, ReplyCache
from rubric_studio.engine.grader import EventSink, Grader
from rubric_studio.engine.report import Report

T = TypeVar("T")


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
    grader.unusable = resolved.reason if isinstance(resolved, NoJudge) and resolved.unusable else None
    return grader


def unusable_judge(grader: Any) -> str | None:
    """Why the judge of ``grader`` (or of one of its panel's members) can never work as written —
    a control character in its URL or API version — or None. A command says it and sends nothing."""
    found = getattr(grader, "unusable", None)
    for _, member in getattr(grader, "members", ()):
        found = found or unusable_judge(member)
    return found


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


def check_judge_text(judge: str | None) -> None:
    """Raise ValueError when ``judge`` (a ``judge=`` argument) is not ``provider:model`` with a known
    provider, or a panel of such: the grader would otherwise leave every judge cell unjudged with the
    reason, easy to miss in a notebook."""
    if judge is not None:
        from rubric_studio.core.panel import checked_judges

        checked_judges(str(judge), f"judge={judge!r}")


async def grade_async(
    rubric: Rubric,
    samples: Iterable[Sample | str | Mapping[str, Any]],
    *,
    judge: str | None = None,
    base_url: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
    repeat: int = 1,
    cache: bool = True,
    cache_path: str | Path | None = None,
    allow_code: bool = False,
    batch: bool = False,
    reuse_batch: bool | None = None,
    on_event: EventSink | None = None,
) -> Report:
    """Grade ``samples`` with ``rubric``: checks, and the judge criteria when a judge is set up.

    ``samples`` are :class:`Sample` objects, output strings (ids ``"1"``, ``"2"``, ... by position)
    or mappings with the keys of a samples file record (:func:`~rubric_studio.core.samples.as_samples`);
    a malformed one is a ValueError naming its index. ``judge`` is ``provider:model`` (ValueError
    otherwise) and, with ``base_url``, overrides the rubric's ``judge:``; else the user config and
    the environment choose, as on the command line. ``concurrency``, ``timeout`` and ``deadline``
    (seconds) override the rubric's ``judge.*``; ``repeat`` judges each cell K times;
    ``cache=False`` skips the reply cache (``cache_path`` moves it); ``allow_code`` trusts the
    rubric's code checks and gated settings; ``batch`` sends the judge calls through the provider's
    batch API; ``on_event`` receives progress events. Judges that cannot be reached leave their
    cells ``unjudged`` with the reason in :attr:`Report.judge_note`.

    Returns:
        A :class:`~rubric_studio.engine.report.Report`: per-sample verdicts, cells, usage and cost.
    Raises:
        ValueError: a malformed sample or ``judge``.
    """
    from rubric_studio.core.samples import as_samples

    check_judge_text(judge)
    items = as_samples(samples)
    grader = make_grader(rubric, judge=judge, base_url=base_url, concurrency=concurrency, timeout=timeout,
                         deadline=deadline, repeat=repeat, use_cache=cache, cache_path=cache_path,
                         allow_code=allow_code, batch=batch, reuse_batch=reuse_batch)
    try:
        return await grader.run(rubric, items, on_event)
    finally:
        await grader.aclose()


def grade(
    rubric: Rubric,
    samples: Iterable[Sample | str | Mapping[str, Any]],
    *,
    judge: str | None = None,
    base_url: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
    repeat: int = 1,
    cache: bool = True,
    cache_path: str | Path | None = None,
    allow_code: bool = False,
    batch: bool = False,
    reuse_batch: bool | None = None,
    on_event: EventSink | None = None,
) -> Report:
    """:func:`grade_async` for code without an event loop, and for code inside one that cannot await
    (a Jupyter cell): there the run goes to a worker thread with its own loop, and this call waits.

    Returns:
        A :class:`~rubric_studio.engine.report.Report`, as :func:`grade_async`.
    Raises:
        ValueError: a malformed sample or ``judge``.
    """
    options = dict(judge=judge, base_url=base_url, concurrency=concurrency, timeout=timeout, deadline=deadline,
                   repeat=repeat, cache=cache, cache_path=cache_path, allow_code=allow_code, batch=batch,
                   reuse_batch=reuse_batch, on_event=on_event)
    return run_blocking(lambda: grade_async(rubric, samples, **options))


def run_blocking(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to its end and return its result, from synchronous code.

    Without a running loop, ``asyncio.run``. With one (Jupyter runs cells inside its loop), that
    loop cannot be re-entered, so a worker thread runs the coroutine on a loop of its own. The
    coroutine is created where it runs, so none is left un-awaited if starting fails."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rubric-studio-sync") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


async def stream_grade(
    grader: Grader, rubric: Rubric, samples: Iterable[Sample], *, chunk: int = 256,
    on_event: EventSink | None = None,
) -> AsyncIterator[Report]:
    """Grade ``samples`` ``chunk`` at a time, yielding each chunk's report as soon as it is graded:
    memory stays flat over any number of samples. Sum the chunks' ``summary`` / ``usage`` for the totals."""
    batch: list[Sample] = []
    for sample in samples:
        batch.append(sample)
        if len(batch) >= chunk:
            yield await grader.run(rubric, batch, on_event)
            batch = []
    if batch:
        yield await grader.run(rubric, batch, on_event)
