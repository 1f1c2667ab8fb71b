"""``grade --format html``: one self-contained page to share a run.

Everything is inline: one ``<style>``, no script, and no font, image, stylesheet or link
on another host; a Content-Security-Policy meta tag forbids loading any, so the page
can be attached to a CI run, mailed or opened offline and shows the same everywhere.

What it holds: the summary and usage; the sample × criterion matrix with verdict marks
(each mark links to its cell's detail); per sample its score, verdict, every cell's
rationale and evidence quotes (found / not found), and the graded text with the found
quotes marked; with human labels, judge-vs-human agreement per sample and per criterion
(the figures ``calibrate`` computes).

Rubric, samples, labels and judge replies are untrusted: every string from them is
HTML-escaped after its control characters are made visible, so a sample holding
``<script>`` shows as text. Element ids are built from positions, never from user text.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from rubric_studio.cli.report._formats import (
    LEGEND,
    error_lines,
    flip_lines,
    panel_legend,
    report_mark,
    sample_score,
    summary_line,
)
from rubric_studio.core.labels import TIE_TEXT
from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.safe_text import terminal_safe

#: Characters of one sample's graded text shown in the page (the rest is cut, and said so).
TEXT_LIMIT = 50_000

STYLE = """
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--head:#f6f8fa;
--pass:#1a7f37;--fail:#cf222e;--error:#8250df;--other:#9a6700;--mark:#fff3b0}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;
--head:#151b23;--pass:#3fb950;--fail:#f85149;--error:#ab7df8;--other:#d29922;--mark:#5a4a00}}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);
margin:0 auto;padding:1rem 2rem;max-width:100rem}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:1.5rem 0 .4rem}.meta,.note,small{color:var(--muted)}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid var(--line);padding:.25rem .5rem;
text-align:left;vertical-align:top}thead th{background:var(--head);position:sticky;top:0}
.matrix td.cell{text-align:center;white-space:nowrap}.matrix a,.cells a{color:inherit;text-decoration:none}
.pass,.good{color:var(--pass)}.fail,.bad{color:var(--fail)}.error,.st-error{color:var(--error)}
.pending,.unjudged,.st-pending,.st-unjudged{color:var(--other)}.verdict{font-weight:600}
td.disagree{outline:2px solid var(--other);outline-offset:-3px}td.tie{font-style:italic}.num{text-align:right}
.found{color:var(--pass)}.missing{color:var(--fail)}ul.evidence{margin:0;padding-left:1.1rem}
pre{white-space:pre-wrap;word-break:break-word;background:var(--head);padding:.6rem;border-radius:4px}
mark{background:var(--mark);color:inherit}.legend{white-space:pre-wrap}.scroll{overflow:auto;max-height:80vh}.tiles span{display:inline-block;margin-right:1.2rem;font-weight:600}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def esc(value: object) -> str:
    """Untrusted text as HTML: control characters visible, markup characters escaped."""
    return html.escape(terminal_safe("" if value is None else value, multiline=True), quote=True)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def html_page(report, rubric, labels: Mapping[str, Any] | None = None,
              texts: Mapping[str, str] | None = None, humans: Mapping[str, Any] | None = None) -> str:
    """The whole page for one graded run (``texts``: each sample's graded text, by id; ``humans``:
    calibrate's agreement among annotators, shown with two or more)."""
    from rubric_studio import __version__
    from rubric_studio.cli.report._humans import humans_html

    agreement = None
    if labels is not None:
        from rubric_studio.core.agreement import agreement as compare

        agreement = compare(report.samples, labels, rubric)
    body = [
        *_header(report, rubric),
        *_summary(report),
        *_matrix(report, rubric, labels, agreement),
        *(_agreement(agreement, rubric) if agreement is not None else []),
        *humans_html(humans, esc),
        *_samples(report, rubric, labels or {}, texts or {}),
        f'<footer class="note"><p>rubric-studio {esc(__version__)}</p></footer>',
    ]
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(rubric.name)} — rubric-studio report</title>", f"<style>{STYLE}</style>", "</head>",
        "<body>", *body, "</body>", "</html>",
    ])  # fmt: skip


def _header(report, rubric) -> list[str]:
    judge = f"{report.judge['provider']}:{report.judge['model']}" if report.judge else "no judge"
    meta = [f"rubric {esc(rubric.path or rubric.name)}", f"hash {esc(report.rubric_hash)}",
            f"judge {esc(judge)}", f"pass threshold {esc(f'{float(rubric.pass_threshold):g}')}"]
    out = [f"<header><h1>{esc(rubric.name)}</h1>", f'<p class="meta">{" · ".join(meta)}</p>']
    if rubric.description:
        out.append(f"<p>{esc(rubric.description)}</p>")
    return [*out, "</header>"]


