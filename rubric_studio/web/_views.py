"""The JSON the API answers: a sample view, labels, criteria and the judge's verdicts.

Every text a person did not type themselves goes out with its control and bidirectional characters
made visible (:func:`~rubric_studio.web._render.visible_controls`); the page puts it in the document
with ``textContent`` only. Sample ids go out as they are (they address the API) and, for showing,
as ``id_shown``. The sample itself goes out as HTML fragments rendered here (:mod:`._render`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubric_studio.core.labels import (
    ADJUDICATED,
    OLDER_MARK,
    OLDER_TEXT,
    Label,
    older_cells,
    wording_fingerprint,
)
from rubric_studio.core.rubric import Criterion
from rubric_studio.session.labelling import LabellingSession, Person, SampleView, is_labelled
from rubric_studio.web._render import sample_html, visible_controls

ATTENTION = {1: "the annotators disagree", 2: "the judge and the annotators disagree", 3: "the judge panel split"}


def label_json(label: Label | None, *, own: bool = True,
               fingerprints: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """A label as JSON; another person's note has its hidden characters made visible. ``given_under``
    is the wording each cell answered; with ``fingerprints`` (the criteria's now), ``older_wording``
    lists the cells given under an older wording."""
    if label is None:
        return None
    note = label.note if own or label.note is None else visible_controls(label.note)
    data = {"verdict": label.verdict, "score": label.score, "criteria": dict(label.criteria),
            "criterion_scores": dict(label.criterion_scores), "note": note,
            "given_under": {cid: given for cid, given in label.given_under.items() if cid in label.criteria}}
    if fingerprints is not None:
        data["older_wording"] = older_cells(label, fingerprints)
    return data


def criterion_json(criterion: Criterion) -> dict[str, Any]:
    """A judged criterion as the page shows it."""
    data: dict[str, Any] = {"id": criterion.key, "outcome": visible_controls(criterion.outcome or ""),
                            "kind": criterion.kind, "required": criterion.required, "penalty": criterion.is_penalty,
                            "contradiction": criterion.operator == "contradiction",
                            "fingerprint": wording_fingerprint(criterion)}
    if criterion.kind == "analytic":
        data["bands"] = [{"from": low, "text": visible_controls(text)} for low, text in (criterion.score_ranges or {}).items()]
        data["min_score"] = criterion.effective_min_score
    return data


def judge_json(judged: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The judge's verdict of one sample, its cells by criterion id, texts made visible."""
    if not judged:
        return None
    cells = {}
    for cell in judged.get("criteria") or []:
        if not isinstance(cell, Mapping) or "id" not in cell:
            continue
        evidence = [{"quote": visible_controls(e.get("quote", "")), "found": bool(e.get("found"))}
                    for e in cell.get("evidence") or [] if isinstance(e, Mapping)]
        cells[str(cell["id"])] = {
            "status": str(cell.get("status", "")), "score": cell.get("score"), "raw_score": cell.get("raw_score"),
            "rationale": visible_controls(cell.get("rationale") or ""), "evidence": evidence,
            "tie": bool(cell.get("tie")), "agreement": cell.get("agreement"),
            "error": visible_controls(cell["error"]) if cell.get("error") else None}
    return {"verdict": str(judged.get("verdict", "")), "score": judged.get("score"), "criteria": cells}


def view_json(session: LabellingSession, person: Person, view: SampleView) -> dict[str, Any]:
    """A sample as ``person`` sees it (see docs/reference/web-api.md)."""
    sample = view.sample
    data: dict[str, Any] = {
        "id": sample.id, "id_shown": visible_controls(sample.id),
        "position": view.position, "total": view.total, "previous": view.previous, "next": view.next,
        "html": sample_html(sample),
        "criteria": [criterion_json(c) for c in view.criteria],
        "label": label_json(view.label, fingerprints=view.fingerprints), "labelled": is_labelled(view.label),
        "older_wording": {"criteria": view.older_wording, "mark": OLDER_MARK, "text": OLDER_TEXT},
        "rubric": {"name": visible_controls(session.rubric.name), "problem": _shown(session.rubric_problem)},
        "samples_problem": _shown(session.samples_problem),
    }
    if person.is_lead:
        data["lead"] = lead_json(session, view)
    return data


def lead_json(session: LabellingSession, view: SampleView) -> dict[str, Any]:
    """What only the lead sees of a sample: who it is assigned to, every label, the judge."""
    names = [*view.assigned, *(n for n in view.labels if n not in view.assigned and n != ADJUDICATED)]
    labels = [{"annotator": visible_controls(name), "assigned": name in view.assigned,
               "label": label_json(view.labels.get(name), own=False, fingerprints=view.fingerprints)}
              for name in names]
    return {"labels": labels, "adjudicated": label_json(view.labels.get(ADJUDICATED), fingerprints=view.fingerprints),
            "judge": judge_json(view.judged), "judge_note": session.judge_note(),
            "attention": ATTENTION.get(view.attention or 0)}


def overview_json(session: LabellingSession, person: Person) -> dict[str, Any]:
    """The lead's table of every sample."""
    rows = []
    fingerprints = session.fingerprints()
    for row in session.overview(person):
        rows.append({"id": row["id"], "id_shown": visible_controls(row["id"]), "assigned": list(row["assigned"]),
                     "labels": {visible_controls(n): label_json(lab, own=False, fingerprints=fingerprints)
                                for n, lab in row["labels"].items()},
                     "judge": judge_json(row["judged"]), "attention": ATTENTION.get(row["attention"] or 0)})
    return {"samples": rows, "judge_note": session.judge_note()}


def progress_json(session: LabellingSession, person: Person) -> dict[str, Any]:
    """The person's progress (:meth:`LabellingSession.progress`), each annotator's name as shown."""
    progress = session.progress(person)
    if "people" in progress:
        progress["people"] = {visible_controls(name): counts for name, counts in progress["people"].items()}
    return progress


def _shown(text: str | None) -> str | None:
    return None if text is None else visible_controls(text)
