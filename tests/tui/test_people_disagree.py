"""Disagreement between people one key away: a tie has its own glyph, ``D`` shows the samples where
people disagree, ``M`` shows my own labels instead of the consensus, and the humans row gives each
pair's kappa with its interval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.calibration import AgreementPanel
from rubric_studio.tui.results import ResultsMatrix
from tests.tui.studio_helpers import SIZE, graded, until

RUBRIC = """\
name: replies
criteria:
  - id: short
    check: {type: length, max_words: 50}
"""
# s1: alice and bob split 1–1 (a tie) · s2: both pass · s3: alice alone · s4: nobody ·
# s5: alice fails it, bob and carol pass it (the consensus is pass, alice's own label fail)
SIDECAR = """\
s1:
  annotator: alice
  verdict: pass
  annotators:
    bob: {verdict: fail}
s2:
  annotator: alice
  verdict: pass
  annotators:
    bob: {verdict: pass}
s3:
  annotator: alice
  verdict: fail
s5:
  annotator: alice
  verdict: fail
  annotators:
    bob: {verdict: pass}
    carol: {verdict: pass}
"""


@pytest.fixture
def rubric(tmp_path: Path) -> Path:
    path = tmp_path / "replies.yaml"
    path.write_text(RUBRIC)
    lines = [json.dumps({"id": f"s{n}", "output": "a short reply"}) for n in range(1, 6)]
    (tmp_path / "replies.samples.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "replies.labels.yaml").write_text(SIDECAR)
    return path


def row_text(app: StudioApp, sample_id: str) -> str:
    matrix = app.query_one(ResultsMatrix)
    return matrix._row_strip(matrix.rows.index(sample_id)).text


def studio(rubric: Path) -> StudioApp:
    return StudioApp(rubric, cache_path=rubric.with_name("cache.sqlite"), watch=False, annotator="alice")


async def test_a_tie_between_people_has_its_own_glyph_unlike_no_label(rubric: Path, tmp_path: Path):
    app = studio(rubric)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app), timeout=20)
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await pilot.pause()
        assert "⋈ tie" in row_text(app, "s1")  # alice pass, bob fail
        assert "⋈" not in row_text(app, "s4") and "·" in row_text(app, "s4")  # nobody labelled s4
        assert "⋈" not in row_text(app, "s2")
        legend = "".join(matrix.render_line(y).text for y in range(matrix.size.height))
        assert "⋈ people tie" in legend
        app.save_screenshot(str(tmp_path / "tie.svg"))
    assert "⋈" in (tmp_path / "tie.svg").read_text()


async def test_the_people_disagree_filter_has_its_own_key(rubric: Path):
    app = studio(rubric)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app), timeout=20)
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await pilot.pause()
        assert len(matrix.rows) == 5
        await pilot.press("D")
        await until(lambda: matrix.filter_kind == "people")
        assert matrix.rows == ["s1", "s5"]  # the samples whose annotators labelled differently
        await pilot.press("D")  # again: every sample
        await until(lambda: matrix.filter_kind == "all")
        assert len(matrix.rows) == 5
    titles = [command.title for command in app_commands(app)]
    assert "Filter: people disagree" in titles
    assert any("(D)" in command.help for command in app_commands(app) if command.title == "Filter: people disagree")


def app_commands(app: StudioApp) -> list:
    from rubric_studio.tui import app_commands as palette

    return list(palette.palette(app))


async def test_my_labels_or_the_consensus_in_the_human_column(rubric: Path, tmp_path: Path):
    app = studio(rubric)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app), timeout=20)
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await pilot.pause()
        assert "pass" in row_text(app, "s5") and "fail" not in row_text(app, "s5")  # the consensus: 2 to 1
        await pilot.press("M")
        await until(lambda: "fail" in row_text(app, "s5"))  # alice's own label
        assert " mine " in matrix.render_line(1).text and " human " not in matrix.render_line(1).text
        assert "pass" in row_text(app, "s1") and "⋈" not in row_text(app, "s1")  # hers, not the tie
        assert "·" in row_text(app, "s4")
        app.save_screenshot(str(tmp_path / "mine.svg"))
        # a label written while her labels show is shown at once
        assert matrix.select_sample("s4")
        await pilot.press("x")
        await until(lambda: "fail" in row_text(app, "s4"))
        await pilot.press("M")  # back to the consensus
        await until(lambda: "fail" not in row_text(app, "s5"))
        assert "⋈ tie" in row_text(app, "s1")
    assert any(command.title == "Human column: my labels / consensus" for command in app_commands(app))


async def test_the_humans_row_gives_each_pairs_kappa_with_its_interval(rubric: Path):
    app = studio(rubric)
    async with app.run_test(size=SIZE):
        await until(lambda: graded(app), timeout=20)
        panel = app.query_one(AgreementPanel)
        await until(lambda: "κ" in str(panel.query_one("#agreement-humans").render()))
        row = str(panel.query_one("#agreement-humans").render())
        # alice and bob share s1, s2, s5: alice p p f, bob f p p → kappa −0.50 over 3 samples
        assert "alice–bob κ -0.50 [" in row and "] n=3" in row
        assert "alice–carol κ – n=1" in row  # one shared sample: no kappa
        assert "2 to adjudicate" in row  # s1 and s5, neither adjudicated
