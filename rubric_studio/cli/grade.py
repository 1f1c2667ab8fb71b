"""``rubric-studio grade``: grade samples headless, for CI and scripts.

Formats: table, json (the object of docs/reference/reports.md#grade, written sample by sample as
they are graded; constant memory), jsonl (one line per sample as it is graded, then a summary line;
constant memory), markdown, junit (failure messages name
the criteria that failed) and html (one self-contained page). Whatever the format, a
transient progress bar shows on stderr when stderr is a terminal (see ``progress``).
Exit codes: 0 all pass, 1 some fail or ungraded, 2 bad input, 3 cells errored.
"""

from __future__ import annotations

import asyncio
import sys
from argparse import Namespace
from pathlib import Path

from rubric_studio.cli.common import echo, fail_usage, print_problems, say_warnings
from rubric_studio.cli.report import report_run, say_member_failures, say_stopped
from rubric_studio.core.problems import Problem, RubricError


def resolve_inputs(args: Namespace):
    """Rubric and samples source from the arguments; raises RubricError."""
    from rubric_studio.core.discovery import find_samples_for, named_link_warning, refuse_found_elsewhere
    from rubric_studio.core.loading import load_rubric

    rubric = load_rubric(args.rubric)
    if args.samples:
        if (link := named_link_warning(args.samples)) is not None:
            echo(f"warning: {link}", sys.stderr)
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
    if args.judge is not None:  # one judge or a panel: every member checked before any call
        from rubric_studio.core.panel import checked_judges

        checked_judges(args.judge, "--judge")
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
    from rubric_studio.core.trust import untrusted_settings, warning_line

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
        if args.format in ("jsonl", "json") and not args.batch_api:
            return asyncio.run(_run_streaming(args, rubric, samples_path, options))
        return asyncio.run(_run_whole(args, rubric, samples_path, options, labels))
    except RubricError as exc:
        print_problems(exc.problems)
        return 2


async def _run_whole(args: Namespace, rubric, samples_path: Path, options: dict, labels) -> int:
    from rubric_studio.cli.report import rate_labels as pass_rate_labels
    from rubric_studio.core.samples import load_samples
    from rubric_studio.engine.api import make_grader, unusable_judge

    sample_set = load_samples(samples_path, extractor=args.extract, follow_links=args.allow_code)
    print_problems(sample_set.problems)
    rate_labels = pass_rate_labels(args.rubric, args.labels, sample_set.samples)
    grader = make_grader(rubric, **options)
    if (unusable := unusable_judge(grader)) is not None:
        await grader.aclose()
        return fail_usage(unusable)
    say_warnings(grader)
    if getattr(args, "batch_api", False) and getattr(grader, "members", None):
        await grader.aclose()
        return fail_usage("--batch-api submits one judge's requests; grade a judge panel without it")
    if getattr(args, "batch_api", False):
        from rubric_studio.cli.jobs import through_batch_api

        grader = await through_batch_api(args, grader, rubric, sample_set.samples, str(samples_path))
        if isinstance(grader, int):  # submitted, not waited for (--no-wait), or refused
            return grader
    try:
        return await report_run(args, grader, rubric, sample_set, labels, rate_labels=rate_labels)
    finally:
        say_warnings(grader)


async def _run_streaming(args: Namespace, rubric, samples_path: Path, options: dict) -> int:
    """``--format jsonl`` and ``--format json``: each chunk of samples is written as soon as it
    is graded, and dropped (100,000 samples in constant memory)."""
    from rubric_studio.cli.output import streamed_output
    from rubric_studio.cli.progress import progress_bar
    from rubric_studio.cli.report import JsonlSink, JsonSink, StreamedRateLabels
    from rubric_studio.core.samples import Sample, iter_samples
    from rubric_studio.engine.api import make_grader, stream_grade, unusable_judge

    rates = StreamedRateLabels(args.rubric, args.labels, rubric)
    if not args.labels:
        print_problems(rates.problems)  # those of --labels were said already

    def only_samples():
        for item in iter_samples(samples_path, extractor=args.extract, follow_links=args.allow_code):
            if isinstance(item, Sample):
                rates.saw(item)
                yield item
            else:
                print_problems([item])

    grader = make_grader(rubric, memo=False, **options)
    if (unusable := unusable_judge(grader)) is not None:
        await grader.aclose()
        return fail_usage(unusable)
    say_warnings(grader)
    grader.one_invocation()  # one breaker and one deadline across the chunks
    try:
        with streamed_output(args.output, replace_atomically=args.format == "json") as out:
            sink = (JsonSink if args.format == "json" else JsonlSink)(out, rubric, rates)
            with progress_bar(args, None, streaming=True) as bar:
                async for report in stream_grade(grader, rubric, only_samples(), on_event=bar):
                    sink.add(report, grader.last_stopped)
                    if bar is not None:
                        bar.chunk_done(len(report.samples))
            sink.finish()
    finally:
        say_warnings(grader)
        await grader.aclose()
    say_stopped(sink.stopped)
    say_member_failures(sink.usage)
    return sink.exit_code()
