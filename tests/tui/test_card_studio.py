"""Pilot test of *Write the rubric card*: the card written from the results on screen (no call),
with the figures ``rubric-studio card`` computes, and its state in the status bar — fresh once
written, stale naming the criterion after a saved edit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.statusbar import StatusBar
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import RUBRIC, SIZE, copy_bundled, graded, until

pytestmark = pytest.mark.timeout(60)


def _status(app) -> str:
    return str(app.query_one(StatusBar).render())


async def test_the_palette_writes_the_card_and_the_status_bar_shows_its_state(tmp_path: Path, monkeypatch, capsys):
    root = copy_bundled(tmp_path, monkeypatch)
    rubric = root / RUBRIC
    card_path = rubric.with_name("support_reply.card.yaml")
    with FakeLLM() as server:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url_openai}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        app = StudioApp(rubric, watch=False, env=env, cache_path=root / "cache.sqlite")
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: graded(app), timeout=20)
            await pilot.pause()
            assert "card:" not in _status(app)  # no card yet: nothing shown
            calls = server.calls()
            next(c for c in app.get_system_commands(app.screen) if c.title == "Write the rubric card").callback()
            await until(lambda: card_path.exists() and "card: fresh" in _status(app), timeout=20)
            assert server.calls() == calls  # written from the results shown: no judge call
            studio_card = yaml.safe_load(card_path.read_text())

            tone = next(i for i, c in enumerate(app.session.rubric.criteria) if c.id == "tone")
            app.session.document.set_criterion_field(tone, "outcome", "A warm tone that names the customer's problem")
            app.editor.refresh_from_document()
            app.action_save()
            await until(lambda: "card: stale (tone changed)" in _status(app), timeout=20)

        # the command line, from the same cache, computes the same figures
        code = await asyncio.to_thread(main, ["card", str(rubric), "--format", "json", "--cache-path",
                                              str(root / "cache.sqlite"), "--base-url", server.base_url_openai])
        assert code == 0
    cli_card = yaml.safe_load(capsys.readouterr().out)
    assert studio_card["rubric"]["hash"] != cli_card["rubric"]["hash"]  # the CLI saw the edited rubric
    assert studio_card["labels"]["n"] == 13
    assert studio_card["kappa"]["n"] == 13 and studio_card["kappa"]["ci"] is not None
    for cid in ("resolves-issue", "policy-accurate", "asks-for-credentials", "short"):
        assert studio_card["criteria"][cid] == cli_card["criteria"][cid]
    assert studio_card["cost_per_100"]["n"] == cli_card["cost_per_100"]["n"] == 15
