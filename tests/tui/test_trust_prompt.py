"""The studio asks before a rubric's own judge endpoint gets a request (and the user's key)."""

from __future__ import annotations

import json
from pathlib import Path

from rubric_studio.core.results import Status
from rubric_studio.core.trust import load_trust
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.trust_prompt import TrustScreen
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import SIZE, until

KEY = "sk-user-secret-key"


def shared_rubric(folder: Path, base_url: str) -> Path:
    folder.mkdir(parents=True)
    rubric = folder / "shared.yaml"
    rubric.write_text(f"name: shared\njudge:\n  model: openai:gpt-4o-mini\n  base_url: {base_url}\n"
                      "criteria:\n  - id: refund\n    outcome: States the refund policy\n")
    (folder / "shared.samples.jsonl").write_text(
        json.dumps({"id": "a", "output": "Our refund policy gives you 30 days."}) + "\n"
        + json.dumps({"id": "b", "output": "Thanks for writing in."}) + "\n"
    )
    return rubric


def prompt_shown(app: StudioApp) -> bool:
    """The trust prompt is on screen, its text composed."""
    return isinstance(app.screen, TrustScreen) and bool(app.screen.query(".dialog-text"))


def statuses(app: StudioApp) -> set[Status]:
    return {cell.status for result in app.session.model.results.values() for cell in result.criteria}


async def test_the_trust_prompt_lists_the_setting_and_trusting_rebuilds_the_judge(tmp_path: Path):
    with FakeLLM() as server:
        rubric = shared_rubric(tmp_path / "r", server.base_url_openai)
        app = StudioApp(rubric, env={"OPENAI_API_KEY": KEY}, cache_path=tmp_path / "c.sqlite", watch=False)
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: prompt_shown(app))
            assert server.calls() == 0 and statuses(app) == {Status.UNJUDGED}
            assert app.session.judge_note.startswith(f"judge.base_url {server.base_url_openai} is set by the rubric")
            listed = str(app.screen.query_one(".dialog-text").render())
            assert f"judge.base_url {server.base_url_openai}" in listed
            await pilot.press("y")
            await until(lambda: app.session.judge_label == "openai:gpt-4o-mini" and not app.session.running
                        and statuses(app) <= {Status.MET, Status.UNMET})
            assert server.calls() == 2 and {r.api_key for r in server.requests} == {KEY}
            assert load_trust(rubric).values == {("judge.base_url", server.base_url_openai)}
            titles = [command.title for command in app.get_system_commands(app.screen)]
            assert "Trust this rubric" not in titles


async def test_not_now_keeps_the_judge_off_and_the_palette_asks_again(tmp_path: Path):
    with FakeLLM() as server:
        rubric = shared_rubric(tmp_path / "r", server.base_url_openai)
        app = StudioApp(rubric, env={"OPENAI_API_KEY": KEY}, cache_path=tmp_path / "c.sqlite", watch=False)
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: prompt_shown(app))
            await pilot.press("n")
            await until(lambda: not isinstance(app.screen, TrustScreen))
            app.action_regrade()
            await until(lambda: not app.session.running)
            await pilot.pause()
            assert not isinstance(app.screen, TrustScreen)  # asked once per set of settings
            titles = [command.title for command in app.get_system_commands(app.screen)]
            assert "Trust this rubric" in titles
            app.action_trust()
            await until(lambda: prompt_shown(app))
            await pilot.press("escape")
            await pilot.pause()
            assert server.calls() == 0 and load_trust(rubric).values == frozenset()


async def test_a_code_check_added_later_runs_only_once_trusted(tmp_path: Path):
    import sys

    folder = tmp_path / "r"
    folder.mkdir()
    rubric = folder / "code.yaml"
    one = json.dumps([sys.executable, "-c", "print(1)"])
    rubric.write_text(f"name: code\ncriteria:\n  - id: first\n    check: {{type: command, command: {one}}}\n")
    (folder / "code.samples.jsonl").write_text(json.dumps({"id": "a", "output": "x"}) + "\n")
    app = StudioApp(rubric, env={}, cache_path=tmp_path / "c.sqlite", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: prompt_shown(app))
        await pilot.press("y")
        await until(lambda: statuses(app) == {Status.MET})
        await until(lambda: app.editor is not None)
        two = json.dumps([sys.executable, "-c", "print(0)"])
        app.session.document.replace_text(app.session.document.text + f"  - id: second\n    check: {{type: command, command: {two}}}\n")
        await pilot.press("ctrl+s")
        await until(lambda: prompt_shown(app))
        assert [gate.key[0] for gate in app.screen.gates] == ["check.command"] and "print(0)" in app.screen.gates[0].value
        assert statuses(app) == {Status.UNJUDGED}  # neither check runs while one is untrusted
        await pilot.press("y")
        await until(lambda: statuses(app) == {Status.MET, Status.UNMET})
