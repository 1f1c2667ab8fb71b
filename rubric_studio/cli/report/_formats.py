"""Report renderers for ``grade``: rich table, Markdown and JUnit XML (HTML is in ``html_report``)."""

from __future__ import annotations

from rich.text import Text

from rubric_studio.core.labels import TIE_TEXT, human_verdict
from rubric_studio.core.results import Status, Verdict, cell_mark, pooled_without, score_label
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.safe_text import markdown_text, terminal_safe, xml_text
from rubric_studio.engine.report import Report

VERDICT_STYLE = {
    Verdict.PASS: "bold green",
    Verdict.FAIL: "bold red",
    Verdict.ERROR: "bold magenta",
    Verdict.PENDING: "yellow",
    Verdict.UNJUDGED: "dim",
}


def sample_score(sample) -> str:
    """The score column: the score of a final verdict, else the partial figure bracketed."""
    return score_label(sample.score, sample.partial_score)


def report_mark(kind: str, cell) -> str:
    """A cell's mark as the studio shows it: ``cell_mark`` plus ``?`` when the judge quoted
    something that is in no text it was shown (a made-up quote: ``✓?``)."""
    mark = cell_mark(kind, cell)
    if cell is not None and any(item.made_up for item in cell.evidence):
        mark += MADE_UP_MARK
    return mark


def _cell(value: object) -> str:
    """A table cell's text: terminal-safe and on one line (also without the Unicode line and
    paragraph separators, which editors and ``splitlines`` break lines at)."""
    return terminal_safe(value).replace("\u2028", "␤").replace("\u2029", "␤")


def _table_rows(report: Report, rubric: Rubric, labels) -> list[list[tuple[str, str]]]:
    """(text, style) per cell of each row; every user string made plain and terminal-safe."""
    kinds = {c.key: c.kind for c in rubric.criteria}
    rows = []
    for sample in report.samples:
        row = [(_cell(sample.id), ""), (str(sample.verdict), VERDICT_STYLE[sample.verdict]),
               (sample_score(sample), "" if sample.score is not None else "dim")]  # bracketed: not the sample's score
        row += [(report_mark(kinds.get(c.id, "checklist"), c), "") for c in sample.criteria]
        if labels is not None:
            label = labels.get(sample.id)
            row.append((_cell(human_verdict(label)), "magenta" if label and label.verdict_tied else ""))
        rows.append(row)
    return rows


def table(report: Report, rubric: Rubric, labels=None, *, to_file: bool = False) -> str:
    """Samples × criteria in a box table, the totals and the legend below it."""
    from rubric_studio.cli.common import report_console
    from rubric_studio.cli.report._table import Column, Styles, draw, size_columns, table_width

    columns = [Column("sample", max_width=32), Column("verdict", min_width=8), Column("score", "right")]
    columns += [Column(_cell(c.key), "center") for c in rubric.criteria]
    if labels is not None:
        columns.append(Column("human"))
    rows = _table_rows(report, rubric, labels)
    size_columns(columns, rows)
    console, tty = report_console(to_file, 200)
    title = _cell(f"{rubric.name} — {len(report.samples)} samples")
    if table_width(columns) > console.width:
        _rich_table(console, title, columns, rows)
        head = console.export_text(styles=tty)
    else:
        head = "\n".join(draw(title, columns, rows, Styles(tty))) + "\n"
    for line, style in _footer_lines(report, labels):
        console.print(Text(terminal_safe(line), style=style))
    return head + console.export_text(styles=tty)


def _rich_table(console, title: str, columns, rows) -> None:
    """A table wider than the console, drawn by rich, which shrinks columns to fit."""
    from rich.table import Table

    grid = Table(title=Text(title), title_justify="left", expand=False)
    for column in columns:
        grid.add_column(Text(column.header), justify=column.justify, no_wrap=True, overflow="ellipsis",
                        min_width=column.min_width or None, max_width=column.max_width)
    for row in rows:
        grid.add_row(*(Text(text, style=style) for text, style in row))
    console.print(grid)


def _footer_lines(report: Report, labels=None) -> list[tuple[str, str]]:
    """The lines under the table: totals, flip rates, errors, legend, why the judge did not run."""
    lines = [(summary_line(report), "")]
    lines += [(line, "") for line in rate_lines(report)]
    if report.repeat > 1:
        lines.append((f"consistency over {report.repeat} repeats:", "bold"))
        lines += [(f"  {line}", "") for line in flip_lines(report)]
    lines += [(line, "") for line in error_lines(report)]
    lines.append((LEGEND + panel_legend(report), "dim"))
    if labels is not None and any(label.verdict_tied for label in labels.values()):
        lines.append((f"human {TIE_TEXT}: annotators split evenly on the verdict (not adjudicated)", "dim"))
    if report.judge_note:
        lines.append((f"note: judge criteria unjudged — {report.judge_note}", "yellow"))
    return lines


