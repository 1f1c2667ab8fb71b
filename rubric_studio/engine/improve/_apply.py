"""Write an ``improve`` candidate (or a fit) into a rubric document: one edit, comments and layout kept.

Both the studio (into the open document, one undo step) and ``improve --apply`` (into the file,
saved over exactly the version the suggestions were computed from) go through
:func:`write_candidate`, which edits only what the candidate changes through
:class:`~rubric_studio.core.document._document.RubricDocument` — the criterion's ``outcome``, its
``examples``, its ``required`` flag, the judge fields a check replaces, or weights and
``pass_threshold`` — and then
checks that the criterion now means exactly what the candidate means.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubric_studio.core.document import CHECK_FIELDS, EditError, RubricDocument
from rubric_studio.core.problems import RubricError

if TYPE_CHECKING:
    from rubric_studio.engine.improve._improve import Candidate

#: What a check candidate drops besides the outcome (``set_check_type`` removes that).
_JUDGE_KEYS = ("operator", "score_ranges", "min_score", "examples")


def tidy_number(value: float) -> int | float:
    """2.0 → 2 (as a person writes it), 0.55 stays."""
    value = round(float(value), 6)
    return int(value) if value.is_integer() else value


def write_fit(document: RubricDocument, fit: Any) -> str:
    """A fit's threshold and changed weights written into ``document``; what changed, in one line."""
    changes = []
    if fit.threshold != fit.current_threshold:
        document.set_rubric_field("pass_threshold", tidy_number(fit.threshold))
        changes.append(f"pass_threshold {fit.current_threshold:g} → {fit.threshold:g}")
    for cid, (old, new) in fit.changed_weights.items():
        index = document.criterion_index(cid)
        if index is None:
            raise EditError(f"criterion {cid} is not in the rubric any more")
        document.set_criterion_field(index, "weight", tidy_number(new))
        changes.append(f"{cid} weight {old:g} → {new:g}")
    return "; ".join(changes) or "nothing changed"


def write_candidate(document: RubricDocument, criterion_id: str | None, candidate: Candidate) -> str:
    """Apply ``candidate`` to ``document`` as one undo step (the text is restored on an error);
    what changed, in one line. EditError when it cannot be applied or would not mean the candidate."""
    with document.transaction():
        if candidate.kind == "scoring":
            return write_fit(document, candidate.fit_result)
        if candidate.kind == "panel":
            return _write_panel(document, candidate)
        if candidate.kind == "required":
            criterion_id = candidate.change["criterion"]
        if criterion_id is None or (index := document.criterion_index(criterion_id)) is None:
            raise EditError(f"criterion {criterion_id} is not in the rubric any more")
        change = candidate.change
        if candidate.kind == "reword":
            document.set_criterion_field(index, "outcome", change["outcome"])
        elif candidate.kind == "required":
            document.set_criterion_field(index, "required", True if change["required"] else None)
        elif candidate.kind == "examples":
            document.append_criterion_items(index, "examples", list(change["examples"]))
        elif candidate.kind == "check":
            check = change["check"]
            document.set_check_type(index, check["type"])
            for key in CHECK_FIELDS[check["type"]]:
                document.set_check_field(index, key, check.get(key))
            for key in _JUDGE_KEYS:
                document.set_criterion_field(index, key, None)
        else:
            raise EditError(f"unknown kind of suggestion {candidate.kind!r}")
        _check_meaning(document, criterion_id, candidate)
    return candidate.description


def _write_panel(document: RubricDocument, candidate: Candidate) -> str:
    """The panel without the dropped member, the others as written (string or mapping)."""
    judge = document.rubric_data().get("judge")
    written = judge.get("panel") if isinstance(judge, dict) else None
    index = candidate.change["index"]
    if not isinstance(written, list) or index >= len(written):
        raise EditError("the rubric's judge panel changed since the suggestion; run improve again")
    document.set_judge_field("panel", [m for n, m in enumerate(written) if n != index])
    try:
        panel = document.parse().judge.panel  # type: ignore[union-attr]
    except (RubricError, AttributeError) as exc:
        raise EditError(f"the edited rubric does not load: {exc}") from None
    wanted = candidate.rubric.judge.panel  # type: ignore[union-attr]
    if [m.model_dump() for m in panel or []] != [m.model_dump() for m in wanted or []]:
        raise EditError("writing the suggestion would not give the panel its members; nothing changed")
    return candidate.description


def _check_meaning(document: RubricDocument, criterion_id: str, candidate: Candidate) -> None:
    try:
        written = document.parse().criterion(criterion_id)
    except (RubricError, KeyError) as exc:
        raise EditError(f"the edited rubric does not load: {exc}") from None
    if written.fingerprint() != candidate.rubric.criterion(criterion_id).fingerprint():
        raise EditError(f"writing the suggestion would not give {criterion_id} its meaning; nothing changed")


def apply_candidate(rubric_path: str | Path, rubric_hash: str, criterion_id: str | None, candidate: Candidate,
                    *, force: bool = False) -> list[str]:
    """Apply ``candidate`` to the file; return what changed. ValueError when the file changed since
    the suggestion (unless ``force``); EditError when it cannot be written; ChangedOnDisk when the
    file changes between reading and writing (nothing is written then)."""
    document = RubricDocument.load(rubric_path)
    if not force and document.parse().content_hash() != rubric_hash:
        raise ValueError(f"{rubric_path} changed since the suggestions were computed; run improve again")
    summary = write_candidate(document, criterion_id, candidate)
    document.save()
    return [summary]
