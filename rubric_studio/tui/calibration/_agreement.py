"""The Agreement panel: judge–human agreement overall and per criterion, and what to look at next.

Attributes down, messages up: the app feeds a report in with :meth:`AgreementPanel.show` and
hears back through :class:`AgreementPanel.JumpToSample`. The figures table is sized to the
pane (:mod:`~rubric_studio.tui.calibration._layout`) and laid out again when the pane is
resized, keeping the highlighted row. A criterion whose compared labels include some given
under an older wording of it reads ``tone ↺3`` (3 such labels; ``R`` visits yours). Nothing here
touches files or the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, OptionList, Static
from textual.widgets.option_list import Option

from rubric_studio.core.agreement import Agreement, AgreementReport
from rubric_studio.core.labels import OLDER_MARK
from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.engine.versions import VersionDiff
from rubric_studio.tui.calibration._layout import AgreementLayout, agreement_cells, plan_agreement, wrap_id
from rubric_studio.tui.key_order import focus_now
from rubric_studio.tui.label_keys import agreement_bindings

#: The panel's and the table's vertical scrollbars (studio.tcss), kept free so no column hides under one.
SCROLLBARS = 2


def step_through(ids: Sequence[str], current: str | None, step: int = 1) -> str | None:
    """The id after (``step`` 1) or before (−1) ``current`` in ``ids``, wrapping; None if empty."""
    if not ids:
        return None
    if current not in ids:
        return ids[0] if step > 0 else ids[-1]
    return ids[(list(ids).index(current) + step) % len(ids)]


def older_wording_name(report: AgreementReport, criterion_id: str) -> str:
    """A criterion's row name: its id, with ``↺N`` when N of its compared labels were given under an
    older wording of it."""
    older = len(report.older_wording(criterion_id))
    return f"{criterion_id} {OLDER_MARK}{older}" if older else criterion_id


class AgreementPanel(Widget):
    """Judge–human agreement: overall and per criterion, disagreements, warnings, versions."""

    BINDINGS = agreement_bindings()  # ] [ F V K I, while the panel has focus

    @dataclass
    class JumpToSample(Message):
        """The user picked a disagreeing sample: move the results cursor to it."""

        sample_id: str

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.agreement: AgreementReport | None = None
        self.diff: VersionDiff | None = None
        self.flip_rates: dict[str, dict[str, Any]] | None = None
        self.repeat: int | None = None
        self.layout_plan: AgreementLayout | None = None
        self.humans: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="agreement-version")
        yield DataTable(id="agreement-table", cursor_type="row", zebra_stripes=True, cell_padding=0)
        yield Static("", id="agreement-humans")
        yield Static("", id="agreement-warnings")
        yield Static("disagreements", id="agreement-disagreements-title", classes="calibration-title")
        yield OptionList(id="agreement-disagreements")
        yield Static("", id="agreement-consistency")

    def on_mount(self) -> None:
        self._refresh_all()

    def on_resize(self, event: events.Resize) -> None:
        if self.agreement is not None and self._plan() != self.layout_plan:
            self._fill_table()

    def show(
        self,
        agreement: AgreementReport,
        diff: VersionDiff | None = None,
        flip_rates: dict[str, dict[str, Any]] | None = None,
        *,
        repeat: int | None = None,
        humans: dict[str, Any] | None = None,
    ) -> None:
        """Display a new agreement report (and the latest version diff, flip rates of a run
        that judged every cell ``repeat`` times)."""
        self.agreement, self.diff, self.flip_rates, self.repeat = agreement, diff, flip_rates, repeat
        self.humans = humans
        if self.is_mounted:
            self._refresh_all()

    def show_humans(self, humans: dict[str, Any] | None) -> None:
        """Display new figures of agreement among the annotators (the humans row)."""
        self.humans = humans
        if self.is_mounted and self.agreement is not None:
            from rubric_studio.tui.calibration._annotators import humans_row

            self.query_one("#agreement-humans", Static).update(humans_row(humans))

    def focus(self, scroll_visible: bool = True) -> AgreementPanel:
        """Focus the figures table (the panel itself takes no focus)."""
        if self.is_mounted:
            focus_now(self.query_one("#agreement-table", DataTable), scroll_visible)
        return self

    @property
    def disagreement_ids(self) -> list[str]:
        return self.agreement.disagreeing_ids() if self.agreement else []

    def next_disagreement(self, current: str | None, step: int = 1) -> str | None:
        """The disagreeing sample after / before ``current`` (for ``]`` / ``[``)."""
        return step_through(self.disagreement_ids, current, step)

    # -- the figures table ---------------------------------------------------------------
    def _rows(self) -> list[tuple[str, str, Agreement]]:
        """(row key, first cell, figures) of every row: overall, then each criterion."""
        report = self.agreement
        if report is None:
            return []
        return [("overall", "overall", report.overall),
                *((f"criterion:{cid}", older_wording_name(report, cid), figures)
                  for cid, figures in report.criteria.items())]

    def _plan(self) -> AgreementLayout:
        room = (self.content_region.width or self.size.width or 200) - SCROLLBARS
        return plan_agreement(room, [(name, figures) for _, name, figures in self._rows()])

    def _fill_table(self) -> None:
        """(Re)build the table in the layout that fits, keeping the highlighted row."""
        table = self.query_one("#agreement-table", DataTable)
        keep = None
        if table.row_count:
            keep = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        plan = self.layout_plan = self._plan()
        table.clear(columns=True)
        table.header_height = plan.header_height
        for index, (title, width) in enumerate(zip(plan.titles, plan.widths, strict=True)):
            table.add_column(title, width=width, key=f"column-{index}")
        for key, name, figures in self._rows():
            shown = wrap_id(name, plan.id_width)
            height = None if plan.wrap_values or "\n" in shown else 1
            table.add_row(shown, *agreement_cells(figures, wrap=plan.wrap_values), key=key, height=height)
        if keep is not None:
            table.move_cursor(row=table.get_row_index(keep))

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
        options = self.query_one("#agreement-disagreements", OptionList)
        options.clear_options()
        warnings = self.query_one("#agreement-warnings", Static)
        if report is None:
            self.query_one("#agreement-table", DataTable).clear(columns=True)
            warnings.update(Text("no agreement yet: label samples (p / x) to compare", style="dim"))
            return
        self._fill_table()
        from rubric_studio.tui.calibration._annotators import humans_row

        self.query_one("#agreement-humans", Static).update(humans_row(self.humans))
        warnings.update(Text("\n".join(f"⚠ {terminal_safe(w)}" for w in report.warnings), style="yellow"))
        title = Text(f"disagreements ({len(report.disagreements)}) — enter jumps to the sample\n", style="bold")
        title.append("] / [ next / previous in Results · F fit threshold & weights · V versions · K judge K times"
                     " · I improve a criterion", style="dim")
        if any(report.older_wording(cid) for cid in report.criteria):
            title.append(f"\n{OLDER_MARK} labels given under an older wording of their criterion: R re-checks yours",
                         style="yellow")
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
