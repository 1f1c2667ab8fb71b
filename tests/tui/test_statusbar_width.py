"""The status bar fits the terminal: a judge panel's members are told in full when they fit, then
by their calls, then by their count; then whole items are left out, the least important first
(the unsaved-edits mark and the judge last): an item is never cut."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.geometry import Region

from rubric_studio.engine.usage import Usage
from rubric_studio.tui.statusbar import STATUS_PRIORITY, StatusBar, StatusState, status_items, status_text
from tests.tui.studio_helpers import ROOT, until


def _panel_usage() -> Usage:
    usage = Usage(judge_calls=180, cache_hits=0, input_tokens=140_000, output_tokens=4_000)
    for name in ("openai:gpt-4o-mini", "anthropic:claude-haiku-4-5", "openai:gpt-4.1"):
        usage.members[name] = Usage(judge_calls=60, cache_hits=3, input_tokens=40_000, output_tokens=1_000)
    return usage


def test_a_three_member_panel_fits_140_columns_and_keeps_the_unsaved_mark():
    state = StatusState(judge="panel of 3", judge_ready=True, usage=_panel_usage(), dirty=True, file="r.yaml")
    full = status_text(state)
    assert full.cell_len > 140  # every member in full does not fit: what users saw cut off
    fitted = status_text(state, 140)
    assert fitted.cell_len <= 140
    assert fitted.plain.endswith("● r.yaml has unsaved edits") and "3 panel members" in fitted.plain
    saved = status_text(StatusState(judge="panel of 3", judge_ready=True, usage=_panel_usage()), 140)
    assert saved.cell_len <= 140
    assert "gpt-4o-mini 60 · claude-haiku-4-5 60 · gpt-4.1 60 calls" in saved.plain


def test_a_narrow_terminal_counts_the_members_and_a_wide_one_shows_them_in_full():
    state = StatusState(judge="panel of 3", judge_ready=True, usage=_panel_usage())
    assert "3 panel members" in status_text(state, 100).plain
    wide = status_text(state, 400).plain
    assert "claude-haiku-4-5 60 calls 3 cached" in wide


# -- a narrow terminal: whole items, the least important left out first ---------------------------
def whole_items(line: str, items: dict[str, str]) -> list[str] | None:
    """The names of ``items`` that ``line`` is made of, in order; None if it is not made of whole items."""
    rest, names = line, []
    for name, text in items.items():
        if rest.startswith(text):
            names.append(name)
            rest = rest[len(text):]
    return names if not rest.strip() else None


def busy_state() -> StatusState:
    usage = _panel_usage()
    usage.cached_input_tokens = 30_000
    return StatusState(judge="panel of 3", judge_ready=True, in_flight=9, concurrency=4, concurrency_text="4/8",
                       run_calls=12, usage=usage, dirty=True, file="support_reply.yaml", card_state="stale",
                       card="card stale: 2 labels since")


def test_a_narrow_bar_leaves_out_whole_items_least_important_first():
    state = busy_state()
    forms = [status_items(state, judge=judge, members=members) for judge, members in
             (("full", "full"), ("short", "full"), ("short", "calls"), ("short", "count"))]
    for width in range(10, 260):
        line = status_text(state, width).plain
        for form in forms:
            shown = whole_items(line, {name: text.plain for name, text in form.items()})
            if shown is not None:
                break
        assert shown is not None, f"{width}: {line!r} is not made of whole items"
        assert shown[0] == "judge" and "…" not in line and (len(line) <= width or shown == ["judge"]), width
        kept = [STATUS_PRIORITY.index(name) for name in shown]
        left_out = [STATUS_PRIORITY.index(name) for name in form if name not in shown]
        assert not left_out or max(kept) < min(left_out), f"{width}: kept {shown}"
    assert status_text(state, 80).plain.endswith("● support_reply.yaml has unsaved edits")  # before tokens, cost ...


def status_line(bar: StatusBar) -> str:
    """The status bar as the screen shows it."""
    return bar.render_lines(Region(0, 0, bar.size.width, 1))[0].text.rstrip()


async def test_the_studio_status_bar_shows_only_whole_items_at_80x24_and_60x20(tmp_path: Path):
    from rubric_studio.tui.app import StudioApp

    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path / "support_reply")
    app = StudioApp(tmp_path / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: app.session.report is not None and not app.session.running
                    and getattr(app.editor, "ready", False), what="graded, the editor ready")
        bar = app.query_one(StatusBar)
        for width, height in ((80, 24), (60, 20)):
            await pilot.resize_terminal(width, height)
            await until(lambda w=width: bar.size.width == w and bar.state is not None and len(status_line(bar)) <= w,
                        what=lambda: f"the status bar within the width: {status_line(bar)!r}")
            line = status_line(bar)
            items = {name: text.plain for name, text in status_items(bar.state).items()}
            assert len("".join(items.values())) > width  # it would not all fit: what users saw cut at "cost"
            shown = whole_items(line, items)
            assert shown is not None and "…" not in line, f"{width}: {line!r}"
            assert shown[0] == "judge" and len(shown) < len(items)