def _summary(report) -> list[str]:
    summary, usage = report.summary, report.usage
    tiles = [("pass", summary.passed, "passed"), ("fail", summary.failed, "failed"),
             ("error", summary.errors, "errors"), ("unjudged", summary.unjudged, "unjudged"),
             ("pending", summary.pending, "pending")]
    shown = [f'<span class="{cls}">{count} {name}</span>' for cls, count, name in tiles if count or cls in ("pass", "fail")]
    mean = "–" if summary.mean_score is None else f"{summary.mean_score:.3f}"
    out = ['<section id="summary"><h2>Summary</h2>',
           f'<p class="tiles">{"".join(shown)}<span>of {summary.samples} samples</span>'
           f"<span>mean score {mean}</span></p>", f"<p>{esc(summary_line(report))}</p>",
           "<table><caption>usage</caption><tbody>"]
    figures = [("judge calls", usage.judge_calls), ("HTTP requests", usage.requests), ("cache hits", usage.cache_hits),
               ("input tokens", usage.input_tokens), ("of which cached", usage.cached_input_tokens),
               ("of which cache writes", usage.cache_write_tokens), ("output tokens", usage.output_tokens),
               ("cost", usage.cost_text()), ("wall time", f"{usage.wall_seconds:.2f} s")]
    out += [f'<tr><th scope="row">{name}</th><td class="num">{esc(value)}</td></tr>' for name, value in figures]
    out.append("</tbody></table>")
    out += _pass_rate(report)
    notes = [f"judge criteria unjudged: {report.judge_note}"] if report.judge_note else []
    notes += [f"judging stopped: {report.judge_stopped}"] if report.judge_stopped else []
    notes += [line for line, _ in report.usage.member_failures()]  # a panel member that errored, named
    notes += [*error_lines(report), *report.problems]
    if report.repeat > 1:
        notes += [f"consistency over {report.repeat} repeats: {line}" for line in flip_lines(report)]
    if notes:
        out.append('<ul class="note">' + "".join(f"<li>{esc(note)}</li>" for note in notes) + "</ul>")
    return [*out, "</section>"]


def _pass_rate(report) -> list[str]:
    """The raw and corrected pass rate, overall and per criterion, when labels are in play."""
    if report.summary.pass_rate is None:
        return []
    from rubric_studio.core.pass_rate import labels_text, rate_text

    data = report.summary.pass_rate.to_dict()
    rows = [("pass rate (samples)", data, "samples"), *((f"{cid} met", e, "cells") for cid, e in data["criteria"].items())]
    out = ['<table class="pass-rate"><caption>pass rate, raw and corrected by the human labels</caption><tbody>']
    out += [f'<tr><th scope="row">{esc(name)}</th><td>{esc(rate_text(entry))}</td><td>{esc(labels_text(entry, noun))}</td></tr>'
            for name, entry, noun in rows]
    out.append("</tbody></table>")
    out.append('<p class="note">Corrected: prediction-powered inference — the labelled samples measure the '
               "judge's false passes and false fails and correct its rate on the rest; 95% interval.</p>")
    return out


def _criterion_head(criterion) -> str:
    facts = [criterion.kind, f"weight {criterion.weight:g}"] + (["required"] if criterion.required else [])
    return (f'<th scope="col" title="{esc(criterion.summary())}">{esc(criterion.key)}'
            f"<br><small>{esc(' · '.join(facts))}</small></th>")


def _matrix(report, rubric, labels, agreement) -> list[str]:
    """One row per sample, one column per criterion; a mark links to its cell's detail."""
    criteria = list(rubric.criteria)
    head = ['<th scope="col">sample</th>', '<th scope="col">verdict</th>', '<th scope="col">score</th>',
            *(_criterion_head(c) for c in criteria)]
    if labels is not None:
        head.append('<th scope="col">human</th>')
    out = ['<section id="matrix"><h2>Verdicts</h2>', '<div class="scroll"><table class="matrix">',
           f"<thead><tr>{''.join(head)}</tr></thead>", "<tbody>"]
    for i, sample in enumerate(report.samples):
        row = [f'<th scope="row"><a href="#s{i}">{esc(sample.id)}</a></th>',
               f'<td class="verdict {esc(sample.verdict)}">{esc(sample.verdict)}</td>',
               f'<td class="num">{esc(sample_score(sample))}</td>']
        disagree = _cell_disagreements(agreement, sample.id)
        for j, criterion in enumerate(criteria):
            cell = sample.cell(criterion.key)
            status = cell.status if cell is not None else Status.PENDING
            extra = " disagree" if criterion.key in disagree else ""
            title = esc(_cell_title(cell))
            row.append(f'<td class="cell st-{esc(status)}{_tone(criterion.is_penalty, cell)}{extra}" title="{title}">'
                       f'<a href="#s{i}-c{j}">{esc(report_mark(criterion.kind, cell))}</a></td>')
        if labels is not None:
            row.append(_human_cell(labels.get(sample.id), sample, agreement))
        out.append(f"<tr>{''.join(row)}</tr>")
    people = f"  outlined: the human label disagrees  {TIE_TEXT}: annotators split evenly, not adjudicated"
    legend = LEGEND + panel_legend(report) + (people if labels is not None else "")
    return [*out, "</tbody></table></div>", f'<p class="note legend">{esc(legend)}</p>', "</section>"]


