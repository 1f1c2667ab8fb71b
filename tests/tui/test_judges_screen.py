"""Pilot test of "Compare judges…": the labelled samples graded by each judge through the local fake
server (each model scripted to agree with the human labels except on known samples, so every
kappa and the recommendation are known: tests/calibration/test_calibrate_judges.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.judges_screen import JudgesScreen
from tests.calibration.test_calibrate_judges import GOOD, LABELLED, MID, POOR, Script, write_project
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import SIZE, Recorder, graded, until

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


async def test_compare_judges_shows_each_judges_figures_and_recommends_one(project: Path, monkeypatch):
    recorder = Recorder()
    with FakeLLM() as server:
        server.always(Script())
        env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "OPENAI_BASE_URL": server.base_url_openai,
               "ANTHROPIC_BASE_URL": server.base_url_anthropic}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        app = StudioApp(project / "r.yaml", project / "s.jsonl", judge=GOOD, watch=False, env=env,
                        cache_path=project / "cache.sqlite")
        async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
            await until(lambda: graded(app), timeout=15)
            await pilot.pause()
            assert server.calls() == 21  # the studio graded every sample with its judge
            next(c for c in app.get_system_commands(app.screen) if c.title == "Compare judges…").callback()
            await until(lambda: isinstance(app.screen, JudgesScreen))
            await pilot.pause()
            screen = app.screen
            field = screen.query_one("#judges-input", Input)
            assert field.value == GOOD  # pre-filled with the studio's judge
            field.value = f"{GOOD},{MID},nope"
            await pilot.press("enter")
            await until(lambda: "'nope' is not provider:model" in str(screen.query_one("#judges-status", Static).render()),
                        what="the refusal of 'nope' under the field")
            assert "'nope' is not provider:model" in str(screen.query_one("#judges-status", Static).render())
            field.value = f"{GOOD},{MID},{POOR}"
            await pilot.press("enter")
            await until(lambda: screen.figures, timeout=20)
            await pilot.pause()
            assert "Compared" in recorder.names and "CompareFailed" not in recorder.names
            # Only the labelled samples, and the studio's judge came from the cache.
            assert server.calls() == 21 + 2 * LABELLED
            by_judge = {f.judge: f for f in screen.figures}
            assert list(by_judge) == [GOOD, MID, POOR]
            assert (by_judge[GOOD].judge_calls, by_judge[GOOD].cache_hits) == (0, LABELLED)
            assert by_judge[MID].kappa == pytest.approx(0.8) and by_judge[POOR].kappa == pytest.approx(0.5)
            # the same sentence calibrate --judges prints (tests/calibration/test_calibrate_judges.py)
            assert screen.recommended == POOR
            assert screen.why.startswith(f"{GOOD}, {MID}, {POOR} are indistinguishable on these labels")
            assert f"the default is {POOR}, the cheapest of them" in screen.why
            table = screen.query_one("#judges-table", DataTable)
            rows = [table.get_row_at(i) for i in range(table.row_count)]
            assert [r[0] for r in rows] == [GOOD, MID, f"{POOR} ★"]
            assert rows[1][2:5] == ["0.80", "0.40…0.94", "90%"] and rows[2][5:7] == ["30%", "20%"]
            assert rows[0][-3:] == ["0", str(LABELLED), "0"] and rows[1][8].startswith("$")
            text = str(screen.query_one("#judges-recommendation", Static).render())
            assert f"Recommended: {POOR}" in text and "indistinguishable on these labels" in text
            folder = Path(os.environ.get("STUDIO_SHOTS", project / "screenshots"))
            folder.mkdir(parents=True, exist_ok=True)
            app.save_screenshot("judges-screen.svg", path=str(folder))
            await pilot.press("escape")
            await until(lambda: not isinstance(app.screen, JudgesScreen))
