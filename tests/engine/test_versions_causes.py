"""Panel and annotator changes are kinds of their own: "fixed N, broke M" is credited to them, a diff
names which member or whose labels came or went, and histories written before still load."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from rubric_studio.cli import main
from rubric_studio.core.agreement import agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.rubric import PanelAggregate
from rubric_studio.engine.versions import (
    VersionHistory,
    grader_key_of,
    history_path,
    judge_key_of,
    open_history,
)
from rubric_studio.judges import JudgeConfig
from tests.calibration.calib_helpers import result

TEXT = "name: t\ncriteria:\n  - id: quotes\n    outcome: Quotes the source\n"
LABELS = {"s1": Label(verdict="fail", criteria={"quotes": "unmet"}), "s2": Label(verdict="pass", criteria={"quotes": "met"})}
WRONG = {"s1": ("pass", "met"), "s2": ("pass", "met")}  # s1 disagrees with its label
RIGHT = {"s1": ("fail", "unmet"), "s2": ("pass", "met")}


def _config(model: str, **settings) -> JudgeConfig:
    provider, _, name = model.partition(":")
    return JudgeConfig(provider=provider, model=name, **settings)


def _panel(*models: str, rules: PanelAggregate | None = None, **settings) -> SimpleNamespace:
    """What a panel grader offers the key: its members (label, grader with a config) and rules."""
    members = [(m, SimpleNamespace(config=_config(m, **settings))) for m in models]
    return SimpleNamespace(members=members, rules=rules, repeat=1, config=members[0][1].config)


def _single(model: str) -> SimpleNamespace:
    return SimpleNamespace(config=_config(model))


def _grade(history: VersionHistory, table, judge: str, *, annotators: str | None = "alice", t: float = 0.0):
    rubric = parse_rubric(TEXT, "t.yaml")
    results = [result(sid, verdict, {"quotes": cell}) for sid, (verdict, cell) in table.items()]
    return history.record(rubric, results, agreement(results, LABELS, rubric), timestamp=t, samples_fingerprint="S",
                          labels=LABELS, judge_key=judge, annotators_key=annotators)  # fmt: skip


def test_a_single_judge_key_is_unchanged_and_a_panel_key_lists_its_members_in_any_order():
    assert grader_key_of(_single("openai:a")) == judge_key_of(_config("openai:a"))  # old histories still match
    key = grader_key_of(_panel("openai:a", "anthropic:b"))
    assert key.startswith("panel[majority/median] ") and "openai:a#" in key and "anthropic:b#" in key
    assert key == grader_key_of(_panel("anthropic:b", "openai:a"))
    # the bug this fixes: a panel's key was its first member's, so adding a member changed nothing
    assert key != grader_key_of(_panel("anthropic:b", "openai:a", "openai:c"))
    assert key != grader_key_of(_panel("openai:a", "anthropic:b", rules=PanelAggregate(checklist="all")))
    assert key != grader_key_of(_panel("openai:a", "anthropic:b", temperature=0.7))


def test_adding_a_member_is_a_panel_change_credited_with_its_fix_and_named():
    history = VersionHistory()
    _grade(history, WRONG, grader_key_of(_panel("openai:a", "anthropic:b")))
    added = _grade(history, RIGHT, grader_key_of(_panel("openai:a", "anthropic:b", "openai:c")))
    assert added.kind == "panel change"
    diff = history.diff_latest()
    assert diff.summary_line().startswith("v1 → v2 (panel change): fixed 1 disagreement, broke 0")
    assert diff.causes == ["panel: added openai:c"]
    assert diff.to_dict()["causes"] == ["panel: added openai:c"]


def test_dropping_changing_and_reaggregating_members_are_named():
    history = VersionHistory()
    _grade(history, WRONG, grader_key_of(_panel("openai:a", "anthropic:b", "openai:c")))
    dropped = _grade(history, WRONG, grader_key_of(_panel("openai:a", "anthropic:b")))
    assert dropped.kind == "panel change" and history.diff_latest().causes == ["panel: dropped openai:c"]
    rules = PanelAggregate(checklist="any")
    _grade(history, RIGHT, grader_key_of(_panel("openai:a", "anthropic:b", rules=rules)))
    assert history.diff_latest().causes == ["panel: aggregation majority/median → any/median"]
    members = [("openai:a", _single("openai:a")), ("anthropic:b", SimpleNamespace(config=_config("anthropic:b", max_tokens=512)))]
    _grade(history, RIGHT, grader_key_of(SimpleNamespace(members=members, rules=rules, repeat=1)))
    assert history.diff_latest().causes == ["panel: changed anthropic:b (its settings)"]


def test_one_judge_to_a_panel_is_a_panel_change_and_one_judge_to_another_a_judge_change():
    history = VersionHistory()
    _grade(history, WRONG, grader_key_of(_single("openai:a")))
    _grade(history, WRONG, grader_key_of(_single("openai:b")))
    assert history.latest.kind == "judge change" and history.diff_latest().causes == ["judge openai:a → openai:b"]
    _grade(history, RIGHT, grader_key_of(_panel("openai:b", "openai:c", "openai:d")))
    assert history.latest.kind == "panel change"
    assert history.diff_latest().causes == ["panel: one judge openai:b → a panel of 3"]
    _grade(history, RIGHT, grader_key_of(_single("openai:b")))
    assert history.latest.kind == "panel change"
    assert history.diff_latest().causes == ["panel: a panel of 3 → one judge openai:b"]


def test_another_annotators_labels_joining_is_an_annotator_change_credited_with_what_it_changed():
    history = VersionHistory()
    _grade(history, WRONG, "J", annotators="alice")
    # bob's labels join; with an adjudication the consensus of s1 becomes pass: s1 now agrees
    relabelled = dict(LABELS, s1=Label(verdict="pass", criteria={"quotes": "met"}))
    joined = history.record_labels(relabelled, annotators_key="adjudicated,alice,bob", by="bob", timestamp=1.0)
    assert joined.kind == "annotator change" and joined.labelled_by == "bob"
    assert "annotator change by bob" in joined.label
    diff = history.diff_latest()
    assert diff.summary_line().startswith("v1 → v2 (annotator change): fixed 1 disagreement, broke 0")
    assert diff.causes == ["annotators: adjudicated's labels joined", "annotators: bob's labels joined",
                           "labelled by bob"]  # fmt: skip


def test_a_labelling_run_is_one_version_per_person_and_the_first_labeller_is_a_labels_change():
    history = VersionHistory()
    _grade(history, WRONG, "J", annotators="")
    assert history.record_labels(LABELS, annotators_key="alice", by="alice", coalesce=True) is history.latest
    assert len(history) == 1  # the same labels, now alice's: nothing graded changed
    first = history.record_labels(dict(LABELS, s1=Label(verdict="pass")), annotators_key="alice", by="alice",
                                  coalesce=True)  # fmt: skip
    assert first.kind == "labels change"  # nobody had labelled: alice is not "another" annotator
    more = dict(LABELS, s2=Label(verdict="fail"))
    assert history.record_labels(more, annotators_key="alice", by="alice", coalesce=True) is first
    assert history.coalesces_with("alice") and not history.coalesces_with("bob")
    bobs = history.record_labels(more, annotators_key="alice,bob", by="bob", coalesce=True)
    assert bobs is not first and bobs.kind == "annotator change"
    again = dict(more, s1=Label(verdict="pass"))
    assert history.record_labels(again, annotators_key="alice,bob", by="bob", coalesce=True) is bobs
    assert bobs.kind == "annotator change"  # still bob's run: his labels joined in it
    alice_again = history.record_labels(LABELS, annotators_key="alice,bob", by="alice", coalesce=True)
    assert alice_again is not bobs and alice_again.kind == "labels change"


def test_a_history_written_before_annotators_loads_and_its_versions_are_no_annotator_change(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("RUBRIC_STUDIO_CACHE", str(tmp_path / "cache" / "judge.sqlite"))
    rubric = tmp_path / "r.yaml"
    rubric.write_text(TEXT)
    history = open_history(rubric)
    _grade(history, WRONG, "openai:a#1234", annotators=None, t=1_700_000_000.0)
    file = history_path(rubric)
    old = json.loads(file.read_text().splitlines()[-1])
    for key in ("annotators_key", "labelled_by"):  # the line as it was written before annotators
        del old[key]
    file.write_text(json.dumps(old) + "\n")

    reopened = open_history(rubric)
    assert reopened.warnings == [] and [v.kind for v in reopened.versions] == ["first run"]
    assert reopened.latest.annotators_key is None
    again = _grade(reopened, RIGHT, "openai:a#1234", annotators="alice")
    assert again is reopened.latest and len(reopened) == 1  # same basis: updated in place, no "no change" version
    assert again.annotators_key == "alice"
    bob = reopened.record_labels(LABELS, annotators_key="alice,bob", by="bob")
    assert bob.kind == "annotator change"
    third = open_history(rubric)
    assert [(v.kind, v.labelled_by) for v in third.versions] == [("first run", None), ("annotator change", "bob")]


def test_the_history_command_shows_panel_and_annotator_changes(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("RUBRIC_STUDIO_CACHE", str(tmp_path / "cache" / "judge.sqlite"))
    rubric = tmp_path / "r.yaml"
    rubric.write_text(TEXT)
    history = open_history(rubric)
    _grade(history, WRONG, grader_key_of(_panel("openai:a", "anthropic:b")), t=1_700_000_000.0)
    _grade(history, RIGHT, grader_key_of(_panel("openai:a", "anthropic:b", "openai:c")), t=1_700_000_600.0)
    history.record_labels(LABELS, annotators_key="alice,bob", by="bob", timestamp=1_700_001_200.0)
    assert main(["history", str(rubric)]) == 0
    out = capsys.readouterr().out
    assert "v1 → v2 (panel change): fixed 1 disagreement, broke 0" in out and "panel: added openai:c" in out
    v3 = next(line for line in out.splitlines() if line.startswith("v3 "))
    assert "annotator change by bob" in v3 and "annotators: bob's labels joined" in out
    assert main(["history", str(rubric), "--diff", "1", "2"]) == 0
    assert "other changes:\n  panel: added openai:c" in capsys.readouterr().out
    assert main(["history", str(rubric), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["versions"]
    assert [r["kind"] for r in rows] == ["first run", "panel change", "annotator change"]
    assert rows[2]["labelled_by"] == "bob" and rows[2]["annotators"] == "alice,bob"


def test_the_studios_versions_dialog_names_the_causes():
    from rubric_studio.tui.calibration import diff_text

    history = VersionHistory()
    _grade(history, WRONG, grader_key_of(_panel("openai:a", "anthropic:b")))
    _grade(history, RIGHT, grader_key_of(_panel("openai:a", "anthropic:b", "openai:c")))
    text = diff_text(history.diff_latest()).plain
    assert "(panel change)" in text and "  panel: added openai:c" in text
    assert history.latest.label.endswith("· panel change")
