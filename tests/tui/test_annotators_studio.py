"""Labelling as a named annotator in the studio: the label keys write that annotator's labels, the
Agreement tab names them and shows the humans row, and adjudication settles a disagreement."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.core.labels import ADJUDICATED, UNNAMED, load_labels
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.calibration import AgreementPanel, toggle_adjudication
from rubric_studio.tui.results import ResultsMatrix
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import RUBRIC, SIZE, copy_bundled, graded, until
from tests.tui.test_calibration_flow import scripted_brain

LABELS = RUBRIC.with_name("support_reply.labels.yaml")


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_bundled(tmp_path, monkeypatch)


def humans_text(app: StudioApp) -> str:
    return str(app.query_one(AgreementPanel).query_one("#agreement-humans").render())


async def test_labels_written_as_a_named_annotator_and_the_humans_row(studio: Path):
    with FakeLLM(brain=scripted_brain()) as server:
        app = StudioApp(RUBRIC, judge="openai-compatible:fake-judge", base_url=server.base_url_openai,
                        cache_path=studio / "cache.sqlite", watch=False, annotator="bob")
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: graded(app), timeout=20)
            matrix = app.query_one(ResultsMatrix)
            matrix.focus()
            await pilot.pause()
            tab = app.query_one("#tabs").get_tab("agreement")
            assert "bob" in str(tab.label)
            # the humans row is worked out in a thread once the Agreement panel is up
            await until(lambda: "one annotator" in humans_text(app),
                        what=lambda: f"the humans row of the first labels (it reads {humans_text(app)!r})")
            assert "one annotator" in humans_text(app)  # only the file's unnamed labels so far

            sample = "refund-within-window"  # the file's (unnamed) label says pass
            before = load_labels(LABELS).by_annotator[sample][UNNAMED]
            assert before.verdict == "pass"
            assert matrix.select_sample(sample)
            await pilot.press("x")
            await until(lambda: "bob" in app.session.by_annotator.get(sample, {}))
            on_disk = load_labels(LABELS).by_annotator[sample]
            assert on_disk["bob"].verdict == "fail" and on_disk[UNNAMED] == before  # both kept
            assert app.session.labels[sample].verdict is None  # one pass, one fail: no consensus
            await until(lambda: "humans" in humans_text(app) and "bob" in humans_text(app))
            row = humans_text(app)
            assert f"{UNNAMED}, bob" in row and "1 to adjudicate" in row
            assert f"{UNNAMED}–bob κ – n=1" in row  # one shared sample: no kappa, and it says why

            toggle_adjudication(app)
            assert ADJUDICATED in str(tab.label)
            await pilot.press("x")
            await until(lambda: app.session.labels.get(sample) is not None
                        and app.session.labels[sample].verdict == "fail")
            assert load_labels(LABELS).by_annotator[sample][ADJUDICATED].verdict == "fail"
            await until(lambda: "0 to adjudicate" in humans_text(app))
            toggle_adjudication(app)
            assert "bob" in str(tab.label)