def panel_legend(report: Report) -> str:
    """What a judge panel's marks mean, for the legend ("" without a panel); the mark of a cell
    pooled without an errored member only when there is one."""
    if not report.judge or report.judge.get("provider") != "panel":
        return ""
    legend = "  ✓ 2–1 panel members agreeing–disagreeing  ✗ 1–1 tie an even split, counted against the sample (✓ on a penalty)"
    if any(pooled_without(cell) for sample in report.samples for cell in sample.criteria):
        legend += "  ✓ 2–0 ⚠1 pooled without 1 panel member that errored (named in --format json: panel.errored)"
    return legend


MADE_UP_MARK = "?"
LEGEND = ("legend: ✓ met  ✗ unmet  ✓ 8 judge score 0–10  ✗.29 check score  ✓? made-up quote  ⚠ error  "
          "· unjudged  ⋯ pending  [0.900] partial score of a sample without a final verdict")


def summary_line(report: Report) -> str:
    """One line of totals (plain text; each renderer makes it safe for its output)."""
    summary = report.summary
    assert summary is not None
    usage = report.usage
    parts = [f"{summary.passed} passed", f"{summary.failed} failed"]
    if summary.errors:
        parts.append(f"{summary.errors} errors")
    if summary.unjudged:
        parts.append(f"{summary.unjudged} unjudged")
    if summary.pending:
        parts.append(f"{summary.pending} pending")
    mean = "n/a (no final verdicts)" if summary.mean_score is None else f"{summary.mean_score:.3f}"
    return f"{', '.join(parts)} of {summary.samples} — mean score {mean} — {usage_text(report.judge, usage)}"


def rate_lines(report: Report) -> list[str]:
    """The raw and corrected pass rate and met share per criterion, when labels are in play."""
    summary = report.summary
    if summary is None or summary.pass_rate is None:
        return []
    from rubric_studio.core.pass_rate import pass_rate_lines

    return pass_rate_lines(summary.pass_rate.to_dict())


def usage_text(judge: dict[str, str] | None, usage) -> str:
    """``openai:gpt-4o-mini: 12 calls, 3 cache hits, 900+120 tokens (600 cached), $0.0004, 1.20s`` — what a
    run cost, as ``grade`` and ``calibrate`` both say it."""
    name = f"{judge['provider']}:{judge['model']}" if judge else "no judge"
    if judge and judge.get("provider") == "panel":
        name = f"panel {judge['model']}"
    text = (f"{name}: {usage.judge_calls} calls{_requests_note(usage)}, {usage.cache_hits} cache hits, "
            f"{usage.tokens_text()}, {usage.cost_text()}, {usage.wall_seconds:.2f}s")
    members = getattr(usage, "members", None) or {}
    return text + "".join(f"; {label}: {member.judge_calls} calls, {member.cache_hits} cache hits, "
                          f"{_errors_note(member)}{member.cost_text()}" for label, member in members.items())


def _errors_note(member) -> str:
    """``3 errors, `` for a panel member that failed on some cells (``8 of 8 errored, `` on every one)."""
    errors, judged = getattr(member, "errors", 0), getattr(member, "judged", 0)
    if not errors:
        return ""
    if errors == judged:
        return f"{errors} of {judged} errored, "
    return f"{errors} error{'s' if errors > 1 else ''}, "


def _requests_note(usage) -> str:
    """`` (5 requests)`` when retries or re-asks made more HTTP requests than calls."""
    return f" ({usage.requests} requests)" if usage.requests != usage.judge_calls else ""


def error_lines(report: Report, limit: int = 10) -> list[str]:
    """Errored cells, one line per distinct reason (a judge that stopped is said once, not per cell)."""
    by_reason: dict[str, list[str]] = {}
    for sample in report.samples:
        for cell in sample.criteria:
            if cell.status is Status.ERROR:
                by_reason.setdefault(cell.error or "error", []).append(f"{sample.id} × {cell.id}")
    lines = []
    for reason, cells in by_reason.items():
        where = cells[0] if len(cells) == 1 else f"{len(cells)} cells ({', '.join(cells[:3])}{', …' if len(cells) > 3 else ''})"
        lines.append(f"error {where}: {reason}")
    if len(lines) > limit:
        lines = lines[:limit] + [f"... and {len(lines) - limit} more error reasons"]
    return lines


