"""A sidecar from before annotators, relabelled in the studio by someone who did not name themselves:
the first label change claims the unnamed labels as theirs, so a changed mind is not "no consensus";
the claim is undoable, and it never happens when the annotator was named or someone is named."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rubric_studio.core.labels import UNNAMED, LabelChange, claim_unnamed, load_labels, unclaim
from rubric_studio.session.labels import ClaimStep
from rubric_studio.session.studio import StudioSession

RUBRIC = "name: t\ncriteria:\n  - id: polite\n    check: {type: keywords, required: [thanks]}\n"
OLD_LABELS = "# labelled by hand last year\na: pass\nb:\n  verdict: fail  # rude\n  note: check again\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "r.samples.jsonl").write_text('{"id": "a", "output": "thanks"}\n{"id": "b", "output": "no"}\n')
    (tmp_path / "r.labels.yaml").write_text(OLD_LABELS)
    return tmp_path


def _relabel(session: StudioSession, sample_id: str, verdict: str) -> list:
    async def scenario():
        await session.open()
        writer = session.label_writer
        step = await writer.apply(sample_id, LabelChange("verdict", verdict))
        if writer.claimed is not None:  # what the studio's labeller does with a claim
            session.claim_changed(writer.claimed)
        session.label_written(sample_id, step.after, step.annotator)
        return [writer.claimed]

    return asyncio.run(scenario())


def test_relabelling_an_unnamed_label_changes_it_instead_of_splitting_the_consensus(project: Path):
    session = StudioSession(project / "r.yaml", grader_options={"use_cache": False}, env={}, annotator=None,
                            persist_history=False)  # fmt: skip
    me = session.label_writer.annotator
    assert me != UNNAMED and not session.annotator_chosen
    [claim] = _relabel(session, "a", "fail")
    assert claim == ClaimStep(("a", "b"), me)
    on_disk = load_labels(project / "r.labels.yaml")
    assert on_disk.by_annotator == {"a": {me: on_disk.by_annotator["a"][me]}, "b": {me: on_disk.by_annotator["b"][me]}}
    assert on_disk.labels["a"].verdict == "fail"  # one person changed their mind: still a consensus
    assert session.labels["a"].verdict == "fail" and session.by_annotator["a"].keys() == {me}
    text = (project / "r.labels.yaml").read_text()
    assert "# labelled by hand last year" in text and "# rude" in text and f"annotator: {me}" in text
    kinds = [v.kind for v in session.versions.history.versions]
    assert "annotator change" in kinds  # the claim is who labelled, not a labels edit


def test_the_claim_is_undone_after_the_label_and_redone(project: Path):
    session = StudioSession(project / "r.yaml", grader_options={"use_cache": False}, env={}, persist_history=False)
    me = session.label_writer.annotator

    async def scenario():
        await session.open()
        writer = session.label_writer
        await writer.apply("a", LabelChange("verdict", "fail"))
        label_undone = await writer.undo()
        claim_undone = await writer.undo()
        after_undo = load_labels(project / "r.labels.yaml")
        redone = await writer.redo()
        return label_undone, claim_undone, after_undo, redone

    label_undone, claim_undone, after_undo, redone = asyncio.run(scenario())
    assert label_undone[0].change == LabelChange("verdict", "fail")
    assert isinstance(claim_undone[0], ClaimStep) and isinstance(redone, ClaimStep)
    assert after_undo.by_annotator["a"].keys() == {UNNAMED} and after_undo.labels["a"].verdict == "pass"
    assert "# rude" in (project / "r.labels.yaml").read_text()
    assert load_labels(project / "r.labels.yaml").by_annotator["b"].keys() == {me}  # claimed again


@pytest.mark.parametrize("how", ["--annotator", "environment"])
def test_a_named_annotator_never_claims(project: Path, how: str):
    named = {"annotator": "carol"} if how == "--annotator" else {}
    env = {"RUBRIC_STUDIO_ANNOTATOR": "carol"} if how == "environment" else {}
    session = StudioSession(project / "r.yaml", grader_options={"use_cache": False}, env=env, persist_history=False,
                            **named)  # fmt: skip
    assert _relabel(session, "a", "fail") == [None]
    on_disk = load_labels(project / "r.labels.yaml")
    assert on_disk.by_annotator["a"].keys() == {UNNAMED, "carol"}  # kept apart: the unnamed may be someone else


def test_unnamed_labels_beside_a_named_person_are_never_claimed(tmp_path: Path):
    path = tmp_path / "r.labels.yaml"
    path.write_text("a: pass\nb: {verdict: fail, annotator: bob}\n")
    assert claim_unnamed(path, "alice") == [] and path.read_text() == "a: pass\nb: {verdict: fail, annotator: bob}\n"
    path.write_text("a: pass\nb: {verdict: fail}\n")
    assert claim_unnamed(path, "alice") == ["a", "b"]
    assert {sid: set(v) for sid, v in load_labels(path).by_annotator.items()} == {"a": {"alice"}, "b": {"alice"}}
    assert unclaim(path, ["a", "b"], "alice") == ["a", "b"]
    assert {sid: set(v) for sid, v in load_labels(path).by_annotator.items()} == {"a": {UNNAMED}, "b": {UNNAMED}}


def test_a_claimed_name_that_yaml_reads_as_something_else_stays_a_name(tmp_path: Path):
    path = tmp_path / "r.labels.yaml"
    path.write_text("a: pass\n")
    assert claim_unnamed(path, "yes") == ["a"]
    import yaml

    assert yaml.safe_load(path.read_text())["a"]["annotator"] == "yes"
    assert unclaim(path, ["a"], "yes") == ["a"]
