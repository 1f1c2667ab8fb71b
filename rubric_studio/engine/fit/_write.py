"""Writing a fit into the rubric file: only ``pass_threshold`` and ``weight`` values change.

The file is edited as round-trip YAML, so comments, key order and quoting stay as the author
wrote them; a plain-string criterion whose weight changes becomes ``{outcome, weight}``. The
result is loaded again before it is written (atomically, and only over the exact version that
was read), so a fit never leaves a rubric that does not load or does not carry the fitted values.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Protocol


class FittedValues(Protocol):
    """What a fit writes (a :class:`~rubric_studio.engine.fit._fit.FitResult` provides it)."""

    rubric_hash: str
    threshold: float
    weights: dict[str, float]


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _set_threshold(data: Any, threshold: float) -> None:
    """``pass_threshold`` set in place, or inserted after ``name`` / ``description``."""
    from rubric_studio.core.labels import insert_key

    if "pass_threshold" in data:
        data["pass_threshold"] = threshold
        return
    keys = list(data)
    after = max((keys.index(k) for k in ("name", "description") if k in data), default=-1)
    insert_key(data, after + 1, "pass_threshold", threshold)


def _set_weight(criteria: Any, index: int, weight: float) -> None:
    """Criterion ``index``'s ``weight`` set in place, or inserted after its id / outcome / check /
    operator; a plain-string criterion first becomes a mapping (its comment kept on the outcome)."""
    from rubric_studio.core.labels import insert_key

    item = criteria[index]
    if isinstance(item, str):  # a plain-string criterion becomes {outcome: ..., weight: ...}
        from ruamel.yaml.comments import CommentedMap

        slot = criteria.ca.items.pop(index, None)
        item = criteria[index] = CommentedMap([("outcome", item)])
        if slot and slot[0] is not None:
            item.ca.items["outcome"] = [None, None, slot[0], None]
    if "weight" in item:
        item["weight"] = _number(weight)
    else:
        keys = list(item)
        after = max((keys.index(k) for k in ("id", "outcome", "check", "operator") if k in item), default=-1)
        insert_key(item, after + 1, "weight", _number(weight))


def apply_fit(rubric_path: str | Path, result: FittedValues, *, force: bool = False) -> list[str]:
    """Write the fitted threshold and weights into the rubric file; return what changed.

    Only ``pass_threshold`` and ``weight`` values change (comments, order and quoting
    are kept). Raises ValueError if the rubric's meaning changed since the fit
    (unless ``force``) or if the edited file would not load.
    """
    from rubric_studio.core.atomic import write_text_safely
    from rubric_studio.core.files import read_user_file_state
    from rubric_studio.core.labels import round_trip_yaml
    from rubric_studio.core.loading import parse_rubric

    path = Path(rubric_path)
    text, seen = read_user_file_state(path)  # written back only over exactly this version
    if text is None:
        raise ValueError(f"{path}: no such file")
    before = parse_rubric(text, str(path))
    if not force and before.content_hash() != result.rubric_hash:
        raise ValueError(f"{path} changed since the fit was computed; fit again")
    yaml = round_trip_yaml(text)
    data = yaml.load(text)
    changes: list[str] = []
    if result.threshold != before.pass_threshold:
        _set_threshold(data, result.threshold)
        changes.append(f"pass_threshold {before.pass_threshold:g} → {result.threshold:g}")
    for index, criterion in enumerate(before.criteria):
        new = result.weights.get(criterion.key)
        if new is None or new == criterion.weight:
            continue
        _set_weight(data["criteria"], index, new)
        changes.append(f"{criterion.key}.weight {criterion.weight:g} → {new:g}")
    if not changes:
        return []
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    new_text = buffer.getvalue()
    check = parse_rubric(new_text, str(path))  # raises RubricError if something went wrong
    if check.pass_threshold != result.threshold:
        raise ValueError("the edited rubric does not carry the fitted threshold")
    write_text_safely(path, new_text, expect=seen)  # ChangedOnDisk if edited meanwhile: nothing written
    return changes