def _tone(criterion_is_penalty: bool, cell: CriterionResult | None) -> str:
    """``good`` (green) or ``bad`` (red) for a met/unmet cell, as the studio colours it: a
    penalty that is met means the bad thing is present, so it is red; empty otherwise."""
    if cell is None or cell.status not in (Status.MET, Status.UNMET):
        return ""
    return " good" if (cell.status is Status.MET) != criterion_is_penalty else " bad"


def _cell_title(cell: CriterionResult | None) -> str:
    if cell is None:
        return "pending"
    text = cell.error or cell.rationale or str(cell.status)
    return text if len(text) <= 300 else text[:299] + "…"


def _cell_disagreements(agreement, sample_id: str) -> set[str]:
    if agreement is None:
        return set()
    return {cid for cid, pairs in agreement.cell_pairs.items() if sample_id in pairs and pairs[sample_id][0] != pairs[sample_id][1]}


def _human_cell(label, sample, agreement) -> str:
    if label is not None and label.verdict_tied:
        return f'<td class="verdict tie" title="annotators split evenly; not adjudicated">{esc(TIE_TEXT)}</td>'
    if label is None or label.verdict is None:
        return "<td></td>"
    pair = agreement.pairs.get(sample.id) if agreement is not None else None
    if pair is None:
        mark, cls = " (not compared)", ""
    else:
        mark, cls = ("", "") if pair[0] == pair[1] else (" ≠", " disagree")
    return f'<td class="verdict {esc(label.verdict)}{cls}">{esc(label.verdict)}{mark}</td>'


def _agreement(agreement, rubric) -> list[str]:
    """Judge vs human: overall (sample verdicts) and per criterion (labelled cells)."""
    data = agreement.to_dict()
    names = ("n", "accuracy", "kappa", "95% CI", "false pass", "false fail", "both pass", "both fail",
             "judge pass, human fail", "judge fail, human pass")
    out = ['<section id="agreement"><h2>Agreement with human labels</h2>', '<table class="agreement">',
           "<thead><tr><th></th>" + "".join(f'<th scope="col">{n}</th>' for n in names) + "</tr></thead><tbody>"]
    rows = [("overall (sample verdicts)", data["overall"])]
    rows += [(cid, data["criteria"][cid]) for cid in (c.key for c in rubric.criteria) if cid in data["criteria"]]
    for name, e in rows:
        ci = e["kappa_ci"]
        figures = [str(e["n"]), _pct(e["accuracy"]), _num(e["kappa"]), "–" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]",
                   _pct(e["false_pass_rate"]), _pct(e["false_fail_rate"]), str(e["both_pass"]), str(e["both_fail"]),
                   str(e["rubric_pass_human_fail"]), str(e["rubric_fail_human_pass"])]
        out.append(f'<tr><th scope="row">{esc(name)}</th>' + "".join(f'<td class="num">{f}</td>' for f in figures) + "</tr>")
    out.append("</tbody></table>")
    out.append('<p class="note">The overall row compares sample verdicts (pass/fail); a criterion row compares the '
               "cells a human labelled met/unmet. Samples or cells without a final judge verdict are left out.</p>")
    if data["disagreements"]:
        out.append(f"<h3>Disagreements ({len(data['disagreements'])})</h3><ul>")
        for d in data["disagreements"]:
            out.append(f"<li>{esc(d['id'])}: {esc(agreement.disagreement_words(d))}</li>")
        out.append("</ul>")
    if data["warnings"]:
        out.append('<ul class="note">' + "".join(f"<li>{esc(w)}</li>" for w in data["warnings"]) + "</ul>")
    return [*out, "</section>"]


