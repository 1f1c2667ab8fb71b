"""The studio's shared values — problems, report, graded rows, labels, selection — reach every
pane through watchers.

Setting ``app.report`` once redraws the results table, run header, status bar, inspector and
Agreement panel; setting ``app.problems`` once redraws the banner, table, bars and inspector. A
pane the app knows nothing of subscribes with ``self.watch(self.app, …)`` and follows problems,
runs, streaming results, labels and the cursor without a line of the app changing. The judge is
the fake server of tests/fakellm.py (every criterion met).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.calibration import AgreementPanel
from rubric_studio.tui.messages import FilesChanged
from rubric_studio.tui.results import ResultsMatrix
from rubric_studio.tui.statusbar import RunHeader, StatusBar
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import RUBRIC, SIZE, copy_bundled, graded, until


def brain(call: Any) -> dict:
    item = call.criteria[0]
    if item.kind == "analytic":
        return {"score": 8, "rationale": "tone", "evidence": []}
    return {"verdict": "met", "rationale": "scripted", "evidence": []}


@pytest.fixture
def judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    copy_bundled(tmp_path, monkeypatch)
    with FakeLLM(brain=brain) as server:
        yield server, tmp_path


def make_app(judge: tuple[FakeLLM, Path]) -> StudioApp:
    server, folder = judge
    return StudioApp(RUBRIC, judge="openai-compatible:fake-judge", base_url=server.base_url_openai,
                     cache_path=folder / "cache.sqlite", watch=False)


class Subscriber(Static):
    """A pane the app does not know: it follows one of the app's values through a watcher."""

    def __init__(self, value: str) -> None:
        super().__init__(id=f"follows-{value}")
        self.value = value
        self.seen: list[Any] = []

    def on_mount(self) -> None:
        self.watch(self.app, self.value, self.saw, init=False)

    def saw(self, value: Any) -> None:
        self.seen.append(value)
        self.update(f"{len(self.seen)} updates")


async def ready(app: StudioApp, pilot) -> ResultsMatrix:
    await until(lambda: graded(app), timeout=20)
    await pilot.pause()
    matrix = app.query_one(ResultsMatrix)
    matrix.focus()
    await pilot.pause()
    return matrix


def text_of(widget: Static) -> str:
    return str(widget.content)


async def test_setting_the_report_once_redraws_every_pane_that_shows_it(judge, monkeypatch: pytest.MonkeyPatch):
    app = make_app(judge)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        panel = app.query_one(AgreementPanel)
        await until(lambda: panel.agreement is not None, what="the first agreement")
        app.action_show("inspector")  # the inspector draws while its tab is shown
        await pilot.pause()
        header, status, inspector_head = app.query_one(RunHeader), app.query_one(StatusBar), app.query_one("#insp-head")
        repaints: list[object] = []
        repaint = matrix.refresh
        monkeypatch.setattr(matrix, "refresh", lambda *a, **k: repaints.append(a) or repaint(*a, **k))
        for pane in (header, status, inspector_head):
            pane.update("")  # blank: only a redraw brings their text back
        panel.agreement = None

        app.report = app.session.report

        assert repaints, "the results table was not redrawn"
        assert "support" in text_of(header).lower()  # the rubric's name, with the verdict counts
        assert "judge" in text_of(status)
        assert text_of(inspector_head) != ""
        assert panel.agreement is not None and panel.agreement.overall.n > 0


async def test_a_pane_added_later_follows_each_finished_run_through_a_watcher(judge):
    app = make_app(judge)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        first = app.session.report
        pane = Subscriber("report")
        await app.screen.mount(pane)
        assert pane.seen == []  # nothing happened since it subscribed

        app.action_regrade()
        await until(lambda: app.session.report is not first and not app.session.running, what="a second run")
        await until(lambda: pane.seen, what="the pane to hear of the run")
        assert pane.seen == [app.session.report]  # once per run, the session's own report
        assert text_of(pane) == "1 updates"


