"""Export and import as studio actions (command palette), driven with Pilot. No judge needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Input

from rubric_studio.core.loading import load_rubric
from rubric_studio.interop import export_rubric, import_rubric
from rubric_studio.tui import interop_actions
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.dialogs import AskScreen, ConfirmScreen, NoticeScreen
from tests.tui.studio_helpers import RUBRIC, SIZE, copy_bundled, until


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_bundled(tmp_path, monkeypatch)


async def started(app: StudioApp, pilot) -> None:
    await until(lambda: app.session.report is not None and not app.session.running)
    await pilot.pause()


async def palette(app: StudioApp, pilot, command: str) -> None:
    """Run a command from the command palette by typing its name."""
    await pilot.press("ctrl+p")
    await until(lambda: isinstance(app.screen, CommandPalette))
    app.screen.query_one(Input).value = command
    options = app.screen.query_one(CommandList)

    def found() -> bool:  # the palette searches in the background
        return options.option_count > 0 and command in str(options.get_option_at_index(0).prompt)

    await until(found)
    await pilot.press("down", "enter")
    await until(lambda: not isinstance(app.screen, CommandPalette))
    await pilot.pause()


def notice_text(screen: NoticeScreen) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


async def notice_showing(app: StudioApp, *texts: str) -> str:
    """Wait until a notice is on top showing every one of ``texts`` (its text is composed after the
    push); the notice's text."""

    def showing() -> bool:
        screen = app.screen
        return isinstance(screen, NoticeScreen) and all(text in notice_text(screen) for text in texts)

    await until(showing, what=lambda: f"a notice showing {list(texts)!r} (on top: {app.screen!r})")
    return notice_text(app.screen)


async def test_export_writes_the_file_and_shows_every_warning(studio: Path):
    app = StudioApp(RUBRIC, watch=False)
    target = RUBRIC.with_name("support_reply.eval.yaml")
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await palette(app, pilot, "Export rubric as AgentV")
        expected = export_rubric(load_rubric(RUBRIC), "agentv")
        await notice_showing(app, f"{len(expected.warnings)} warnings", *expected.warnings)
        assert target.read_text() == expected.text
        assert expected.warnings  # support_reply has tags, a keywords check and a penalty
        text = notice_text(app.screen)
        assert f"{len(expected.warnings)} warnings" in text and "support_reply.eval.yaml" in text
        for warning in expected.warnings:
            assert warning in text
        assert any(f"{len(expected.warnings)} warnings" in n.message for n in app._notifications)
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, NoticeScreen))

        # Again: it asks before replacing; "n" keeps the file, "y" replaces it.
        target.write_text("mine\n")
        interop_actions.export_as(app, "agentv")
        await until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await pilot.pause()
        assert target.read_text() == "mine\n"
        interop_actions.export_as(app, "agentv")
        await until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(lambda: isinstance(app.screen, NoticeScreen))
        assert target.read_text() == expected.text

        # A format that expresses everything: a notification, no dialog.
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, NoticeScreen), what="the AgentV notice closed by escape")
        interop_actions.export_as(app, "markdown")
        await until(lambda: RUBRIC.with_name("support_reply.md").exists())
        await pilot.pause()
        assert not isinstance(app.screen, NoticeScreen)
        assert any("expresses everything" in n.message for n in app._notifications)


async def ask_import(app: StudioApp, pilot, path: str, *, by_palette: bool = False) -> None:
    if by_palette:
        await palette(app, pilot, "Import rubric from file")
    else:
        interop_actions.ask_import(app)
    await until(lambda: isinstance(app.screen, AskScreen) and app.screen.query(Input))
    app.screen.query_one(Input).value = path
    await pilot.press("enter")


async def test_import_writes_the_native_rubric_lists_warnings_and_asks_before_overwriting(studio: Path):
    sources = {}
    for target in ("agentv", "promptfoo"):
        sources[target] = studio / f"suite.{target}.yaml"
        sources[target].write_text(export_rubric(load_rubric(RUBRIC), target).text)
    app = StudioApp(RUBRIC, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        # A path that does not exist is refused in the dialog.
        await ask_import(app, pilot, "no/such/file.yaml", by_palette=True)
        await until(lambda: "no such file" in str(app.screen.query_one("#dialog-error").render()),
                    what="the dialog's error about the missing file")
        assert isinstance(app.screen, AskScreen)
        assert "no such file" in str(app.screen.query_one("#dialog-error").render())
        await pilot.press("escape")
        for target, title in (("agentv", "AgentV"), ("promptfoo", "promptfoo")):
            source, imported = sources[target], studio / f"suite.{target}.imported.yaml"
            expected = import_rubric(source)
            await ask_import(app, pilot, source.name)  # relative to the working directory
            await notice_showing(app, f"rubric-studio {imported.name}", f"as {title};", *expected.warnings)
            rubric = load_rubric(imported)
            assert [c.key for c in rubric.criteria] == [c.key for c in expected.rubric.criteria]
            assert [c.weight for c in rubric.criteria] == [c.weight for c in expected.rubric.criteria]
            assert rubric.pass_threshold == expected.rubric.pass_threshold
            text = notice_text(app.screen)
            assert f"rubric-studio {imported.name}" in text and f"as {title};" in text
            assert expected.warnings
            for warning in expected.warnings:
                assert warning in text
            await pilot.press("escape")
            await until(lambda: not isinstance(app.screen, NoticeScreen))
        assert app.session.rubric_path == RUBRIC  # the studio keeps its rubric: nothing unsaved is at risk

        # An existing .imported.yaml is replaced only when the user says so.
        existing = studio / "suite.agentv.imported.yaml"
        existing.write_text("keep me\n")
        await ask_import(app, pilot, str(sources["agentv"]))
        await until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await pilot.pause()
        assert existing.read_text() == "keep me\n"

        # A file that cannot be read as any format: a notification, nothing written.
        bad = studio / "broken.yaml"
        bad.write_text("just: [a, list\n")
        await ask_import(app, pilot, str(bad))
        await until(lambda: any("import of" in n.message and "failed" in n.message for n in app._notifications))
        assert app.is_running and not (studio / "broken.imported.yaml").exists()


@pytest.mark.timeout(60)
async def test_export_refuses_a_fifo_and_keeps_a_file_changed_while_asking(studio: Path):
    import os

    app = StudioApp(RUBRIC, watch=False)
    target = RUBRIC.with_name("support_reply.eval.yaml")
    os.mkfifo(target)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        interop_actions.export_as(app, "agentv")  # would block forever if the FIFO were opened
        await until(lambda: any("named pipe" in n.message for n in app._notifications))
        assert not isinstance(app.screen, ConfirmScreen | NoticeScreen)
        target.unlink()
        target.write_text("mine\n")
        interop_actions.export_as(app, "agentv")
        await until(lambda: isinstance(app.screen, ConfirmScreen))
        target.write_text("edited while the question was open\n")
        await pilot.press("y")
        await until(lambda: any("changed on disk meanwhile" in n.message for n in app._notifications))
        assert target.read_text() == "edited while the question was open\n"
