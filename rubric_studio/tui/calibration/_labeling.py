"""Labeling in the studio: the keys of :data:`~rubric_studio.tui.calibration._view.CALIBRATION_KEYS`.

``p`` / ``x`` mark the selected sample pass / fail, ``S`` asks for a 0–10 score,
``m`` / ``u`` mark the selected cell met / unmet, ``a`` edits the note, ``c`` clears
the cell's label (on the sample columns: the verdict), ``C`` the whole label, and
``]`` / ``[`` move the results cursor to the next / previous sample that disagrees
with its label, and ``R`` to the next cell of yours given under an older wording of its
criterion (``m`` / ``u`` there records the wording shown: the label is current again). ``ctrl+z`` in the table undoes the last label change (the field's previous
value, or its absence, is written back) and ``ctrl+y`` redoes it; a notification says what.
The keys are bindings of the results table (:mod:`~rubric_studio.tui.label_keys`).

Every write goes through :mod:`rubric_studio.core.labels._store` (re-read from disk,
one entry edited, comments kept, atomic replace) in a worker thread; writes run one
at a time, in key order. The worker posts :class:`~rubric_studio.tui.messages.LabelWritten`
(:meth:`Labeler.written` updates the human column, the disagreement marks and the Agreement
panel at once) or :class:`~rubric_studio.tui.messages.LabelWriteFailed` (a notification). The
file watcher then sees our own write; :meth:`Labeler.is_own_write` lets the app skip
reloading it. The sidecar is ``session.labels_path`` (``<stem>.labels.yaml`` beside the
rubric unless ``--labels`` named another); labels_store creates it when missing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand

from rubric_studio.core.labels import OLDER_TEXT, LabelChange, rubric_fingerprints
from rubric_studio.session.labels import (
    ClaimStep,
    cell_change,
    describe_change,
    disagreeing,
    next_disagreement,
    next_older_wording,
)
from rubric_studio.tui.closing import tolerate_shutdown
from rubric_studio.tui.messages import LabelWriteFailed, LabelWritten
from rubric_studio.tui.results import ResultsMatrix

if TYPE_CHECKING:
    from rubric_studio.tui.host import StudioHost


class Labeler:
    """The labeling actions of one studio (the app calls these from thin action methods)."""

    def __init__(self, app: StudioHost) -> None:
        self.app = app
        #: sample id -> the criterion a pending m / u write labels (None: an ``a`` note): once written,
        #: :func:`~rubric_studio.tui.improve._edits.offer_example` may offer ``e`` for it.
        self.example_offers: dict[str, str | None] = {}

    # -- what is selected ---------------------------------------------------------
    def _selected(self) -> tuple[str | None, str | None]:
        """(sample id, criterion id) under the results cursor (the app's selection)."""
        matrix = self.app.query_one(ResultsMatrix)
        if matrix.rows:
            return matrix.current
        return self.app.selection

    def _sample(self) -> str | None:
        sample_id = self._selected()[0]
        if sample_id is None:
            self.app.notify("No sample selected: move the results cursor to a sample first.", severity="warning")
        return sample_id

    # -- writes ---------------------------------------------------------------------
    def _write(self, sample_id: str, change: LabelChange) -> None:
        self.app.run_worker(self._run(sample_id, change), group="labels", exit_on_error=False)

    async def _run(self, sample_id: str, change: LabelChange) -> None:
        writer = self.app.session.label_writer
        try:
            step = await writer.apply(sample_id, change)
        except Exception as exc:  # bad YAML in the sidecar, permissions, a full disk ...
            self._claimed(writer.claimed)
            self.app.post_message(LabelWriteFailed(sample_id, _why(exc)))
            return
        self._claimed(writer.claimed)
        self.app.post_message(LabelWritten(sample_id, step.after, step.annotator))

    def _claimed(self, claim: ClaimStep | None, *, undo: bool = False) -> None:
        """The sidecar's unnamed labels were claimed (or unclaimed): the session follows; say so."""
        if claim is None:
            return
        self.app.session.claim_changed(claim, undo=undo)
        if undo:
            message = (f"The {len(claim.sample_ids)} labels claimed as {claim.annotator}'s are unnamed again; "
                       "ctrl+y claims them again.")  # fmt: skip
        else:
            message = (f"The labels file had labels with no annotator: its {claim.describe()}, so relabelling "
                       "changes them instead of adding a second label. ctrl+z (after undoing this label) "
                       "makes them unnamed again; --annotator NAME keeps them apart.")  # fmt: skip
        self.app.notify(message, title="Labels", timeout=10)

    def undo(self) -> None:
        """ctrl+z in the results table: put back the value the last label change replaced."""
        self.app.run_worker(self._undo(), group="labels", exit_on_error=False)

    def redo(self) -> None:
        """ctrl+y in the results table: make the label change undone last again."""
        self.app.run_worker(self._redo(), group="labels", exit_on_error=False)

    async def _undo(self) -> None:
        writer = self.app.session.label_writer
        undone = await self._step(writer.history.done, writer.undo, "undo")
        if undone is not None and isinstance(undone[0], ClaimStep):
            self._claimed(undone[0], undo=True)
        elif undone is not None:
            step, written = undone
            self._show(written, step.change.criterion,
                       f"Undid label {describe_change(step.change)} on {step.sample_id} "
                       f"(back to {describe_change(step.undoing)}); ctrl+y redoes it.")

    async def _redo(self) -> None:
        writer = self.app.session.label_writer
        written = await self._step(writer.history.undone, writer.redo, "redo")
        if isinstance(written, ClaimStep):
            self._claimed(written)
        elif written is not None:
            self._show(written, written.change.criterion,
                       f"Redid label {describe_change(written.change)} on {written.sample_id}.")

    async def _step(self, steps: list[Any], run: Callable[[], Awaitable[Any]], verb: str) -> Any:
        """Run an undo or redo of the label writer; None (said why) when there was none or it failed."""
        step = steps[-1] if steps else None
        try:
            result = await run()
        except Exception as exc:
            self.app.post_message(LabelWriteFailed(step.sample_id if step else "", _why(exc)))
            return None
        if result is None:
            self.app.notify(f"No label change to {verb}.", timeout=3)
        return result

    # -- the writes landed -----------------------------------------------------------------
    @tolerate_shutdown
    def written(self, message: LabelWritten) -> None:
        """Our own label write landed: update the human column, marks and agreement at once."""
        from rubric_studio.tui.improve._edits import offer_example

        app = self.app
        app.session.label_written(message.sample_id, message.label, message.annotator)
        app.labels = app.session.labels
        offer_example(app, message.sample_id)  # "press e": a noted cell the judge gets wrong

    @tolerate_shutdown
    def write_failed(self, message: LabelWriteFailed) -> None:
        self.app.notify(f"Could not label {message.sample_id}: {message.error}", title="Label not saved",
                        severity="error", timeout=8)

    def _show(self, written: Any, criterion: str | None, message: str) -> None:
        self.app.post_message(LabelWritten(written.sample_id, written.after, written.annotator))
        self.app.select_sample(written.sample_id, criterion)
        self.app.notify(message, title="Labels", timeout=5)

    # -- actions ------------------------------------------------------------------------
    def verdict(self, verdict: str | None) -> None:
        sample_id = self._sample()
        if sample_id is not None:
            self._write(sample_id, LabelChange("verdict", verdict))

    def cell(self, state: str | None) -> None:
        sample_id, criterion_id = self._selected()
        if sample_id is None:
            self._sample()
            return
        if criterion_id is None:
            self.app.notify("Move to a criterion column (→) to label a cell; p / x label the whole sample.",
                            severity="warning")
            return
        if state is not None:
            self.example_offers[sample_id] = criterion_id
        self._write(sample_id, cell_change(self.app.session.rubric, criterion_id, state))

    def clear(self) -> None:
        """``c``: the selected cell's label, or on the sample columns the verdict."""
        sample_id, criterion_id = self._selected()
        if sample_id is None:
            self._sample()
        elif criterion_id is None:
            self._write(sample_id, LabelChange("verdict", None))
        else:
            self._write(sample_id, LabelChange("cell", None, criterion_id))

    def clear_all(self) -> None:
        sample_id = self._sample()
        if sample_id is not None:
            self._write(sample_id, LabelChange("label", None))

    def score(self) -> None:
        from rubric_studio.tui.calibration._dialogs import LabelScoreScreen

        sample_id = self._sample()
        if sample_id is None:
            return
        label = self.app.session.labels.get(sample_id)

        def chosen(value: Any) -> None:
            if value is None:
                return
            self._write(sample_id, LabelChange("score", None if value == "clear" else float(value)))

        self.app.push_screen(LabelScoreScreen(sample_id, label.score if label else None), chosen)

    def note(self) -> None:
        from rubric_studio.tui.calibration._dialogs import LabelNoteScreen

        sample_id = self._sample()
        if sample_id is None:
            return
        label = self.app.session.labels.get(sample_id)

        unchanged = " ".join((label.note or "").split()) if label else ""

        def chosen(text: str | None) -> None:
            # Enter on an unchanged note writes nothing (a folded ">-" note keeps its shape).
            if text is not None and text != unchanged:
                if text:
                    self.example_offers[sample_id] = None
                self._write(sample_id, LabelChange("note", text or None))

        self.app.push_screen(LabelNoteScreen(sample_id, label.note if label else None), chosen)

    # -- disagreements ------------------------------------------------------------------
    def step_disagreement(self, step: int) -> str | None:
        """Move the results cursor to the next (1) / previous (−1) disagreeing sample, in the
        table's current order, wrapping; on a disagreeing cell when the verdict agrees."""
        app = self.app
        model = app.session.model
        matrix = app.query_one(ResultsMatrix)
        if not disagreeing(model) <= set(matrix.rows):  # a hidden disagreement must not be skipped
            matrix.filter_kind = "all"
            matrix.search = ""
        found = next_disagreement(model, matrix.rows, matrix.cursor_row, step)
        if found is None:
            app.notify("No sample disagrees with its label." if any(model.labels.values())
                       else "No labels yet: p / x on a sample labels it.", timeout=3)
            return None
        target, criterion = found
        app.action_show("results")
        app.select_sample(target, criterion)
        return target


    # -- labels given under an older wording -----------------------------------------------
    def step_recheck(self, step: int = 1) -> tuple[str, str] | None:
        """``R``: move the results cursor to the next (1) / previous (−1) cell of your labels given
        under an older wording of its criterion, in the table's order, wrapping (the filter and
        search are cleared when they hide one)."""
        app = self.app
        session = app.session
        if session.rubric is None:
            return None
        fingerprints = rubric_fingerprints(session.rubric.criteria)
        mine = session.own_labels()
        matrix = app.query_one(ResultsMatrix)
        found = next_older_wording(mine, fingerprints, matrix.rows, matrix.cursor_row, step)
        if found is None and next_older_wording(mine, fingerprints, session.model.order, -1, 1) is not None:
            matrix.filter_kind = "all"  # a hidden one must not be skipped
            matrix.search = ""
            found = next_older_wording(mine, fingerprints, matrix.rows, matrix.cursor_row, step)
        if found is None:
            app.notify("None of your labels was given under an older wording.", timeout=3)
            return None
        target, criterion = found
        app.action_show("results")
        app.select_sample(target, criterion)
        app.notify(f"{target}: {criterion} was {OLDER_TEXT}; m / u labels it again under the wording now.",
                   title="Re-check", timeout=5)
        return found


def commands(app: StudioHost) -> Iterable[SystemCommand]:
    """Palette entries for labeling (they act on the sample under the results cursor)."""
    labeler = app.labeler
    yield SystemCommand("Label: sample passes", "Mark the selected sample pass (p)", lambda: labeler.verdict("pass"))
    yield SystemCommand("Label: sample fails", "Mark the selected sample fail (x)", lambda: labeler.verdict("fail"))
    yield SystemCommand("Label: score 0–10", "Give the selected sample a score (S)", labeler.score)
    yield SystemCommand("Label: criterion met", "Mark the selected cell met (m)", lambda: labeler.cell("met"))
    yield SystemCommand("Label: criterion unmet", "Mark the selected cell unmet (u)", lambda: labeler.cell("unmet"))
    yield SystemCommand("Label: note", "Write a note on the selected sample (a)", labeler.note)
    yield SystemCommand("Label: clear cell or verdict", "Clear the selected cell's label, or the verdict (c)",
                        labeler.clear)
    yield SystemCommand("Label: clear the whole label", "Remove the selected sample's label (C)", labeler.clear_all)
    yield SystemCommand("Next disagreement", "Jump to the next sample that disagrees with its label (])",
                        lambda: labeler.step_disagreement(1))
    yield SystemCommand("Previous disagreement", "Jump to the previous disagreeing sample ([)",
                        lambda: labeler.step_disagreement(-1))
    yield SystemCommand("Re-check: next label given under an older wording",
                        "Jump to your next label whose criterion was reworded since (R)", lambda: labeler.step_recheck(1))


def _why(exc: Exception) -> str:
    """A failed label write in one line; a file that is not safe to write is named when its message
    does not name it ("r.labels.yaml: is a symbolic link to …")."""
    from rubric_studio.core.atomic import UnsafeTarget

    text = str(exc) or type(exc).__name__
    named = not isinstance(exc, UnsafeTarget) or str(exc.path) in text
    return text if named else f"{exc.path.name}: {text}"
