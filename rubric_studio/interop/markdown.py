"""A Markdown review of the rubric: one table row per criterion, for pull requests.

Columns: id, criterion (outcome, operator, tags), weight, required, and how it
is scored (met/unmet, the 0–10 bands with the met mark, or the check). The
pass rule and judge are stated above the table. Nothing is left out, so there
are no warnings; this format is export-only. Every string from the rubric is
escaped (:mod:`rubric_studio.core.safe_text`): prose with :func:`markdown_text`,
ids and check parameters as code with :func:`markdown_code`, so no pipe, backtick,
bracket, tag or line break in them can break the table or the document.
"""

from __future__ import annotations

from rubric_studio.core.rubric import Criterion, PanelAggregate, Rubric
from rubric_studio.core.safe_text import markdown_code, markdown_text
from rubric_studio.interop._common import band_label, bands_to_ranges, num, positive_weight
from rubric_studio.interop._formats import ExportResult
from rubric_studio.interop._panel import tie_words


def _cell(text: str) -> str:
    """Table-safe prose: specials escaped, line breaks as <br>."""
    return markdown_text(text, line_break="<br>")


def _scoring(criterion: Criterion) -> str:
    if criterion.check is not None:
        params = criterion.check.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        inner = ", ".join(f"{k}={v!r}" for k, v in params.items() if k != "type")
        text = "check " + markdown_code(f"{criterion.check.type}({inner})")
        if criterion.min_score is not None:
            text += f"; met at score >= {num(criterion.min_score)}"
        return text
    if criterion.score_ranges:
        bands = "<br>".join(f"{band_label(low, high)}: {_cell(band)}"
                            for low, high, band in bands_to_ranges(criterion.score_ranges))
        return f"0-10, met at >= {num(criterion.effective_min_score * 10)}<br>{bands}"
    return "met / unmet"


def _criterion(criterion: Criterion) -> str:
    if criterion.check is not None:
        text = f"_{criterion.check.type} check_"
    else:
        text = _cell(criterion.outcome or "")
    notes = []
    if criterion.operator == "contradiction":
        notes.append("met unless contradicted")
    elif criterion.operator == "correctness":
        notes.append("must be positively stated")
    if criterion.weight < 0:
        notes.append("penalty: met = the bad thing is present")
    if criterion.tags:
        notes.append("tags: " + ", ".join(markdown_code(t) for t in criterion.tags))
    if notes:
        text += "<br>_" + "; ".join(notes) + "_"
    return text


def export(rubric: Rubric) -> ExportResult:
    lines = [f"# Rubric: {markdown_text(rubric.name)}", ""]
    if rubric.description.strip():
        lines += [_cell(rubric.description), ""]
    required = [c.key for c in rubric.criteria if c.required]
    rule = (f"**Pass** when score >= {num(rubric.pass_threshold)}"
            + (f" and every required criterion is met ({', '.join(markdown_code(r) for r in required)})" if required else "")
            + f". Score = sum(weight x score) / {num(positive_weight(rubric))} (the positive weights), clipped to 0-1.")
    lines += [rule, ""]
    if rubric.judge is not None and rubric.judge.model:
        judge = f"Judge: {markdown_code(rubric.judge.model)}"
        if rubric.judge.base_url:
            judge += f" at {markdown_code(rubric.judge.base_url)}"
        lines += [judge + f", temperature {num(rubric.judge.temperature)}.", ""]
    if rubric.judge is not None and rubric.judge.panel:
        rules = rubric.judge.aggregate or PanelAggregate()
        pooled = f"checklist {rules.checklist}, analytic {rules.analytic}"
        ties = tie_words(rules, rubric.judge.ties)
        pooled += f"; {ties}" if ties else ""
        names = ", ".join(markdown_code(member.model or "?") for member in rubric.judge.panel)
        lines += [f"Judge panel: {names}; verdicts pooled by {pooled}.", ""]
    if rubric.on_error == "ignore":
        lines += ["Errored criteria are ignored (`on_error: ignore`).", ""]
    lines += ["| id | criterion | weight | required | scoring |", "|---|---|---:|:---:|---|"]
    for criterion in rubric.criteria:
        lines.append(f"| {markdown_code(criterion.key)} | {_criterion(criterion)} | {num(criterion.weight)} | "
                     f"{'yes' if criterion.required else ''} | {_scoring(criterion)} |")
    lines += _examples(rubric)
    return ExportResult("\n".join(lines) + "\n")


def _examples(rubric: Rubric) -> list[str]:
    """A section per criterion with few-shot examples: the graded text, its grade, the note."""
    lines: list[str] = []
    for criterion in rubric.criteria:
        if not criterion.examples:
            continue
        lines += ["", f"### Examples for {markdown_code(criterion.key)}", "", "| example | grade | why |",
                  "|---|---|---|"]
        lines += [f"| {_cell(e.sample)} | {e.decision_text()} | {_cell(e.note or '')} |" for e in criterion.examples]
    return lines
