"""Saving in the studio never overwrites a change made on disk without the user choosing to.

The reported case: type in a field, change the file outside (``sed -i``), press ctrl+s.
Covered with the change reaching the studio only through the save (no watcher) and after
the watcher already asked (and the user kept their edits).
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from textual.widgets import Button, Input

from rubric_studio.core.document import UndoStop
from rubric_studio.engine.starter import create_starter_rubric
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.conflict import ConflictScreen, UnsavedScreen
from tests.tui.studio_helpers import SIZE, focused_on, until, watching

pytestmark = pytest.mark.timeout(60)

RUBRIC = """\
# A small rubric for save tests.
name: tiny
description: original
pass_threshold: 0.8
criteria:
  - id: short
    check: {type: length, max_words: 50}
"""


@pytest.fixture
def rubric(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(RUBRIC, encoding="utf-8")
    (tmp_path / "tiny.samples.jsonl").write_text('{"id": "s1", "output": "a short answer"}\n', encoding="utf-8")
    return path


def sed(path: Path, expression: str) -> None:
    subprocess.run(["sed", "-i", expression, str(path)], check=True)


async def ready(app: StudioApp, pilot) -> None:
    await until(lambda: app.session.report is not None and not app.session.running and app.editor is not None
                and app.editor.is_mounted)
    await pilot.pause()


async def type_in_name(app: StudioApp, pilot, text: str) -> None:
    """Type at the end of the rubric's name field (left waiting for its debounce: ctrl+s applies it)."""
    app.query_one("#ed-tabs").active = "ed-tab-rubric"
    await pilot.pause()
    app.query_one("#ed-r-name", Input).focus()
    await pilot.pause()
    await pilot.press("end", *text)


def conflict(app: StudioApp, *, saving: bool) -> bool:
    return isinstance(app.screen, ConflictScreen) and app.screen.saving is saving


async def test_ctrl_s_over_an_outside_edit_asks_and_merge_keeps_both(rubric: Path):
    app = StudioApp(rubric, watch=False)  # the change reaches the studio only through the save
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await type_in_name(app, pilot, "-mine")
        sed(rubric, "s/^description:.*/description: EXT/")
        outside = rubric.read_text(encoding="utf-8")
        await pilot.press("ctrl+s")
        await until(lambda: conflict(app, saving=True))
        # the dialog's text is composed after its push
        await until(lambda: "+name: tiny-mine" in str(app.screen.query_one("#conflict-merge-text").render()),
                    what="the dialog's preview of what merging writes")
        assert rubric.read_text(encoding="utf-8") == outside  # nothing written while it asks
        assert "name: tiny-mine" in app.session.document.text
        preview = str(app.screen.query_one("#conflict-merge-text").render())
        assert "+name: tiny-mine" in preview and "-name: tiny" in preview  # what merging writes
        await focused_on(app, app.screen.query_one("#merge", Button))
        await pilot.press("m")
        await until(lambda: "tiny-mine" in rubric.read_text(encoding="utf-8"))
        on_disk = rubric.read_text(encoding="utf-8")
        assert "name: tiny-mine\n" in on_disk and "description: EXT\n" in on_disk
        assert on_disk.startswith("# A small rubric for save tests.\n")
        assert not app.session.document.dirty and not isinstance(app.screen, ConflictScreen)
        await until(lambda: not app.session.running and app.session.rubric is not None and app.session.rubric.name == "tiny-mine")


async def test_after_keeping_my_edits_ctrl_s_still_asks_and_overwrite_is_explicit(rubric: Path):
    app = StudioApp(rubric)  # watching: the watcher sees the change first
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await watching(rubric.parent)
        await type_in_name(app, pilot, "-mine")
        await app.editor.flush()
        sed(rubric, "s/^name:.*/name: EXT/")  # the very field being typed in
        # No dialog takes the keys: a notice, the typing kept, the disk version declined until saving.
        await until(lambda: app.save_flow.declined is not None)
        assert len(app.screen_stack) == 1 and "tiny-mine" in app.session.document.text
        await pilot.press("ctrl+s")
        await until(lambda: conflict(app, saving=True))
        assert "name: EXT" in rubric.read_text(encoding="utf-8")
        await pilot.press("escape")  # cancel: still nothing written
        await until(lambda: not isinstance(app.screen, ConflictScreen))
        assert "name: EXT" in rubric.read_text(encoding="utf-8") and app.session.document.dirty
        await pilot.press("ctrl+s")
        await until(lambda: conflict(app, saving=True))
        await pilot.press("o")  # overwrite, chosen for exactly this disk version
        await until(lambda: "tiny-mine" in rubric.read_text(encoding="utf-8"))
        assert "name: EXT" not in rubric.read_text(encoding="utf-8") and not app.session.document.dirty


async def test_edits_of_the_same_line_cannot_be_merged_and_load_keeps_mine_one_undo_away(rubric: Path):
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await type_in_name(app, pilot, "-mine")
        sed(rubric, "s/^name:.*/name: theirs/")
        await pilot.press("ctrl+s")
        await until(lambda: conflict(app, saving=True))
        # the dialog's text is composed after its push
        await until(lambda: "line 2" in str(app.screen.query_one("#conflict-merge-note").render()),
                    what="the dialog's note on why the edits cannot merge")
        assert app.screen.query_one("#merge", Button).disabled
        assert "line 2" in str(app.screen.query_one("#conflict-merge-note").render())
        await pilot.press("m")  # refused: the screen stays
        await pilot.pause()
        assert conflict(app, saving=True) and "name: theirs" in rubric.read_text(encoding="utf-8")
        await pilot.press("l")
        await until(lambda: "name: theirs" in app.session.document.text)
        assert not app.session.document.dirty and "name: theirs" in rubric.read_text(encoding="utf-8")
        assert isinstance(app.session.document.undo(), UndoStop)  # loading took in the outside edit
        app.session.document.undo()
        assert "name: tiny-mine" in app.session.document.text


async def test_save_and_quit_over_an_outside_edit_asks_instead_of_writing(rubric: Path):
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await type_in_name(app, pilot, "-mine")
        sed(rubric, "s/^description:.*/description: EXT/")
        await pilot.press("ctrl+q")
        await until(lambda: isinstance(app.screen, UnsavedScreen))
        await pilot.press("s")  # save and quit
        await until(lambda: conflict(app, saving=True))
        assert "description: EXT" in rubric.read_text(encoding="utf-8") and app.is_running
        await pilot.press("m")  # merge and save, then quit
        await until(lambda: not app.is_running)
    on_disk = rubric.read_text(encoding="utf-8")
    assert "name: tiny-mine" in on_disk and "description: EXT" in on_disk


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_the_starter_rubric_gets_the_users_umask(tmp_path: Path, mask: int, expected: int):
    saved = os.umask(mask)
    try:
        create_starter_rubric(tmp_path / "new.yaml")
    finally:
        os.umask(saved)
    assert stat.S_IMODE((tmp_path / "new.yaml").stat().st_mode) == expected
