"""Write an ``improve`` candidate into the rubric file: one edit, comments and layout kept.

Only what the candidate changes is touched: the criterion's ``outcome``, its ``examples``,
the judge fields a check replaces, or (``scoring``) weights and ``pass_threshold`` through
:func:`rubric_studio.engine.fit.apply_fit`. The edited text must load and give the
criterion exactly the candidate's meaning, and it is written only over the version of the
file the suggestion was computed from (a newer change on disk is never overwritten).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rubric_studio.engine.improve import Candidate

_JUDGE_ONLY = ("outcome", "operator", "score_ranges", "min_score", "examples")


def apply_candidate(rubric_path: str | Path, rubric_hash: str, criterion_id: str | None, candidate: Candidate,
                    *, force: bool = False) -> list[str]:
    """Apply ``candidate`` to the file; return what changed. ValueError when the file changed since
    the suggestion (unless ``force``) or the result would not mean what the candidate means."""
    if candidate.kind == "scoring":
        from rubric_studio.engine.fit import apply_fit

        return apply_fit(rubric_path, candidate.fit_result, force=force)
    if criterion_id is None:
        raise ValueError("this candidate names no criterion")
    new_text, seen = edited_text(rubric_path, rubric_hash, criterion_id, candidate, force=force)
    from rubric_studio.core.atomic import write_text_safely

    write_text_safely(Path(rubric_path), new_text, expect=seen)  # ChangedOnDisk: nothing written
    return [candidate.description]


def edited_text(rubric_path: str | Path, rubric_hash: str, criterion_id: str, candidate: Candidate,
                *, force: bool = False) -> tuple[str, Any]:
    """(the file's text with ``candidate`` applied, the disk state it was read at)."""
    from rubric_studio.core.files import read_user_file_state
    from rubric_studio.core.labels_store import round_trip_yaml
    from rubric_studio.core.loading import parse_rubric

    path = Path(rubric_path)
    text, seen = read_user_file_state(path)
    if text is None:
        raise ValueError(f"{path}: no such file")
    if not force and parse_rubric(text, str(path)).content_hash() != rubric_hash:
        raise ValueError(f"{path} changed since the suggestions were computed; run improve again")
    yaml = round_trip_yaml(text)
    data = yaml.load(text)
    index, _ = _find(data, parse_rubric(text, str(path)), criterion_id)
    item = _as_mapping(data["criteria"], index)
    _change(item, candidate)
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    new_text = buffer.getvalue()
    after = parse_rubric(new_text, str(path)).criterion(criterion_id)
    if after.fingerprint() != candidate.rubric.criterion(criterion_id).fingerprint():
        raise ValueError(f"applying the candidate would not give {criterion_id} the suggested meaning; nothing written")
    return new_text, seen


def _find(data: Any, rubric: Any, criterion_id: str) -> tuple[int, Any]:
    for index, criterion in enumerate(rubric.criteria):
        if criterion.key == criterion_id:
            return index, criterion
    raise ValueError(f"no criterion {criterion_id!r} in the rubric")


def _as_mapping(criteria: Any, index: int) -> Any:
    """The criterion at ``index`` as a mapping (a plain-string criterion becomes ``{outcome: ...}``)."""
    from ruamel.yaml.comments import CommentedMap

    item = criteria[index]
    if isinstance(item, str):
        slot = criteria.ca.items.pop(index, None)
        item = criteria[index] = CommentedMap([("outcome", item)])
        if slot and slot[0] is not None:
            item.ca.items["outcome"] = [None, None, slot[0], None]
    return item


def _change(item: Any, candidate: Candidate) -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from rubric_studio.core.labels_store import insert_key

    if candidate.kind == "reword":
        item["outcome"] = candidate.change["outcome"]
    elif candidate.kind == "examples":
        examples = item.get("examples")
        if not isinstance(examples, list):
            examples = CommentedSeq()
            keys = list(item)
            insert_key(item, len(keys), "examples", examples)
        for example in candidate.change["examples"]:
            examples.append(CommentedMap(example))
    elif candidate.kind == "check":
        position = list(item).index("outcome") if "outcome" in item else len(item)
        for key in _JUDGE_ONLY:
            if key in item:
                del item[key]
        check = CommentedMap(candidate.change["check"])
        check.fa.set_flow_style()
        insert_key(item, min(position, len(item)), "check", check)
    else:
        raise ValueError(f"unknown candidate kind {candidate.kind!r}")
