"""StudioSession without Textual: loading, grading, versions and their blame, the one flip tally,
labelling, calibration and interop — each driven through session commands, no screen."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path

import pytest

from rubric_studio.core.atomic import disk_state
from rubric_studio.core.labels import _store as labels_store
from rubric_studio.session.interop import InteropRefused, plan_export, write_file
from rubric_studio.session.labels import next_disagreement, next_unlabelled
from rubric_studio.session.studio import StudioSession
from tests._timing import scaled

RUBRIC = """\
name: support
pass_threshold: {threshold}
criteria:
  - id: polite
    check: {{type: keywords, required: [thanks]}}
  - id: no-made-up-quote
    check: {{type: keywords, forbidden: [{forbidden}]}}
"""
SAMPLES = [
    ("a", "thanks, fixed"),
    ("b", "thanks, as you said 'refund'"),
    ("c", "fixed it"),
    ("d", "thanks"),
]


def _write_samples(path: Path, rows: list[tuple[str, str]]) -> None:
    path.write_text("".join(f'{{"id": "{sid}", "output": "{text}"}}\n' for sid, text in rows))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "r.yaml").write_text(RUBRIC.format(threshold=0.5, forbidden="zzz"))
    _write_samples(tmp_path / "r.samples.jsonl", SAMPLES)
    return tmp_path


def _session(project: Path) -> StudioSession:
    return StudioSession(project / "r.yaml", grader_options={"use_cache": False}, env={})


def _save(session: StudioSession, text: str) -> None:
    session.document.replace_text(text)
    session.document.save()
    assert session.apply_rubric_text().valid


def run(coro):
    return asyncio.run(coro)


def test_opening_grades_every_sample_and_records_the_first_version(project: Path):
    session = _session(project)
    run(session.open())
    assert set(session.model.results) == {"a", "b", "c", "d"}
    assert session.report is not None and not session.running
    assert [v.kind for v in session.versions.history.versions] == ["first run"]


def test_a_samples_change_after_a_rubric_edit_is_blamed_on_the_samples(project: Path):
    """The newcomer's case: an outcome edit saved, then the samples file changed outside."""
    session = _session(project)

    async def scenario() -> tuple[str | None, str | None]:
        await session.open()
        _save(session, RUBRIC.format(threshold=0.5, forbidden="refund"))  # the rubric edit breaks b
        edit = await session.grade_to_end()
        _write_samples(project / "r.samples.jsonl", [*SAMPLES[:3], ("d", "thanks, refund done")])
        assert session.take_samples(await asyncio.to_thread(session.read_samples), initial=False)
        change = await session.grade_to_end()
        return edit.version_line, change.version_line

    edit_line, change_line = run(scenario())
    kinds = [v.kind for v in session.versions.history.versions]
    assert kinds == ["first run", "rubric edit", "samples change"]
    assert "(rubric edit)" in edit_line
    assert "(samples change)" in change_line and "rubric edit" not in change_line


def test_a_labels_change_is_its_own_version_and_relabels_do_not_pile_up(project: Path):
    session = _session(project)

    async def scenario() -> None:
        await session.open()
        for sid in ("a", "b"):
            label = await session.label_writer.write(labels_store.set_verdict, sid, "pass")
            session.label_written(sid, label)

    run(scenario())
    kinds = [v.kind for v in session.versions.history.versions]
    assert kinds[0] == "first run" and set(kinds[1:]) == {"labels change"}
    assert session.label_writer.is_own_write()


def test_label_changes_undo_and_redo_in_order_and_a_no_op_is_no_step(project: Path):
    from rubric_studio.core.labels import LabelChange, load_labels

    session = _session(project)
    writer = session.label_writer

    async def scenario() -> list:
        await session.open()
        await writer.apply("a", LabelChange("verdict", "pass"))
        await writer.apply("a", LabelChange("verdict", "fail"))
        await writer.apply("a", LabelChange("verdict", "fail"))  # already so: nothing to undo
        steps = [await writer.undo()]
        steps.append(await writer.redo())
        steps.append(await writer.undo())
        steps.append(await writer.undo())
        steps.append(await writer.undo())
        return steps

    undone_fail, redone, undone_again, undone_pass, nothing = run(scenario())
    assert undone_fail[0].change == LabelChange("verdict", "fail") and undone_fail[1].after.verdict == "pass"
    assert redone.after.verdict == "fail" and undone_again[1].after.verdict == "pass"
    assert undone_pass[1].after is None and nothing is None
    assert "a" not in load_labels(session.labels_path).labels and writer.is_own_write()


def test_a_labelling_run_is_written_to_the_history_once_not_once_per_key(project: Path):
    """Each key updates the one labels version in memory; the file gets it when the session closes."""
    import json

    session = _session(project)

    async def scenario() -> None:
        await session.open()
        for sid in ("a", "b", "c", "d"):
            session.label_written(sid, await session.label_writer.write(labels_store.set_verdict, sid, "pass"))
        await session.aclose()

    run(scenario())
    path = session.versions.history.store.store.path
    numbers = [json.loads(line)["number"] for line in path.read_text().splitlines()]
    assert numbers.count(2) == 2  # created by the first key, written once more at close: not 4 times
    again = _session(project)
    again.versions.load_past()
    assert set(again.versions.history.get(2).labels) == {"a", "b", "c", "d"}


