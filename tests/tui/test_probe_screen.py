"""Pilot test of "Probe criterion for bias…": the selected criterion probed through the local fake
server, scripted as a judge that rewards length (tests/engine/test_probes.py): padding flips
every labelled cell unmet → met, and the dialog shows the padded text the judge saw."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from rubric_studio.engine.probes import perturb_text
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.probe_screen import ProbeScreen
from rubric_studio.tui.results import ResultsMatrix
from tests.engine.test_probes import LABELLED, brain, write_project
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import SIZE, Recorder, graded, on_screen, until

pytestmark = pytest.mark.timeout(60)


async def test_probe_palette_command_shows_flips_and_the_perturbed_text(tmp_path: Path, monkeypatch):
    project = write_project(tmp_path)
    before = {name: (project / name).read_bytes() for name in ("r.yaml", "r.labels.yaml")}
    recorder = Recorder()
    with FakeLLM(brain=brain) as server:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url_openai}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        app = StudioApp(
            project / "r.yaml",
            project / "s.jsonl",
            judge="openai:judge-length",
            watch=False,
            env=env,
            cache_path=project / "cache.sqlite",
        )
        async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
            await until(lambda: graded(app), timeout=15)
            await pilot.pause()
            assert server.calls() == 60  # 30 samples × 2 judge criteria
            app.query_one(ResultsMatrix).select_criterion("bill")
            await pilot.pause()
            next(
                c for c in app.get_system_commands(app.screen) if c.title == "Probe criterion for bias…"
            ).callback()
            await on_screen(app, ProbeScreen)
            screen = app.screen
            assert screen.criterion_id == "bill"
            await until(lambda: screen.report is not None, timeout=30)
            await pilot.pause()
            assert "ProbesDone" in recorder.names and "ProbesFailed" not in recorder.names
            kinds = screen.query_one("#probe-kinds", DataTable)
            rows = {kinds.get_row_at(i)[0]: kinds.get_row_at(i) for i in range(kinds.row_count)}
            assert list(rows) == ["noise", "verbosity", "order", "confidence", "hedging", "paraphrase", "leniency"]
            # every row in view under the header (the stylesheet's height for the table): none scrolled away
            await until(lambda: kinds.max_scroll_y == 0 and kinds.scrollable_content_region.height >= kinds.row_count + 1,
                        what=lambda: f"the kinds table laid out with its {kinds.row_count} rows "
                                     f"(height {kinds.scrollable_content_region.height}, scrolls {kinds.max_scroll_y})")
            assert kinds.max_scroll_y == 0 and kinds.scrollable_content_region.height >= kinds.row_count + 1
            assert rows["noise"][1:4] == [str(LABELLED), "0", "0%"]  # the length judge ignores a blank line
            assert rows["verbosity"][1:4] == [str(LABELLED), str(LABELLED), "100%"]
            assert rows["verbosity"][5] == f"{LABELLED} of {LABELLED} unmet → met"
            assert rows["verbosity"][6] == "beyond noise: +100 pts, p < 0.001"
            assert rows["confidence"][6] == "can't tell: 20 cells, < 25 pts unseen"
            assert rows["hedging"][6] == "can't tell: no cell could turn unmet"
            # no input: the content-free answers are three distinct requests, judged once each
            assert rows["leniency"][1:4] == ["3", "0", "0%"]
            assert rows["leniency"][6] == "can't tell: 3 cells, too few"
            status = " ".join(str(screen.query_one("#probe-status", Static).render()).split())
            assert "Finding: verbosity moves verdicts beyond this judge's noise (noise 0%)." in status
            assert "Can't tell: confidence, hedging, paraphrase, leniency" in status and "No finding" not in status
            assert rows["hedging"][2] == "0" and rows["order"][5] == "skipped" and rows["order"][6].startswith(
                "the rubric is not batched"
            )
            flips = screen.query_one("#probe-flips", DataTable)
            assert flips.row_count == LABELLED and flips.get_row_at(0) == ["verbosity", "s00", "unmet → met"]
            shown = str(screen.query_one("#probe-text", Static).render())
            padded = perturb_text("verbosity", "ticket 00: we looked into your bill for you", 0, "s00")
            assert "the perturbed output" in shown and padded.split("\n\n")[0] in shown
            # baseline from the studio's cache: only the noise / verbosity / confidence / hedging / paraphrase
            # cells, and the three distinct content-free requests of leniency
            assert server.calls() == 60 + 5 * LABELLED + 3
            app.save_screenshot(str(tmp_path / "probe-screen.svg"))
            if os.environ.get("PROBE_SCREENSHOT_DIR"):  # to look at it: rsvg-convert the copy
                app.save_screenshot(str(Path(os.environ["PROBE_SCREENSHOT_DIR"]) / "probe-screen.svg"))
            svg = (tmp_path / "probe-screen.svg").read_text().replace("&#160;", " ")
            assert "against noise" in svg and "beyond noise" in svg and "leniency" in svg
            await pilot.press("escape")
            await until(lambda: not isinstance(app.screen, ProbeScreen))
    assert {name: (project / name).read_bytes() for name in before} == before
