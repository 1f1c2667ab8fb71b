"""The Agreement table's columns, sized to the pane: every figure in view from 120 columns up.

The table has ten columns (criterion, n, acc, κ, false pass, false fail, κ 95% CI,
coverage, align and the ✓✓/✗✗/r✓h✗/r✗h✓ counts). :func:`plan_agreement` picks the first
of these layouts that fits the width, most readable first:

1. titles on one line, every value on one line;
2. titles over two lines ("false / pass");
3. as 2, with criterion ids wrapped (after a hyphen where possible) into what is left,
   when that leaves them :data:`ID_READABLE` cells (only rows with a long id take two lines);
4. the two widest values over two lines too (the CI's bounds, the four counts as agree / disagree);
5. as 4, with criterion ids wrapped into what is left.

Below that the table scrolls sideways, with the figures people act on (n, accuracy, κ,
false pass / fail) first. Columns are separated by a space of their own width (the
table's cell padding is 0), which is what lets ten columns fit beside the editor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

from rubric_studio.core.agreement import Agreement

#: (one-line title, two-line title) per column, in table order.
TITLES: tuple[tuple[str, str], ...] = (
    ("", ""),
    ("n", "n"),
    ("acc", "acc"),
    ("κ", "κ"),
    ("false pass", "false\npass"),
    ("false fail", "false\nfail"),
    ("κ 95% CI", "κ 95%\nCI"),
    ("coverage", "cover-\nage"),
    ("align", "align"),
    ("✓✓/✗✗/r✓h✗/r✗h✓", "✓✓/✗✗/\nr✓h✗/r✗h✓"),
)
COLUMNS = tuple(one for one, _ in TITLES)
WRAPPABLE = (6, 9)  # the CI and the counts: over two lines in the narrowest layouts
ID_MIN = 8  # the criterion column never gets narrower (the table scrolls instead)
ID_READABLE = 12  # wrapping ids beats wrapping every row's values while they keep this much
GAP = 1


def figure(value: float | None, pct: bool = False) -> str:
    """A figure for the table: ``0.59``, ``80%``, ``–`` when there is none."""
    if value is None:
        return "–"
    return f"{value:.0%}" if pct else f"{value:.2f}"


def agreement_cells(agreement: Agreement, *, wrap: bool = False) -> list[str]:
    """One table row of figures: n, accuracy, kappa, false pass/fail, CI, coverage, alignment, counts.

    The figures people act on come first, so they show in a narrow pane; ``wrap`` puts the
    CI's bounds and the counts (agree / disagree) on two lines each.
    """
    ci = agreement.kappa_ci
    agree, disagree = f"{agreement.both_pass}/{agreement.both_fail}/", f"{agreement.rubric_pass_human_fail}/{agreement.rubric_fail_human_pass}"
    interval = "" if ci is None else f"{ci[0]:.2f}…" + ("\n" if wrap else "") + f"{ci[1]:.2f}"
    return [
        str(agreement.n), figure(agreement.accuracy, True), figure(agreement.kappa), figure(agreement.false_pass_rate, True),
        figure(agreement.false_fail_rate, True), interval, figure(agreement.coverage, True), figure(agreement.alignment),
        agree + ("\n" if wrap else "") + disagree,
    ]  # fmt: skip


def wrap_id(text: str, width: int) -> str:
    """``text`` over lines of at most ``width`` cells, broken after a hyphen or underscore when one is near."""
    lines: list[str] = []
    while cell_len(text) > width:
        cut = max(text.rfind("-", 0, width), text.rfind("_", 0, width))
        cut = cut + 1 if cut >= width // 2 else width
        lines.append(text[:cut])
        text = text[cut:]
    return "\n".join([*lines, text])


@dataclass(frozen=True)
class AgreementLayout:
    """Titles, widths (gap included) and whether values and ids go over two lines."""

    titles: tuple[str, ...]
    widths: tuple[int, ...]
    header_height: int
    wrap_values: bool
    id_width: int  # criterion ids longer than this wrap

    @property
    def total(self) -> int:
        return sum(self.widths)


def _widest(text: str) -> int:
    return max((cell_len(line) for line in text.split("\n")), default=0)


def _layout(titles: Sequence[str], values: Sequence[Sequence[str]], ids: int, *, wrap: bool, room: int | None) -> AgreementLayout:
    """The layout with these titles: each column as wide as its title and values, plus the gap;
    the criterion column as wide as the longest id, or (``room`` given) what is left of ``room``."""
    widths = [max([_widest(title), *(_widest(row[index - 1]) for row in values)]) + GAP
              for index, title in enumerate(titles) if index]  # values start at the second column
    widths[-1] -= GAP  # nothing follows the last column
    id_width = ids if room is None else max(ID_MIN, min(ids, room - sum(widths) - GAP))
    height = max(title.count("\n") + 1 for title in titles)
    return AgreementLayout(tuple(titles), (id_width + GAP, *widths), height, wrap, id_width)


def plan_agreement(room: int, rows: Sequence[tuple[str, Agreement]]) -> AgreementLayout:
    """The most readable layout of ``rows`` (criterion id, figures) that fits ``room`` cells."""
    ids = max([cell_len(name) for name, _ in rows] + [ID_MIN])
    one_line = [one for one, _ in TITLES]
    two_lines = [two for _, two in TITLES]
    flat = [agreement_cells(figures) for _, figures in rows]
    wrapped = [agreement_cells(figures, wrap=True) for _, figures in rows]
    for titles, values, wrap in ((one_line, flat, False), (two_lines, flat, False)):
        layout = _layout(titles, values, ids, wrap=wrap, room=None)
        if layout.total <= room:
            return layout
    layout = _layout(two_lines, flat, ids, wrap=False, room=room)
    if layout.id_width >= min(ids, ID_READABLE) and layout.total <= room:
        return layout
    layout = _layout(two_lines, wrapped, ids, wrap=True, room=None)
    if layout.total <= room:
        return layout
    return _layout(two_lines, wrapped, ids, wrap=True, room=room)
