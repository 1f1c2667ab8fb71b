"""Labels that know their wording, in the studio (Pilot): a cell labelled with m records the wording
of its criterion; after the outcome is edited and saved, the Agreement tab marks the criterion
``↺N``; R moves to that cell and m there makes the label current again."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from rubric_studio.core.labels import load_labels, wording_fingerprint
from rubric_studio.tui.calibration import AgreementPanel
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import SIZE, copy_bundled, until
from tests.tui.test_calibration_flow import LABELS, make_app, ready, regraded, scripted_brain

SAMPLE = "cancel-subscription"


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_bundled(tmp_path, monkeypatch)


@pytest.fixture
def judge(studio: Path):
    with FakeLLM(brain=scripted_brain()) as server:
        yield server


def tone_row(app) -> str:
    table = app.query_one(AgreementPanel).query_one("#agreement-table", DataTable)
    return str(table.get_row("criterion:tone")[0]).replace("\n", "")


def agreement_text(app) -> str:
    return "\n".join(str(widget.render()) for widget in app.query_one(AgreementPanel).query("Static"))


async def test_an_edited_outcome_marks_older_labels_and_r_then_m_makes_them_current(studio: Path, judge):
    app = make_app(judge, studio)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        assert matrix.select_sample(SAMPLE)
        matrix.select_criterion("tone")
        await pilot.press("m")
        await until(lambda: app.session.labels.get(SAMPLE) is not None
                    and app.session.labels[SAMPLE].criteria.get("tone") == "met")
        first = wording_fingerprint(app.session.rubric.criterion("tone"))
        assert load_labels(LABELS).labels[SAMPLE].given_under == {"tone": first}
        await until(lambda: tone_row(app) == "tone")  # every recorded label is current

        document = app.session.document
        document.set_criterion_field(document.criterion_index("tone"), "outcome", "Warm, professional and brief tone")
        app.editor.refresh_from_document()
        run = app.session.run_number
        await pilot.press("ctrl+s")
        await regraded(app, pilot, run)
        second = wording_fingerprint(app.session.rubric.criterion("tone"))
        assert second != first
        await until(lambda: tone_row(app) == "tone ↺1", what=lambda: f"the tone row reads {tone_row(app)!r}")
        assert "re-check" in agreement_text(app)

        matrix.focus()
        matrix.action_edge(-1)
        matrix.select_criterion("resolves-issue")
        await pilot.press("R")
        await until(lambda: matrix.current == (SAMPLE, "tone"), what=lambda: f"the cursor is on {matrix.current}")
        await pilot.press("m")  # the same value, under the wording shown now
        await until(lambda: app.session.labels[SAMPLE].given_under == {"tone": second})
        assert load_labels(LABELS).labels[SAMPLE].given_under == {"tone": second}
        await until(lambda: tone_row(app) == "tone")
        await pilot.press("R")
        await until(lambda: any("None of your labels" in n.message for n in app._notifications))
