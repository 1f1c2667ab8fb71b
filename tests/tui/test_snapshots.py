"""Snapshots of the studio's main screens (pytest-textual-snapshot), 120×35.

Deterministic: a private copy of the bundled rubrics at a relative path, no file
watching, and judge replies served from a cache filled beforehand by the fake
OpenAI-compatible server (so cells show ``cache`` as their source and no latency).
Update the baselines with ``pytest tests/tui/test_snapshots.py --snapshot-update``
and look at them before committing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.core.loading import load_rubric
from rubric_studio.core.samples import load_samples
from rubric_studio.engine.api import grade
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.help import HelpScreen
from rubric_studio.tui.messages import FilesChanged
from rubric_studio.tui.results import ResultsMatrix
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import RUBRIC, SIZE, copy_bundled, drawn, on_screen, until

JUDGE = "openai-compatible:fake-judge"
SAMPLES = Path("sample_rubrics/support_reply/support_reply.samples.jsonl")


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_bundled(tmp_path, monkeypatch)


@pytest.fixture
def judged(studio: Path):
    """Options for a studio whose judge replies are all in the cache already."""
    cache = studio / "cache.sqlite"
    with FakeLLM() as server:
        options = {"judge": JUDGE, "base_url": server.base_url_openai, "cache_path": cache}
        grade(load_rubric(RUBRIC), load_samples(SAMPLES).samples, **options)
        yield options


async def graded(pilot) -> None:
    app = pilot.app
    await until(lambda: app.session.report is not None and not app.session.running
                and getattr(app.editor, "ready", False), timeout=60, what="the first run graded, the editor ready")
    await pilot.pause()


def test_main_screen_after_grading(snap_compare, judged):
    app = StudioApp(RUBRIC, watch=False, **judged)

    async def run_before(pilot) -> None:
        await graded(pilot)
        matrix = app.query_one(ResultsMatrix)
        matrix.select_sample("refund-wrong-timeline")
        matrix.select_criterion("policy-accurate")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_inspector_on_a_judge_cell(snap_compare, judged):
    app = StudioApp(RUBRIC, watch=False, **judged)

    async def run_before(pilot) -> None:
        await graded(pilot)
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        matrix.select_sample("refund-within-window")
        matrix.select_criterion("resolves-issue")
        await pilot.press("enter")
        head = app.query_one("#insp-head")
        await until(lambda: "refund-within-window × resolves-issue" in str(head.render()),
                    what="the inspector on the selected cell")
        await drawn(app.query_one("#insp-body"), "rationale", what="the judge's rationale drawn in the inspector")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare, studio):
    app = StudioApp(RUBRIC, watch=False)

    async def run_before(pilot) -> None:
        await graded(pilot)
        await pilot.press("f1")
        await on_screen(app, HelpScreen)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_invalid_file_banner_keeps_stale_results(snap_compare, studio):
    app = StudioApp(RUBRIC, watch=False)

    async def run_before(pilot) -> None:
        await graded(pilot)
        text = RUBRIC.read_text().replace("max_words: 150", "max_wrds: 150")
        RUBRIC.write_text(text)
        app.post_message(FilesChanged({"rubric"}))
        banner = app.query_one("#banner")
        await until(lambda: banner.display and "max_wrds" in str(banner.render()), what="the banner naming the typo")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_no_judge_state(snap_compare, studio):
    app = StudioApp(RUBRIC, watch=False)

    async def run_before(pilot) -> None:
        await graded(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
