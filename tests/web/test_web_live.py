"""The labeller follows the files: a rubric edit shows on the next load, a broken rubric keeps the
last good one and says where it broke, labels written elsewhere show, and the journal is folded."""

from __future__ import annotations

import json
import time
from pathlib import Path

from starlette.testclient import TestClient

from rubric_studio.core.labels import Label, LabelChange
from tests._timing import scaled
from tests.web.conftest import Labeller, bearer, make_labeller, sample_rows

NEW_CRITERION = "  - id: cites-source\n    outcome: Names where the answer comes from\n"


def test_a_new_criterion_shows_on_the_next_load_without_a_restart(labeller: Labeller):
    alice = labeller.client("alice")
    assert [c["id"] for c in alice.get("/api/samples/s0").json()["criteria"]] == ["correct", "tone"]
    labeller.rubric.write_text(labeller.rubric.read_text() + NEW_CRITERION)
    view = alice.get("/api/samples/s0").json()
    assert [c["id"] for c in view["criteria"]] == ["correct", "tone", "cites-source"]
    answer = alice.put("/api/labels/s0", json={"verdict": "pass", "criteria": {"cites-source": "met"}},
                       headers=labeller.csrf("alice"))
    assert answer.status_code == 200  # the new criterion is labelled at once


def test_a_rubric_that_stops_reading_keeps_the_last_good_one_and_says_where(labeller: Labeller):
    labeller.rubric.write_text(labeller.rubric.read_text() + NEW_CRITERION)
    alice = labeller.client("alice")
    assert len(alice.get("/api/samples/s0").json()["criteria"]) == 3
    labeller.rubric.write_text(labeller.rubric.read_text().replace("    outcome: Warm tone\n", "    outcom: Warm tone\n"))
    view = alice.get("/api/samples/s0").json()
    assert [c["id"] for c in view["criteria"]] == ["correct", "tone", "cites-source"]
    problem = view["rubric"]["problem"]
    assert problem.startswith(f"{labeller.rubric}:7:5: ") and "outcom" in problem
    labeller.rubric.write_text(labeller.rubric.read_text().replace("outcom:", "outcome:"))
    assert alice.get("/api/samples/s0").json()["rubric"]["problem"] is None


def test_samples_added_to_the_file_show_and_keep_earlier_assignments(labeller: Labeller):
    before = dict(labeller.session.assignment)
    rows = sample_rows() + [{"id": "late", "output": "added later"}]
    labeller.samples.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    owner = labeller.client().get("/api/progress", headers=bearer("lena"))  # any request reads the files again
    assert owner.status_code == 200
    assert {k: labeller.session.assignment[k] for k in before} == before
    who = labeller.session.assignment["late"][0]
    assert labeller.client().get("/api/samples/late", headers=bearer(who)).json()["html"]["output"] == "<p>added later</p>\n"


def test_labels_written_by_another_store_show_and_web_labels_reach_another_store(labeller: Labeller):
    studio = labeller.store()
    studio.write("s0", LabelChange("label", Label(verdict="fail", note="from the studio")), "alice")
    assert labeller.client().get("/api/labels/s0", headers=bearer("alice")).json()["label"]["note"] == "from the studio"
    labeller.client().put("/api/labels/s0", json={"verdict": "pass"}, headers=bearer("bob"))
    studio.refresh()
    assert studio.label("s0", "bob").verdict == "pass"


def test_the_journal_is_folded_into_the_sidecar_when_the_app_stops(labeller: Labeller):
    with TestClient(labeller.app) as client:
        client.put("/api/labels/s0", json={"verdict": "pass", "note": "kept"}, headers=bearer("alice"))
        assert labeller.session.store.pending > 0
    sidecar = labeller.rubric.with_name("r.labels.yaml").read_text()
    assert "note: kept" in sidecar and "annotator: alice" in sidecar
    assert labeller.store().pending == 0


def test_the_journal_is_folded_while_nobody_labels(tmp_path: Path):
    from rubric_studio.web import create_app

    labeller = make_labeller(tmp_path)
    app = create_app(labeller.session, labeller.door, fold_every=0.05, idle=0.1)
    sidecar = labeller.rubric.with_name("r.labels.yaml")
    with TestClient(app) as client:
        client.put("/api/labels/s0", json={"verdict": "fail"}, headers=bearer("alice"))
        deadline = time.monotonic() + scaled(10)
        while not (sidecar.exists() and "verdict: fail" in sidecar.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sidecar.exists() and "verdict: fail" in sidecar.read_text()  # folded before the app stopped
