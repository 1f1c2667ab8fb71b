"""Versions record what they were graded against; each is a kind of event (rubric edit, samples
change, labels change, judge change, or several), and a diff names the kind and credits the right one."""

from __future__ import annotations

import pytest

from rubric_studio.core.agreement import agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.versions import (
    VersionHistory,
    judge_key_of,
    labels_fingerprint_of,
    samples_fingerprint_of,
)
from rubric_studio.judges import JudgeConfig
from tests.calibration.calib_helpers import result

V1_TEXT = "name: t\ncriteria:\n  - id: quotes\n    outcome: Quotes the source\n"
V2_TEXT = "name: t\ncriteria:\n  - id: quotes\n    outcome: Quotes the source word for word\n"
LABELS = {"made-up-quote": Label(verdict="fail", criteria={"quotes": "unmet"}),
          "exact-quote": Label(verdict="pass", criteria={"quotes": "met"})}  # fmt: skip


def _grade(history: VersionHistory, text: str, table: dict, *, samples="S1", labels=LABELS, judge="J", t=0.0):
    rubric = parse_rubric(text, "t.yaml")
    results = [result(sid, verdict, {"quotes": cell}) for sid, (verdict, cell) in table.items()]
    return history.record(rubric, results, agreement(results, labels, rubric), timestamp=t, samples_fingerprint=samples,
                          labels=labels, judge_key=judge)  # fmt: skip


# made-up-quote: v1 passes (wrong), the outcome edit makes it fail (right), the samples change
# makes it pass again (wrong); exact-quote stays right throughout.
BEFORE = {"made-up-quote": ("pass", "met"), "exact-quote": ("pass", "met")}
AFTER_EDIT = {"made-up-quote": ("fail", "unmet"), "exact-quote": ("pass", "met")}
AFTER_SAMPLES = {"made-up-quote": ("pass", "met"), "exact-quote": ("pass", "met")}


def test_a_samples_change_after_an_outcome_edit_is_its_own_version():
    history = VersionHistory()
    assert _grade(history, V1_TEXT, BEFORE).kind == "first run"
    edit = _grade(history, V2_TEXT, AFTER_EDIT)
    assert edit.kind == "rubric edit"
    edit_diff = history.diff(1, 2).to_dict()
    assert edit_diff["overall"] == {"fixed": ["made-up-quote"], "broken": []}

    changed = _grade(history, V2_TEXT, AFTER_SAMPLES, samples="S2")
    assert changed.number == 3 and changed.kind == "samples change"
    diff = history.diff_latest(LABELS)
    assert diff.kind == "samples change" and diff.rubric_changes == []
    assert diff.overall.broken == ["made-up-quote"] and diff.criteria["quotes"].broken == ["made-up-quote"]
    assert diff.summary_line().startswith("v2 → v3 (samples change): fixed 0 disagreements, broke 1 · ")
    assert history.diff(1, 2).to_dict() == edit_diff  # the outcome edit is still credited with its fix
    assert history.diff(1, 2).summary_line().startswith("v1 → v2 (rubric edit): fixed 1 disagreement, broke 0")


def test_the_same_basis_updates_the_latest_version_in_place():
    history = VersionHistory()
    first = _grade(history, V1_TEXT, BEFORE)
    again = _grade(history, V1_TEXT, AFTER_EDIT)
    assert again is first and len(history) == 1 and first.verdicts["made-up-quote"] == "fail"


def test_a_judge_change_is_a_version_and_names_itself():
    history = VersionHistory()
    _grade(history, V1_TEXT, BEFORE, judge="openai:gpt-4o-mini#aaaa")
    judged = _grade(history, V1_TEXT, AFTER_EDIT, judge="anthropic:claude-haiku-4-5#bbbb")
    assert judged.number == 2 and judged.kind == "judge change"
    line = history.diff_latest().summary_line()
    assert line.startswith("v1 → v2 (judge change): fixed 1 disagreement, broke 0 · cells: fixed 1, broke 0 · 1 pass→fail")
    assert history.diff_latest().rubric_changes == []


def test_a_labels_change_compares_each_version_with_its_own_labels():
    history = VersionHistory()
    _grade(history, V1_TEXT, BEFORE)  # made-up-quote disagrees with its label
    relabelled = dict(LABELS, **{"made-up-quote": Label(verdict="pass", criteria={"quotes": "met"})})
    version = history.record_labels(relabelled, timestamp=1.0)
    assert version is not None and version.number == 2 and version.kind == "labels change"
    assert version.verdicts == history.get(1).verdicts  # the results are the previous version's
    assert version.labels["made-up-quote"]["verdict"] == "pass" and history.get(1).labels["made-up-quote"]["verdict"] == "fail"
    for labels in (None, relabelled):  # the studio passes its current labels: still each with its own
        diff = history.diff(1, 2, labels)
        assert diff.kind == "labels change" and diff.overall.fixed == ["made-up-quote"]
        line = diff.summary_line()
        assert line.startswith("v1 → v2 (labels change): fixed 1 disagreement, broke 0 · cells: fixed 1, broke 0")
        assert "no verdict changes" in line
    assert history.record_labels(relabelled) is version  # the same labels again: nothing new


