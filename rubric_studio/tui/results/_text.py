"""What the results matrix writes in its cells and headers, as plain text and style names.

Every string the matrix draws goes through :func:`fit` (terminal-safe, cut with ``…``);
cells are compact (``✓``, ``✗ 4``, ``✗.29``, ``⚠``, ``·``, ``⋯``) so that a rubric's
criteria fit beside the editor, and the inspector and the cell hint use the same words
(:func:`cell_text`, :func:`verdict_text`). Style names are the ``matrix--<name>``
component classes of :class:`~rubric_studio.tui.results._matrix.ResultsMatrix`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

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
TITLE_LINES = 3  # a criterion's title takes up to this many header lines before it is cut
TITLE_WRAP_MIN = 8  # a column narrower than this has a one-line title (pieces of 5 cells read worse)
CRIT_WHOLE = 20  # a column grows to this to show a long title whole on TITLE_LINES lines (48 characters)
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


def title_pieces(text: str) -> list[str]:
    """``text`` in the pieces a title may be broken between: after each hyphen, and before ``…``."""
    pieces, piece = [], ""
    for char in text:
        if char == "…" and piece:
            pieces.append(piece)
            piece = ""
        piece += char
        if char == "-":
            pieces.append(piece)
            piece = ""
    return [*pieces, piece] if piece else pieces


def wrap_title(text: str, width: int) -> list[str] | None:
    """``text`` on as few lines of ``width`` cells as its pieces allow (:func:`title_pieces`), each
    line as full as it goes; None when a piece alone is wider than ``width``."""
    lines: list[str] = []
    for piece in title_pieces(text):
        if cell_len(piece) > width:
            return None
        if lines and cell_len(lines[-1] + piece) <= width:
            lines[-1] += piece
        else:
            lines.append(piece)
    return lines


def lines_width(title: str, lines: int) -> int:
    """The narrowest a column can be and still show ``title`` whole on ``lines`` lines broken at
    its hyphens (its whole width when it has none)."""
    width = max((cell_len(piece) for piece in title_pieces(title)), default=0)
    while True:
        wrapped = wrap_title(title, width)
        if wrapped is not None and len(wrapped) <= lines:
            return width
        width += 1


def _balanced(text: str, width: int) -> list[str] | None:
    """``text`` wrapped in ``width`` cells on as few lines as it takes, their lengths as even as
    that allows (the narrowest width that keeps that many lines)."""
    lines = wrap_title(text, width)
    if lines is None:
        return None
    narrowest = lines_width(text, len(lines))
    return wrap_title(text, narrowest) if narrowest < width else lines


def shared_prefix(key: str, others: Iterable[str]) -> int:
    """How many leading characters ``key`` shares with the id of another criterion most like it
    (0 when none starts like it): a header must show where the two part."""
    longest = 0
    for other in others:
        if other == key:
            continue
        common = 0
        for a, b in zip(key, other, strict=False):
            if a != b:
                break
            common += 1
        longest = max(longest, common)
    return longest


def header_title(criterion: Criterion, width: int, shared: int = 0) -> tuple[str, ...]:
    """A criterion's title in a column ``width`` wide, as its header lines, top first (at most
    :data:`TITLE_LINES`; one in a column narrower than :data:`TITLE_WRAP_MIN`).

    Whole when it fits, broken at hyphens (``asks-for-`` / ``credentials``). Else what fits of its
    start and its end with ``…`` between, always keeping the word where it parts from the id it
    shares its first ``shared`` characters with: ``policy-`` / ``…thirty-`` / ``days`` and
    ``policy-`` / ``…sixty-`` / ``days`` stay two columns, where ``policy-a…`` was twice the same.
    The focused line above the titles and the inspector show the id whole.
    """
    key = terminal_safe(criterion.key)
    star = "*" if criterion.required else ""
    lines = TITLE_LINES if width >= TITLE_WRAP_MIN else 1
    whole = _balanced(key + star, width)
    if whole is not None and len(whole) <= lines:
        return tuple(whole)
    starts = [0] + [i + 1 for i, char in enumerate(key[:-1]) if char == "-"]  # where each word starts
    best: tuple[int, int, list[str]] | None = None
    for tail in starts[1:]:
        for head in (i for i in starts if i < tail and (i > shared or tail <= shared)):  # shows where it parts
            shown = _balanced(key[:head] + "…" + key[tail:] + star, width)
            if shown is None or len(shown) > lines:
                continue
            score = (head + len(key) - tail, head)  # as much of the id as fits, then as much of its start
            if best is None or score > best[:2]:
                best = (*score, shown)
    if best is not None:
        return tuple(best[2])
    room = width - 1 - len(star)
    if shared < room:  # where it parts from the others shows in a plain cut
        return (column_title(criterion, width).rstrip(),)
    parting = max(max(i for i in starts if i <= shared), shared - room + 1)  # its word, or as much as fits
    return ("…" + key[parting:][:room] + star,)


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
