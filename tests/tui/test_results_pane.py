"""The Results tab's search box over the matrix, and the Agreement table beside the editor (Pilot hosts)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Input

from rubric_studio.core.agreement import agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict
from rubric_studio.core.samples import Sample
from rubric_studio.session.results_model import ResultsModel
from rubric_studio.tui.calibration import AgreementPanel
from rubric_studio.tui.results import ResultsMatrix, ResultsPane
from tests.tui.studio_helpers import focused_on

ROOT = Path(__file__).resolve().parents[2]
CSS = str(ROOT / "rubric_studio" / "tui" / "studio.tcss")
SUPPORT = load_rubric(ROOT / "sample_rubrics" / "support_reply" / "support_reply.yaml")
SAMPLES = [
    Sample("order-17", "Refunds take 5-7 business days.", input="Can I get my MONEY back?"),
    Sample("order-18", "We refunded the second charge.", input="I was charged twice"),
    Sample("refund-3", "That is outside the 30-day window."),
]


def graded(statuses: dict[str, Status]) -> list[SampleResult]:
    return [SampleResult(sample.id, 1.0, Verdict.PASS,
                         [CriterionResult(c.key, statuses.get(sample.id, Status.MET), score=1.0) for c in SUPPORT.criteria])
            for sample in SAMPLES]


class PaneHost(App):
    CSS_PATH = CSS
    BINDINGS = [Binding("escape", "escaped", "Escape")]

    def __init__(self) -> None:
        super().__init__()
        self.model = ResultsModel()
        self.model.set_criteria(SUPPORT.criteria)
        self.model.set_samples(SAMPLES)
        self.model.update(graded({}))
        self.escapes = 0

    def compose(self) -> ComposeResult:
        yield ResultsPane(self.model, id="results-pane")

    def action_escaped(self) -> None:
        self.escapes += 1


async def test_slash_searches_ids_inputs_and_outputs_and_esc_clears_it():
    app = PaneHost()
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        pane, matrix = app.query_one(ResultsPane), app.query_one(ResultsMatrix)
        box = pane.query_one("#results-search", Input)
        matrix.focus()
        assert not box.display
        await pilot.press("slash")
        assert box.display and box.has_focus
        await pilot.press(*"money")  # in order-17's input, in another case
        await pilot.pause()
        assert matrix.rows == ["order-17"] and matrix.filter_kind == "all" and matrix.sort_by == "file"
        assert "search: “money”" in matrix._focus_strip(100).text
        await pilot.press("enter")  # back to the table, keeping the search
        assert matrix.has_focus and box.display and matrix.rows == ["order-17"]
        await pilot.press("escape")  # in the table: closes and clears
        await pilot.pause()
        assert not box.display and box.value == "" and matrix.search == ""
        assert matrix.rows == ["order-17", "order-18", "refund-3"] and matrix.has_focus
        assert app.escapes == 0
        await pilot.press("escape")  # nothing to clear: esc is the app's
        assert app.escapes == 1


async def test_esc_in_the_box_clears_and_the_search_combines_with_a_filter():
    app = PaneHost()
    app.model.update([r for r in graded({"order-18": Status.UNMET}) if r.id == "order-18"])
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await focused_on(app, matrix)
        await pilot.press("slash", *"refund")
        await pilot.pause()
        assert matrix.rows == ["order-17", "order-18", "refund-3"]  # output, output, id
        matrix.filter_kind = "unmet"
        await pilot.pause()
        assert matrix.rows == ["order-18"]
        await pilot.press("escape")
        await pilot.pause()
        assert matrix.search == "" and matrix.rows == ["order-18"] and matrix.has_focus


async def test_showing_a_sample_the_search_hides_clears_the_box_too():
    app = PaneHost()
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        pane, matrix = app.query_one(ResultsPane), app.query_one(ResultsMatrix)
        matrix.focus()
        await focused_on(app, matrix)
        await pilot.press("slash", *"charged", "enter")
        await pilot.pause()
        assert matrix.rows == ["order-18"]
        assert matrix.reveal_sample("refund-3")  # e.g. a disagreement picked in the Agreement tab
        await pilot.pause()
        assert matrix.current[0] == "refund-3" and len(matrix.rows) == 3
        assert pane.search_box.value == "" and not pane.searching


# -- the Agreement table: every column in view beside the editor ----------------------------------
def support_report():
    statuses = ("met", "unmet", "met", "unmet", "met", "met")
    results, labels = [], {}
    for n, status in enumerate(statuses):
        cells = {c.key: status if c.kind != "analytic" else "met" for c in SUPPORT.criteria}
        results.append(SampleResult(f"s{n}", None, Verdict.PASS if n % 2 else Verdict.FAIL,
                                    [CriterionResult(k, Status(v), score=1.0 if v == "met" else 0.0)
                                     for k, v in cells.items()]))
        labels[f"s{n}"] = Label(verdict="pass" if n % 3 else "fail", criteria={k: "met" for k in cells})
    return agreement(results, labels, SUPPORT)


class AgreementHost(App):
    CSS_PATH = CSS

    def compose(self) -> ComposeResult:
        yield AgreementPanel(id="agreement-view")


async def test_the_agreement_table_fits_the_pane_at_120_and_140_columns_and_reads_at_80():
    app = AgreementHost()
    # The Agreement pane's width beside the editor at 140, 120 and 80 columns.
    async with app.run_test(size=(84, 40)) as pilot:
        panel = app.query_one(AgreementPanel)
        panel.show(support_report())
        await pilot.pause()
        table = panel.query_one("#agreement-table", DataTable)
        for width in (84, 72):
            await pilot.resize_terminal(width, 40)
            await pilot.pause()
            assert table.virtual_size.width <= table.scrollable_content_region.width, width  # nothing cut
            assert table.row_count == 1 + len(SUPPORT.criteria) and table.get_row_at(0)[:3] == ["overall", "6", "50%"]
        await pilot.resize_terminal(48, 40)
        await pilot.pause()
        first_figures = sum(column.get_render_width(table) for column in table.ordered_columns[:6])
        assert first_figures <= table.scrollable_content_region.width  # criterion, n, acc, κ, false pass / fail
        table.move_cursor(row=table.get_row_index("criterion:tone"))
        await pilot.resize_terminal(200, 40)
        await pilot.pause()
        assert panel.layout_plan is not None and panel.layout_plan.header_height == 1
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == "criterion:tone"


async def test_the_new_keys_are_free_and_listed_in_the_help():
    from rubric_studio.tui.calibration import CALIBRATION_KEYS
    from rubric_studio.tui.help import HelpScreen

    calibration = {key for key, _, _ in CALIBRATION_KEYS}
    matrix_keys = [key for binding in ResultsMatrix.BINDINGS for key in binding.key.split(",")]
    assert len(matrix_keys) == len(set(matrix_keys)) and not {"g", "G", "slash"} & calibration
    app = PaneHost()
    async with app.run_test(size=(140, 60)) as pilot:
        app.push_screen(HelpScreen([], ResultsMatrix.BINDINGS, CALIBRATION_KEYS))
        await pilot.pause()
        console = Console(file=io.StringIO(), width=200)
        for static in app.screen.query("Static"):
            console.print(static.content)
        shown = console.file.getvalue()
        assert "g / G" in shown and "without a label" in shown
        assert "Search ids, inputs and outputs" in shown and "made-up quote" in shown