def markdown(report: Report, rubric: Rubric, labels=None) -> str:
    """A Markdown table; every user string is escaped so it cannot break the table or the terminal."""
    kinds = {c.key: c.kind for c in rubric.criteria}
    head = ["sample", "verdict", "score", *[markdown_text(c.key) for c in rubric.criteria]]
    if labels is not None:
        head.append("human")
    lines = [f"## {markdown_text(rubric.name)}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for sample in report.samples:
        row = [markdown_text(sample.id), f"**{sample.verdict}**", markdown_text(sample_score(sample))]
        row += [report_mark(kinds.get(c.id, "checklist"), c) for c in sample.criteria]
        if labels is not None:
            label = labels.get(sample.id)
            row.append(markdown_text(human_verdict(label)))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", markdown_text(summary_line(report)), ""]
    rates = rate_lines(report)
    if rates:
        lines += [("  - " if line.startswith("  ") else "- ") + markdown_text(line.strip()) for line in rates] + [""]
    if report.repeat > 1:
        lines += [f"**Consistency over {report.repeat} repeats**", ""]
        lines += [f"- {markdown_text(x)}" for x in flip_lines(report)] + [""]
    errors = error_lines(report)
    if errors:
        lines += [f"- {markdown_text(e)}" for e in errors] + [""]
    if any(s.score is None and s.partial_score is not None for s in report.samples):
        lines += [markdown_text("[0.900]: partial score of a sample without a final verdict"), ""]
    if any(report_mark("checklist", c).endswith(MADE_UP_MARK) for s in report.samples for c in s.criteria):
        lines += [markdown_text("✓?: made-up quote — the judge quoted text that is in nothing it was shown"), ""]
    if report.judge_note:
        lines += [f"> judge criteria unjudged: {markdown_text(report.judge_note)}", ""]
    return "\n".join(lines)


def _properties(report: Report) -> list[tuple[str, object]]:
    props: list[tuple[str, object]] = [(f"usage.{k}", v) for k, v in report.usage.to_dict().items()]
    if report.judge:
        props.insert(0, ("judge", f"{report.judge['provider']}:{report.judge['model']}"))
    for criterion_id, rate in report.flip_rates().items():
        props.append((f"flip_rate.{criterion_id}", round(rate["flip_rate"], 4)))
    return props


def flip_lines(report: Report) -> list[str]:
    """Per-criterion flip rates of a repeated run, worst first."""
    rates = sorted(report.flip_rates().items(), key=lambda item: -item[1]["flip_rate"])
    lines = []
    for criterion_id, rate in rates:
        line = f"{criterion_id}: flip rate {rate['flip_rate']:.0%} ({rate['flipped']}/{rate['cells']} cells)"
        if rate["samples"]:
            line += " — ambiguous? flips on " + ", ".join(rate["samples"][:6]) + (" ..." if len(rate["samples"]) > 6 else "")
        lines.append(line)
    return lines


def _figures(value: float, reference: float) -> tuple[str, str]:
    """``value`` and ``reference`` with two decimals, or more when two would show different
    numbers as equal (``0.7999 < 0.80`` reads as a contradiction)."""
    digits_needed = (2,) if abs(value - reference) < 1e-9 else (2, 3, 4, 6)
    for digits in digits_needed:
        shown = f"{value:.{digits}f}", f"{reference:.{digits}f}"
        if shown[0] != shown[1]:
            break
    return shown


def _short(value: float) -> str:
    """A cell score or threshold as few digits as it needs: ``0.4``, ``0.333``, ``1``."""
    return f"{value:.3f}".rstrip("0").rstrip(".") or "0"


def _clip(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def failed_criteria(sample, rubric: Rubric) -> tuple[list[str], list[str]]:
    """The cells that cost ``sample`` its pass, as ``(unmet, errored)`` phrases.

    Unmet: a required or positive-weight criterion that is not met (with its score
    against its minimum for an analytic or check criterion), or a penalty criterion
    whose bad thing is present. Errored: each errored cell with its error.
    """
    by_key = {c.key: c for c in rubric.criteria}
    unmet: list[str] = []
    errored: list[str] = []
    for cell in sample.criteria:
        if cell.status is Status.ERROR:
            errored.append(f"{cell.id} ({_clip(cell.error or 'error')})")
            continue
        criterion = by_key.get(cell.id)
        if criterion is None or cell.status not in (Status.MET, Status.UNMET):
            continue
        if (cell.status is Status.MET) != criterion.is_penalty:
            continue  # met, or a penalty whose bad thing is absent
        notes = ["required"] if criterion.required else []
        if criterion.is_penalty:
            notes.append(f"penalty present, weight {criterion.weight:g}")
        elif criterion.kind != "checklist" and cell.score is not None:
            notes.append(f"score {_short(cell.score)} < {_short(criterion.effective_min_score)}")
        unmet.append(f"{cell.id} ({'; '.join(notes)})" if notes else cell.id)
    return unmet, errored


def _listed(name: str, items: list[str], limit: int = 8) -> str:
    more = f", … and {len(items) - limit} more" if len(items) > limit else ""
    return f"{name}: {', '.join(items[:limit])}{more}"


def failure_message(sample, rubric: Rubric) -> str:
    """Why a sample failed (or errored), in one line for a CI summary.

    ``score 0.62 < threshold 0.80; unmet: refund-policy (required), tone (score 0.4 < 0.7)``
    """
    from rubric_studio.core.scoring import at_least

    threshold = float(rubric.pass_threshold)
    if sample.score is not None:
        value, limit = _figures(sample.score, threshold)
        below = not at_least(sample.score, threshold)
        head = f"score {value} {'<' if below else '>='} threshold {limit}"
    elif sample.partial_score is not None:
        head = f"partial score {sample.partial_score:.2f} (not every criterion graded), threshold {threshold:.2f}"
    else:
        head = f"no score, threshold {threshold:.2f}"
    unmet, errored = failed_criteria(sample, rubric)
    parts = [head]
    if errored:
        parts.append(_listed("errored", errored))
    if unmet:
        parts.append(_listed("unmet", unmet))
    return "; ".join(parts)


def _attr(value: object) -> str:
    """An XML attribute value that always parses (XML 1.0 characters only, quoted)."""
    from xml.sax.saxutils import quoteattr  # only JUnit needs it; it pulls in urllib and email

    return quoteattr(xml_text(value))


def _text(value: object) -> str:
    """XML character data that always parses."""
    from xml.sax.saxutils import escape

    return escape(xml_text(value))


def junit(report: Report, rubric: Rubric) -> str:
    """One testsuite for the rubric; one testcase per sample. Parses whatever the ids hold."""
    summary = report.summary
    assert summary is not None
    skipped = summary.unjudged + summary.pending
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f"<testsuites name={_attr('rubric-studio')} tests=\"{summary.samples}\" failures=\"{summary.failed}\" "
        f"errors=\"{summary.errors}\" skipped=\"{skipped}\" time=\"{report.usage.wall_seconds:.3f}\">",
        f"  <testsuite name={_attr(rubric.name)} tests=\"{summary.samples}\" failures=\"{summary.failed}\" "
        f"errors=\"{summary.errors}\" skipped=\"{skipped}\">",
        "    <properties>",
        *(f"      <property name={_attr(k)} value={_attr(v)}/>" for k, v in _properties(report)),
        "    </properties>",
    ]
    for sample in report.samples:
        out.append(f"    <testcase classname={_attr(rubric.name)} name={_attr(sample.id)}>")
        details = "\n".join(
            f"{c.id}: {c.status}" + (f" ({c.score:.2f})" if c.score is not None else "")
            + (f" — {c.error}" if c.error else (f" — {c.rationale}" if c.rationale else ""))
            for c in sample.criteria
        )
        score = sample_score(sample)
        if sample.verdict is Verdict.FAIL:
            out.append(f"      <failure message={_attr(failure_message(sample, rubric))}>{_text(details)}</failure>")
        elif sample.verdict is Verdict.ERROR:
            out.append(f"      <error message={_attr(failure_message(sample, rubric))}>{_text(details)}</error>")
        elif sample.verdict in (Verdict.UNJUDGED, Verdict.PENDING):
            out.append(f"      <skipped message={_attr(sample.verdict)}/>")
        partial = " (partial: no final verdict)" if sample.score is None and sample.partial_score is not None else ""
        out.append(f"      <system-out>{_text(f'score {score}{partial}')}</system-out>")
        out.append("    </testcase>")
    out += ["  </testsuite>", "</testsuites>"]
    return "\n".join(out)
