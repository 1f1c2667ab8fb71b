"""What the results matrix writes in its cells and headers, as plain text and style names.

Every string the matrix draws goes through :func:`fit` (terminal-safe, cut with ``…``);
cells are compact (``✓``, ``✗ 4``, ``✗.29``, ``⚠``, ``·``, ``⋯``) so that a rubric's
criteria fit beside the editor, and the inspector and the cell hint use the same words
(:func:`cell_text`, :func:`verdict_text`). Style names are the ``matrix--<name>``
component classes of :class:`~rubric_studio.tui.results._matrix.ResultsMatrix`.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.cells import cell_len

from rubric_studio.core.labels import OLDER_MARK, OLDER_WORDING, TIE_MARK, TIE_TEXT, Label, wording_state
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict, score_label
from rubric_studio.core.results import cell_mark as status_mark
from rubric_studio.core.rubric import Criterion
from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.results_model import label_verdict_disagrees

ID_MIN, ID_MAX = 8, 16  # the id column before any spare width: at least / at most
ID_COMPACT = 12  # the id column gives up to this much width when that shows another criterion
CRIT_MIN, CRIT_MAX = 5, 12  # criterion columns: compact, and as wide as a title makes them before the id grows
SCORE_W, VERDICT_W, HUMAN_W = 4, 7, 5  # "0.56", "✗ fail↓", "pass≠" (a partial "[.56]" takes the gap before)
GAP = 1
SEPARATOR = "│ "  # between the sample columns and the criteria ("‹ " in the header when scrolled sideways)
MADE_UP = "?"  # beside a cell whose judge quoted what no text it was shown says


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells (with …) and padded; terminal-safe (every string the
    matrix draws goes through here, so a control character in an id cannot reach the terminal)."""
    if width <= 0:
        return ""
    text = terminal_safe(text)
    length = cell_len(text)
    if length > width:
        out = ""
        for char in text:
            if cell_len(out + char) > width - 1:
                break
            out += char
        return out + "…" + " " * (width - cell_len(out) - 1)
    return text + " " * (width - length)


def cell_text(criterion: Criterion, cell: CriterionResult | None) -> tuple[str, str]:
    """A cell in words (the inspector and the cell hint), and its style name."""
    mark, style = cell_mark(criterion, cell)
    if cell is None or cell.status is Status.PENDING:
        return mark, style
    if cell.status is Status.ERROR:
        return "⚠ error", style
    if cell.status is Status.UNJUDGED:
        return "unjudged", style
    if mark in ("✓", "✗"):
        return mark + (" met" if cell.status is Status.MET else " unmet"), style
    return mark.replace("✓.", "✓ .").replace("✗.", "✗ ."), style


def cell_mark(criterion: Criterion, cell: CriterionResult | None) -> tuple[str, str]:
    """What a criterion cell of the matrix shows (``✓``, ``✗ 4``, ``✗.29``, ``⚠`` ...), and its style name."""
    mark = status_mark(criterion.kind, cell)
    if cell is None or cell.status is Status.PENDING:
        return mark, "pending"
    if cell.status is Status.ERROR:
        return mark, "error"
    if cell.status is Status.UNJUDGED:
        return mark, "unjudged"
    return mark, "good" if (cell.status is Status.MET) != criterion.is_penalty else "bad"


VERDICT_TEXT = {
    Verdict.PASS: ("✓ pass", "pass"),
    Verdict.FAIL: ("✗ fail", "fail"),
    Verdict.ERROR: ("⚠ error", "error"),
    Verdict.PENDING: ("⋯", "pending"),
    Verdict.UNJUDGED: ("unjudged", "unjudged"),
}
VERDICT_MARK = {
    Verdict.PASS: ("✓ pass", "pass"),
    Verdict.FAIL: ("✗ fail", "fail"),
    Verdict.ERROR: ("⚠ err", "error"),
    Verdict.PENDING: ("⋯", "pending"),
    Verdict.UNJUDGED: ("·", "unjudged"),
}


def verdict_text(result: SampleResult | None) -> tuple[str, str]:
    """A sample's verdict in words (the inspector), and its style name."""
    if result is None:
        return "⋯", "pending"
    return VERDICT_TEXT.get(result.verdict, (str(result.verdict), "pending"))


def verdict_mark(result: SampleResult | None) -> tuple[str, str]:
    """The matrix's verdict column: ``✓ pass`` / ``✗ fail`` / ``⚠ err`` / ``⋯`` / ``·``."""
    if result is None:
        return "⋯", "pending"
    return VERDICT_MARK.get(result.verdict, (str(result.verdict), "pending"))


