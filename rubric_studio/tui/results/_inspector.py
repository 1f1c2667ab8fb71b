"""The inspector: everything about the selected cell, or a sample at a glance.

For a cell: verdict, score, source (judge / cache / check), tokens and latency,
the criterion, the judge's rationale, its evidence quotes (found ones highlighted in
the sample text; quotes of the input, not the output, said so and highlighted in the
input; made-up ones flagged, also in the cell's heading), and the exact request and reply
with keys redacted. For a sample (cursor on the sample columns): all its criteria, its human
label and the text with every found quote highlighted. A human met / unmet given under an older
wording of its criterion than the one shown says so (``↺``).

Attributes down: the app calls :meth:`Inspector.show` with plain data.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Static

from rubric_studio.core.labels import OLDER_MARK, OLDER_TEXT, Label, wording_fingerprint
from rubric_studio.core.results import (
    CriterionResult,
    Evidence,
    SampleResult,
    Status,
    pooled_without,
    score_label,
)
from rubric_studio.core.rubric import Criterion
from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.core.samples import Sample
from rubric_studio.session.results_model import has_made_up_quote, redact
from rubric_studio.tui.results._text import MADE_UP, cell_text, older_wording, verdict_text

STATUS_STYLE = {"good": "bold green", "bad": "bold red", "error": "bold yellow", "pending": "dim", "unjudged": "dim",
                "pass": "bold green", "fail": "bold red", "disagree": "bold magenta"}
HIGHLIGHT = "black on yellow"
INPUT_HIGHLIGHT = "black on cyan"  # a quote the judge took from the input instead of the output
MADE_UP_STYLE = "bold yellow"  # as the matrix's made-up mark
MAX_TEXT = 20_000


def _lines(text: object) -> str:
    """Multi-line text from a user file or a judge, terminal-safe (every string shown here is
    built as ``rich.text.Text``, never as markup, so brackets show as they are)."""
    return terminal_safe(text, multiline=True)


def _evidence_spans(text: str, evidence: list[Evidence]) -> list[tuple[int, int]]:
    spans = []
    lower = None
    for item in evidence:
        if not item.found:
            continue
        if item.start is not None and item.end is not None:
            spans.append((item.start, item.end))
            continue
        lower = lower if lower is not None else text.lower()
        at = lower.find(item.quote.lower())
        if at >= 0:
            spans.append((at, at + len(item.quote)))
    return spans


def highlighted(text: str, evidence: list[Evidence]) -> Text:
    """The sample text with found quotes highlighted (terminal-safe piece by piece, so the
    quotes' offsets into the original text still hold)."""
    return _marked(text, _evidence_spans(text, evidence), HIGHLIGHT)


def input_highlighted(text: str, evidence: list[Evidence]) -> Text:
    """The sample's input with the quotes the judge took from it highlighted."""
    from rubric_studio.judges.evidence import locate

    spans = [span for item in evidence if item.quoted_from == "input" and (span := locate(item.quote, text))]
    return _marked(text, spans, INPUT_HIGHLIGHT, plain="dim")


def _marked(text: str, spans: list[tuple[int, int]], style: str, *, plain: str = "") -> Text:
    shown = text if len(text) <= MAX_TEXT else text[:MAX_TEXT]
    spans = [(start, min(end, len(shown))) for start, end in spans if start < len(shown)]
    bounds = sorted({0, len(shown), *(at for span in spans for at in span)})
    out = Text()
    for start, end in pairwise(bounds):
        quoted = any(low <= start and end <= high for low, high in spans)
        out.append(_lines(shown[start:end]), style=style if quoted else plain)
    if len(text) > MAX_TEXT:
        out.append(f"\n… {len(text) - MAX_TEXT:,} more characters not shown", style="dim italic")
    return out


def evidence_lines(evidence: list[Evidence]) -> Text:
    """The judge's quotes: found (highlighted), quoted from the input or reference, or made up (with why)."""
    quotes = Text("\nevidence\n", style="bold")
    for item in evidence:
        quote = f"“{_lines(item.quote)}”"
        if item.found:
            quotes.append("  ✓ ", style="green")
            quotes.append(quote, style=HIGHLIGHT)
            quotes.append("\n")
        elif item.quoted_from is not None:
            quotes.append("  ↩ ", style="bold cyan")
            quotes.append(quote, style=INPUT_HIGHLIGHT if item.quoted_from == "input" else "cyan")
            quotes.append(f"  {_lines(item.reason or 'quoted from the ' + item.quoted_from)}\n", style="cyan")
        else:
            quotes.append(f"  {MADE_UP} ", style=MADE_UP_STYLE)
            quotes.append(quote, style="strike")
            quotes.append(f"  {_lines(item.reason or 'not in the sample')} — made-up quote\n", style="bold red")
    return quotes


def source_words(cell: CriterionResult) -> str:
    """Where the verdict came from: ``judge`` / ``cache`` / ``check``, and a batch call or a provider
    Batch API job when one gave it."""
    origin = cell.provenance or {}
    if origin.get("mode") == "batch":
        return f"{cell.source}, from a batch call of {origin.get('criteria', '?')} criteria"
    if origin.get("mode") == "batch-api":
        several = f" (a request of {origin['criteria']} criteria)" if origin.get("criteria") else ""
        return f"{cell.source}, from Batch API job {terminal_safe(str(origin.get('job', '?')))}{several}"
    return cell.source


def _usage_line(cell: CriterionResult) -> Text:
    detail = cell.detail
    parts = [("source ", "dim"), (source_words(cell), "bold")]
    if "input_tokens" in detail or "output_tokens" in detail:
        parts += [("  tokens ", "dim"), (f"{detail.get('input_tokens', 0):,} in / {detail.get('output_tokens', 0):,} out", "")]
    if detail.get("latency_s") is not None and cell.source == "judge":
        parts += [("  latency ", "dim"), (f"{float(detail['latency_s']) * 1000:.0f} ms", "")]
    if detail.get("model"):
        parts += [("  model ", "dim"), (terminal_safe(detail["model"]), "")]
    if detail.get("calls", 0) and detail["calls"] > 1:
        parts += [("  calls ", "dim"), (str(detail["calls"]), "")]
    return Text.assemble(*parts)


def _criterion_line(criterion: Criterion) -> Text:
    kind = {"check": "deterministic check", "analytic": "judge, scored 0–10", "checklist": "judge, met / unmet"}[criterion.kind]
    bits = [f"weight {criterion.weight:g}", kind]
    if criterion.required:
        bits.append("required")
    if criterion.is_penalty:
        bits.append("penalty: met means the bad thing is present")
    if criterion.operator == "contradiction":
        bits.append("met unless the sample contradicts it")
    if criterion.kind != "checklist":
        bits.append(f"min score {criterion.effective_min_score:g}")
    return Text(" · ".join(bits), style="dim")


def _exchange(cell: CriterionResult) -> Text | None:
    """The exact request and reply, keys redacted."""
    detail = cell.detail
    parts: list[str] = []
    wire = detail.get("wire")
    if isinstance(wire, dict) and wire:
        parts.append(f"POST {wire.get('url', '')}")
        parts.append(_json(wire.get("request")))
        if wire.get("response") is not None:
            parts.append("── reply ──")
            parts.append(_json(wire.get("response")))
        elif detail.get("reply"):  # served from the cache: this criterion's part of the reply
            parts.append("── reply (this criterion) ──")
            parts.append(str(detail["reply"]))
    else:
        request = detail.get("request")
        if isinstance(request, dict):
            for key in ("system", "user"):
                if request.get(key):
                    parts.append(f"── {key} ──")
                    parts.append(str(request[key]))
            if request.get("schema"):
                parts.append("── reply schema ──")
                parts.append(_json(request["schema"]))
        for key, title in (("first_reply", "first reply (repaired)"), ("reply", "reply"), ("raw_reply", "raw reply")):
            if detail.get(key):
                parts.append(f"── {title} ──")
                parts.append(str(detail[key]))
    if not parts:
        return None
    return Text(_lines(redact("\n".join(parts))))


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    if hasattr(value, "model_dump"):  # an SDK reply object, dumped only when shown
        try:
            value = value.model_dump(mode="json")
        except Exception:
            return repr(value)
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


class Inspector(VerticalScroll, can_focus=True):
    """Details of the selected cell or sample."""

    DEFAULT_CSS = """
    Inspector > .section { height: auto; margin: 0 0 1 0; }
    Inspector > Collapsible { height: auto; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Select a cell in Results (arrows, enter or a click) to inspect it.", id="insp-head", classes="section")
        yield Static("", id="insp-body", classes="section")
        with Collapsible(title="Request and reply (keys redacted)", id="insp-exchange", collapsed=True):
            yield Static("", id="insp-exchange-text")
        yield Static("", id="insp-sample", classes="section")

    def show(
        self,
        sample: Sample | None,
        result: SampleResult | None,
        criterion: Criterion | None,
        label: Label | None,
        *,
        criteria: list[Criterion] | None = None,
        stale: bool = False,
        probes: list[Any] | None = None,
    ) -> None:
        """Show ``sample`` × ``criterion`` (or the whole sample when ``criterion`` is None); ``probes``:
        the bias-probe findings of the cell (:mod:`rubric_studio.tui.results._probe_view`), each a section."""
        head = self.query_one("#insp-head", Static)
        body = self.query_one("#insp-body", Static)
        text = self.query_one("#insp-sample", Static)
        exchange = self.query_one("#insp-exchange", Collapsible)
        exchange_text = self.query_one("#insp-exchange-text", Static)
        if sample is None:
            head.update("Select a cell in Results (arrows, enter or a click) to inspect it.")
            body.update("")
            text.update("")
            exchange.display = False
            return
        stale_note = Text("  (stale: the files changed into something invalid; these are the last good results)",
                          style="italic yellow") if stale else Text()
        cell = result.cell(criterion.key) if (result is not None and criterion is not None) else None
        if criterion is None:
            head.update(self._sample_head(sample, result, label, stale_note))
            body.update(self._sample_body(result, label, criteria or []))
            evidence = [e for c in (result.criteria if result else []) for e in c.evidence]
            text.update(self._sample_text(sample, evidence))
            exchange.display = False
            return
        head.update(self._cell_head(sample, criterion, cell, label, stale_note))
        cell_body = self._cell_body(criterion, cell)
        if probes:
            from rubric_studio.tui.results._probe_view import probe_text

            cell_body = Group(cell_body, probe_text(probes))
        body.update(cell_body)
        text.update(self._sample_text(sample, cell.evidence if cell else []))
        exchange_renderable = _exchange(cell) if cell is not None else None
        exchange.display = exchange_renderable is not None
        if exchange_renderable is not None:
            exchange_text.update(exchange_renderable)

    # -- pieces ------------------------------------------------------------------
    def _sample_head(self, sample: Sample, result: SampleResult | None, label: Label | None, stale: Text) -> Text:
        vtext, vstyle = verdict_text(result)
        out = Text.assemble((terminal_safe(sample.id), "bold"), "  ", (vtext, STATUS_STYLE.get(vstyle, "")))
        if result is not None and result.score is not None:
            out.append(f"  score {result.score:.2f}")
        elif result is not None and result.partial_score is not None:
            out.append(f"  score {score_label(None, result.partial_score, digits=2)}")
            out.append(" partial: not every criterion has a final result", style="dim")
        if label is not None and label.verdict:
            out.append(f"  human: {terminal_safe(label.verdict)}", style="magenta" if result and label.verdict != str(result.verdict)
                       and str(result.verdict) in ("pass", "fail") else "")
        out.append_text(stale)
        for note in (result.notes if result else []):
            out.append(f"\n{terminal_safe(note)}", style="dim")
        return out

    def _sample_body(self, result: SampleResult | None, label: Label | None, criteria: list[Criterion]) -> RenderableType:
        table = Table(box=None, show_header=True, header_style="bold", pad_edge=False, expand=True)
        table.add_column("criterion", no_wrap=True)
        table.add_column("cell", no_wrap=True)
        table.add_column("human", no_wrap=True)
        table.add_column("why", ratio=1, overflow="ellipsis", no_wrap=True)
        cells = {c.id: c for c in result.criteria} if result else {}
        for criterion in criteria:
            cell = cells.get(criterion.key)
            ctext, cstyle = cell_text(criterion, cell)
            human = label.criteria.get(criterion.key, "") if label else ""
            if human and older_wording(label, criterion.key, {criterion.key: wording_fingerprint(criterion)}):
                human += f" {OLDER_MARK}"
            why = ""
            if cell is not None:
                why = cell.error or cell.rationale or ""
            why = why.strip().splitlines()[0] if why.strip() else ""
            title = criterion.key + ("*" if criterion.required else "")
            shown = Text(ctext, style=STATUS_STYLE.get(cstyle, ""))
            if has_made_up_quote(cell):
                shown.append(f" {MADE_UP}", style=MADE_UP_STYLE)
            table.add_row(Text(terminal_safe(title)), shown, Text(terminal_safe(human)), Text(terminal_safe(why), style="dim"))
        parts: list[RenderableType] = [table]
        if label is not None and label.note:
            parts.append(Text.assemble(("\nhuman note: ", "bold"), _lines(label.note)))
        return Group(*parts)

    def _cell_head(self, sample: Sample, criterion: Criterion, cell: CriterionResult | None, label: Label | None,
                   stale: Text) -> Text:
        ctext, cstyle = cell_text(criterion, cell)
        out = Text.assemble((terminal_safe(sample.id), "bold"), " × ", (terminal_safe(criterion.key), "bold"), "  ",
                            (ctext, STATUS_STYLE.get(cstyle, "")))
        if cell is not None and cell.score is not None:
            out.append(f"  score {cell.score:.2f}")
        if has_made_up_quote(cell):
            out.append(f"  {MADE_UP} made-up quote", style=MADE_UP_STYLE)
        errors = pooled_without(cell)  # a judge panel's members that errored: the verdict is the others'
        if errors and cell is not None and cell.panel:
            errored = ", ".join(cell.panel.get("errored") or ()) or f"{errors} member{'s' if errors > 1 else ''}"
            out.append(terminal_safe(f"  pooled without {errored} (errored)"), style="bold yellow")
        human = label.criteria.get(criterion.key) if label else None
        if human:
            differs = cell is not None and cell.status in (Status.MET, Status.UNMET) and str(cell.status) != human
            out.append(f"  human: {terminal_safe(human)}", style="bold magenta" if differs else "")
            if older_wording(label, criterion.key, {criterion.key: wording_fingerprint(criterion)}):
                out.append(f" {OLDER_MARK} {OLDER_TEXT}", style="yellow")
        out.append_text(stale)
        if cell is not None:
            out.append("\n")
            out.append_text(_usage_line(cell))
        return out

    def _cell_body(self, criterion: Criterion, cell: CriterionResult | None) -> RenderableType:
        parts: list[RenderableType] = [
            Text.assemble(("criterion  ", "dim"), _lines(criterion.summary())),
            _criterion_line(criterion),
        ]
        if criterion.score_ranges:
            bands = "  ".join(f"{k}+: {v}" for k, v in criterion.score_ranges.items())
            parts.append(Text(_lines(bands), style="dim"))
        if cell is None:
            parts.append(Text("\nnot graded yet", style="dim"))
            return Group(*parts)
        if cell.error:
            kind = cell.detail.get("error_kind")
            parts.append(Text.assemble(("\nerror", "bold yellow"), f" ({terminal_safe(kind)})" if kind else "", ": ",
                                       _lines(cell.error)))
        if cell.status is Status.UNJUDGED:
            parts.append(Text.assemble(("\nunjudged: ", "bold"), _lines(cell.rationale or "no judge configured")))
        elif cell.members:
            from rubric_studio.tui.results._panel_view import members_text

            parts.append(members_text(cell))
        elif cell.rationale:
            parts.append(Text.assemble(("\nrationale\n", "bold"), _lines(cell.rationale)))
        if cell.votes:
            agreement = f"{cell.agreement:.0%}" if cell.agreement is not None else "?"
            votes = terminal_safe(", ".join(map(str, cell.votes)))
            parts.append(Text(f"repeats: {votes}  (agreement {agreement})", style="dim"))
        if cell.evidence:
            parts.append(evidence_lines(cell.evidence))
        return Group(*parts)

    def _sample_text(self, sample: Sample, evidence: list[Evidence]) -> RenderableType:
        parts: list[RenderableType] = []
        if sample.input:
            parts.append(Text("input", style="bold"))
            parts.append(input_highlighted(sample.input, evidence))
            parts.append(Text(""))
        parts.append(Text("output" if sample.input else "sample", style="bold"))
        parts.append(highlighted(sample.output, evidence))
        if sample.ground_truth:
            parts.append(Text(""))
            parts.append(Text("ground truth", style="bold"))
            parts.append(Text(_lines(sample.ground_truth), style="dim"))
        return Group(*parts)
