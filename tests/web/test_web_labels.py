"""What each person may read and write: annotators blind to each other and to the judge, the lead
sees all and adjudicates; a label is always the token's person's; bad labels are 422 naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.core.labels import ADJUDICATED
from rubric_studio.core.loading import load_rubric
from tests.web.conftest import RUBRIC, Labeller, bearer, make_labeller


def _report(rubric: Path, *, stale: bool = False) -> dict:
    digest = "0" * 16 if stale else load_rubric(rubric).content_hash()
    cells = [{"id": "correct", "status": "met", "score": 1.0, "raw_score": None, "rationale": "right \u202eanswer",
              "evidence": [{"quote": "answer", "found": True}], "source": "judge", "error": None},
             {"id": "tone", "status": "unmet", "score": 0.5, "raw_score": 5, "rationale": "flat", "evidence": [],
              "source": "judge", "error": None}]
    split = [{**cells[0], "tie": True, "members": [], "panel": {"split": True}}, cells[1]]
    return {"rubric": {"name": "demo", "path": str(rubric), "hash": digest}, "judge": {"provider": "x", "model": "y"},
            "samples": [{"id": f"s{i}", "score": 1.0, "verdict": "pass", "criteria": split if i == 4 else cells}
                        for i in range(5)],
            "summary": {}, "usage": {}}


@pytest.fixture
def judged(tmp_path: Path) -> Labeller:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    return make_labeller(tmp_path, report=_report(tmp_path / "r.yaml"))


def _put(labeller: Labeller, name: str, sample: str, body: dict):
    return labeller.client().put(f"/api/labels/{sample}", json=body, headers=bearer(name))


def test_a_put_is_written_as_the_tokens_person_whatever_the_body_says(labeller: Labeller):
    answer = _put(labeller, "alice", "s0", {"verdict": "fail", "annotator": "bob", "note": "mine"})
    assert answer.status_code == 200, answer.text
    store = labeller.store()
    assert store.label("s0", "alice").verdict == "fail" and store.label("s0", "alice").note == "mine"
    assert store.label("s0", "bob") is None


def test_a_put_replaces_the_persons_whole_label(labeller: Labeller):
    _put(labeller, "alice", "s0", {"verdict": "pass", "criteria": {"correct": "met", "tone": 9}, "note": "n"})
    _put(labeller, "alice", "s0", {"verdict": "fail", "criteria": {"correct": "unmet"}})
    label = labeller.store().label("s0", "alice")
    assert (label.verdict, label.criteria, label.criterion_scores, label.note) == ("fail", {"correct": "unmet"}, {}, None)


def test_an_analytic_score_gives_met_or_unmet_by_the_criterions_min_score(labeller: Labeller):
    _put(labeller, "alice", "s0", {"verdict": "pass", "criteria": {"tone": 7}})
    assert labeller.store().label("s0", "alice").criteria == {"tone": "met"}  # 7/10 reaches the default 0.7
    _put(labeller, "alice", "s0", {"verdict": "pass", "criteria": {"tone": 6}})
    label = labeller.store().label("s0", "alice")
    assert label.criteria == {"tone": "unmet"} and label.criterion_scores == {"tone": 6}


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"verdict": "maybe"}, "verdict", "pass"),
    ({"criteria": {"nope": "met"}}, "criteria.nope", "no criterion 'nope'"),
    ({"criteria": {"correct": "yes"}}, "criteria.correct", "met"),
    ({"criteria": {"correct": 8}}, "criteria.correct", "analytic"),
    ({"criteria": {"tone": 11}}, "criteria.tone", "0 to 10"),
    ({"criteria": {"short": "met"}}, "criteria.short", "deterministic check"),
    ({"criteria": ["correct"]}, "criteria", "object"),
    ({"score": "high"}, "score", "0 to 10"),
    ({"note": 3}, "note", "text"),
    ({"verdict": "pass", "colour": "red"}, "colour", "unknown field"),
    (["pass"], "body", "JSON object"),
])
def test_a_bad_label_is_422_naming_the_field_and_nothing_is_written(labeller: Labeller, body, field, words):
    answer = _put(labeller, "alice", "s0", body)
    assert answer.status_code == 422
    assert answer.json()["field"] == field and words in answer.json()["error"]
    assert labeller.store().label("s0", "alice") is None


def test_a_body_that_is_not_json_is_422(labeller: Labeller):
    answer = labeller.client().put("/api/labels/s0", content=b"{verdict", headers=bearer("alice"))
    assert answer.status_code == 422 and answer.json()["field"] == "body"


def test_an_empty_label_removes_the_persons_label_and_delete_does_too(labeller: Labeller):
    _put(labeller, "alice", "s0", {"verdict": "pass"})
    assert _put(labeller, "alice", "s0", {"verdict": None, "note": "  "}).json()["label"] is None
    assert labeller.store().label("s0", "alice") is None
    _put(labeller, "alice", "s0", {"verdict": "pass"})
    assert labeller.client().delete("/api/labels/s0", headers=bearer("alice")).status_code == 200
    assert labeller.store().label("s0", "alice") is None


def test_an_annotator_reads_only_their_own_label(labeller: Labeller):
    _put(labeller, "bob", "s0", {"verdict": "fail", "note": "bob's secret"})
    _put(labeller, "alice", "s0", {"verdict": "pass"})
    alice = labeller.client("alice")
    assert alice.get("/api/labels/s0").json()["label"]["verdict"] == "pass"
    assert alice.get("/api/labels/s0?annotator=bob").status_code == 403
    assert alice.get(f"/api/labels/s0?annotator={ADJUDICATED}").status_code == 403
    view = alice.get("/api/samples/s0").json()
    assert view["label"]["verdict"] == "pass"
    assert "lead" not in view and "bob's secret" not in str(view) and "fail" not in str(view["label"])


def test_an_annotator_never_sees_the_judge_or_the_leads_views(judged: Labeller):
    alice = judged.client("alice")
    view = alice.get("/api/samples/s0")
    assert view.status_code == 200
    assert "lead" not in view.json() and "rationale" not in view.text and "judge" not in view.text
    assert alice.get("/api/overview").status_code == 403
    assert 'id="lead-panel"' not in alice.get("/").text
    assert "people" not in alice.get("/api/progress").json()


def test_an_annotator_cannot_read_or_write_a_sample_outside_their_share(labeller: Labeller):
    # three annotators, overlap 2: s0 goes to alice and bob, s1 to cara and alice, s2 to bob and cara
    assert labeller.session.assignment["s2"] == ("bob", "cara")
    alice = labeller.client("alice")
    assert alice.get("/api/samples/s2").status_code == 403
    assert alice.get("/api/labels/s2").status_code == 403
    assert alice.put("/api/labels/s2", json={"verdict": "pass"}, headers=labeller.csrf("alice")).status_code == 403
    assert alice.get("/api/samples/no-such-sample").status_code == 403
    assert labeller.store().label("s2", "alice") is None


def test_the_lead_sees_every_label_beside_the_judge_and_adjudicates(judged: Labeller):
    _put(judged, "alice", "s0", {"verdict": "pass", "criteria": {"correct": "met"}})
    _put(judged, "bob", "s0", {"verdict": "fail", "criteria": {"correct": "unmet"}, "note": "wrong \u202e"})
    lena = judged.client("lena")
    assert 'id="lead-panel"' in lena.get("/").text
    view = lena.get("/api/samples/s0").json()
    people = {entry["annotator"]: entry["label"] for entry in view["lead"]["labels"]}
    assert people["alice"]["verdict"] == "pass" and people["bob"]["verdict"] == "fail"
    assert people["bob"]["note"] == "wrong ⟨U+202E⟩"
    assert view["lead"]["judge"]["verdict"] == "pass"
    assert view["lead"]["judge"]["criteria"]["correct"]["rationale"] == "right ⟨U+202E⟩answer"
    assert view["lead"]["judge_note"] is None and view["lead"]["attention"] == "the annotators disagree"
    assert lena.get("/api/labels/s0?annotator=bob").json()["label"]["verdict"] == "fail"
    answer = lena.put("/api/labels/s0", json={"verdict": "pass"}, headers=judged.csrf("lena"))
    assert answer.status_code == 200
    store = judged.store()
    assert store.label("s0", ADJUDICATED).verdict == "pass" and store.label("s0", "lena") is None
    assert store.labels["s0"].verdict == "pass"  # the adjudication wins the consensus
    overview = lena.get("/api/overview").json()
    assert [row["id"] for row in overview["samples"]][0] == "s0"


def test_the_lead_is_told_when_the_report_is_for_another_rubric_or_missing(tmp_path: Path, labeller: Labeller):
    lead_view = labeller.client("lena").get("/api/samples/s0").json()["lead"]
    assert lead_view["judge_note"] == "no judge verdicts: start serve with --results REPORT.json"
    assert lead_view["judge"] is None
    other = tmp_path / "other"
    other.mkdir()
    (other / "r.yaml").write_text(labeller.rubric.read_text())
    stale = make_labeller(other, report=_report(other / "r.yaml", stale=True))
    note = stale.client("lena").get("/api/samples/s0").json()["lead"]["judge_note"]
    assert "another version of the rubric" in note and "0000000000000000" in note


def test_progress_counts_the_persons_share_and_the_lead_sees_everyone(labeller: Labeller):
    _put(labeller, "alice", "s0", {"verdict": "pass"})
    _put(labeller, "alice", "s1", {"note": "no verdict yet"})  # not done: no verdict
    mine = labeller.client().get("/api/progress", headers=bearer("alice")).json()
    assert mine == {"person": "alice", "role": "annotator", "done": 1,
                    "total": len(labeller.session.share(labeller.people["alice"])), "recheck": 0}
    lead = labeller.client().get("/api/progress", headers=bearer("lena")).json()
    assert lead["people"]["alice"]["done"] == 1 and lead["people"]["bob"]["done"] == 0
    assert sum(p["total"] for p in lead["people"].values()) == 2 * len(labeller.session.sample_ids)


def test_a_body_too_large_is_413_and_a_note_too_long_is_422(labeller: Labeller):
    client = labeller.client()
    huge = client.put("/api/labels/s0", content=b'{"note": "' + b"x" * 300_000 + b'"}', headers=bearer("alice"))
    assert huge.status_code == 413
    long_note = _put(labeller, "alice", "s0", {"verdict": "pass", "note": "x" * 20_001})
    assert long_note.status_code == 422 and long_note.json()["field"] == "note"
    assert labeller.store().label("s0", "alice") is None
