"""The results cursor and the editor's criteria list follow each other, and settle.

Each side answers the other's selection by selecting too; a side that took back a
selection it already had (or an old one) would send the other one back, for ever.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from textual import events
from textual.message import Message

from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.editor import CriteriaList
from rubric_studio.tui.results import ResultsMatrix
from tests.tui.studio_helpers import RUBRIC, SIZE, copy_bundled, focused_on, graded, until


class SelectionMessages:
    """How many selection messages each side has sent (counted once, where they are posted)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        # The messages themselves are kept: an id alone is reused by a later message once the
        # first is freed, and that one would then go uncounted.
        self._seen: dict[int, Message] = {}

    def __call__(self, message: Message) -> None:
        name = type(message).__name__
        if name in ("Highlighted", "SelectionChanged", "OptionHighlighted") and id(message) not in self._seen:
            self._seen[id(message)] = message
            self.counts[name] = self.counts.get(name, 0) + 1

    def total(self) -> int:
        return sum(self.counts.values())


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_bundled(tmp_path, monkeypatch)
    return RUBRIC


def ready(app: StudioApp) -> bool:
    """Graded, and the editor's criteria list is on screen."""
    return graded(app) and bool(app.query("#ed-list"))


async def settle(pilot, messages: SelectionMessages) -> int:
    """Let the app go idle a few times; the number of selection messages sent meanwhile."""
    start = messages.total()
    for _ in range(4):
        await pilot.pause()
    return messages.total() - start


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["key events", "cursor actions"])
async def test_quick_moves_in_the_results_table_settle_on_the_last_column(studio: Path, how: str):
    messages = SelectionMessages()
    app = StudioApp(studio, watch=False)
    async with app.run_test(size=SIZE, message_hook=messages) as pilot:
        await until(lambda: ready(app))
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await settle(pilot, messages)
        before = dict(messages.counts)
        if how == "key events":  # as a terminal sends them: all three before the app reads one
            for _ in range(3):
                app.post_message(events.Key("right", None))
        else:
            for _ in range(3):
                matrix.action_cursor(0, 1)
        await settle(pilot, messages)
        third = app.session.rubric.criteria[2].key
        await until(lambda: matrix.current[1] == third and app.editor.selected == 2
                    and app.query_one("#ed-list", CriteriaList).highlighted == 2,
                    what=lambda: f"the table on column 3, the editor and its list following (table on "
                                 f"{matrix.current[1]}, editor on {app.editor.selected})")
        assert await settle(pilot, messages) == 0  # nothing keeps moving
        assert matrix.cursor_col == 3 and matrix.current[1] == third
        assert app.selection[1] == third
        assert app.editor.selected == 2
        assert app.query_one("#ed-list", CriteriaList).highlighted == 2
        # The editor followed without answering: a selection it did not make is not announced.
        assert messages.counts.get("SelectionChanged", 0) == before.get("SelectionChanged", 0)


@pytest.mark.timeout(60)
async def test_quick_moves_in_the_criteria_list_move_the_results_cursor_once(studio: Path):
    messages = SelectionMessages()
    app = StudioApp(studio, watch=False)
    async with app.run_test(size=SIZE, message_hook=messages) as pilot:
        await until(lambda: ready(app))
        listing = app.query_one("#ed-list", CriteriaList)
        listing.focus()
        await settle(pilot, messages)
        start = listing.highlighted or 0
        before = messages.counts.get("SelectionChanged", 0)
        for _ in range(3):
            listing.action_cursor_down()
        await settle(pilot, messages)
        matrix = app.query_one(ResultsMatrix)
        await until(lambda: listing.highlighted == start + 3 and app.editor.selected == start + 3
                    and matrix.current[1] == app.session.rubric.criteria[start + 3].key,
                    what=lambda: f"the list three down, the editor and the table following (list at "
                                 f"{listing.highlighted}, table on {matrix.current[1]})")
        assert await settle(pilot, messages) == 0
        assert listing.highlighted == start + 3 and app.editor.selected == start + 3
        assert matrix.current[1] == app.session.rubric.criteria[start + 3].key
        # One announcement for where the list ended, none for the positions it passed.
        assert messages.counts.get("SelectionChanged", 0) - before == 1


