"""The results matrix's layout: compact cells, column widths, the legend (Pilot, a minimal host)."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.app import App, ComposeResult
from textual.geometry import Region

from rubric_studio.core.labels import Label
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict
from rubric_studio.tui.matrix import CRIT_MAX, CRIT_MIN, ID_COMPACT, ResultsMatrix
from rubric_studio.session.results_model import ResultsModel

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
        header, first = lines(matrix)[:2]
        assert header.startswith("12 samples  score verdict human│ res…* pol…* tone  asks… short no-b… +1›")
        assert first.startswith("refund-with… 1.00 ✓ pass  ·    │ ✓     ✓     ✓ 10  ✓     ✓     ✓")
        assert len(header) <= 72 and len(first) <= 72
        matrix.focus()
        await pilot.press("right", "right")
        assert matrix.current == (IDS[0], "policy-accurate")  # the full id: the app's cell hint shows it
        await pilot.press(*["right"] * 6)
        assert matrix.current[1] == "no-internal-links" and matrix.col_offset == 1
        assert "‹ pol…*" in lines(matrix)[0]


async def test_wide_table_shows_every_criterion_with_longer_titles_and_scrolls_back():
    app = Host()
    async with app.run_test(size=(72, 30)) as pilot:
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await pilot.press(*["right"] * 7)
        assert matrix.col_offset == 1
        await pilot.resize_terminal(120, 30)  # the editor hidden (f7): every column fits
        await pilot.pause()
        assert matrix.col_offset == 0 and len(matrix._shown_columns()) == 7
        assert matrix.id_width == 16 and max(c.width for c in matrix.columns) == CRIT_MAX
        header = lines(matrix)[0]
        assert "resolves-i…*" in header and "no-internal…" in header and "+" not in header


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
        first, second = lines(matrix)[1:3]
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
        legend = "\n".join(shown[-3:])
        for item in ("✓ met", "✗ unmet", "✓ 8 judge score 0-10", "✗.29 check score", "⚠ error", "· unjudged",
                     "⋯ pending", "↑↓ flipped by your last save", "≠ differs from your label", "* required"):
            assert item in legend
        assert shown[4] == "" and shown[-4] == ""
    many = Host()
    async with many.run_test(size=(72, 15)) as pilot:
        await pilot.pause()
        assert "✓ met" not in "\n".join(lines(many.query_one(ResultsMatrix)))


async def test_support_reply_fits_six_criteria_beside_the_editor(tmp_path: Path):
    from rubric_studio.tui.app import StudioApp

    folder = tmp_path / "support_reply"
    shutil.copytree(SUPPORT.parent, folder)
    app = StudioApp(folder / SUPPORT.name, watch=False)
    async with app.run_test(size=(120, 35)) as pilot:
        while app.report is None or app.running or not app._editor_mounted:
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        assert app.query_one("#left").display
        matrix = app.query_one(ResultsMatrix)
        assert len(matrix._shown_columns()) >= 6  # was 2 of 7
        assert matrix.region.width >= 70