def test_closing_the_session_ends_its_history_thread_and_later_versions_still_reach_the_file(project: Path):
    """A history thread left running kept its session alive (and, in the studio, the whole app)."""
    import gc
    import json
    import threading
    import weakref

    def writers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("run-history")]

    before = set(writers())
    session = _session(project)

    async def open_and_close(opened: StudioSession) -> None:
        await opened.open()
        await opened.aclose()

    run(open_and_close(session))
    assert set(writers()) <= before  # the session's writer thread has ended
    store = session.versions.history.store
    first = session.versions.history.versions[0]
    store.append(dataclasses.replace(first, number=7))  # after closing: written directly, not lost
    numbers = [json.loads(line)["number"] for line in store.store.path.read_text().splitlines()]
    assert numbers == [1, 7]
    gone = weakref.ref(session)
    session = store = first = None  # the last references: nothing else keeps the session alive
    gc.collect()
    assert gone() is None


def test_the_header_rows_and_notification_count_the_same_flips_after_a_threshold_change(project: Path):
    """A threshold change flips verdicts without flipping a cell: every place says so alike."""
    session = _session(project)

    async def scenario():
        await session.open()
        _save(session, RUBRIC.format(threshold=1.0, forbidden="zzz"))
        return await session.grade_to_end()

    outcome = run(scenario())
    tally = session.versions.tally()
    marked_down = [sid for sid, d in session.model.verdict_flips.items() if d < 0]
    assert marked_down == ["c"]  # c passed at 0.5 with one of its two criteria met
    assert tally.to_fail == 1
    assert tally.cells_up == tally.cells_down == 0
    assert f"{tally.to_fail} pass→fail" in outcome.version_line
    assert tally.describe() in outcome.version_line


def test_a_regrade_of_the_same_inputs_compares_with_the_version_before(project: Path):
    """F5 after an edit updates the latest version; its flips stay those of the edit."""
    session = _session(project)

    async def scenario():
        await session.open()
        _save(session, RUBRIC.format(threshold=1.0, forbidden="zzz"))
        await session.grade_to_end()
        first = session.versions.tally()
        await session.grade_to_end()
        return first, session.versions.tally()

    first, again = run(scenario())
    assert first == again and first.to_fail == 1
    assert len(session.versions.history.versions) == 2


def test_next_unlabelled_and_next_disagreement_walk_the_shown_rows(project: Path):
    session = _session(project)

    async def scenario() -> None:
        await session.open()
        for sid, verdict in (("a", "pass"), ("c", "fail")):  # c passes the rubric: a disagreement
            session.label_written(sid, await session.label_writer.write(labels_store.set_verdict, sid, verdict))

    run(scenario())
    rows = ["a", "b", "c", "d"]
    assert next_unlabelled(session.model, rows, cursor=0) == "b"
    assert next_unlabelled(session.model, rows, cursor=1) == "d"
    assert next_unlabelled(session.model, rows, cursor=3) == "b"  # wraps
    assert next_disagreement(session.model, rows, cursor=0, step=1) == ("c", None)


def test_fit_refuses_without_labels_then_applies_as_one_undoable_edit(project: Path):
    session = _session(project)
    run(session.open())
    refusal = session.calibration.fit_refusal()
    assert refusal is not None and "label" in refusal.message
    for sid, verdict in (("a", "pass"), ("b", "pass"), ("c", "fail"), ("d", "pass")):
        session.label_written(sid, labels_store.set_verdict(session.labels_path, sid, verdict))
    assert session.calibration.fit_refusal() is None
    result = session.calibration.compute_fit()
    before = session.document.text
    session.calibration.apply_fit(result)
    assert session.document.dirty
    session.document.undo()
    assert session.document.text == before


def test_consistency_needs_judged_criteria(project: Path):
    session = _session(project)
    run(session.open())
    refusal = session.calibration.consistency_refusal()
    assert refusal is not None and "no judged criteria" in refusal.message


def test_export_writes_beside_the_rubric_and_refuses_a_broken_rubric(project: Path):
    session = _session(project)
    run(session.open())
    plan = plan_export(session, "promptfoo")
    assert plan.path.parent == project and not plan.path.exists()
    write_file(plan, disk_state(plan.path))
    assert "polite" in plan.path.read_text() or "thanks" in plan.path.read_text()
    session.apply_rubric_text("name: [")
    with pytest.raises(InteropRefused, match="problems"):
        plan_export(session, "promptfoo")


def test_versions_persist_and_a_reopened_rubric_continues_them(project: Path):
    first = _session(project)
    run(first.open())
    _save(first, RUBRIC.format(threshold=1.0, forbidden="zzz"))
    run(first.grade_to_end())
    run(first.aclose())  # the history is written in the background; closing waits for it
    again = _session(project)
    assert again.versions.load_past() == 2  # read back from the history file
    assert [v.number for v in again.versions.history.versions] == [1, 2]
    run(again.open())  # the same inputs as v2: it is re-graded, not a new version
    assert [v.number for v in again.versions.history.versions] == [1, 2]
    _save(again, RUBRIC.format(threshold=0.5, forbidden="refund"))
    run(again.grade_to_end())
    assert [v.kind for v in again.versions.history.versions] == ["first run", "rubric edit", "rubric edit"]
    diff = again.versions.history.diff(1, 3)  # yesterday's v1 (parsed from its stored text) against today's v3
    assert [sid for sid, _, _ in diff.cell_flips["no-made-up-quote"]] == ["b"]
    assert any("no-made-up-quote" in change for change in diff.rubric_changes)


def test_the_session_never_imports_textual(project: Path):
    import subprocess

    code = (f"import asyncio, sys; from rubric_studio.session.studio import StudioSession; "
            f"s = StudioSession({str(project / 'r.yaml')!r}, env={{}}, persist_history=False); "
            "asyncio.run(s.open()); print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60),
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
