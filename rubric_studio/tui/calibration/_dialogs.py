"""Calibration dialogs: a label's note and score, fitting the threshold and weights, comparing versions.

Each screen gets its data through its constructor and answers through its dismiss value
(the app decides what to write): :class:`LabelNoteScreen` and :class:`LabelScoreScreen`
for a label, :class:`FitScreen` (accept a fit), :class:`VersionsScreen` (any two versions
side by side). Styles live in the studio's one stylesheet, ``studio.tcss``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from rubric_studio.core.agreement import Agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.safe_text import escape_textual_markup, terminal_safe
from rubric_studio.engine.fit import FitResult
from rubric_studio.engine.versions import VersionDiff, VersionHistory
from rubric_studio.tui.calibration._layout import figure
from rubric_studio.tui.editor import TextInput


class LabelNoteScreen(ModalScreen[str | None]):
    """Edit a sample's note (one line: enter saves, escape cancels).

    Dismisses with the text ("" clears the note) or None when cancelled. A note
    written by hand over several lines is shown joined by spaces (as YAML folds it).
    Enter rather than ctrl+s saves: the studio binds ctrl+s (save rubric) with priority.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, sample_id: str, note: str | None = None) -> None:
        super().__init__()
        self.sample_id, self.note = sample_id, " ".join((note or "").split())

    def compose(self) -> ComposeResult:
        with Vertical(id="label-note-dialog", classes="calibration-dialog"):
            yield Static(f"Note on [b]{escape_textual_markup(self.sample_id)}[/b] — enter saves, escape cancels",
                         classes="calibration-title")
            # The cursor goes to the end (nothing selected): a key pressed adds to the note.
            yield TextInput(self.note, placeholder="why this verdict?", id="label-note-text", select_on_focus=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


ScoreChoice = float | Literal["clear"]


class LabelScoreScreen(ModalScreen[ScoreChoice | None]):
    """Ask for a 0–10 score. Dismisses with the number, "clear" (empty input) or None (escape)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, sample_id: str, score: float | None = None) -> None:
        super().__init__()
        self.sample_id, self.score = sample_id, score

    def compose(self) -> ComposeResult:
        with Vertical(id="label-score-dialog", classes="calibration-dialog"):
            yield Static(f"Score for [b]{escape_textual_markup(self.sample_id)}[/b], 0–10 (empty clears)",
                         classes="calibration-title")
            value = "" if self.score is None else f"{self.score:g}"
            yield TextInput(value, placeholder="0-10", id="label-score-input")
            yield Static("", id="label-score-error", classes="calibration-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self.dismiss("clear")
            return
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 <= value <= 10:
            self.query_one("#label-score-error", Static).update(f"expected a number from 0 to 10, got {text!r}")
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _agreement_line(name: str, pair: Mapping[str, Agreement] | None) -> list[str]:
    if not pair:
        return [name, "–", "–", "0"]
    cur, new = pair["current"], pair["fitted"]
    return [name, f"{figure(cur.accuracy, True)} → {figure(new.accuracy, True)}", f"{figure(cur.kappa)} → {figure(new.kappa)}", str(cur.n)]


def fit_table(fit: FitResult) -> Table:
    """Current vs fitted values and agreement, as a rich table."""
    table = Table(box=None, show_header=True, pad_edge=False)
    for column in ("", "accuracy", "kappa", "n"):
        table.add_column(column)
    table.add_row("pass_threshold", f"{fit.current_threshold:g} → {fit.threshold:g}", "", "")
    for cid, (old, new) in fit.changed_weights.items():
        table.add_row(f"{cid} weight", f"{old:g} → {new:g}", "", "")
    for name, pair in (("train", fit.train), ("holdout", fit.holdout), ("all labels", fit.all)):
        table.add_row(*_agreement_line(name, pair))
    return table


class FitScreen(ModalScreen[bool]):
    """Show a fit; Accept dismisses True (the app then calls ``apply_fit``), Cancel False."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("enter", "accept", "Accept", show=False)]

    def __init__(self, fit: FitResult) -> None:
        super().__init__()
        self.fit = fit

    def compose(self) -> ComposeResult:
        fit = self.fit
        with Vertical(id="fit-dialog", classes="calibration-dialog"):
            yield Static("Fit pass_threshold and weights to your labels", classes="calibration-title")
            yield Static(fit_table(fit), id="fit-table")
            notes = Text()
            if not fit.changed:
                notes.append("The current rubric already agrees best with the labels: nothing to change.\n", style="green")
            notes.append(f"split: {len(fit.train_ids)} train / {len(fit.holdout_ids)} holdout (seed {fit.seed})\n", style="dim")
            for warning in fit.warnings:
                notes.append(f"⚠ {warning}\n", style="bold red" if "over-fitting" in warning else "yellow")
            yield Static(notes, id="fit-notes")
            with Horizontal(classes="calibration-buttons"):
                yield Button("Accept", id="fit-accept", variant="primary", disabled=not fit.changed)
                yield Button("Cancel", id="fit-cancel")

    def action_accept(self) -> None:
        if self.fit.changed:
            self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_accept() if event.button.id == "fit-accept" else self.action_cancel()


def diff_text(diff: VersionDiff) -> Text:
    """A version diff in detail: summary, per criterion, flipped samples, rubric edits."""
    text = Text(terminal_safe(diff.summary_line()) + "\n", style="bold")
    for change in diff.rubric_changes:
        text.append(f"  edit: {terminal_safe(change)}\n", style="cyan")
    for cause in diff.causes:
        text.append(f"  {terminal_safe(cause)}\n", style="magenta")
    for line in diff.criterion_lines():
        text.append(f"  {terminal_safe(line)}\n")
    for title, ids, style in (("fail→pass", diff.to_pass, "green"), ("pass→fail", diff.to_fail, "red"),
                              ("fixed", diff.overall.fixed, "green"), ("broke", diff.overall.broken, "red")):
        if ids:
            text.append(f"  {title}: " + terminal_safe(", ".join(ids)) + "\n", style=style)
    for name, (before, after) in diff.deltas.get("overall", {}).items():
        if before != after:
            text.append(f"  {name}: {figure(before)} → {figure(after)}\n", style="dim")
    return text


class VersionsScreen(ModalScreen[None]):
    """Pick any two versions of the session and see what changed between them."""

    BINDINGS = [Binding("escape,q", "dismiss_screen", "Close")]

    def __init__(self, history: VersionHistory, labels: Mapping[str, Label] | None = None) -> None:
        super().__init__()
        self.history, self.labels = history, labels
        versions = history.versions
        self.a = versions[-2].number if len(versions) > 1 else (versions[-1].number if versions else None)
        self.b = versions[-1].number if versions else None

    def compose(self) -> ComposeResult:
        with Vertical(id="versions-dialog", classes="calibration-dialog"):
            yield Static("Compare versions — left: from, right: to; escape closes", classes="calibration-title")
            with Horizontal(id="versions-pickers"):
                yield OptionList(*self._options(), id="versions-from")
                yield OptionList(*self._options(), id="versions-to")
            with VerticalScroll(id="versions-diff-scroll"):
                yield Static("", id="versions-diff")

    def _options(self) -> list[Option]:
        return [Option(v.label, id=str(v.number)) for v in reversed(self.history.versions)]

    def on_mount(self) -> None:
        for widget_id, number in (("#versions-from", self.a), ("#versions-to", self.b)):
            picker = self.query_one(widget_id, OptionList)
            if number is not None:
                picker.highlighted = picker.get_option_index(str(number))
        self._show()

    def compare(self, a: int, b: int) -> VersionDiff:
        """Select versions ``a`` → ``b`` and show their diff."""
        self.a, self.b = a, b
        return self._show()  # type: ignore[return-value]

    def _show(self) -> VersionDiff | None:
        target = self.query_one("#versions-diff", Static)
        if self.a is None or self.b is None:
            target.update(Text("no versions yet: save the rubric to record one", style="dim"))
            return None
        diff = self.history.diff(self.a, self.b, self.labels)
        target.update(diff_text(diff))
        return diff

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option.id is None:
            return
        if event.option_list.id == "versions-from":
            self.a = int(event.option.id)
        else:
            self.b = int(event.option.id)
        self._show()

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
