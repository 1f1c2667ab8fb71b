"""The studio's label writer records the wording each cell answered; the re-check queue walks the
labels given under an older wording, in the order the table shows."""

from __future__ import annotations

from pathlib import Path

from rubric_studio.core.labels import Label, load_labels, rubric_fingerprints, wording_fingerprint
from rubric_studio.core.loading import parse_rubric
from rubric_studio.session.labels import LabelWriter, cell_change, next_older_wording

RUBRIC = """\
name: drift
criteria:
  - id: tone
    outcome: Warm and polite tone
  - id: refund
    outcome: States the refund window
"""


async def test_the_writer_records_the_wording_a_cell_answered_and_undo_puts_the_old_one_back(tmp_path: Path):
    old = parse_rubric(RUBRIC, "r.yaml")
    new = parse_rubric(RUBRIC.replace("Warm and polite", "Warm, polite"), "r.yaml")
    sidecar = tmp_path / "r.labels.yaml"
    writer = LabelWriter(sidecar, "alice")
    step = await writer.apply("s1", cell_change(old, "tone", "met"))
    assert step.after.given_under == {"tone": wording_fingerprint(old.criterion("tone"))}
    relabel = await writer.apply("s1", cell_change(new, "tone", "met"))  # the same value, the new wording
    assert relabel.after.given_under == {"tone": wording_fingerprint(new.criterion("tone"))}
    assert load_labels(sidecar).labels["s1"].given_under == relabel.after.given_under
    await writer.undo()
    assert load_labels(sidecar).labels["s1"].given_under == step.after.given_under
    cleared = await writer.apply("s1", cell_change(new, "tone", None))
    assert cleared.after is None


def test_a_cell_change_for_a_criterion_the_rubric_lacks_records_no_wording():
    rubric = parse_rubric(RUBRIC, "r.yaml")
    assert cell_change(rubric, "gone", "met").given_under is None
    assert cell_change(None, "tone", "met").given_under is None


def test_the_recheck_queue_walks_the_rows_shown_to_the_first_older_cell_wrapping():
    rubric = parse_rubric(RUBRIC, "r.yaml")
    now = rubric_fingerprints(rubric.criteria)
    older = {"tone": "0ld0ld00", "refund": "0ld0ld11"}
    labels = {
        "a": Label(criteria={"tone": "met"}, given_under={"tone": now["tone"]}),  # current
        "b": Label(criteria={"refund": "met", "tone": "unmet"}, given_under=older),  # both older
        "c": Label(criteria={"tone": "met"}),  # unrecorded: not older
        "d": Label(criteria={"refund": "unmet"}, given_under={"refund": older["refund"]}),
    }
    rows = ["a", "b", "c", "d"]
    assert next_older_wording(labels, now, rows, 0) == ("b", "tone")  # rubric order, not the label's
    assert next_older_wording(labels, now, rows, 1) == ("d", "refund")
    assert next_older_wording(labels, now, rows, 3) == ("b", "tone")  # wraps round
    assert next_older_wording(labels, now, rows, 1, -1) == ("d", "refund")  # backwards, wrapping
    assert next_older_wording(labels, now, ["a", "c"], 0) is None
