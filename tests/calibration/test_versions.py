"""Version history: verdict flips, fixed / broken disagreements, per criterion, and the summary line."""

from __future__ import annotations

import pytest

from rubric_studio.core.agreement import agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.loading import parse_rubric
from rubric_studio.engine.versions import VersionHistory
from tests.calibration.calib_helpers import result

V1_TEXT = "name: t\ncriteria:\n  - id: tone\n    outcome: Warm\n"
V2_TEXT = "name: t\npass_threshold: 0.7\ncriteria:\n  - id: tone\n    outcome: Warm and personal\n"
LABELS = {
    "s1": Label(verdict="fail", criteria={"tone": "unmet"}),
    "s2": Label(verdict="fail", criteria={"tone": "unmet"}),
    "s3": Label(verdict="pass", criteria={"tone": "met"}),
    "s4": Label(verdict="pass", criteria={"tone": "met"}),
    "s5": Label(verdict="pass"),
}
# (verdict, tone) per sample in v1 and v2; against LABELS:
#   s1 v1 pass (wrong) -> v2 fail (right): fixed;   tone met (wrong) -> unmet (right): cell fixed
#   s2 fail/fail (right both times)
#   s3 v1 fail (wrong) -> v2 pass (right): fixed
#   s4 v1 pass (right) -> v2 fail (wrong): broken;  tone met (right) -> unmet (wrong): cell broken
#   s5 v1 pending (not compared) -> v2 fail (wrong): neither fixed nor broken
V1 = {"s1": ("pass", "met"), "s2": ("fail", "unmet"), "s3": ("fail", "met"), "s4": ("pass", "met"), "s5": ("pending", "pending")}
V2 = {"s1": ("fail", "unmet"), "s2": ("fail", "unmet"), "s3": ("pass", "met"), "s4": ("fail", "unmet"), "s5": ("fail", "unmet")}


def _record(history: VersionHistory, text: str, table: dict, labels=LABELS, t: float = 0.0):
    rubric = parse_rubric(text, "t.yaml")
    results = [result(sid, verdict, {"tone": tone}) for sid, (verdict, tone) in table.items()]
    return history.record(rubric, results, agreement(results, labels, rubric), timestamp=t)


def test_diff_counts_flips_fixes_and_breaks():
    history = VersionHistory()
    _record(history, V1_TEXT, V1)
    _record(history, V2_TEXT, V2)
    diff = history.diff(1, 2)
    assert diff.to_pass == ["s3"]
    assert diff.to_fail == ["s1", "s4"]
    assert diff.other_changes == [("s5", "pending", "fail")]
    assert diff.overall.fixed == ["s1", "s3"] and diff.overall.broken == ["s4"]
    assert diff.criteria["tone"].fixed == ["s1"] and diff.criteria["tone"].broken == ["s4"]
    assert [sid for sid, _, _ in diff.cell_flips["tone"]] == ["s1", "s4"]  # s5 was pending, not a flip
    assert diff.rubric_changes == ["pass_threshold 0.8 → 0.7", "changed tone (outcome)"]
    # v1 compares s1..s4: 2 right of 4 -> accuracy 0.5; v2 compares s1..s5: s1 s2 s3 right -> 3/5
    assert diff.deltas["overall"]["accuracy"] == (pytest.approx(0.5), pytest.approx(0.6))
    line = diff.summary_line()
    assert line.startswith("v1 → v2 (rubric edit): fixed 2 disagreements, broke 1")
    assert "cells: fixed 1, broke 1" in line and "1 fail→pass" in line and "2 pass→fail" in line
    assert diff.criterion_lines() == ["tone: fixed 1, broke 1 · 2 cells flipped"]
    assert diff.to_dict()["overall"] == {"fixed": ["s1", "s3"], "broken": ["s4"]}


def test_diff_against_current_labels_ignores_label_edits_between_saves():
    history = VersionHistory()
    _record(history, V1_TEXT, V1)
    relabelled = dict(LABELS, s4=Label(verdict="fail"))  # the human changed their mind after v1
    _record(history, V2_TEXT, V2, labels=relabelled)
    # with the current labels for both versions: s4 was wrong in v1 (pass vs fail) and right in v2 -> fixed
    diff = history.diff(1, 2, labels=relabelled)
    assert diff.overall.fixed == ["s1", "s3", "s4"] and diff.overall.broken == []


def test_same_text_updates_the_latest_version_and_any_two_compare():
    history = VersionHistory()
    first = _record(history, V1_TEXT, V1, t=1.0)
    again = _record(history, V1_TEXT, V2, t=2.0)
    assert again is first and len(history) == 1 and first.verdicts["s1"] == "fail"
    assert history.diff_latest() is None
    _record(history, V2_TEXT, V1, t=3.0)
    _record(history, V1_TEXT + "# comment\n", V2, t=4.0)  # a comment-only edit is still a version
    assert [v.number for v in history.versions] == [1, 2, 3]
    assert history.diff(1, 3).summary_line().startswith("v1 → v3 (rubric edit): fixed 0 disagreements, broke 0")
    assert "no verdict changes" in history.diff(1, 3).summary_line()
    assert history.diff_latest().a == 2


def test_history_keeps_at_most_limit_versions():
    history = VersionHistory(limit=2)
    for index in range(4):
        _record(history, V1_TEXT + f"# {index}\n", V1)
    assert [v.number for v in history.versions] == [3, 4]
