"""Pilot tests of the rubric card in the studio: *Write the rubric card* writes it from the results on
screen (no call), with the figures ``rubric-studio card`` computes, and the status bar shows its
state — fresh once written, stale naming the criterion after a saved edit; a card written from the
command line while the studio is open shows as it lands, and goes stale when a label is added."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.statusbar import StatusBar
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import RUBRIC, SIZE, copy_bundled, graded, until, watching

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


async def test_a_card_written_from_the_command_line_shows_in_the_open_studios_status_bar(tmp_path: Path, monkeypatch):
    from rubric_studio.cli.calibrate import read_labels
    from rubric_studio.cli.card import make_card
    from rubric_studio.core.atomic import write_text_safely
    from rubric_studio.core.card import card_path_for, card_yaml
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.samples import load_samples

    root = copy_bundled(tmp_path, monkeypatch)
    rubric_path = root / RUBRIC
    samples_path = rubric_path.with_name("support_reply.samples.jsonl")
    labels_path = rubric_path.with_name("support_reply.labels.yaml")
    with FakeLLM() as server:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url_openai}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        app = StudioApp(rubric_path, env=env, cache_path=root / "cache.sqlite")  # watching its folder
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: graded(app), timeout=20)
            await watching(rubric_path.parent)
            await pilot.pause()
            assert "card:" not in _status(app)

            # what `rubric-studio card` does: grade with the engine, build the card, write it beside the rubric
            rubric = load_rubric(rubric_path)
            samples = load_samples(samples_path).samples
            labels, problems, sidecar = read_labels(str(rubric_path), None, samples)
            assert not problems
            outcome = await make_card(rubric, samples, labels, {"base_url": server.base_url_openai,
                                                                "cache_path": root / "cli-cache.sqlite"},
                                      sidecar=sidecar, sources={"samples_path": samples_path,
                                                                "labels_path": labels_path})
            assert not isinstance(outcome, str)
            write_text_safely(card_path_for(rubric_path), card_yaml(outcome[0]))
            await until(lambda: "card: fresh" in _status(app), timeout=20, what=lambda: _status(app))

            # a label given after the card (another annotator, an editor): the card no longer rests on the labels
            labels_path.write_text(labels_path.read_text() + "\ncancel-subscription:\n  verdict: pass\n")
            await until(lambda: "card: stale (labels changed since the card: 13 → 14 labelled)" in _status(app),
                        timeout=20, what=lambda: _status(app))


def test_the_watcher_reports_the_card_file_beside_the_rubric(tmp_path: Path):
    from rubric_studio.tui.watch import WatchTargets

    targets = WatchTargets(tmp_path / "r.yaml", tmp_path / "r.samples.jsonl", tmp_path / "r.labels.yaml")
    assert targets.kind_of(tmp_path / "r.card.yaml") == "card"
    assert targets.kind_of(tmp_path / "other.card.yaml") is None
    assert tmp_path in targets.folders()
