"""The status bar fits the terminal with a judge panel: members are told in full when they fit,
then by their calls, then by their count, and the unsaved-edits mark is never cut off."""

from __future__ import annotations

from rubric_studio.engine.usage import Usage
from rubric_studio.tui.statusbar import StatusState, status_text


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
