"""Writing a finished grading run as a report: what ``grade`` prints, and ``jobs wait`` too
(a Batch API job's replies are reported exactly as a live run's).

``report_run`` grades the samples with a ready grader and writes the report in the chosen
format; :func:`jsonl_tail` is the closing line of ``--format jsonl``, shared with the
streaming ``grade``.
"""

from __future__ import annotations

import json
import sys
from argparse import Namespace

from rubric_studio.cli.common import echo, write_output
from rubric_studio.core.safe_text import json_safe


def jsonl_tail(rubric, summary, usage, stopped: str | None, batch_jobs: list[str] | None = None) -> str:
    """The closing line of ``--format jsonl``: rubric, summary, usage (and why judging stopped,
    and the Batch API jobs the replies came from)."""
    tail = {
        "rubric": {"name": rubric.name, "path": rubric.path, "hash": rubric.content_hash()},
        "summary": summary.to_dict() if summary else {"samples": 0},
        "usage": usage.to_dict() if usage else {},
        **({"judge_stopped": stopped} if stopped else {}),
        **({"batch_jobs": batch_jobs} if batch_jobs else {}),
    }
    return json.dumps(tail)


def say_stopped(reason: str | None) -> None:
    """Once, on stderr: why judging stopped before every call was sent."""
    if reason:
        echo(f"judging stopped: {reason}", sys.stderr)


def say_member_failures(usage) -> None:
    """On stderr, one line per judge panel member that errored (from the start, mid-run or on some
    cells): the member, how many cells it failed, why. Its cells were pooled over the other members,
    so the verdicts alone would not show it; the run exits 3."""
    for line, _ in usage.member_failures() if usage is not None else []:
        echo(f"error: {line}", sys.stderr)


async def report_run(args: Namespace, grader, rubric, sample_set, labels, *, rate_labels=None) -> int:
    """Grade ``sample_set`` with ``grader`` and write the report in ``args.format``; ``rate_labels``
    (by sample id) correct the pass rate in the summary."""
    from rubric_studio.cli.progress import progress_bar
    from rubric_studio.cli.report import _formats as formats

    grader.one_invocation()
    try:
        with progress_bar(args, len(sample_set.samples)) as on_event:
            report = await grader.run(rubric, sample_set.samples, on_event)
    finally:
        await grader.aclose()
    report.problems = [str(p) for p in sample_set.problems]
    if rate_labels:
        from rubric_studio.cli.report._pass_rate import whole_run_tally

        assert report.summary is not None
        report.summary.pass_rate = whole_run_tally(report.samples, rate_labels, rubric)
    if getattr(grader.judge, "on_done", None) is not None:  # replies from a batch job are in the cache now
        grader.judge.on_done()
    say_stopped(report.judge_stopped)
    say_member_failures(report.usage)
    batch_jobs = getattr(grader.judge, "batch_jobs", None)  # replies from the Batch API
    if args.format == "json":
        data = {**report.to_dict(), **({"batch_jobs": batch_jobs} if batch_jobs else {})}
        text = json_safe(json.dumps(data, indent=2, ensure_ascii=False))
    elif args.format == "jsonl":  # the whole report at once (a batch job's), in the streaming shape
        lines = [json_safe(json.dumps(sample.to_dict(), ensure_ascii=False)) for sample in report.samples]
        text = "\n".join([*lines, jsonl_tail(rubric, report.summary, report.usage, report.judge_stopped, batch_jobs)])
    elif args.format == "markdown":
        text = formats.markdown(report, rubric, labels)
    elif args.format == "junit":
        text = formats.junit(report, rubric)
    elif args.format == "html":
        from rubric_studio.cli.report._html import html_page
        from rubric_studio.cli.report._humans import humans_section

        humans = humans_section(args, rubric, report.samples) if labels is not None else None
        text = html_page(report, rubric, labels, {sample.id: sample.output for sample in sample_set.samples}, humans)
    else:
        text = formats.table(report, rubric, labels, to_file=args.output is not None)
        if batch_jobs:
            text = text.rstrip("\n") + f"\nnote: judge replies from batch job {', '.join(batch_jobs)} (Batch API, half price)\n"
    if not write_output(text, args.output):
        return 2
    return report.exit_code()
