"""ctrl+s right after typing, on a machine too busy to keep up: what was typed is what is saved.

The app runs its priority binding (ctrl+s) the moment the key reaches it, while the keys typed
just before it may still wait in the focused field's own queue (the app forwards each key there
and moves on). On a loaded machine the save then ran before the field had taken the last keys:
the file kept the old text, and the typed text stayed unsaved in the editor with no dialog open.
Here the field's queue is held the way a busy machine holds it, the keys and ctrl+s are delivered,
then the field is let go.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import events

from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.editor import FieldArea
from tests.tui.studio_helpers import until

RUBRIC = """\
name: race
criteria:
  - id: answers
    outcome: Answers the question
  - id: short
    check: {type: length, max_words: 60}
"""


async def _deliver(app: StudioApp, key: str, character: str | None) -> None:
    event = events.Key(key, character)
    event.set_sender(app)
    await app._post_message(event)


async def test_ctrl_s_saves_the_keys_the_field_has_not_taken_yet(tmp_path: Path):
    rubric = tmp_path / "race.yaml"
    rubric.write_text(RUBRIC)
    (tmp_path / "race.samples.jsonl").write_text('{"id": "a", "output": "It is fixed."}\n')
    app = StudioApp(rubric, cache_path=tmp_path / "cache.sqlite")
    async with app.run_test(size=(140, 40)):
        await until(lambda: app.editor is not None and app.editor.ready)
        assert app.editor.select_criterion("answers")
        field = app.query_one("#ed-f-outcome", FieldArea)
        await until(lambda: field.text == "Answers the question")
        field.focus()
        await until(lambda: app.focused is field)
        await _deliver(app, "end", None)
        await until(lambda: field.cursor_location[1] == len("Answers the question"))

        held = asyncio.Event()
        field.call_later(held.wait)  # the field is busy: keys forwarded to it wait behind this
        for character in " plainly":
            await _deliver(app, "space" if character == " " else character, character)
        await _deliver(app, "ctrl+s", None)
        await asyncio.sleep(0.5)  # the app and the editor go on meanwhile (pilot.pause would wait for the field)
        held.set()

        await until(lambda: "Answers the question plainly" in rubric.read_text(), timeout=20)
        await until(lambda: not app.session.document.dirty)
        assert field.text == "Answers the question plainly"
