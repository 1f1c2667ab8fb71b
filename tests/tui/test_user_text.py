"""The studio shows text from files as it is: never as markup, never as raw escape bytes.

A rubric or samples file from someone else may name a sample ``x[/]`` (a closing
markup tag), ``q[a]`` or ``[$text-error]v`` (tags to rich / Textual), or hide an
OSC sequence that retitles the terminal in an id or a name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.calibration import LabelNoteScreen
from rubric_studio.tui.results import Inspector, ResultsMatrix
from tests.tui.studio_helpers import SIZE, graded, until

OSC = "o\x1b]0;pwned\x07"
IDS = ["x[/]", "q[a]", "[$text-error]v", OSC]
RUBRIC = """\
name: "n[/] \\e]0;pwned\\a"
criteria:
  - id: helpful
    outcome: Helps the customer
  - id: short
    check: {type: length, max_words: 8}
"""
RAW = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F]]


@pytest.fixture
def rubric(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "odd.yaml"
    path.write_text(RUBRIC)
    (tmp_path / "odd.samples.jsonl").write_text(
        "".join(json.dumps({"id": i, "output": f"thanks {n} \x1b[31m[red]"}) + "\n" for n, i in enumerate(IDS))
    )
    return path


def screen_text(app: StudioApp) -> str:
    """Everything on screen, as the terminal would get it (the compositor's own output)."""
    return app.export_screenshot()


def assert_no_raw_controls(text: str) -> None:
    assert sorted({repr(c) for c in RAW if c in text}) == []


@pytest.mark.long
@pytest.mark.timeout(60)
async def test_ids_and_names_show_literally_in_the_matrix_header_and_inspector(rubric: Path):
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        assert matrix.rows == IDS
        rows = [matrix._row_strip(index).text for index in range(len(IDS))]
        for row, sample_id in zip(rows, IDS, strict=True):
            assert row.startswith(terminal_safe(sample_id))
            assert_no_raw_controls(row)
        assert "n[/] ␛]0;pwned␇" in str(app.query_one("#run-header").render())
        matrix.focus()
        for index in range(len(IDS)):
            matrix.select_sample(IDS[index])
            await pilot.press("enter")
            await pilot.pause()
            await until(lambda i=index: str(app.query_one(Inspector).query_one("#insp-head").render())
                        .startswith(terminal_safe(IDS[i])) and "␛[31m[red]" in screen_text(app),
                        what=f"the inspector on sample {index}, drawn")
            head = str(app.query_one(Inspector).query_one("#insp-head").render())
            assert head.startswith(terminal_safe(IDS[index]))
            screen = screen_text(app)
            assert "␛[31m[red]" in screen  # the sample text, with its escape shown
            assert_no_raw_controls(screen)
            app.action_show("results")
            await pilot.pause()


@pytest.mark.timeout(60)
async def test_notifications_and_dialogs_show_ids_as_they_are(rubric: Path):
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        for sample_id in IDS:
            # A long timeout: under a loaded machine the default 5 s may pass before the assertion.
            app.notify(f"Could not label {sample_id}: disk full", title=f"Label {sample_id}", timeout=600)
        await pilot.pause()
        toasts = [str(n.message) for n in app._notifications]
        assert toasts == [f"Could not label {terminal_safe(i)}: disk full" for i in IDS]
        assert_no_raw_controls(screen_text(app))
        await app.push_screen(LabelNoteScreen("x[/]"))
        await pilot.pause()
        title = str(app.screen.query_one(".calibration-title").render())
        assert title.startswith("Note on x[/]")


def test_the_conflict_diff_shows_control_characters_as_stand_ins():
    from rubric_studio.tui.conflict import unified_diff

    diff = unified_diff("name: a\n", f"name: {OSC}\n", "r\x1b[2J.yaml")
    assert "\x1b" not in diff.plain and "\x07" not in diff.plain
    assert terminal_safe(OSC) in diff.plain  # still visible, as stand-ins
