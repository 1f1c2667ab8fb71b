"""A studio session whose rubric's panel gains a member records a "panel change" naming it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rubric_studio.session.studio import StudioSession
from tests.fakellm import FakeLLM
from tests.panels.judges import COIN, LONG, RIGHT, Judges, member, sample_text

pytestmark = pytest.mark.timeout(60)

PANEL = "name: refunds\njudge:\n  max_retries: 0\n  panel: [{members}]\ncriteria:\n  - id: timeline\n    outcome: Says the refund takes 5 days\n"


def _rubric(*models: str) -> str:
    return PANEL.format(members=", ".join(member(m) for m in models))


def test_adding_a_member_to_the_rubrics_panel_is_a_panel_change(tmp_path: Path):
    (tmp_path / "r.yaml").write_text(_rubric(LONG, RIGHT))
    (tmp_path / "r.samples.jsonl").write_text("".join(
        json.dumps({"id": f"s{n:02d}", "output": sample_text(n)}) + "\n" for n in range(4)))  # fmt: skip
    with FakeLLM(brain=Judges()) as server:
        session = StudioSession(tmp_path / "r.yaml", env={"OPENAI_API_KEY": "k"}, persist_history=False,
                                grader_options={"base_url": server.base_url_openai, "use_cache": False})  # fmt: skip

        async def scenario() -> str | None:
            await session.open()
            session.document.replace_text(_rubric(LONG, RIGHT, COIN))
            session.document.save()
            applied = session.apply_rubric_text()
            assert applied.valid and applied.needs_grader
            old = session.grader_ready(*await asyncio.to_thread(session.build_grader, session.rubric))
            outcome = await session.grade_to_end()
            await old.aclose()
            await session.grader.aclose()
            return outcome.version_line

        line = asyncio.run(scenario())
    kinds = [v.kind for v in session.versions.history.versions]
    assert kinds == ["first run", "rubric edit + panel change"]
    assert "(rubric edit + panel change)" in (line or "")
    assert session.versions.latest_diff.causes == [f"panel: added {member(COIN)}"]
