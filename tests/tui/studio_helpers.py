"""What the studio's Pilot tests share: a private copy of the bundled rubrics and waiting helpers."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIZE = (120, 35)
RUBRIC = Path("sample_rubrics/support_reply/support_reply.yaml")


def copy_bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Copy sample_rubrics/ into ``tmp_path`` and make it the working directory."""
    shutil.copytree(ROOT / "sample_rubrics", tmp_path / "sample_rubrics")
    monkeypatch.chdir(tmp_path)
    return tmp_path


async def until(condition: Callable[[], object], timeout: float = 30.0) -> None:
    """Wait for ``condition`` while the app runs; fail the test after ``timeout`` seconds.

    The deadline only catches a hang: it is generous so a loaded machine (two test workers
    on two cores) never turns a slow but correct run into a failure.
    """
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError("timed out waiting for the studio")
        await asyncio.sleep(0.01)


def graded(app) -> bool:
    """The first run finished and the editor is mounted and shows the document."""
    editor = app.editor
    return app.session.report is not None and not app.session.running and getattr(editor, "ready", False)


async def unsaved_edit(app, pilot, description: str = "unsaved") -> None:
    """Change the rubric in the editor without saving it."""
    app.session.document.set_rubric_field("description", description)
    app.editor.refresh_from_document()
    await pilot.pause()


class Recorder:
    """A Pilot ``message_hook`` keeping the names of the messages posted, in order."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def __call__(self, message: Any) -> None:
        self.names.append(type(message).__name__)
