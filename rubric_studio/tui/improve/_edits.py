"""Improvements written into the studio's open rubric: an ``improve`` candidate, or a labelled cell
as a few-shot example of its criterion (``examples:``).

Each is one edit of the :class:`~rubric_studio.core.document._document.RubricDocument` — one undo step,
the file's comments and layout kept — finished the way an accepted fit is
(:meth:`~rubric_studio.tui.calibration._flow.CalibrationFlow.apply`): saved at once, so it
re-grades and only the cells it changed are judged again; or, when the rubric already had
unsaved edits, left unsaved on top of them for the user to review and save.

A cell the user labelled against the judge is worth keeping as an example once the sample's
note says why. So when ``m`` / ``u`` makes a cell disagree on a sample that has a note, or
``a`` writes the note of a sample with such a cell, a notification offers ``e``, which adds
``{sample, verdict, note, id}`` to that criterion. Analytic criteria take a 0–10 ``score``
instead of a verdict; a cell label is met/unmet only, so such an example is refused with the
reason rather than invented. A sample already among the criterion's examples is not added twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio.core.document import EditError
from rubric_studio.core.problems import RubricError
from rubric_studio.engine.improve import write_candidate
from rubric_studio.session.results_model import cell_disagrees

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.improve import Candidate, ImproveReport
    from rubric_studio.tui.host import StudioHost

def document_rubric(app: StudioHost) -> Rubric:
    """The rubric as the editor holds it now (unsaved edits included); RubricError when it does not parse."""
    return app.session.document.parse()


# -- improve candidates ---------------------------------------------------------------------
async def accept_candidate(app: StudioHost, report: ImproveReport, candidate: Candidate) -> str | None:
    """Write ``candidate`` into the open rubric and save it (see the module docstring); None when
    done, else why not (the rubric is then unchanged)."""
    editor = app.editor
    if editor is not None:
        await editor.flush()  # typing still waiting for its pause goes in first
    try:
        current = document_rubric(app).content_hash()
    except RubricError as exc:
        return f"the rubric does not load right now: {exc.problems[0].message}"
    if current != report.rubric_hash:
        return "the rubric changed since these suggestions were computed; run Improve again"
    dirty = app.session.document.dirty
    try:
        summary = write_candidate(app.session.document, report.criterion, candidate)
    except (EditError, IndexError, ValueError) as exc:
        return str(exc)
    except Exception as exc:  # e.g. YAML the edit cannot be made in; the transaction restored the text
        return f"{type(exc).__name__}: {exc}"
    finish_edit(app, dirty, summary, "Suggestion applied")
    return None


def finish_edit(app: StudioHost, dirty: bool, summary: str, title: str) -> None:
    """Show the edit; save it (and so re-grade) unless it joined unsaved edits, as a fit does."""
    editor = app.editor
    if editor is not None:
        editor.refresh_from_document()
        editor.post_message(editor.Changed(app.session.document))
    if dirty:
        app.notify(f"{summary} — added to your unsaved edits; review and save (ctrl+s).", title=title,
                   severity="warning", timeout=8)
        return
    app.action_save()
    app.notify(f"{summary}. Saved and re-grading; ctrl+z in the editor undoes it.", title=title, timeout=8)


# -- a labelled cell as a few-shot example ------------------------------------------------------
def cell_example(app: StudioHost, sample_id: str | None, criterion_id: str | None) -> tuple[dict | None, str]:
    """(the example for this cell, "") or (None, why it cannot be one)."""
    from rubric_studio.core.examples import make_example

    if sample_id is None or criterion_id is None:
        return None, "Move the results cursor to a cell you labelled against the judge (m / u), then press e."
    try:
        criterion = document_rubric(app).criterion(criterion_id)
    except RubricError:
        return None, "The rubric in the editor does not load: fix it first."
    except KeyError:
        return None, f"{criterion_id} is not in the editor's rubric any more."
    label, result, sample = app.session.labels.get(sample_id), app.session.model.results.get(sample_id), app.session.samples_by_id.get(sample_id)
    human = label.criteria.get(criterion_id) if label is not None else None
    if not criterion.is_judged:
        return None, f"{criterion_id} is a deterministic check: examples teach a judge criterion."
    if human is None or sample is None:
        return None, f"Label {sample_id}'s {criterion_id} cell first (m / u): an example carries your verdict."
    if not cell_disagrees(result.cell(criterion_id) if result is not None else None, label):
        return None, f"The judge agrees with your label on {sample_id} × {criterion_id}: examples are for cells it gets wrong."
    if any(example.id == sample_id for example in criterion.examples):
        return None, f"{sample_id} is already an example of {criterion_id}."
    if criterion.kind == "analytic":
        return None, (f"{criterion_id} is scored 0–10, so its examples need a score, and your label gives this cell "
                      f"{human} only: it can't be added without a score (write one with `score:` in the YAML).")
    example = make_example(sample.output, verdict=human, note=label.note, sample_id=sample_id)
    return example.model_dump(mode="json", exclude_none=True), ""


async def add_cell_example(app: StudioHost) -> bool:
    """``e``: the selected disagreeing labelled cell becomes an example of its criterion (one edit)."""
    from rubric_studio.tui.results import ResultsMatrix

    matrix = app.query_one(ResultsMatrix)
    sample_id, criterion_id = matrix.current if matrix.rows else app.selection
    if app.editor is not None:
        await app.editor.flush()
    example, why = cell_example(app, sample_id, criterion_id)
    if example is None or criterion_id is None:
        app.notify(why, title="Few-shot example", severity="warning", timeout=8)
        return False
    document = app.session.document
    dirty = document.dirty
    index = document.criterion_index(criterion_id)
    try:
        if index is None or not document.append_criterion_items(index, "examples", [example]):
            raise EditError(f"{criterion_id} could not be edited")
    except Exception as exc:  # EditError, or YAML the edit cannot be made in: the text is unchanged
        app.notify(f"Could not add the example: {exc}", title="Few-shot example", severity="error")
        return False
    finish_edit(app, dirty, f"{sample_id} added as a {example['verdict']} example of {criterion_id}",
                "Few-shot example")
    return True


def offer_example(app: StudioHost, sample_id: str) -> None:
    """After a label write: offer ``e`` when the write made a noted cell disagree (``m`` / ``u``) or gave a
    note to a sample with a disagreeing cell (``a``). Other writes offer nothing."""
    wanted = app.labeler.example_offers.pop(sample_id, False)
    label, rubric, result = app.session.labels.get(sample_id), app.session.rubric, app.session.model.results.get(sample_id)
    if wanted is False or label is None or not (label.note or "").strip() or rubric is None or result is None:
        return
    ids = [wanted] if wanted is not None else list(label.criteria)
    for criterion_id in ids:
        try:
            criterion = rubric.criterion(criterion_id)
        except KeyError:
            continue
        if (criterion.kind != "checklist" or any(e.id == sample_id for e in criterion.examples)
                or not cell_disagrees(result.cell(criterion_id), label)):
            continue
        where = "" if app.selection == (sample_id, criterion_id) else f" on {sample_id} × {criterion_id}"
        app.notify(f"You and the judge disagree here and your note says why: press e{where} to add this as an "
                   f"example of {criterion_id}.", title="Few-shot example", timeout=10)
        return
