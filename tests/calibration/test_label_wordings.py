"""Labels that know the wording they were given under: each criterion label records the fingerprint
of the criterion it answered; after the outcome changes, those labels read as given under an older
wording (calibrate, agreement), until the cell is labelled again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.core.agreement import agreement
from rubric_studio.core.labels import (
    ADJUDICATED,
    CURRENT_WORDING,
    OLDER_WORDING,
    UNRECORDED_WORDING,
    Label,
    LabelChange,
    LabelStore,
    apply_change,
    consensus,
    fold_journal,
    journal_path,
    load_labels,
    rubric_fingerprints,
    wording_fingerprint,
    wording_state,
)
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict
from tests.fakellm import FakeLLM

RUBRIC = """\
name: drift
judge: {model: "openai:gpt-4o-mini"}
criteria:
  - id: tone
    outcome: Warm and polite tone
  - id: refund
    outcome: States the refund window
"""


def _rubric(text: str = RUBRIC):
    return parse_rubric(text, "r.yaml")


def _criterion(text: str, criterion_id: str = "tone"):
    return _rubric(text).criterion(criterion_id)


# -- the fingerprint -----------------------------------------------------------------------------
def test_the_fingerprint_is_8_hex_digits_of_the_kind_and_the_outcome_with_whitespace_made_one_space():
    expected = hashlib.sha256(b"checklist\nWarm and polite tone").hexdigest()[:8]
    assert wording_fingerprint(_criterion(RUBRIC)) == expected
    rewrapped = RUBRIC.replace("outcome: Warm and polite tone", "outcome: |\n      Warm  and\n      polite tone")
    assert wording_fingerprint(_criterion(rewrapped)) == expected


@pytest.mark.parametrize("edit", [
    ("Warm and polite tone", "Warm, polite tone"),
    ("Warm and polite tone\n", "Warm and polite tone\n    operator: contradiction\n"),
    ("Warm and polite tone\n", "Warm and polite tone\n    score_ranges: {0: Rude, 7: Warm}\n"),
])
def test_what_the_labeller_is_asked_changes_the_fingerprint(edit):
    assert wording_fingerprint(_criterion(RUBRIC.replace(*edit))) != wording_fingerprint(_criterion(RUBRIC))


@pytest.mark.parametrize("edit", [
    ("Warm and polite tone\n", "Warm and polite tone\n    weight: 3\n"),
    ("Warm and polite tone\n", "Warm and polite tone\n    required: true\n"),
    ("Warm and polite tone\n", "Warm and polite tone\n    tags: [style]\n"),
])
def test_how_a_label_counts_does_not_change_the_fingerprint(edit):
    assert wording_fingerprint(_criterion(RUBRIC.replace(*edit))) == wording_fingerprint(_criterion(RUBRIC))


# -- written with every criterion label ------------------------------------------------------------
def test_the_store_records_the_wording_in_one_journal_line_and_the_fold_writes_given_under(tmp_path: Path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text("# our labels\ns1:\n  verdict: pass\n  criteria: {tone: met}\n  note: fine\n")
    store = LabelStore(sidecar)
    store.write("s1", LabelChange("cell", "unmet", "tone", given_under="3f2a9c1b"), "(unnamed)")
    store.write("s2", LabelChange("cell", "met", "refund", given_under="12345678"), "alice")
    lines = journal_path(sidecar).read_bytes().splitlines()
    assert len(lines) == 3  # the journal's id, then one line per label
    assert json.loads(lines[1])["g"] == "3f2a9c1b" and json.loads(lines[2])["g"] == "12345678"
    assert load_labels(sidecar).by_annotator["s1"]["(unnamed)"].given_under == {"tone": "3f2a9c1b"}
    fold_journal(sidecar)
    text = sidecar.read_text()
    assert text.startswith("# our labels\n")
    assert "  criteria: {tone: unmet}\n  given_under: {tone: 3f2a9c1b}\n  note: fine\n" in text
    data = yaml.safe_load(text)
    assert data["s2"]["given_under"] == {"refund": "12345678"}  # quoted: a YAML reader keeps it text
    labels = load_labels(sidecar).by_annotator
    assert labels["s2"]["alice"].given_under == {"refund": "12345678"}


def test_a_whole_label_keeps_its_wordings_and_a_cleared_cell_drops_its_own(tmp_path: Path):
    sidecar = tmp_path / "r.labels.yaml"
    label = Label(verdict="pass", criteria={"tone": "met", "refund": "unmet"},
                  given_under={"tone": "aaaa1111", "refund": "bbbb2222"})
    apply_change(sidecar, "s1", LabelChange("label", label), "bob")
    assert load_labels(sidecar).labels["s1"].given_under == {"tone": "aaaa1111", "refund": "bbbb2222"}
    apply_change(sidecar, "s1", LabelChange("cell", None, "tone"), "bob")
    assert yaml.safe_load(sidecar.read_text())["s1"]["given_under"] == {"refund": "bbbb2222"}


def test_a_cell_written_without_a_wording_such_as_an_import_keeps_none(tmp_path: Path):
    sidecar = tmp_path / "r.labels.yaml"
    store = LabelStore(sidecar)
    store.write("s1", LabelChange("cell", "met", "tone", given_under="aaaa1111"), "bob")
    store.write("s1", LabelChange("cell", "met", "tone"), "bob")  # what labels import writes
    assert store.label("s1", "bob").given_under == {}
    store.fold()
    assert "given_under" not in yaml.safe_load(sidecar.read_text())["s1"]


def test_undoing_a_relabel_gives_the_cell_back_the_wording_it_had():
    before = Label(criteria={"tone": "met"}, given_under={"tone": "aaaa1111"})
    change = LabelChange("cell", "unmet", "tone", given_under="bbbb2222")
    assert change.restoring(before) == LabelChange("cell", "met", "tone", given_under="aaaa1111")
    assert change.restoring(None) == LabelChange("cell", None, "tone")


def test_a_sidecar_and_a_journal_from_before_fingerprints_load_with_none_recorded(tmp_path: Path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text("s1:\n  verdict: pass\n  criteria: {tone: met}\n")
    journal = journal_path(sidecar, create=True)
    journal.write_text('{"journal": "0123"}\n{"s":"s2","a":"bob","f":"cell","c":"tone","v":"unmet","b":null,"t":1}\n')
    loaded = load_labels(sidecar)
    assert not loaded.problems
    assert loaded.labels["s1"].given_under == {} and loaded.by_annotator["s2"]["bob"].criteria == {"tone": "unmet"}
    assert wording_state(loaded.labels["s1"], "tone", "3f2a9c1b") == UNRECORDED_WORDING


def test_a_given_under_that_is_not_a_mapping_of_fingerprints_is_a_problem_with_its_place(tmp_path: Path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text("s1:\n  verdict: pass\n  criteria: {tone: met}\n  given_under: {tone: [1, 2]}\n"
                       "s2:\n  verdict: fail\n")
    loaded = load_labels(sidecar)
    assert len(loaded.problems) == 1 and "given_under.tone" in loaded.problems[0].message
    assert loaded.problems[0].line is not None  # placed in the file
    assert loaded.labels["s2"].verdict == "fail"  # the other labels still load


# -- the consensus of several annotators -------------------------------------------------------------
def test_a_consensus_cell_is_older_when_two_recorded_different_wordings_and_unrecorded_when_one_recorded_none():
    def cell(given: str | None) -> Label:
        return Label(criteria={"tone": "met"}, given_under={"tone": given} if given else {})

    assert consensus({"a": cell("aaaa1111"), "b": cell("aaaa1111")}).given_under == {"tone": "aaaa1111"}
    several = consensus({"a": cell("aaaa1111"), "b": cell("bbbb2222")})
    assert wording_state(several, "tone", "aaaa1111") == OLDER_WORDING
    assert wording_state(consensus({"a": cell("aaaa1111"), "b": cell(None)}), "tone", "aaaa1111") == UNRECORDED_WORDING
    judged = consensus({"a": cell("bbbb2222"), "b": cell("cccc3333"), ADJUDICATED: cell("aaaa1111")})
    assert wording_state(judged, "tone", "aaaa1111") == CURRENT_WORDING


# -- agreement and calibrate ------------------------------------------------------------------------
def _sample(sample_id: str, tone: str) -> SampleResult:
    status = Status.MET if tone == "met" else Status.UNMET
    return SampleResult(id=sample_id, verdict=Verdict.PASS, score=1.0,
                        criteria=[CriterionResult(id="tone", status=status, score=1.0 if tone == "met" else 0.0)])


def test_agreement_says_per_criterion_how_many_compared_labels_are_current():
    rubric = _rubric()
    now = rubric_fingerprints(rubric.criteria)["tone"]
    labels = {"s1": Label(criteria={"tone": "met"}, given_under={"tone": now}),
              "s2": Label(criteria={"tone": "unmet"}, given_under={"tone": "0ld0ld00"}),
              "s3": Label(criteria={"tone": "met"})}
    report = agreement([_sample("s1", "met"), _sample("s2", "met"), _sample("s3", "unmet")], labels, rubric)
    tone = report.to_dict()["criteria"]["tone"]
    assert (tone["labels_current"], tone["labels_older_wording"], tone["labels_unrecorded"]) == (1, 1, 1)
    assert tone["n"] == 3
    assert report.older_wording("tone") == ["s2"]
    assert any("tone: 1 of 3 labels compared" in w and "older wording" in w for w in report.warnings)


def test_calibrate_counts_labels_given_under_an_older_wording_after_the_outcome_is_edited(tmp_path: Path, capsys,
                                                                                        monkeypatch):
    rubric = tmp_path / "r.yaml"
    rubric.write_text(RUBRIC)
    samples = tmp_path / "r.samples.jsonl"
    samples.write_text("".join(json.dumps({"id": f"s{i}", "output": f"a warm reply {i}"}) + "\n" for i in range(4)))
    store = LabelStore(tmp_path / "r.labels.yaml")
    tone = rubric_fingerprints(_rubric().criteria)["tone"]
    for i in range(3):
        store.write(f"s{i}", LabelChange("cell", "met", "tone", given_under=tone), "alice")
    store.write("s3", LabelChange("cell", "unmet", "tone"), "alice")  # imported: no wording
    monkeypatch.setenv("OPENAI_API_KEY", "test")

    def calibrate(*more: str) -> str:
        with FakeLLM() as server:
            assert main(["calibrate", str(rubric), "--base-url", server.base_url_openai, "--no-cache", *more]) == 0
        return capsys.readouterr().out

    before = json.loads(calibrate("--format", "json"))["criteria"]["tone"]
    assert (before["labels_current"], before["labels_older_wording"], before["labels_unrecorded"]) == (3, 0, 1)
    rubric.write_text(RUBRIC.replace("Warm and polite tone", "Warm, polite and brief tone"))
    after = json.loads(calibrate("--format", "json"))["criteria"]["tone"]
    assert (after["labels_current"], after["labels_older_wording"], after["labels_unrecorded"]) == (0, 3, 1)
    row = next(line for line in calibrate().splitlines() if line.startswith("tone"))
    assert "0/4 ↺3" in row
    new = rubric_fingerprints(parse_rubric(rubric.read_text(), str(rubric)).criteria)["tone"]
    store.write("s0", LabelChange("cell", "met", "tone", given_under=new), "alice")  # re-labelled: current
    again = json.loads(calibrate("--format", "json"))["criteria"]["tone"]
    assert (again["labels_current"], again["labels_older_wording"]) == (1, 2)
