"""The help screen (``?`` in the results, F1 anywhere): keys, cell legend, judge setup."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rubric_studio.session.studio import JUDGE_HELP

LEGEND = [
    ("✓", "green", "met (a penalty met is bad: shown red)"),
    ("✗", "red", "not met"),
    ("✓ 8  ✗ 4", "", "analytic: the judge's 0–10 score"),
    ("✗.67", "", "check: its score in [0, 1]"),
    ("✗ 1–1 tie", "", "panel: members agreeing–disagreeing; tie: counted against the sample"),
    ("⚠", "yellow", "judge or check failed (inspect it); never a fail"),
    ("⋯", "dim", "pending: a judge call is on its way"),
    ("·", "dim", "unjudged: no judge configured, or an untrusted code check"),
    ("↑  ↓", "bold", "flipped since the last save: now met / now unmet (verdict: now pass / fail)"),
    ("≠", "magenta", "disagrees with the human label"),
    ("↺", "yellow", "the human label was given under an older wording of the criterion (R: the next one)"),
    ("⋈ tie", "bold yellow", "human column: annotators split evenly on the verdict (· there: nobody labelled it)"),
    ("✓?", "bold yellow", "made-up quote: in neither the output nor the input (the inspector shows it)"),
    ("id*", "", "required: unmet fails the sample"),
]


def bindings_table(title: str, bindings: Iterable[BindingType], extra: Iterable[tuple[str, str]] = (),
                   *, shown_only: bool = False) -> Table:
    """Keys and what they do; ``shown_only`` keeps the bindings the footer shows."""
    table = Table(title=title, title_justify="left", title_style="bold", box=None, show_header=False, pad_edge=False)
    table.add_column("key", style="bold cyan", no_wrap=True, min_width=14)
    table.add_column("action")
    for binding in bindings:
        if not isinstance(binding, Binding) or not binding.description or (shown_only and not binding.show):
            continue
        keys = binding.key_display or " / ".join(k.strip() for k in binding.key.split(","))
        table.add_row(keys, binding.description)
    for keys, description in extra:
        table.add_row(keys, description)
    return table


KEY_NAMES = {"right_square_bracket": "]", "left_square_bracket": "["}


def calibration_table(keys: Iterable[tuple[str, str, str]]) -> Table:
    """The labeling / calibration keys (results table), and the palette-only commands."""
    table = Table(title="Labels & calibration (results table)", title_justify="left", title_style="bold",
                  box=None, show_header=False, pad_edge=False)
    table.add_column("key", style="bold cyan", no_wrap=True, min_width=4)
    table.add_column("action")
    for key, _action, description in keys:
        table.add_row(KEY_NAMES.get(key, key), re.sub(r" \((\w+Screen|flip rates)\)$", "", description))
    table.add_row("ctrl+p", "Export rubric as … / Import rubric from file…")
    table.add_row("ctrl+p", "Compare judges… (which judge agrees with your labels, at what cost)")
    return table


class HelpScreen(ModalScreen[None]):
    """Keys, what the cells mean, and how to configure a judge."""

    BINDINGS = [
        Binding("escape,q,f1,question_mark", "dismiss", "Close", show=True),
    ]

    def __init__(self, app_bindings: Iterable[BindingType], matrix_bindings: Iterable[BindingType],
                 calibration_keys: Iterable[tuple[str, str, str]] = ()) -> None:
        super().__init__()
        self._app_bindings = list(app_bindings)
        self._matrix_bindings = list(matrix_bindings)
        self._calibration_keys = list(calibration_keys)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text("rubric-studio — help", style="bold"), id="help-title")
            yield Static(
                "Left: the rubric (edit it; ctrl+s saves and re-grades). Right: every sample × criterion, "
                "re-graded whenever the rubric, samples or labels change on disk. Only cells whose inputs "
                "changed are re-judged; the rest come from memory or the reply cache.",
                classes="help-para",
            )
            with Horizontal(id="help-columns"):
                with Vertical(classes="help-column"):
                    yield Static(bindings_table("Anywhere", self._app_bindings, [
                        ("ctrl+p", "Command palette (every action)"),
                        ("tab / shift+tab", "Move focus"),
                        ("ctrl+z / ctrl+y", "Undo / redo: edits in the editor, labels in the results table"),
                        ("ctrl+a / ctrl+k", "In a text field: select all / delete to the end of the line"),
                    ]), classes="help-section")
                    yield Static(bindings_table("Results table", self._matrix_bindings, [
                        ("r", "Reverse the sort"),
                        ("? ", "This help"),
                        ("↑↓←→ / hjkl", "Move the cursor"),
                        ("pgup pgdn home end", "Scroll"),
                        ("n / N", "Next / previous flipped row"),
                        ("g / G", "Next / previous sample without a label (a labelling queue)"),
                        ("/", "Search ids, inputs and outputs; enter keeps it, esc clears it"),
                        ("f …", "all → failing → disagreeing → errors → pending → focused criterion unmet → "
                                "its errors → made-up quote → no label yet → split panel → people disagree"),
                        ("D", "People disagree: only the samples annotators labelled differently (again: all)"),
                        ("click", "Select; double-click inspects"),
                    ], shown_only=True), classes="help-section")
                with Vertical(classes="help-column"):
                    legend = Table(title="Cells", title_justify="left", title_style="bold", box=None,
                                   show_header=False, pad_edge=False)
                    legend.add_column("cell", no_wrap=True, min_width=10)
                    legend.add_column("meaning")
                    for cell, style, meaning in LEGEND:
                        legend.add_row(Text(cell, style=style), meaning)
                    yield Static(legend, classes="help-section")
                    if self._calibration_keys:
                        yield Static(calibration_table(self._calibration_keys), classes="help-section")
                    yield Static(Text.assemble(("Judge\n", "bold"), JUDGE_HELP), classes="help-section")
            yield Static(Text("esc / q / F1 closes this screen", style="dim"), id="help-foot")
