"""The web labeller records the wording each cell answered; after the outcome is edited, those labels
show as given under an older wording and wait in the person's re-check queue until set again."""

from __future__ import annotations

from rubric_studio.core.labels import wording_fingerprint
from rubric_studio.core.loading import load_rubric
from tests.web.conftest import RUBRIC, Labeller, bearer

NEW_OUTCOME = "Gives the right answer, with the steps"


def _put(labeller: Labeller, name: str, sample: str, body: dict):
    answer = labeller.client().put(f"/api/labels/{sample}", json=body, headers=bearer(name))
    assert answer.status_code == 200, answer.text
    return answer.json()


def _get(labeller: Labeller, name: str, path: str) -> dict:
    answer = labeller.client().get(path, headers=bearer(name))
    assert answer.status_code == 200, answer.text
    return answer.json()


def _fingerprint(labeller: Labeller, criterion: str = "correct") -> str:
    return wording_fingerprint(load_rubric(labeller.rubric).criterion(criterion))


def _reword(labeller: Labeller) -> None:
    labeller.rubric.write_text(RUBRIC.replace("Gives the right answer", NEW_OUTCOME), encoding="utf-8")


def _share(labeller: Labeller, name: str) -> list[str]:
    return labeller.session.share(labeller.people[name])


def test_a_saved_cell_records_the_wording_the_page_showed_or_else_the_rubrics_now(labeller: Labeller):
    first, second = _share(labeller, "alice")[:2]
    view = _get(labeller, "alice", f"/api/samples/{first}")
    shown = {c["id"]: c["fingerprint"] for c in view["criteria"]}
    assert shown["correct"] == _fingerprint(labeller)
    _put(labeller, "alice", first, {"verdict": "pass", "criteria": {"correct": "met", "tone": 8},
                                    "given_under": {"correct": shown["correct"], "tone": shown["tone"]}})
    _put(labeller, "alice", second, {"verdict": "fail", "criteria": {"correct": "unmet"}})  # an older client
    store = labeller.store()
    assert store.label(first, "alice").given_under == {"correct": shown["correct"], "tone": shown["tone"]}
    assert store.label(second, "alice").given_under == {"correct": _fingerprint(labeller)}


def test_after_the_outcome_is_edited_the_label_is_older_and_queued_for_a_recheck(labeller: Labeller):
    share = _share(labeller, "alice")
    for sample in share:
        _put(labeller, "alice", sample, {"verdict": "pass", "criteria": {"correct": "met"}})
    assert _get(labeller, "alice", "/api/samples/next")["id"] is None  # all labelled, all current
    assert _get(labeller, "alice", "/api/queue")["recheck"] == []
    _reword(labeller)

    view = _get(labeller, "alice", f"/api/samples/{share[0]}")
    assert view["older_wording"]["criteria"] == ["correct"] and view["older_wording"]["mark"] == "↺"
    assert view["label"]["older_wording"] == ["correct"]
    assert _get(labeller, "alice", "/api/queue")["recheck"] == share
    assert _get(labeller, "alice", "/api/progress")["recheck"] == len(share)
    assert _get(labeller, "alice", f"/api/samples/next?after={share[0]}")["id"] == share[1]

    # saving the same value without setting the cell again keeps the older wording ...
    _put(labeller, "alice", share[0], {"verdict": "fail", "criteria": {"correct": "met"}})
    assert _get(labeller, "alice", "/api/queue")["recheck"] == share
    # ... setting it (or "still holds") under the wording shown makes it current
    now = next(c["fingerprint"] for c in view["criteria"] if c["id"] == "correct")
    _put(labeller, "alice", share[0], {"verdict": "fail", "criteria": {"correct": "met"}, "given_under": {"correct": now}})
    assert _get(labeller, "alice", "/api/queue")["recheck"] == share[1:]
    assert _get(labeller, "alice", f"/api/samples/{share[0]}")["older_wording"]["criteria"] == []
    # a changed value answers the wording now
    _put(labeller, "alice", share[1], {"verdict": "fail", "criteria": {"correct": "unmet"}})
    assert share[1] not in _get(labeller, "alice", "/api/queue")["recheck"]


def test_the_lead_sees_which_annotators_labels_are_older_and_rechecks_their_adjudications(labeller: Labeller):
    sample = _share(labeller, "alice")[0]
    _put(labeller, "alice", sample, {"verdict": "pass", "criteria": {"correct": "met"}})
    _put(labeller, "lena", sample, {"verdict": "pass", "criteria": {"correct": "met"}})
    _reword(labeller)
    lead = _get(labeller, "lena", f"/api/samples/{sample}")["lead"]
    alice = next(entry for entry in lead["labels"] if entry["annotator"] == "alice")
    assert alice["label"]["older_wording"] == ["correct"]
    assert lead["adjudicated"]["older_wording"] == ["correct"]
    assert _get(labeller, "lena", "/api/queue")["recheck"] == [sample]
    overview = _get(labeller, "lena", "/api/overview")["samples"]
    assert next(row for row in overview if row["id"] == sample)["labels"]["alice"]["older_wording"] == ["correct"]


def test_a_given_under_that_is_not_fingerprints_is_a_422_naming_it(labeller: Labeller):
    sample = _share(labeller, "alice")[0]
    answer = labeller.client().put(f"/api/labels/{sample}", headers=bearer("alice"),
                                   json={"criteria": {"correct": "met"}, "given_under": {"correct": "not one!"}})
    assert answer.status_code == 422 and answer.json()["field"] == "given_under.correct"
    answer = labeller.client().put(f"/api/labels/{sample}", headers=bearer("alice"),
                                   json={"criteria": {"correct": "met"}, "given_under": ["x"]})
    assert answer.status_code == 422 and answer.json()["field"] == "given_under"
    assert labeller.store().label(sample, "alice") is None
