"""Who labels what, and in which order: overlap K, balanced and deterministic; each person's queue
puts their unlabelled share first; the lead's puts disagreements first."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from rubric_studio.core.labels import Label
from rubric_studio.session.labelling import (
    assign,
    check_overlap,
    lead_order,
    next_unlabelled,
    unlabelled_first,
)
from tests.web.conftest import Labeller, bearer, make_labeller, sample_rows


@pytest.mark.parametrize(("samples", "people", "overlap"), [(7, 3, 2), (10, 4, 2), (11, 5, 3), (3, 2, 1), (9, 3, 3)])
def test_each_sample_goes_to_k_different_people_and_shares_differ_by_at_most_one(samples, people, overlap):
    ids = [f"s{i}" for i in range(samples)]
    names = [f"p{j}" for j in range(people)]
    shares = assign(ids, names, overlap)
    assert all(len(set(who)) == overlap for who in shares.values())
    counts = Counter(name for who in shares.values() for name in who)
    load = [counts.get(name, 0) for name in names]
    assert max(load) - min(load) <= 1 and sum(load) == samples * overlap
    assert assign(ids, names, overlap) == shares  # deterministic


def test_a_sample_added_later_leaves_the_earlier_ones_where_they_were():
    names = ["alice", "bob", "cara"]
    before = assign(["a", "b", "c", "d"], names, 2)
    after = assign(["a", "b", "c", "d", "e"], names, 2)
    assert {k: after[k] for k in before} == before


def test_overlap_defaults_to_two_and_cannot_exceed_the_annotators():
    assert check_overlap(None, 3) == 2 and check_overlap(None, 1) == 1
    with pytest.raises(ValueError, match="from 1 to the number of annotators"):
        check_overlap(4, 3)
    with pytest.raises(ValueError):
        check_overlap(0, 3)


def test_a_persons_queue_is_their_unlabelled_share_then_the_labelled():
    order = ["a", "b", "c", "d"]
    labels = {"b": {"alice": Label(verdict="pass")}, "c": {"alice": Label(note="no verdict: not done")},
              "d": {"bob": Label(verdict="fail")}}
    assert unlabelled_first(order, labels, "alice") == ["a", "c", "d", "b"]
    assert next_unlabelled(order, labels, "alice") == "a"
    assert next_unlabelled(order, labels, "alice", after="c") == "d"
    assert next_unlabelled(order, labels, "alice", after="d") == "a"  # wraps round
    assert next_unlabelled(["b"], labels, "alice") is None


def test_the_leads_queue_puts_people_disagreeing_then_judge_disagreeing_then_panel_splits_first():
    ids = ["calm", "split", "judge-vs-people", "people-differ", "cell-differs"]
    labels = {
        "people-differ": {"alice": Label(verdict="pass"), "bob": Label(verdict="fail")},
        "cell-differs": {"alice": Label(verdict="pass", criteria={"c": "met"}),
                         "bob": Label(verdict="pass", criteria={"c": "unmet"})},
        "judge-vs-people": {"alice": Label(verdict="pass"), "bob": Label(verdict="pass")},
        "calm": {"alice": Label(verdict="pass")},
    }
    judged = {"judge-vs-people": {"verdict": "fail", "criteria": []},
              "calm": {"verdict": "pass", "criteria": []},
              "split": {"verdict": "pass", "criteria": [{"id": "c", "status": "met", "tie": True}]}}
    assert lead_order(ids, labels, judged) == ["people-differ", "cell-differs", "judge-vs-people", "split", "calm"]


def test_next_over_http_follows_the_queue_and_says_null_when_done(tmp_path: Path):
    rows = sample_rows()[:3]
    labeller = make_labeller(tmp_path, annotators=("alice", "bob"), rows=rows)
    client = labeller.client()
    ids = [row["id"] for row in rows]
    assert client.get("/api/samples/next", headers=bearer("alice")).json()["id"] == ids[0]
    assert client.get(f"/api/samples/next?after={ids[0]}", headers=bearer("alice")).json()["id"] == ids[1]
    for sample_id in ids[:2]:
        client.put(f"/api/labels/{sample_id}", json={"verdict": "pass"}, headers=bearer("alice"))
    assert client.get("/api/queue", headers=bearer("alice")).json()["ids"] == [ids[2], ids[0], ids[1]]
    assert client.get("/api/samples/next", headers=bearer("alice")).json()["id"] == ids[2]
    client.put(f"/api/labels/{ids[2]}", json={"verdict": "fail"}, headers=bearer("alice"))
    assert client.get("/api/samples/next", headers=bearer("alice")).json() == {"id": None, "first": ids[0]}
    assert client.get("/api/samples/next", headers=bearer("bob")).json()["id"] == ids[0]  # bob's own queue


def test_the_leads_next_is_the_first_disagreement_not_adjudicated(labeller: Labeller):
    client = labeller.client()
    assert client.get("/api/samples/next", headers=bearer("lena")).json()["id"] is None  # nothing to settle yet
    client.put("/api/labels/s3", json={"verdict": "pass"}, headers=bearer(labeller.session.assignment["s3"][0]))
    client.put("/api/labels/s3", json={"verdict": "fail"}, headers=bearer(labeller.session.assignment["s3"][1]))
    assert client.get("/api/samples/next", headers=bearer("lena")).json()["id"] == "s3"
    assert client.get("/api/queue", headers=bearer("lena")).json()["ids"][0] == "s3"
    client.put("/api/labels/s3", json={"verdict": "fail"}, headers=bearer("lena"))
    assert client.get("/api/samples/next", headers=bearer("lena")).json()["id"] is None
    assert client.get("/api/progress", headers=bearer("lena")).json()["done"] == 1


def test_previous_and_next_step_through_the_persons_order(labeller: Labeller):
    alice = labeller.client("alice")
    share = labeller.session.share(labeller.people["alice"])
    first = alice.get(f"/api/samples/{share[0]}").json()
    assert (first["position"], first["total"], first["previous"], first["next"]) == (1, len(share), None, share[1])
    last = alice.get(f"/api/samples/{share[-1]}").json()
    assert last["next"] is None and last["previous"] == share[-2]


def test_a_sample_called_next_is_still_reachable(tmp_path: Path):
    labeller = make_labeller(tmp_path, annotators=("alice",), rows=[{"id": "next", "output": "n"}])
    view = labeller.client().get("/api/samples/next?id=next", headers=bearer("alice")).json()
    assert view["id"] == "next" and view["html"]["output"] == "<p>n</p>\n"


def test_the_next_unlabelled_sample_of_a_person_from_a_label_store(tmp_path: Path):
    """What the terminal studio asks: the session's rule over a LabelStore, no web involved."""
    from rubric_studio.core.labels import LabelChange, LabelStore
    from rubric_studio.session.labelling import next_unlabelled_in

    store = LabelStore(tmp_path / "r.labels.yaml")
    store.write("b", LabelChange("label", Label(verdict="pass")), "alice")
    assert next_unlabelled_in(store, ["a", "b", "c"], "alice", after="a") == "c"
    assert next_unlabelled_in(store, ["b"], "alice") is None
    assert next_unlabelled_in(store, ["b"], "bob") == "b"
