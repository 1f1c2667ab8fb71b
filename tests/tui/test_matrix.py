"""The results matrix (Pilot, a minimal host): compact cells, column widths to the terminal, the focused
line, the legend, made-up quote marks, the labelling queue key and the criterion filters."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.app import App, ComposeResult
from textual.geometry import Region

from rubric_studio.core.labels import Label
from rubric_studio.core.loading import load_rubric, parse_rubric
from rubric_studio.core.results import CriterionResult, Evidence, SampleResult, Status, Verdict
from rubric_studio.session.results_model import ResultsModel
from rubric_studio.tui.results import CRIT_MIN, ID_COMPACT, ID_MAX, ResultsMatrix
from tests.tui.studio_helpers import focused_on, graded, until

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "sample_rubrics" / "support_reply" / "support_reply.yaml"
RUBRIC = load_rubric(SUPPORT)  # 7 criteria with long ids, two of them required
IDS = [f"refund-within-window-{n}" for n in range(12)]


def results(status: Status = Status.MET) -> list[SampleResult]:
    out = []
    for sample_id in IDS:
        cells = []
        for criterion in RUBRIC.criteria:
            raw = 10 if criterion.kind == "analytic" else None
            cells.append(CriterionResult(criterion.key, status, score=1.0, raw_score=raw))
        out.append(SampleResult(sample_id, 1.0, Verdict.PASS, cells))
    return out


class Host(App):
    CSS_PATH = str(ROOT / "rubric_studio" / "tui" / "studio.tcss")

    def __init__(self, rows: int = len(IDS)) -> None:
        super().__init__()
        self.model = ResultsModel()
        self.model.set_criteria(RUBRIC.criteria)
        self.model.set_samples(IDS[:rows])
        self.model.update([r for r in results() if r.id in IDS[:rows]])

    def compose(self) -> ComposeResult:
        yield ResultsMatrix(self.model)


def lines(matrix: ResultsMatrix) -> list[str]:
    region = Region(0, 0, matrix.size.width, matrix.size.height)
    return [strip.text.rstrip() for strip in matrix.render_lines(region)]


async def test_six_of_seven_criteria_fit_in_72_columns():
    app = Host()
    async with app.run_test(size=(72, 30)) as pilot:  # the results pane beside the editor at 120 columns
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        assert len(matrix._shown_columns()) == 6
        assert matrix.id_width == ID_COMPACT and {c.width for c in matrix.columns} == {CRIT_MIN}
        focused, header, first = lines(matrix)[:3]
        assert focused == f" focused  {IDS[0]} · every criterion"
        assert header.startswith("12 samples  score verdict human│ res…* pol…* tone  asks… short no-b… +1›")
        assert first.startswith("refund-with… 1.00 ✓ pass  ·    │ ✓     ✓     ✓ 10  ✓     ✓     ✓")
        assert len(header) <= 72 and len(first) <= 72
        matrix.focus()
        await focused_on(app, matrix)
        await pilot.press("right", "right")
        assert matrix.current == (IDS[0], "policy-accurate")
        assert lines(matrix)[0] == f" focused  {IDS[0]} · policy-accurate*"  # whole, where the title is cut
        await pilot.press(*["right"] * 6)
        assert matrix.current[1] == "no-internal-links" and matrix.col_offset == 1
        assert "‹ pol…*" in lines(matrix)[1]


async def test_wide_table_shows_every_criterion_with_longer_titles_and_scrolls_back():
    app = Host()
    async with app.run_test(size=(72, 30)) as pilot:
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await focused_on(app, matrix)
        await pilot.press(*["right"] * 7)
        assert matrix.col_offset == 1
        await pilot.resize_terminal(120, 30)  # the editor hidden (f7): every column fits
        await pilot.pause()
        assert matrix.col_offset == 0 and len(matrix._shown_columns()) == 7
        # Titles get CRIT_MAX first, then the ids what they need (were cut at 16), then both share the rest.
        assert matrix.id_width == max(len(i) for i in IDS) > ID_MAX  # whole ids: titles on two lines leave room
        assert all(column.natural <= column.width <= column.full for column in matrix.columns)
        assert matrix.header_lines == 3  # a title too wide for its column takes two lines, not an …
        over, header, first = lines(matrix)[1:4]
        assert "resolves-" in over and "issue*" in header and "tone " in header and "+" not in header
        assert "…" not in over + header
        assert first.startswith(IDS[0] + "  1.00 ✓ pass")
        assert len(over) <= 120 and len(header) <= 120 and len(first) <= 120


async def test_flip_and_disagreement_marks_fit_the_compact_cells():
    app = Host()
    async with app.run_test(size=(72, 30)) as pilot:
        await pilot.pause()
        model, matrix = app.model, app.query_one(ResultsMatrix)
        model.start_run({r.id: r for r in results()})
        model.update(results(Status.UNMET))
        model.set_labels({IDS[0]: Label(verdict="fail", criteria={"tone": "met", "short": "met"})})
        matrix.reset()
        await pilot.pause()
        first, second = lines(matrix)[2:4]
        assert second.split("│ ", 1)[1].startswith("✗↓    ✗↓    ✗ 10↓ ✗↓    ✗↓")
        # "≠" (differs from the label) and the flip mark squeeze into 5 cells
        assert first.split("│ ", 1)[1].startswith("✗↓    ✗↓    ✗10≠↓ ✗↓    ✗≠↓")
        assert "✓ pass  fail≠│" in first  # the human's fail differs from the verdict
        assert len(first) <= 72


async def test_legend_only_in_room_the_rows_leave():
    few = Host(rows=3)
    async with few.run_test(size=(72, 30)) as pilot:
        await pilot.pause()
        shown = lines(few.query_one(ResultsMatrix))
        legend = "\n".join(shown[-4:])
        for item in ("✓ met", "✗ unmet", "✓ 8 judge score 0-10", "✗.29 check score", "⚠ error", "· unjudged",
                     "⋯ pending", "↑↓ flipped since the last version", "≠ differs from your label", "? made-up quote",
                     "* required"):
            assert item in legend
        assert shown[5] == "" and shown[-5] == ""
    many = Host()
    async with many.run_test(size=(72, 15)) as pilot:
        await pilot.pause()
        assert "✓ met" not in "\n".join(lines(many.query_one(ResultsMatrix)))


async def test_support_reply_fits_six_criteria_beside_the_editor(tmp_path: Path):
    from rubric_studio.tui.app import StudioApp

    folder = tmp_path / "support_reply"
    shutil.copytree(SUPPORT.parent, folder)
    app = StudioApp(folder / SUPPORT.name, watch=False)
    async with app.run_test(size=(120, 35)):
        await until(lambda: graded(app), what="graded, the editor ready")
        matrix = app.query_one(ResultsMatrix)
        await until(lambda: app.query_one("#left").display and len(matrix._shown_columns()) >= 6
                    and matrix.region.width >= 70,
                    what=lambda: f"the table laid out beside the editor ({len(matrix._shown_columns())} columns shown, "
                                 f"{matrix.region.width} wide)")
        assert app.query_one("#left").display
        assert len(matrix._shown_columns()) >= 6  # was 2 of 7
        assert matrix.region.width >= 70


# -- the terminal's width: whole ids and titles when there is room ---------------------------------
LONG_ID = "order-2024-05-03-blender-refnd"  # 30 characters
LONG_CRITERION = "states-the-refund-window"  # 24 characters
WIDE = parse_rubric(
    "name: wide\ncriteria:\n"
    f"  - id: {LONG_CRITERION}\n    outcome: States the window\n    required: true\n"
    "  - id: mentions-the-refund-amount\n    outcome: Says how much\n"
    "  - id: tone\n    outcome: Warm\n"
)


class ModelHost(App):
    """A results matrix over a model filled by the test."""

    CSS_PATH = Host.CSS_PATH

    def __init__(self, model: ResultsModel) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        yield ResultsMatrix(self.model)


def wide_model(*ids: str) -> ResultsModel:
    model = ResultsModel()
    model.set_criteria(WIDE.criteria)
    model.set_samples(ids)
    def cells() -> list[CriterionResult]:
        return [CriterionResult(c.key, Status.MET, score=1.0, source="judge") for c in WIDE.criteria]

    model.update([SampleResult(i, 1.0, Verdict.PASS, cells()) for i in ids])
    return model


async def test_a_wide_terminal_shows_whole_ids_and_whole_criterion_titles():
    assert (len(LONG_ID), len(LONG_CRITERION)) == (30, 24)
    app = ModelHost(wide_model(LONG_ID, "short-1"))
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        header, first = lines(matrix)[1:3]
        assert f"{LONG_CRITERION}* mentions-the-refund-amount tone" in header  # were cut at 12: "states-the-…"
        assert first.startswith(f"{LONG_ID} 1.00 ✓ pass")  # was cut at 16: "order-2024-05-0…"


async def test_a_small_terminal_keeps_the_table_inside_and_names_the_focused_cell_in_full():
    app = ModelHost(wide_model(LONG_ID, "short-1"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await focused_on(app, matrix)
        await pilot.press("right")
        shown = lines(matrix)
        assert all(len(line) <= 80 for line in shown)
        assert f"{LONG_CRITERION}*" not in shown[1]  # the title is cut in its column ...
        assert shown[0].startswith(f" focused  {LONG_ID} · {LONG_CRITERION}*")  # ... and whole on the focused line
        await pilot.resize_terminal(48, 24)  # the results pane beside the editor at 80 columns
        await pilot.pause()
        shown = lines(matrix)
        assert all(len(line) <= 48 for line in shown) and "›" in shown[1]
        assert shown[2].startswith(LONG_ID[: ID_COMPACT - 1] + "…")


async def test_a_made_up_quote_is_marked_in_its_cell_and_a_quote_of_the_input_is_not():
    model = wide_model("made-up", "from-input")
    made_up = Evidence("we never refund", False, reason="not in the sample")
    from_input = Evidence("my blender broke", False, reason="quoted from the input", quoted_from="input")
    for sample_id, quote in (("made-up", made_up), ("from-input", from_input)):
        model.results[sample_id].criteria[1].evidence = [quote]
    app = ModelHost(model)
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        made_up_row, input_row = (lines(matrix)[i].split("│ ", 1)[1].split() for i in (2, 3))
        assert made_up_row == ["✓", "✓?", "✓"] and input_row == ["✓", "✓", "✓"]
        segments = list(matrix._row_strip(0))
        mark = next(s for s in segments if s.text == "?")
        assert mark.style.color == matrix._style("made-up").color != matrix._style("good").color
        assert "? made-up quote" in "\n".join(lines(matrix)[-4:])


async def test_g_walks_the_samples_without_a_label_like_a_queue():
    model = wide_model("a", "b", "c", "d", "e")
    model.set_labels({"a": Label(verdict="pass"), "c": Label(criteria={"tone": "met"}), "d": Label(note="later")})
    app = ModelHost(model)
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        visited = []
        for _ in range(4):
            await pilot.press("g")
            visited.append(matrix.current[0])
        assert visited == ["b", "d", "e", "b"]  # a note alone is no label; wraps around
        await pilot.press("G")
        assert matrix.current[0] == "e"


async def test_a_criterion_filter_is_about_the_column_in_focus():
    model = wide_model("s1", "s2", "s3")
    model.results["s2"].criteria[2] = CriterionResult("tone", Status.UNMET, score=0.0)
    model.results["s3"].criteria[1] = CriterionResult("mentions-the-refund-amount", Status.UNMET, score=0.0)
    app = ModelHost(model)
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await focused_on(app, matrix)
        await pilot.press("right", "right", "right")  # on tone
        await pilot.press(*["f"] * 5)  # all → failing → disagree → errors → pending → unmet
        assert matrix.filter_kind == "unmet" and matrix.filter_label == "unmet: tone"
        assert matrix.rows == ["s2"] and "filter: unmet: tone" in lines(matrix)[0]
        matrix.select_criterion("mentions-the-refund-amount")
        assert matrix.rows == ["s2"]  # moving the cursor does not move the filter ...
        matrix.filter_kind = "unmet"  # ... picking it again does
        await pilot.pause()
        assert matrix.rows == ["s3"] and matrix.filter_label == "unmet: mentions-the-refund-amount"
        assert matrix.reveal_sample("s1") and matrix.filter_kind == "all" and matrix.current[0] == "s1"
