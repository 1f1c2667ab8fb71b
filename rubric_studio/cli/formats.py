"""Report renderers for ``grade``: rich table, Markdown, JUnit XML, and the progress bar."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from xml.sax.saxutils import escape, quoteattr

from rubric_studio.core.results import Status, Verdict, cell_mark
from rubric_studio.core.rubric import Rubric
from rubric_studio.engine.report import Report

VERDICT_STYLE = {
    Verdict.PASS: "bold green",
    Verdict.FAIL: "bold red",
    Verdict.ERROR: "bold magenta",
    Verdict.PENDING: "yellow",
    Verdict.UNJUDGED: "dim",
}


def _score_text(score: float | None) -> str:
    return "—" if score is None else f"{score:.3f}"


@contextlib.contextmanager
def progress_for(args, grader) -> Iterator:
    """A transient progress bar on stderr while judge calls run (only on a terminal)."""
    if args.format != "table" or not sys.stderr.isatty() or grader.judge is None:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from rubric_studio.engine.events import Progress as ProgressEvent

    progress = Progress(
        TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True,
    )
    task = progress.add_task("judging", total=None)

    def on_event(event) -> None:
        if isinstance(event, ProgressEvent):
            progress.update(task, completed=event.done, total=event.total)

    with progress:
        yield on_event


def table(report: Report, rubric: Rubric, labels=None, *, to_file: bool = False) -> str:
    from rich.console import Console
    from rich.table import Table

    kinds = {c.key: c.kind for c in rubric.criteria}
    grid = Table(title=f"{rubric.name} — {len(report.samples)} samples", title_justify="left", expand=False)
    grid.add_column("sample", no_wrap=True, overflow="ellipsis", max_width=32)
    grid.add_column("verdict", no_wrap=True, min_width=8)
    grid.add_column("score", justify="right", no_wrap=True)
    for criterion in rubric.criteria:
        grid.add_column(criterion.key, justify="center", no_wrap=True)
    if labels is not None:
        grid.add_column("human")
    for sample in report.samples:
        score = _score_text(sample.score)
        if sample.verdict in (Verdict.UNJUDGED, Verdict.PENDING) and sample.score is not None:
            score = f"[dim]({score})[/]"  # partial: over the criteria that have a result
        row = [sample.id, f"[{VERDICT_STYLE[sample.verdict]}]{sample.verdict}[/]", score]
        row += [cell_mark(kinds[c.id], c) for c in sample.criteria]
        if labels is not None:
            label = labels.get(sample.id)
            row.append(label.verdict if label and label.verdict else "")
        grid.add_row(*row)
    import io
    import shutil

    tty = sys.stdout.isatty() and not to_file
    width = shutil.get_terminal_size((200, 40)).columns if tty else 200
    console = Console(record=True, width=width, file=io.StringIO(), force_terminal=tty)
    console.print(grid)
    console.print(_summary_line(report))
    if report.repeat > 1:
        console.print(f"consistency over {report.repeat} repeats:", style="bold")
        for line in _flip_lines(report):
            console.print(f"  {line}", markup=False)
    for line in _error_lines(report):
        console.print(line, markup=False)
    console.print("legend: ✓ met  ✗ unmet  ✓ 8 judge score 0–10  ✗.29 check score  ⚠ error  · unjudged  ⋯ pending  (0.9) partial sample score", style="dim")
    if report.judge_note:
        console.print(f"note: judge criteria unjudged — {report.judge_note}", style="yellow", markup=False)
    return console.export_text(styles=tty)


def _summary_line(report: Report) -> str:
    summary = report.summary
    assert summary is not None
    usage = report.usage
    parts = [f"{summary.passed} passed", f"{summary.failed} failed"]
    if summary.errors:
        parts.append(f"{summary.errors} errors")
    if summary.unjudged:
        parts.append(f"{summary.unjudged} unjudged")
    mean = "n/a (no final verdicts)" if summary.mean_score is None else f"{summary.mean_score:.3f}"
    judge = f"{report.judge['provider']}:{report.judge['model']}" if report.judge else "no judge"
    return (
        f"{', '.join(parts)} of {summary.samples} — mean score {mean} — {judge}: "
        f"{usage.judge_calls} calls, {usage.cache_hits} cache hits, "
        f"{usage.input_tokens}+{usage.output_tokens} tokens, {usage.cost_text()}, {usage.wall_seconds:.2f}s"
    )


def _error_lines(report: Report, limit: int = 10) -> list[str]:
    lines = []
    for sample in report.samples:
        for cell in sample.criteria:
            if cell.status is Status.ERROR:
                lines.append(f"error {sample.id} × {cell.id}: {cell.error}")
    if len(lines) > limit:
        lines = lines[:limit] + [f"... and {len(lines) - limit} more errored cells"]
    return lines


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: Report, rubric: Rubric, labels=None) -> str:
    kinds = {c.key: c.kind for c in rubric.criteria}
    head = ["sample", "verdict", "score", *[c.key for c in rubric.criteria]]
    if labels is not None:
        head.append("human")
    lines = [f"## {rubric.name}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for sample in report.samples:
        row = [_md_escape(sample.id), f"**{sample.verdict}**", _score_text(sample.score)]
        row += [cell_mark(kinds[c.id], c) for c in sample.criteria]
        if labels is not None:
            label = labels.get(sample.id)
            row.append(label.verdict if label and label.verdict else "")
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", _summary_line(report), ""]
    if report.repeat > 1:
        lines += [f"**Consistency over {report.repeat} repeats**", ""] + [f"- {_md_escape(x)}" for x in _flip_lines(report)] + [""]
    errors = _error_lines(report)
    if errors:
        lines += [f"- {_md_escape(e)}" for e in errors] + [""]
    if report.judge_note:
        lines += [f"> judge criteria unjudged: {report.judge_note}", ""]
    return "\n".join(lines)


def _properties(report: Report) -> list[tuple[str, object]]:
    props: list[tuple[str, object]] = [(f"usage.{k}", v) for k, v in report.usage.to_dict().items()]
    if report.judge:
        props.insert(0, ("judge", f"{report.judge['provider']}:{report.judge['model']}"))
    for criterion_id, rate in report.flip_rates().items():
        props.append((f"flip_rate.{criterion_id}", round(rate["flip_rate"], 4)))
    return props


def _flip_lines(report: Report) -> list[str]:
    """Per-criterion flip rates of a repeated run, worst first."""
    rates = sorted(report.flip_rates().items(), key=lambda item: -item[1]["flip_rate"])
    lines = []
    for criterion_id, rate in rates:
        line = f"{criterion_id}: flip rate {rate['flip_rate']:.0%} ({rate['flipped']}/{rate['cells']} cells)"
        if rate["samples"]:
            line += " — ambiguous? flips on " + ", ".join(rate["samples"][:6]) + (" ..." if len(rate["samples"]) > 6 else "")
        lines.append(line)
    return lines


def junit(report: Report, rubric: Rubric) -> str:
    """One testsuite for the rubric; one testcase per sample."""
    summary = report.summary
    assert summary is not None
    skipped = summary.unjudged + summary.pending
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f"<testsuites name={quoteattr('rubric-studio')} tests=\"{summary.samples}\" failures=\"{summary.failed}\" "
        f"errors=\"{summary.errors}\" skipped=\"{skipped}\" time=\"{report.usage.wall_seconds:.3f}\">",
        f"  <testsuite name={quoteattr(rubric.name)} tests=\"{summary.samples}\" failures=\"{summary.failed}\" "
        f"errors=\"{summary.errors}\" skipped=\"{skipped}\">",
        "    <properties>",
        *(f"      <property name={quoteattr(k)} value={quoteattr(str(v))}/>" for k, v in _properties(report)),
        "    </properties>",
    ]
    for sample in report.samples:
        out.append(f"    <testcase classname={quoteattr(rubric.name)} name={quoteattr(sample.id)}>")
        details = "\n".join(
            f"{c.id}: {c.status}" + (f" ({c.score:.2f})" if c.score is not None else "")
            + (f" — {c.error}" if c.error else (f" — {c.rationale}" if c.rationale else ""))
            for c in sample.criteria
        )
        score = _score_text(sample.score)
        if sample.verdict is Verdict.FAIL:
            message = f"score {score} below {rubric.pass_threshold} or a required criterion unmet"
            out.append(f"      <failure message={quoteattr(message)}>{escape(details)}</failure>")
        elif sample.verdict is Verdict.ERROR:
            out.append(f"      <error message={quoteattr('judge or check error')}>{escape(details)}</error>")
        elif sample.verdict in (Verdict.UNJUDGED, Verdict.PENDING):
            out.append(f"      <skipped message={quoteattr(str(sample.verdict))}/>")
        out.append(f"      <system-out>{escape(f'score {score}')}</system-out>")
        out.append("    </testcase>")
    out += ["  </testsuite>", "</testsuites>"]
    return "\n".join(out)