def test_record_labels_before_any_grade_records_nothing():
    assert VersionHistory().record_labels(LABELS) is None


def test_record_with_the_same_results_and_new_labels_is_a_labels_change():
    history = VersionHistory()
    _grade(history, V1_TEXT, BEFORE)
    relabelled = dict(LABELS, **{"exact-quote": Label(verdict="fail")})
    version = _grade(history, V1_TEXT, BEFORE, labels=relabelled)
    assert version.kind == "labels change"
    assert history.diff(1, 2).overall.broken == ["exact-quote"]


@pytest.mark.parametrize(
    ("changes", "kind"),
    [
        ({"text": V2_TEXT, "samples": "S2"}, "rubric edit + samples change"),
        ({"samples": "S2", "judge": "K"}, "samples change + judge change"),
        ({"text": V2_TEXT, "samples": "S2", "labels": {"exact-quote": Label(verdict="fail")}, "judge": "K"},
         "rubric edit + samples change + labels change + judge change"),
    ],
)
def test_several_changes_at_once_are_all_named(changes: dict, kind: str):
    history = VersionHistory()
    _grade(history, V1_TEXT, BEFORE)
    text = changes.pop("text", V1_TEXT)
    version = _grade(history, text, AFTER_EDIT, **changes)
    assert version.kind == kind
    assert history.diff_latest().summary_line().startswith(f"v1 → v2 ({kind}): ")
    assert kind in version.label


def test_a_diff_across_several_versions_names_everything_that_changed_between_them():
    history = VersionHistory()
    _grade(history, V1_TEXT, BEFORE)
    _grade(history, V2_TEXT, AFTER_EDIT)
    _grade(history, V2_TEXT, AFTER_SAMPLES, samples="S2")
    assert history.diff(1, 3).kind == "rubric edit + samples change"
    assert history.diff(2, 2).kind == "no change"


def test_existing_callers_without_fingerprints_still_record_rubric_edits():
    history = VersionHistory()
    rubric = parse_rubric(V1_TEXT, "t.yaml")
    history.record(rubric, [result("a", "pass", {"quotes": "met"})])
    history.record(parse_rubric(V2_TEXT, "t.yaml"), [result("a", "fail", {"quotes": "unmet"})])
    assert [v.kind for v in history.versions] == ["first run", "rubric edit"]
    assert history.versions[1].counts() == {"pass": 0, "fail": 1, "other": 0}


def test_fingerprints_see_what_matters_and_ignore_what_does_not():
    a, b = Sample(id="a", output="one"), Sample(id="b", output="two")
    assert samples_fingerprint_of([a, b]) == samples_fingerprint_of([b, a])
    assert samples_fingerprint_of([a, b]) != samples_fingerprint_of([a, Sample(id="b", output="two!")])
    noted = {"a": Label(verdict="pass", note="fine")}
    assert labels_fingerprint_of(noted) == labels_fingerprint_of({"a": Label(verdict="pass", note="changed")})
    assert labels_fingerprint_of(noted) != labels_fingerprint_of({"a": Label(verdict="fail")})
    config = JudgeConfig(provider="openai", model="gpt-4o-mini", api_key="secret")
    assert judge_key_of(None) == "none"
    assert judge_key_of(config).startswith("openai:gpt-4o-mini#") and "secret" not in judge_key_of(config)
    assert judge_key_of(config) == judge_key_of(JudgeConfig(provider="openai", model="gpt-4o-mini", api_key="other"))
    assert judge_key_of(config) != judge_key_of(JudgeConfig(provider="openai", model="gpt-4o-mini", temperature=0.7))
    assert judge_key_of(config, repeat=3) != judge_key_of(config)


def test_a_labelling_run_coalesces_into_one_labels_change_version():
    history = VersionHistory()
    _grade(history, V1_TEXT, BEFORE)
    first = dict(LABELS, **{"made-up-quote": Label(verdict="pass")})
    version = history.record_labels(first, coalesce=True)
    second = dict(first, **{"exact-quote": Label(verdict="fail")})
    again = history.record_labels(second, coalesce=True)
    assert again is version and len(history) == 2 and version.kind == "labels change"
    assert version.labels["exact-quote"]["verdict"] == "fail"
    assert history.record_labels(first) is not version  # without coalesce: a version per change