async def test_panes_added_later_follow_the_labels_and_the_cursor(judge):
    app = make_app(judge)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        labels, selection = Subscriber("labels"), Subscriber("selection")
        await app.screen.mount(labels, selection)
        sample = "cancel-subscription"
        assert sample not in app.session.labels
        assert matrix.select_sample(sample)
        await until(lambda: selection.seen and selection.seen[-1][0] == sample, what="the cursor on the sample")
        assert selection.seen[-1] == app.selection == matrix.current

        await pilot.press("p")
        await until(lambda: labels.seen and sample in labels.seen[-1], what="the new label")
        assert labels.seen[-1][sample].verdict == "pass"
        assert labels.seen[-1] is app.session.labels


def rubric_errors(problems: Any) -> list[Any]:
    return [p for p in problems if p.severity == "error" and p.file.endswith("support_reply.yaml")]


async def test_a_pane_added_later_follows_a_problem_appearing_and_clearing(judge):
    app = make_app(judge)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        pane = Subscriber("problems")
        await app.screen.mount(pane)
        rubric = Path(app.session.rubric_path)
        good = rubric.read_text()

        rubric.write_text(good.replace("criteria:\n", "criteria:\n  - id: [unclosed\n", 1))
        app.post_message(FilesChanged({"rubric"}))
        await until(lambda: pane.seen and rubric_errors(pane.seen[-1]), what="the pane to hear of the error")
        problem = rubric_errors(pane.seen[-1])[0]
        assert problem.line is not None  # where the YAML breaks, as the banner says it
        assert list(pane.seen[-1]) == app.session.problems
        await pilot.pause()
        assert app.query_one("#banner").display
        assert app.session.model.stale  # the results stay, drawn stale

        heard = len(pane.seen)
        rubric.write_text(good)
        app.post_message(FilesChanged({"rubric"}))
        await until(lambda: len(pane.seen) > heard and not rubric_errors(pane.seen[-1]),
                    what="the pane to hear the error is gone")
        await until(lambda: graded(app), what="the re-grade of the repaired rubric")
        assert not rubric_errors(app.session.problems)
        assert not app.query_one("#banner").display


async def test_setting_the_problems_once_redraws_the_banner_table_bars_and_inspector(judge, monkeypatch):
    app = make_app(judge)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        rubric = Path(app.session.rubric_path)
        rubric.write_text(rubric.read_text().replace("pass_threshold: 0.8", "pass_threshold: 7"))
        app.post_message(FilesChanged({"rubric"}))
        await until(lambda: rubric_errors(app.session.problems), what="the invalid threshold")
        app.action_show("inspector")  # the inspector draws while its tab is shown
        await pilot.pause()
        banner = app.query_one("#banner", Static)
        header, inspector_head = app.query_one(RunHeader), app.query_one("#insp-head", Static)
        repaints: list[object] = []
        repaint = matrix.refresh
        monkeypatch.setattr(matrix, "refresh", lambda *a, **k: repaints.append(a) or repaint(*a, **k))
        banner.display = False
        for widget in (banner, header, inspector_head):
            widget.update("")  # blank: only a redraw brings their text back

        app.problems = app.session.problems

        assert banner.display and "pass_threshold" in text_of(banner)
        assert repaints, "the results table was not redrawn"
        assert "support" in text_of(header).lower()
        assert text_of(inspector_head) != ""


async def test_a_pane_added_later_follows_the_rows_as_results_stream_in(judge):
    app = make_app(judge)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        pane = Subscriber("graded")
        await app.screen.mount(pane)
        first = app.session.report

        app.action_regrade()
        await until(lambda: app.session.report is not first and not app.session.running, what="a second run")
        assert {sample_id for ids in pane.seen for sample_id in ids} == set(app.session.samples_by_id)

        sample = "cancel-subscription"
        assert matrix.select_sample(sample)
        await until(lambda: app.selection[0] == sample, what="the cursor on the sample")
        hint = app.query_one("#cell-hint", Static)
        hint.update("")
        app.graded = [other for other in app.session.samples_by_id if other != sample][:1]
        assert text_of(hint) == ""  # another sample's row: the hint is left alone
        app.graded = [sample]
        assert sample in text_of(hint)  # the cursor's sample: its hint is drawn again
