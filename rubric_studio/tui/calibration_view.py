"""Calibration in the studio: the agreement panel, label dialogs, fit and versions screens.

Attributes down, messages up: the app feeds data in through methods
(:meth:`AgreementPanel.show`) and screen constructors, and hears back through
:class:`AgreementPanel.JumpToSample` and the screens' dismiss values. Nothing here
touches files or the engine. Styles live in the studio's one stylesheet, ``studio.tcss``.

Labeling keys (:data:`CALIBRATION_KEYS`, also as Textual bindings in
:data:`CALIBRATION_BINDINGS`) are meant for the results matrix, single letters only
while it has focus. They avoid the matrix's own keys (f filter, s sort, r reverse,
n/N next flip, h/j/k/l move). The app implements the actions, e.g. ``p`` →
``labels_store.set_verdict(labels_path, sample_id, "pass")``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, DataTable, Input, OptionList, Static
from textual.widgets.option_list import Option

from rubric_studio.core.agreement import Agreement, AgreementReport
from rubric_studio.core.labels import Label
from rubric_studio.core.safe_text import escape_textual_markup, terminal_safe
from rubric_studio.engine.fit import FitResult
from rubric_studio.engine.versions import VersionDiff, VersionHistory

#: key → (action, description). Actions are the app's to implement.
CALIBRATION_KEYS: list[tuple[str, str, str]] = [
    ("p", "label_verdict('pass')", "Label: sample passes"),
    ("x", "label_verdict('fail')", "Label: sample fails"),
    ("S", "label_score", "Label: score 0–10 (LabelScoreScreen)"),
    ("m", "label_cell('met')", "Label: selected criterion met"),
    ("u", "label_cell('unmet')", "Label: selected criterion unmet"),
    ("a", "label_note", "Label: note (LabelNoteScreen)"),
    ("c", "label_clear", "Clear the selected cell's label (on the sample column: the verdict)"),
    ("C", "label_clear_all", "Clear the sample's whole label"),
    ("right_square_bracket", "disagreement(1)", "Next disagreement"),
    ("left_square_bracket", "disagreement(-1)", "Previous disagreement"),
    ("F", "fit", "Fit threshold and weights (FitScreen)"),
    ("V", "versions", "Compare versions (VersionsScreen)"),
    ("K", "consistency_run", "Judge every cell K times (flip rates)"),
    ("I", "improve", "Improve the selected criterion: suggestions proven on your labels (ImproveScreen)"),
    ("e", "add_example", "Add the selected cell you labelled against the judge as an example of its criterion"),
]
CALIBRATION_BINDINGS = [
    Binding(key, action, description, show=False, key_display={"right_square_bracket": "]", "left_square_bracket": "["}.get(key))
    for key, action, description in CALIBRATION_KEYS
]


def step_through(ids: Sequence[str], current: str | None, step: int = 1) -> str | None:
    """The id after (``step`` 1) or before (−1) ``current`` in ``ids``, wrapping; None if empty."""
    if not ids:
        return None
    if current not in ids:
        return ids[0] if step > 0 else ids[-1]
    return ids[(list(ids).index(current) + step) % len(ids)]


def _f(value: float | None, pct: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:.0%}" if pct else f"{value:.2f}"


def agreement_cells(agreement: Agreement) -> list[str]:
    """One table row of figures: n, accuracy, kappa, false pass/fail, CI, coverage, alignment, matrix.

    The figures people act on come first, so they show in a narrow pane; the rest scrolls.
    """
    ci = agreement.kappa_ci
    return [
        str(agreement.n), _f(agreement.accuracy, True), _f(agreement.kappa), _f(agreement.false_pass_rate, True),
        _f(agreement.false_fail_rate, True), "" if ci is None else f"{ci[0]:.2f}…{ci[1]:.2f}",
        _f(agreement.coverage, True), _f(agreement.alignment),
        f"{agreement.both_pass}/{agreement.both_fail}/{agreement.rubric_pass_human_fail}/{agreement.rubric_fail_human_pass}",
    ]  # fmt: skip


COLUMNS = ("", "n", "acc", "κ", "false pass", "false fail", "κ 95% CI", "coverage", "align", "✓✓/✗✗/r✓h✗/r✗h✓")


class AgreementPanel(Widget):
    """Judge–human agreement: overall and per criterion, disagreements, warnings, versions."""

    class JumpToSample(Message):
        """The user picked a disagreeing sample: move the results cursor to it."""

        def __init__(self, sample_id: str) -> None:
            super().__init__()
            self.sample_id = sample_id

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.agreement: AgreementReport | None = None
        self.diff: VersionDiff | None = None
        self.flip_rates: dict[str, dict[str, Any]] | None = None
        self.repeat: int | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="agreement-version")
        table: DataTable[str] = DataTable(id="agreement-table", cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        yield table
        yield Static("", id="agreement-warnings")
        yield Static("disagreements", id="agreement-disagreements-title", classes="calibration-title")
        yield OptionList(id="agreement-disagreements")
        yield Static("", id="agreement-consistency")

    def on_mount(self) -> None:
        self._refresh_all()

    def show(
        self,
        agreement: AgreementReport,
        diff: VersionDiff | None = None,
        flip_rates: dict[str, dict[str, Any]] | None = None,
        *,
        repeat: int | None = None,
    ) -> None:
        """Display a new agreement report (and the latest version diff, flip rates of a run
        that judged every cell ``repeat`` times)."""
        self.agreement, self.diff, self.flip_rates, self.repeat = agreement, diff, flip_rates, repeat
        if self.is_mounted:
            self._refresh_all()

    def focus(self, scroll_visible: bool = True) -> AgreementPanel:
        """Focus the figures table (the panel itself takes no focus)."""
        if self.is_mounted:
            self.query_one("#agreement-table", DataTable).focus(scroll_visible)
        return self

    @property
    def disagreement_ids(self) -> list[str]:
        return self.agreement.disagreeing_ids() if self.agreement else []

    def next_disagreement(self, current: str | None, step: int = 1) -> str | None:
        """The disagreeing sample after / before ``current`` (for ``]`` / ``[``)."""
        return step_through(self.disagreement_ids, current, step)

    def _refresh_all(self) -> None:
        report = self.agreement
        version = self.query_one("#agreement-version", Static)
        if self.diff is not None:
            text = Text(terminal_safe(self.diff.summary_line()), style="bold")
            for line in self.diff.criterion_lines():
                text.append("\n  " + terminal_safe(line), style="dim")
            version.update(text)
        else:
            version.update(Text("first version of this session", style="dim"))
        table = self.query_one("#agreement-table", DataTable)
        table.clear()
        options = self.query_one("#agreement-disagreements", OptionList)
        options.clear_options()
        warnings = self.query_one("#agreement-warnings", Static)
        if report is None:
            warnings.update(Text("no agreement yet: label samples (p / x) to compare", style="dim"))
            return
        table.add_row(*(["overall", *agreement_cells(report.overall)]), key="overall")
        for cid, figures in report.criteria.items():
            table.add_row(*([cid, *agreement_cells(figures)]), key=f"criterion:{cid}")
        warnings.update(Text("\n".join(f"⚠ {terminal_safe(w)}" for w in report.warnings), style="yellow"))
        title = Text(f"disagreements ({len(report.disagreements)}) — enter jumps to the sample\n", style="bold")
        title.append("] / [ next / previous in Results · F fit threshold & weights · V versions · K judge K times"
                     " · I improve a criterion", style="dim")
        self.query_one("#agreement-disagreements-title", Static).update(title)
        options.add_options([Option(self._disagreement_text(d), id=d["id"]) for d in report.disagreements])
        self.query_one("#agreement-consistency", Static).update(self._consistency_text())

    @staticmethod
    def _disagreement_text(item: dict[str, Any]) -> Text:
        parts: list[tuple[str, str]] = [(terminal_safe(item["id"]), "bold")]
        if item["human"] is not None and item["human"] != item["rubric"]:
            parts.append((f"human {item['human']} · rubric {item['rubric']}", "magenta"))
        if item["criteria"]:
            parts.append(("cells: " + ", ".join(item["criteria"]), "dim"))
        text = Text()
        for index, (part, style) in enumerate(parts):
            if index:
                text.append("   ")
            text.append(part, style=style)
        return text

    def _consistency_text(self) -> Text:
        if not self.flip_rates:
            return Text("")
        k = f"{self.repeat}" if self.repeat and self.repeat > 1 else "K"
        text = Text()
        text.append(f"consistency: every judged cell judged {k} times (cells show the majority)\n", style="bold")
        ordered = sorted(self.flip_rates.items(), key=lambda item: -item[1].get("flip_rate", 0.0))
        for cid, entry in ordered:
            rate = entry.get("flip_rate", 0.0)
            line = f"  {cid}: flip rate {rate:.0%} of {entry.get('cells', 0)} cells"
            if rate > 0:
                line += " — ambiguous wording? flips on " + terminal_safe(", ".join(entry.get("samples", [])))
            text.append(line + "\n", style="yellow" if rate > 0 else "")
        return text

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.JumpToSample(event.option.id))


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
            yield Input(self.note, placeholder="why this verdict?", id="label-note-text", select_on_focus=False)

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
            yield Input(value, placeholder="0-10", id="label-score-input")
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
    return [name, f"{_f(cur.accuracy, True)} → {_f(new.accuracy, True)}", f"{_f(cur.kappa)} → {_f(new.kappa)}", str(cur.n)]


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
    for line in diff.criterion_lines():
        text.append(f"  {terminal_safe(line)}\n")
    for title, ids, style in (("fail→pass", diff.to_pass, "green"), ("pass→fail", diff.to_fail, "red"),
                              ("fixed", diff.overall.fixed, "green"), ("broke", diff.overall.broken, "red")):
        if ids:
            text.append(f"  {title}: " + terminal_safe(", ".join(ids)) + "\n", style=style)
    for figure, (before, after) in diff.deltas.get("overall", {}).items():
        if before != after:
            text.append(f"  {figure}: {_f(before)} → {_f(after)}\n", style="dim")
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