def score_cell(result: SampleResult | None) -> str:
    """The score column with its gaps: `` 0.56 ``; a sample without a final verdict shows its
    partial figure bracketed, ``[.56] `` (the opening bracket in the gap before), never as a score."""
    if result is None or (result.score is None and result.partial_score is None):
        return " " * (GAP + SCORE_W + GAP)
    if result.score is not None:
        return " " * GAP + fit(f"{result.score:.2f}", SCORE_W) + " " * GAP
    partial = score_label(None, result.partial_score, digits=2, compact=True)
    return fit(partial, GAP + SCORE_W) + " " * GAP


def human_text(result: SampleResult | None, label: Label | None) -> tuple[str, str]:
    """The human column: the label's verdict, with ``≠`` when the rubric's final verdict differs;
    ``⋈ tie`` when annotators split evenly on it (not adjudicated), ``·`` when nobody labelled it."""
    if label is not None and label.verdict_tied:
        return TIE_TEXT, "tie"
    if label is None or label.verdict is None:
        return "·", "pending"
    if label_verdict_disagrees(result, label):
        return f"{label.verdict}≠", "disagree"
    return label.verdict, "human"


def older_wording(label: Label | None, criterion_id: str, wordings: Mapping[str, str]) -> bool:
    """Whether ``label``'s met / unmet for ``criterion_id`` was given under an older wording of the
    criterion than the one now (``wordings``: criterion id -> wording fingerprint now); a label
    that recorded no wording is not older (:func:`~rubric_studio.core.labels.wording_state`)."""
    fingerprint = wordings.get(criterion_id)
    return fingerprint is not None and wording_state(label, criterion_id, fingerprint) == OLDER_WORDING


def squeeze(text: str, width: int) -> str:
    """``text`` in ``width`` cells: first without its space ("✓ 10" → "✓10"), then without "≠"."""
    if cell_len(text) > width:
        text = text.replace(" ", "", 1)
    if cell_len(text) > width:
        text = text.replace("≠", "")
    return text


def column_title(criterion: Criterion, width: int) -> str:
    """A criterion's id cut to ``width`` with …, keeping the ``*`` of a required one."""
    if not criterion.required:
        return fit(criterion.key, width)
    if cell_len(criterion.key) + 1 <= width:
        return fit(criterion.key + "*", width)
    return fit(criterion.key, width - 1).rstrip() + "*"


def _hyphen_splits(title: str) -> list[tuple[str, str]]:
    """Every way to break ``title`` after one of its hyphens (none when it has none)."""
    return [(title[: i + 1], title[i + 1 :]) for i, ch in enumerate(title[:-1]) if ch == "-"]


def two_line_width(title: str) -> int:
    """The narrowest a column can be and still show ``title`` whole on two lines broken at a
    hyphen (its whole width when it has no hyphen)."""
    widths = [max(cell_len(a), cell_len(b)) for a, b in _hyphen_splits(title)]
    return min([cell_len(title), *widths])


def title_lines(criterion: Criterion, width: int) -> tuple[str, str]:
    """A criterion's title in a column ``width`` wide, as (first line, second line): on the second
    line alone when it fits (the first empty); on two, broken after the hyphen that fits both
    halves, when that shows it whole (``asks-for-`` / ``credentials``); else cut with … on one
    line (a compact column: two lines of cut pieces would read worse), keeping a ``*``."""
    title = full_title(criterion)
    if cell_len(title) <= width:
        return "", title
    whole = [(a, b) for a, b in _hyphen_splits(title) if cell_len(a) <= width and cell_len(b) <= width]
    if whole:
        return min(whole, key=lambda ab: max(cell_len(ab[0]), cell_len(ab[1])))
    return "", column_title(criterion, width)


def full_title(criterion: Criterion) -> str:
    """The column's whole title: the id, and ``*`` when required."""
    return terminal_safe(criterion.key) + ("*" if criterion.required else "")


LEGEND: tuple[tuple[str, str, str], ...] = (
    ("✓", "good", "met"),
    ("✗", "bad", "unmet (red: bad for the sample)"),
    ("✓ 8", "good", "judge score 0-10"),
    ("✗.29", "bad", "check score"),
    ("⚠", "error", "error"),
    ("·", "unjudged", "unjudged"),
    ("⋯", "pending", "pending"),
    ("↑↓", "flip-up", "flipped since the last version"),
    ("≠", "disagree", "differs from your label"),
    (MADE_UP, "made-up", "made-up quote"),
    ("*", "header", "required"),
)
#: Added to the legend while some sample's annotators tie on its verdict.
TIE_LEGEND = (TIE_MARK, "tie", "people tie (no consensus)")
#: Added to the legend while some label shown was given under an older wording of its criterion.
OLDER_LEGEND = (OLDER_MARK, "older", "label given under an older wording")
LEGEND_LINES = 4  # at most