def _samples(report, rubric, labels: Mapping[str, Any], texts: Mapping[str, str]) -> list[str]:
    out = ['<section id="samples"><h2>Samples</h2>']
    kinds = [(c.key, c.kind, c.is_penalty) for c in rubric.criteria]
    for i, sample in enumerate(report.samples):
        verdict = esc(sample.verdict)
        out.append(f'<article id="s{i}"><h3>{esc(sample.id)} — <span class="verdict {verdict}">{verdict}</span>'
                   f" · score {esc(sample_score(sample))}</h3>")
        label = labels.get(sample.id)
        if label is not None:
            out.append(f"<p>{_label_line(label)}</p>")
        if sample.notes:
            out.append('<ul class="note">' + "".join(f"<li>{esc(n)}</li>" for n in sample.notes) + "</ul>")
        out.append('<table class="cells"><thead><tr><th>criterion</th><th>verdict</th><th>score</th>'
                   + ("<th>human</th>" if label is not None else "") + "<th>rationale</th><th>evidence</th></tr></thead><tbody>")
        for j, (key, kind, penalty) in enumerate(kinds):
            out.append(_cell_row(f"s{i}-c{j}", (key, kind, penalty), sample.cell(key), label))
        out.append("</tbody></table>")
        if sample.id in texts:
            out.append(_graded_text(texts[sample.id], sample.criteria))
        out.append("</article>")
    return [*out, "</section>"]


def _label_line(label) -> str:
    parts = [f"human: {esc(label.verdict or '–')}"]
    if label.score is not None:
        parts.append(f"score {esc(f'{label.score:g}')}")
    if label.note:
        parts.append(f"note: {esc(label.note)}")
    return " · ".join(parts)


def _cell_row(anchor: str, criterion: tuple[str, str, bool], cell: CriterionResult | None, label) -> str:
    """One criterion's row in a sample's detail; ``criterion`` is (key, kind, is a penalty)."""
    key, kind, penalty = criterion
    status = cell.status if cell is not None else Status.PENDING
    score = "–" if cell is None or cell.score is None else f"{cell.score:.2f}"
    if cell is not None and cell.raw_score is not None and kind == "analytic":
        score += f" ({cell.raw_score:g}/10)"
    human = ""
    if label is not None:
        state = label.criteria.get(key)
        human = f"<td>{esc(state or '')}</td>"
    why = cell.rationale if cell is not None else ""
    if cell is not None and cell.error:
        why = f"error: {cell.error}" + (f" — {cell.rationale}" if cell.rationale else "")
    if cell is not None and cell.votes:
        why += f" (votes: {', '.join(str(v) for v in cell.votes)})"
    return (f'<tr id="{anchor}"><th scope="row"><a href="#{anchor}">{esc(key)}</a></th>'
            f'<td class="st-{esc(status)}{_tone(penalty, cell)}">{esc(report_mark(kind, cell))} {esc(status)}'
            f'{" (penalty)" if penalty else ""}</td><td class="num">{esc(score)}</td>'
            f"{human}<td>{esc(why)}</td><td>{_evidence(cell)}</td></tr>")


def _evidence(cell: CriterionResult | None) -> str:
    if cell is None or not cell.evidence:
        return ""
    items = []
    for quote in cell.evidence:
        if quote.found:
            items.append(f'<li class="found">“{esc(quote.quote)}” <small>✓ found</small></li>')
        else:
            reason = f": {quote.reason}" if quote.reason else ""
            items.append(f'<li class="missing">“{esc(quote.quote)}” <small>✗ not found{esc(reason)}</small></li>')
    return f'<ul class="evidence">{"".join(items)}</ul>'


def _graded_text(text: str, cells: list[CriterionResult]) -> str:
    """The graded text, found quotes marked, cut at :data:`TEXT_LIMIT` characters."""
    shown = text[:TEXT_LIMIT]
    spans = sorted({(e.start, e.end) for c in cells for e in c.evidence
                    if e.found and e.start is not None and e.end is not None and 0 <= e.start < e.end <= len(shown)})
    parts: list[str] = []
    at = 0
    for start, end in spans:
        start = max(start, at)
        if start >= end:
            continue  # inside a span already marked
        parts += [esc(shown[at:start]), f"<mark>{esc(shown[start:end])}</mark>"]
        at = end
    parts.append(esc(shown[at:]))
    cut = f'<p class="note">… {len(text) - TEXT_LIMIT} more characters not shown</p>' if len(text) > TEXT_LIMIT else ""
    return f"<details><summary>graded text ({len(text)} characters)</summary><pre>{''.join(parts)}</pre>{cut}</details>"

