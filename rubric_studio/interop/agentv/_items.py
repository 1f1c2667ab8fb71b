"""AgentV ``llm-rubric`` values → criteria: rubric text, items with their weights, operators,
item-level ``required`` / ``min_score`` and ``score_ranges`` (list or map form), read with
AgentV's defaults (an item is required unless it says otherwise; a 0-10 item passes at 7, which is
rubric-studio's default too). An item's ``min_score`` is kept as written: it is the pass mark of
the item, as ``min_score`` is the pass mark of a criterion."""

from __future__ import annotations

from typing import Any

from rubric_studio.interop._common import Source, Warnings, expect_mapping, ranges_to_bands, snap

ANALYTIC_PASS_MARK = 0.7  # AgentV marks a 0-10 item passed at 7/10 when it has no min_score


def number(value: Any) -> float | None:
    """``value`` as a float when it is a number (not a bool), else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _score_ranges(source: Source, raw: Any, path: tuple[Any, ...]) -> dict[int, str]:
    ranges: list[tuple[int, int, str]] = []
    if isinstance(raw, dict):
        for key, text in raw.items():
            try:
                low = int(str(key))
            except ValueError:
                raise source.error((*path, key), f"score_ranges key {key!r}: expected an integer 0-10") from None
            ranges.append((low, -1, str(text)))
        ranges.sort()
        ranges = [(low, (ranges[i + 1][0] - 1) if i + 1 < len(ranges) else 10, text)
                  for i, (low, _, text) in enumerate(ranges)]
    elif isinstance(raw, list):
        for index, band in enumerate(raw):
            band = expect_mapping(source, band, (*path, index), "score_ranges entry")
            bounds = band.get("score_range")
            if not (isinstance(bounds, list) and len(bounds) == 2 and all(isinstance(b, int) for b in bounds)):
                raise source.error((*path, index), "score_range: expected [min, max] with integers 0-10")
            ranges.append((bounds[0], bounds[1], str(band.get("outcome") or "")))
    else:
        raise source.error(path, "score_ranges: expected a list of {score_range: [min, max], outcome} or a map")
    try:
        return ranges_to_bands(ranges)
    except ValueError as exc:
        raise source.error(path, f"score_ranges: {exc}") from None


def rubric_items(source: Source, raw: Any, path: tuple[Any, ...], entry: dict[str, Any], entry_path: tuple[Any, ...],
                 warn: Warnings) -> list[tuple[dict[str, Any], tuple[Any, ...]]]:
    """The criteria (each with its path) of an llm-rubric ``value`` at ``path`` of assertion ``entry``."""
    members: list[tuple[dict[str, Any], tuple[Any, ...]]] = []
    if isinstance(raw, str):
        criterion: dict[str, Any] = {"id": entry.get("id"), "outcome": raw}
        if "score_ranges" in entry:
            criterion["score_ranges"] = _score_ranges(source, entry["score_ranges"], (*entry_path, "score_ranges"))
        if isinstance(entry.get("operator"), str):
            criterion["operator"] = entry["operator"]
        criterion["_default_id"] = "rubric-1"
        return [(criterion, path)]
    if isinstance(raw, dict):
        nested = next((raw[k] for k in ("criteria", "rubrics", "rubric_item", "rubricItem") if k in raw), None)
        raw = nested if isinstance(nested, list) else [raw]
    if not isinstance(raw, list) or not raw:
        raise source.error(path, "llm-rubric value: expected rubric text, or a list of criteria strings / objects")
    for index, item in enumerate(raw):
        item_path = (*path, index)
        default_id = f"rubric-{index + 1}"
        if len(raw) == 1 and isinstance(entry.get("metric") or entry.get("name"), str):
            default_id = str(entry.get("metric") or entry.get("name"))  # one item: the assertion's name says it
        if isinstance(item, str):
            members.append(({"outcome": item.strip(), "weight": 1.0, "_item_required": True,
                                       "_default_id": default_id}, item_path))
            continue
        read = _mapping_item(source, item, item_path, default_id, warn)
        if read is not None:
            members.append((read, item_path))
    return members


def _mapping_item(source: Source, item: Any, item_path: tuple[Any, ...], default_id: str,
                  warn: Warnings) -> dict[str, Any] | None:
    """One rubric item written as a mapping → a criterion (None, warned, for a checklist item without outcome)."""
    item = expect_mapping(source, item, item_path, "rubric item")
    criterion: dict[str, Any] = {"_default_id": default_id, "id": item.get("id")}
    outcome = item.get("outcome", item.get("criteria"))
    weight = item.get("weight", 1.0)
    if not isinstance(weight, int | float) or isinstance(weight, bool):
        raise source.error((*item_path, "weight"), f"weight: expected a number, got {weight!r}")
    criterion["weight"] = float(weight)
    if isinstance(item.get("operator"), str):
        if item["operator"] in ("correctness", "contradiction"):
            criterion["operator"] = item["operator"]
        else:
            warn.add(f"{source.at((*item_path, 'operator'))}: unknown operator {item['operator']!r} ignored "
                     "(AgentV ignores it too)")
    min_score = _item_min_score(item)
    # An item is required unless it says otherwise; its min_score is its own pass mark either way.
    criterion["_item_required"] = item.get("required", True) is not False
    if min_score is None and "score_ranges" in item:
        min_score = ANALYTIC_PASS_MARK  # AgentV's default pass mark, written out
    if min_score is not None:
        criterion["min_score"] = min_score
    if "score_ranges" in item:
        criterion["score_ranges"] = _score_ranges(source, item["score_ranges"], (*item_path, "score_ranges"))
        if not isinstance(outcome, str) or not outcome.strip():
            label = str(item.get("id") or default_id)
            outcome = label.replace("_", " ").replace("-", " ")
            warn.add(f"{source.at(item_path)}: score-range criterion {label!r} has no outcome; "
                     "its id is used as the outcome text")
    elif not isinstance(outcome, str) or not outcome.strip():
        warn.add(f"{source.at(item_path)}: rubric item without outcome skipped (AgentV skips it too)")
        return None
    criterion["outcome"] = outcome.strip() if isinstance(outcome, str) else outcome
    return criterion


def _item_min_score(item: dict[str, Any]) -> float | None:
    """An item's own pass mark on 0-1 (``min_score``, or ``required_min_score`` on 0-10)."""
    if number(item.get("min_score")) is not None:
        return snap(number(item["min_score"]))
    if number(item.get("required_min_score")) is not None:
        return number(item["required_min_score"]) / 10
    return None
