"""The studio with a judge panel: the split in the cell, each member in the inspector."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widgets import Input

from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.dialogs import AskScreen
from rubric_studio.tui.results import ResultsMatrix
from tests.fakellm import FakeLLM
from tests.panels.judges import COIN, DOWN, LONG, RIGHT, RUBRIC, Judges, member, sample_text
from tests.tui.studio_helpers import drawn, drawn_text, graded, open_in_inspector, until

pytestmark = pytest.mark.timeout(90)


def shown(widget) -> str:
    """The text a widget draws, line by line."""
    region = Region(0, 0, widget.size.width, widget.size.height)
    return "\n".join(strip.text.rstrip() for strip in widget.render_lines(region))


async def test_a_cell_shows_the_split_and_the_inspector_each_member(tmp_path: Path):
    (tmp_path / "r.yaml").write_text(RUBRIC)
    # s03: short and wrong, so judge-long says unmet, judge-right says unmet; the coin says met for seed 7
    (tmp_path / "s.jsonl").write_text(json.dumps({"id": "s03", "output": sample_text(3)}) + "\n")
    with FakeLLM(brain=Judges()) as server:
        app = StudioApp(
            tmp_path / "r.yaml",
            tmp_path / "s.jsonl",
            judge=",".join(member(m) for m in (LONG, COIN, RIGHT)),
            base_url=server.base_url_openai,
            env={"OPENAI_API_KEY": "k"},
            cache_path=tmp_path / "c.sqlite",
            watch=False,
        )
        async with app.run_test(size=(160, 45)) as pilot:
            await until(lambda: graded(app))
            await pilot.pause()
            cell = app.session.model.results["s03"].cell("timeline")
            members = {m["judge"]: m["status"] for m in cell.members}
            assert members[member(RIGHT)] == "unmet" and members[member(LONG)] == "unmet"
            expected = "✗ 3–0" if members[member(COIN)] == "unmet" else "✗ 2–1"
            matrix = app.query_one(ResultsMatrix)
            assert expected in matrix._row_strip(0).text
            inspector = await open_in_inspector(app, pilot, "s03", "timeline")
            body = await drawn(inspector.query_one("#insp-body"), f"panel {expected.split()[1]} (majority)",
                               what="the panel's split and each member in the inspector")
            assert f"panel {expected.split()[1]} (majority)" in body
            for judge in (LONG, COIN, RIGHT):
                assert member(judge) in body and f"{judge} says" in body
            status = str(app.query_one("#status").render())
            assert "panel" in status
            assert len(status.strip()) <= 160  # fitted to the terminal (the whole would run past it)
            for judge in (LONG, COIN, RIGHT):  # each member's own calls, not only the total
                assert f"{judge} 1 " in status


def studio(tmp_path: Path, server: FakeLLM, models: tuple[str, ...], samples: range) -> StudioApp:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "s.jsonl").write_text("".join(json.dumps({"id": f"s{i:02d}", "output": sample_text(i)}) + "\n"
                                              for i in samples))
    return StudioApp(tmp_path / "r.yaml", tmp_path / "s.jsonl", judge=",".join(member(m) for m in models),
                     base_url=server.base_url_openai, env={"OPENAI_API_KEY": "k"},
                     cache_path=tmp_path / "c.sqlite", watch=False)


async def test_the_consistency_estimate_counts_every_member_and_matches_the_calls_sent(tmp_path: Path):
    # 8 samples × 1 judged criterion × 3 members × (K − 1 = 2) = 48 new calls at K = 3
    with FakeLLM(brain=Judges()) as server:
        app = studio(tmp_path, server, (LONG, COIN, RIGHT), range(8))
        async with app.run_test(size=(160, 45)) as pilot:
            await until(lambda: graded(app))
            await pilot.pause()
            before = server.calls()
            assert before == 24
            await pilot.press("K")
            await until(lambda: isinstance(app.screen, AskScreen) and app.screen.query(Input))
            estimate = "About 48 new judge calls"
            # the prompt is drawn (wrapped to the dialog's width) once the dialog is laid out
            await until(lambda: estimate in " ".join(" ".join(drawn_text(w) for w in app.screen.query(".dialog-text")).split()),
                        what="the K dialog's estimate of the judge calls, drawn")
            prompt = " ".join(shown(w) for w in app.screen.query(".dialog-text")).split()
            assert "About 48 new judge calls at K = 3: 8 cells × 3 panel members × (K − 1)" in " ".join(prompt)
            assert app.screen.query_one(Input).value == "3"
            run = app.session.run_number
            await pilot.press("enter")
            await until(lambda: app.session.run_number > run and graded(app), timeout=30)
            await pilot.pause()
            assert app.session.report.repeat == 3
            assert server.calls() - before == 48


async def test_the_studio_marks_ties_and_says_when_a_member_never_answers(tmp_path: Path):
    # judge-long and judge-right split 1–1 on tickets 1 and 2 (see test_panel_cli); judge-down never answers
    with FakeLLM(brain=Judges()) as server:
        app = studio(tmp_path, server, (LONG, RIGHT, DOWN), range(4))
        async with app.run_test(size=(160, 45)):
            await until(lambda: graded(app))
            await until(lambda: any("judge-down" in str(n.message) for n in app._notifications),
                        what="a notification naming the member that failed")
            toasts = [n for n in app._notifications if "judge-down" in str(n.message)]
            assert len(toasts) == 1 and toasts[0].severity == "error"
            assert f"judge panel member {member(DOWN)} failed on every cell it judged (4 of 4): 500" in str(
                toasts[0].message)
            matrix = app.query_one(ResultsMatrix)
            rows = [matrix._row_strip(n).text for n in range(4)]
            # judge-down errored on every cell: each ends in its mark, which a narrow column keeps
            # whole at the tie's expense ("✗1–1 t…⚠"; the inspector says the rest)
            assert ["1–1 t" in row for row in rows] == [False, True, True, False], rows
            assert all(row.rstrip().endswith(("⚠1", "⚠")) for row in rows), rows


async def test_a_cell_pooled_without_an_errored_member_is_marked_and_the_inspector_names_it(tmp_path: Path):
    with FakeLLM(brain=Judges()) as server:
        app = studio(tmp_path, server, (LONG, RIGHT, DOWN), range(4))
        async with app.run_test(size=(160, 45)) as pilot:
            await until(lambda: graded(app))
            await pilot.pause()
            matrix = app.query_one(ResultsMatrix)
            rows = [matrix._row_strip(n).text for n in range(4)]
            # "✓ 2–0⚠1": one member errored and was left out; beside a tie only "⚠" fits ("✗1–1 tie⚠")
            assert ["⚠1" in row for row in rows] == [True, False, False, True], rows
            assert all("⚠" in row.split("│")[1] for row in rows), rows
            inspector = await open_in_inspector(app, pilot, "s00", "timeline")
            head = str(inspector.query_one("#insp-head").render())
            assert f"pooled without {member(DOWN)} (errored)" in head
