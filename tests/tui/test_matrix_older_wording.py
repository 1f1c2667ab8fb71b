"""The results matrix marks a cell whose human label was given under an older wording of its
criterion (``↺``, with a legend entry while one is shown); the inspector says so too. A minimal
host for the drawing, then the studio (Pilot): label a cell, edit the criterion's outcome, save,
see the mark; label the cell again, the mark goes."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region

from rubric_studio.core.labels import Label, wording_fingerprint
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict
from rubric_studio.session.results_model import ResultsModel
from rubric_studio.tui.results import Inspector, ResultsMatrix
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import ROOT, SIZE, copy_bundled, until
from tests.tui.test_calibration_flow import make_app, ready, regraded, row_text, scripted_brain

RUBRIC = parse_rubric(
    "name: r\ncriteria:\n"
    "  - {id: tone, outcome: Warm tone}\n"
    "  - {id: facts, outcome: States the facts}\n"
)
TONE_NOW = wording_fingerprint(RUBRIC.criterion("tone"))
FACTS_NOW = wording_fingerprint(RUBRIC.criterion("facts"))
IDS = ["a", "b", "c"]


class Host(App):
    CSS_PATH = str(ROOT / "rubric_studio" / "tui" / "studio.tcss")

    def __init__(self, labels: dict[str, Label]) -> None:
        super().__init__()
        self.model = ResultsModel()
        self.model.set_criteria(RUBRIC.criteria)
        self.model.set_samples(IDS)
        self.model.update([SampleResult(i, 1.0, Verdict.PASS, [CriterionResult("tone", Status.MET, score=1.0),
                                                                  CriterionResult("facts", Status.MET, score=1.0)])
                           for i in IDS])
        self.model.set_labels(labels)

    def compose(self) -> ComposeResult:
        yield ResultsMatrix(self.model)


def cells(matrix: ResultsMatrix, sample_id: str) -> list[str]:
    """The criterion cells of a row, as drawn."""
    return row_text(matrix, sample_id).split("│ ", 1)[1].split()


def marks_styled(matrix: ResultsMatrix, sample_id: str) -> list[tuple[str, object]]:
    strip = matrix._row_strip(matrix.rows.index(sample_id))
    return [(segment.text, segment.style) for segment in strip if segment.text == "↺"]


def screen_text(matrix: ResultsMatrix) -> str:
    region = Region(0, 0, matrix.size.width, matrix.size.height)
    return "\n".join(strip.text.rstrip() for strip in matrix.render_lines(region))


async def test_a_label_under_an_older_wording_is_marked_and_explained():
    labels = {
        "a": Label(criteria={"tone": "met", "facts": "unmet"}, given_under={"tone": "0ld0ld00", "facts": FACTS_NOW}),
        "b": Label(criteria={"tone": "met"}, given_under={"tone": TONE_NOW}),  # current
        "c": Label(criteria={"tone": "met"}),  # no wording recorded: not older
    }
    app = Host(labels)
    async with app.run_test(size=(72, 20)) as pilot:
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        assert cells(matrix, "a") == ["✓↺", "✓≠"]  # the older tone label; facts current (and differs)
        assert cells(matrix, "b") == ["✓", "✓"] and cells(matrix, "c") == ["✓", "✓"]
        ((_, style),) = marks_styled(matrix, "a")
        assert style.color is not None and style.color != matrix._style("good").color
        assert "↺ label given under an older wording" in screen_text(matrix)


async def test_the_legend_has_no_older_entry_while_no_label_is_older():
    app = Host({"b": Label(criteria={"tone": "met"}, given_under={"tone": TONE_NOW})})
    async with app.run_test(size=(72, 20)) as pilot:
        await pilot.pause()
        text = screen_text(app.query_one(ResultsMatrix))
        assert "≠ differs from your label" in text and "↺" not in text


# -- the studio ---------------------------------------------------------------------------------
SAMPLE = "cancel-subscription"  # not labelled in the bundled labels


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_bundled(tmp_path, monkeypatch)


@pytest.fixture
def judge(studio: Path):
    with FakeLLM(brain=scripted_brain()) as server:
        yield server


async def test_editing_an_outcome_marks_the_labelled_cell_until_it_is_labelled_again(studio: Path, judge):
    app = make_app(judge, studio)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        assert matrix.select_sample(SAMPLE)
        matrix.select_criterion("tone")
        await pilot.press("m")
        await until(lambda: app.session.labels.get(SAMPLE) is not None
                    and app.session.labels[SAMPLE].criteria.get("tone") == "met")
        assert "↺" not in row_text(matrix, SAMPLE)

        document = app.session.document
        document.set_criterion_field(document.criterion_index("tone"), "outcome", "Warm, professional and brief tone")
        app.editor.refresh_from_document()
        run = app.session.run_number
        await pilot.press("ctrl+s")
        await regraded(app, pilot, run)
        await until(lambda: "↺" in row_text(matrix, SAMPLE), what=lambda: f"the row reads {row_text(matrix, SAMPLE)!r}")
        assert len(marks_styled(matrix, SAMPLE)) == 1  # the tone cell, the only one labelled
        # the bundled labels recorded no wording: none of them reads as older
        assert not any("↺" in row_text(matrix, sample_id) for sample_id in matrix.rows if sample_id != SAMPLE)
        app.query_one("#tabs").active = "inspector"
        app.selection = (SAMPLE, "tone")
        app.refresh_inspector()
        await pilot.pause()
        head = str(app.query_one(Inspector).query_one("#insp-head").render())
        assert "human: met ↺ given under an older wording" in head

        app.query_one("#tabs").active = "results"
        matrix.focus()
        await pilot.pause()
        assert matrix.current == (SAMPLE, "tone")
        await pilot.press("m")  # the same value, under the wording shown now
        await until(lambda: "↺" not in row_text(matrix, SAMPLE), what=lambda: f"the row reads {row_text(matrix, SAMPLE)!r}")