@pytest.mark.timeout(60)
async def test_selecting_the_column_the_cursor_is_on_sends_nothing(studio: Path):
    messages = SelectionMessages()
    app = StudioApp(studio, watch=False)
    async with app.run_test(size=SIZE, message_hook=messages) as pilot:
        await until(lambda: ready(app))
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await focused_on(app, matrix)
        await pilot.press("right")
        await settle(pilot, messages)
        criterion_id = matrix.current[1]
        before = messages.total()
        matrix.select_criterion(criterion_id)
        app.editor.select_criterion(criterion_id)
        await settle(pilot, messages)
        assert messages.total() == before


@pytest.mark.timeout(60)
async def test_a_move_back_to_where_an_overtaken_request_pointed_is_announced(studio: Path):
    """A quiet selection (the results cursor asked the list to follow) that a key press overtook
    before its event arrived must not silence the user's later move to that criterion."""
    messages = SelectionMessages()
    app = StudioApp(studio, watch=False)
    async with app.run_test(size=SIZE, message_hook=messages) as pilot:
        await until(lambda: ready(app))
        listing = app.query_one("#ed-list", CriteriaList)
        listing.focus()
        await settle(pilot, messages)
        start = listing.highlighted or 0
        criteria = app.session.rubric.criteria
        app.editor.select_criterion(criteria[start + 1].id)  # asked quietly…
        listing.action_cursor_down()  # …and overtaken by a key before its event arrived
        await settle(pilot, messages)
        assert listing.highlighted == start + 2
        before = messages.counts.get("SelectionChanged", 0)
        listing.action_cursor_up()
        await until(lambda: app.query_one(ResultsMatrix).current[1] == criteria[start + 1].key,
                    what=lambda: f"the table following the move back (on {app.query_one(ResultsMatrix).current[1]})")
        await settle(pilot, messages)
        assert messages.counts.get("SelectionChanged", 0) - before == 1
        assert app.query_one(ResultsMatrix).current[1] == criteria[start + 1].key


@pytest.mark.timeout(90)
@pytest.mark.parametrize("spacing", [0.0, 0.004, 0.015, 0.04])
async def test_every_key_down_the_criteria_list_counts_however_the_keys_are_spaced(studio: Path, spacing: float):
    """Each move of the list makes the results cursor follow, and the cursor's move answers back;
    an answer that arrives after the list moved on must not send the list back. Keys come as a
    terminal sends them (tmux's ``send-keys`` one at a time: a few ms apart), from another thread."""
    app = StudioApp(studio, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: ready(app))
        listing = app.query_one("#ed-list", CriteriaList)
        listing.focus()
        await focused_on(app, listing)
        await pilot.pause()
        start = listing.highlighted or 0
        moves = len(app.session.rubric.criteria) - 1 - start
        loop = asyncio.get_running_loop()

        def terminal() -> None:
            for _ in range(moves):
                event = events.Key("down", None)
                event.set_sender(app)
                asyncio.run_coroutine_threadsafe(app._post_message(event), loop)
                time.sleep(spacing)

        sender = threading.Thread(target=terminal, daemon=True)
        sender.start()
        await asyncio.to_thread(sender.join)
        last = start + moves
        key = app.session.rubric.criteria[last].key
        await until(lambda: listing.highlighted == last and app.editor.selected == last
                    and app.query_one(ResultsMatrix).current[1] == key,
                    what=lambda: f"list at {listing.highlighted}, editor at {app.editor.selected}, "
                                 f"results on {app.query_one(ResultsMatrix).current[1]}; expected {last}")
        for _ in range(4):
            await pilot.pause()
        assert listing.highlighted == last and app.editor.selected == last  # and it stays there
        assert app.query_one(ResultsMatrix).current[1] == key
