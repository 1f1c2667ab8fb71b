"""``rubric-studio grade``: grade samples headless, for CI and scripts.

Formats: table (rich), json (BRIEF §5's object), jsonl (one line per sample as it is
graded, then a summary line; constant memory), markdown, junit (failure messages name
the criteria that failed) and html (one self-contained page). Whatever the format, a
transient progress bar shows on stderr when stderr is a terminal (see ``progress``).
Exit codes: 0 all pass, 1 some fail or ungraded, 2 bad input, 3 cells errored.
"""

from __future__ import annotations

import asyncio
import json
import sys
from argparse import Namespace
from pathlib import Path

from rubric_studio.cli.common import echo, fail_usage, print_problems, say_warnings
from rubric_studio.cli.run_report import jsonl_tail, report_run, say_stopped
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.safe_text import json_safe


def resolve_inputs(args: Namespace):
    """Rubric and samples source from the arguments; raises RubricError."""
    from rubric_studio.core.discovery import find_samples_for, refuse_found_elsewhere
    from rubric_studio.core.loading import load_rubric

    rubric = load_rubric(args.rubric)
    if args.samples:
        return rubric, Path(args.samples)
    samples_path = find_samples_for(args.rubric)
    if samples_path is None:
        raise RubricError(
            [Problem(args.rubric, None, None, "no SAMPLES given and none found beside the rubric "
                     f"(looked for {Path(args.rubric).stem}.samples.jsonl/.yaml/.csv or a samples/ folder)")]
        )
    if not getattr(args, "allow_code", False):
        refuse_found_elsewhere(args.rubric, samples_path)
    return rubric, samples_path


def grader_options(args: Namespace) -> dict:
    if args.repeat < 1:
        raise ValueError("--repeat must be at least 1")
    if args.concurrency is not None and args.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    if getattr(args, "batch_api", False) and args.no_cache:
        raise ValueError("--batch-api needs the cache (its replies are collected into it); drop --no-cache")
    if getattr(args, "no_wait", False) and not getattr(args, "batch_api", False):
        raise ValueError("--no-wait goes with --batch-api")
    for flag in ("timeout", "deadline"):
        value = getattr(args, flag, None)
        if value is not None and not 0 < value <= 604800:
            raise ValueError(f"--{flag} must be a number of seconds above 0 (at most 604800)")
    return {
        "judge": args.judge,
        "base_url": args.base_url,
        "concurrency": args.concurrency,
        "repeat": args.repeat,
        "use_cache": not args.no_cache,
        "cache_path": args.cache_path,
        "allow_code": args.allow_code,
        "batch": args.batch,
        "timeout": getattr(args, "timeout", None),
        "deadline": getattr(args, "deadline", None),
        "reuse_batch": False if getattr(args, "no_reuse_batch", False) else None,
    }


def warn_untrusted(rubric, args: Namespace) -> None:
    """One line on stderr naming the rubric's settings that are not used because it is not trusted."""
    from rubric_studio.core.trust import warning_line
    from rubric_studio.engine.api import untrusted_settings

    blocked = untrusted_settings(rubric, judge=args.judge, base_url=args.base_url, allow_code=args.allow_code)
    if blocked:
        echo(warning_line(blocked), sys.stderr)


def run(args: Namespace) -> int:
    try:
        rubric, samples_path = resolve_inputs(args)
        options = grader_options(args)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    except ValueError as exc:
        return fail_usage(str(exc))
    warn_untrusted(rubric, args)
    labels = None
    if args.labels:
        from rubric_studio.core.labels import load_labels

        try:
            label_set = load_labels(args.labels, missing_ok=False)
        except RubricError as exc:
            print_problems(exc.problems)
            return 2
        print_problems(label_set.problems)
        labels = label_set.labels
    try:
        if args.format == "jsonl" and not args.batch_api:
            return asyncio.run(_run_streaming(args, rubric, samples_path, options))
        return asyncio.run(_run_whole(args, rubric, samples_path, options, labels))
    except RubricError as exc:
        print_problems(exc.problems)
        return 2


async def _run_whole(args: Namespace, rubric, samples_path: Path, options: dict, labels) -> int:
    from rubric_studio.core.samples import load_samples
    from rubric_studio.engine.api import make_grader

    sample_set = load_samples(samples_path, extractor=args.extract, follow_links=args.allow_code)
    print_problems(sample_set.problems)
    grader = make_grader(rubric, **options)
    say_warnings(grader)
    if getattr(args, "batch_api", False):
        from rubric_studio.cli.jobs import through_batch_api

        grader = await through_batch_api(args, grader, rubric, sample_set.samples, str(samples_path))
        if isinstance(grader, int):  # submitted, not waited for (--no-wait), or refused
            return grader
    try:
        return await report_run(args, grader, rubric, sample_set, labels)
    finally:
        say_warnings(grader)


class _Reporting:
    """The grader as ``stream_grade`` drives it, each chunk's events sent to ``on_event``
    (the progress bar), which ``stream_grade`` itself does not take."""

    def __init__(self, grader, on_event) -> None:
        self._grader = grader
        self._on_event = on_event

    def __getattr__(self, name: str):
        return getattr(self._grader, name)

    async def run(self, rubric, samples, on_event=None):
        return await self._grader.run(rubric, samples, on_event or self._on_event)


async def _run_streaming(args: Namespace, rubric, samples_path: Path, options: dict) -> int:
    from rubric_studio.cli.progress import progress_bar
    from rubric_studio.core.samples import Sample, iter_samples
    from rubric_studio.engine.api import make_grader, stream_grade

    problems: list[Problem] = []

    def only_samples():
        for item in iter_samples(samples_path, extractor=args.extract, follow_links=args.allow_code):
            if isinstance(item, Sample):
                yield item
            else:
                problems.append(item)
                print_problems([item])

    out = sys.stdout if args.output in (None, "-") else open(args.output, "w", encoding="utf-8")  # noqa: SIM115
    grader = make_grader(rubric, memo=False, **options)
    say_warnings(grader)
    grader.one_invocation()  # one breaker and one deadline across the chunks
    summary = usage = None
    stopped = None
    errored = 0
    try:
        with progress_bar(args, None, streaming=True) as bar:
            async for results, running_summary, running_usage in stream_grade(_Reporting(grader, bar), rubric,
                                                                               only_samples()):
                summary, usage = running_summary, running_usage
                stopped = stopped or grader.last_stopped
                for result in results:
                    errored += sum(1 for c in result.criteria if c.status == "error")
                    out.write(json_safe(json.dumps(result.to_dict(), ensure_ascii=False)) + "\n")
                if bar is not None:
                    bar.chunk_done(len(results))
        out.write(jsonl_tail(rubric, summary, usage, stopped) + "\n")
    finally:
        say_warnings(grader)
        await grader.aclose()
        if out is not sys.stdout:
            out.close()
    say_stopped(stopped)
    if summary is None or summary.samples == 0:
        return 2
    if errored:
        return 3
    return 0 if summary.passed == summary.samples else 1
