"""Queues in the studio: "people disagree" is a results filter, and the labelling queue (g / G)
walks the rows in the current sort, so "most contested first" is a queue order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.core.panel import contest
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.results import ResultsMatrix
from rubric_studio.tui.statusbar import RunHeader
from tests.fakellm import FakeLLM
from tests.panels.judges import COIN, LONG, RIGHT, RUBRIC, Judges, member, sample_text
from tests.tui.studio_helpers import graded, until

pytestmark = pytest.mark.timeout(90)

# s01 and s05: alice and bob disagree (a verdict, a cell), nobody adjudicated; s02: they disagree but
# it is adjudicated; s03: they agree; s07: alice alone.
LABELS = """\
s01: {verdict: pass, annotator: alice, annotators: {bob: {verdict: fail}}}
s02: {verdict: pass, annotator: alice, annotators: {bob: {verdict: fail}, adjudicated: {verdict: pass}}}
s03: {verdict: fail, annotator: alice, annotators: {bob: {verdict: fail}}}
s05: {criteria: {timeline: met}, annotator: alice, annotators: {bob: {criteria: {timeline: unmet}}}}
s07: {verdict: pass, annotator: alice}
"""


def _app(tmp_path: Path, server: FakeLLM) -> StudioApp:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "s.jsonl").write_text("".join(json.dumps({"id": f"s{n:02d}", "output": sample_text(n)}) + "\n"
                                              for n in range(12)))  # fmt: skip
    (tmp_path / "r.labels.yaml").write_text(LABELS)
    return StudioApp(tmp_path / "r.yaml", tmp_path / "s.jsonl", judge=",".join(member(m) for m in (LONG, COIN, RIGHT)),
                     base_url=server.base_url_openai, env={"OPENAI_API_KEY": "k"}, cache_path=tmp_path / "c.sqlite",
                     watch=False, annotator="carol")  # fmt: skip


async def test_people_disagree_is_a_filter_of_open_disagreements(tmp_path: Path):
    with FakeLLM(brain=Judges()) as server:
        app = _app(tmp_path, server)
        async with app.run_test(size=(160, 45)) as pilot:
            await until(lambda: graded(app))
            matrix = app.query_one(ResultsMatrix)
            matrix.focus()
            for _ in range(20):
                if matrix.filter_kind == "people":
                    break
                await pilot.press("f")
            assert matrix.filter_kind == "people"
            await pilot.pause()
            assert matrix.rows == ["s01", "s05"]  # not s02 (adjudicated), s03 (agreed), s07 (one person)
            # the run header hears of the filter from the table's message
            await until(lambda: "filter: people disagree" in str(app.query_one(RunHeader).render()),
                        what="the run header naming the filter")
            assert "filter: people disagree" in str(app.query_one(RunHeader).render())


async def test_the_labelling_queue_follows_most_contested_first(tmp_path: Path):
    with FakeLLM(brain=Judges()) as server:
        app = _app(tmp_path, server)
        async with app.run_test(size=(160, 45)) as pilot:
            await until(lambda: graded(app))
            matrix = app.query_one(ResultsMatrix)
            matrix.focus()
            while matrix.sort_by != "contested":
                await pilot.press("s")
            await pilot.press("home")
            await pilot.pause()
            results = app.session.model.results
            contested = {sid: contest(results[sid].cell("timeline")) for sid in results}
            labelled = {"s02", "s03", "s07"}  # s01, s05: a 1–1 tie is no consensus label yet
            start = matrix.rows[0]
            visited = []
            for _ in range(12 - len(labelled)):
                await pilot.press("g")
                await pilot.pause()
                visited.append(matrix.rows[matrix.cursor_row])
            assert set(visited) == {f"s{n:02d}" for n in range(12)} - labelled  # every unlabelled one, once
            walk = visited[:-1] if visited[-1] == start else visited  # the last press may wrap to the top row
            ranks = [contested[sid] for sid in walk]
            assert ranks == sorted(ranks, reverse=True)  # the closest splits first
            assert any(r > 0 for r in ranks) and any(r == 0 for r in ranks)
            assert walk != sorted(walk)  # not file order
            await pilot.press("G")
            await pilot.pause()
            assert matrix.rows[matrix.cursor_row] == visited[-2]  # back one in the same order
