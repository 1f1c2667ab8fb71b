"""AgentV assertion lists → :class:`Evaluator` objects: each assertion's criteria (rubric items,
or the check a deterministic assertion imports as) with its own weight, gate and negation.

Plain ``assert`` strings form one checklist assertion; an ``assert-set`` becomes one assertion
whose criteria carry their share of the set; consecutive one-word keyword assertions written
by the export are joined back into one keywords check. :mod:`._agentv_read` turns the
evaluators into a rubric.
"""

from __future__ import annotations

import math
from typing import Any

from rubric_studio.interop import _checks
from rubric_studio.interop._common import (
    Source,
    Warnings,
    expect_list,
    expect_mapping,
    num,
    read_threshold,
    slugify,
    snap,
)
from rubric_studio.interop.agentv._items import number, rubric_items

_RUBRIC_TYPES = ("llm-rubric", "agent-rubric", "rubric", "rubrics")


class Evaluator:
    """One AgentV assertion after reading: its criteria and its own weight/gate."""

    def __init__(self, source: Source, name: str, path: tuple[Any, ...], weight: float, *, required: Any = False,
                 min_score: float | None = None, negate: bool = False):
        self.source = source  # the file it was read from (the eval, or its separate tests file)
        self.name = name
        self.path = path
        self.weight = weight
        self.required = required is True or number(required) is not None
        gate = number(min_score) if number(min_score) is not None else number(required)
        self.min_score = snap(read_threshold(gate)) if gate is not None else None
        self.negate = negate
        self.context: str | None = None  # the test it belongs to; None for suite-level assertions
        self.members: list[tuple[dict[str, Any], tuple[Any, ...]]] = []


def read_asserts(source: Source, items: Any, path: tuple[Any, ...], warn: Warnings) -> list[Evaluator]:
    """The assertions of the list at ``path`` (``assert``, ``assertions``, an assert-set's members),
    in order; what has no rubric-studio form is skipped with a warning."""
    items = expect_list(source, items, path, "assert")
    evaluators: list[Evaluator] = []
    strings = [(i, s) for i, s in enumerate(items) if isinstance(s, str) and s.strip()]
    if strings:
        group = Evaluator(source, "rubric", (*path, strings[0][0]), float(len(strings)))
        for k, (i, text) in enumerate(strings, 1):
            group.members.append(({"outcome": text.strip(), "weight": 1.0, "_item_required": True,
                                   "_default_id": f"rubric-{k}"}, (*path, i)))
    inserted = False
    for index, entry in enumerate(items):
        entry_path = (*path, index)
        if isinstance(entry, str):
            if strings and not inserted:
                evaluators.append(group)
                inserted = True
            continue
        entry = expect_mapping(source, entry, entry_path, "assert entry")
        raw_type = entry.get("type")
        if not isinstance(raw_type, str):
            warn.skip("assertions without a type", f"{source.at(entry_path)}: assertion without a type skipped")
            continue
        negated = raw_type.startswith("not-") or entry.get("negate") is True
        kind = raw_type[4:] if raw_type.startswith("not-") else raw_type
        name = str(entry.get("metric") or entry.get("name") or kind)
        weight = entry.get("weight", 1.0)
        evaluator = Evaluator(source, name, entry_path, float(weight), required=entry.get("required"),
                               min_score=entry.get("min_score"), negate=negated)
        if kind in ("assert-set", "composite"):
            if _assert_set(source, entry, evaluator, warn):
                evaluators.append(evaluator)
            continue
        if kind in _RUBRIC_TYPES:
            if kind == "rubric" or kind == "rubrics" and "criteria" not in entry:
                warn.add(f"{source.at(entry_path)}: legacy assertion type {kind!r} read as llm-rubric")
            value_key = next((k for k in ("value", "rubrics", "criteria") if k in entry), None)
            if not _rubric_in_file(source, entry, entry_path, name, value_key is None or entry[value_key] is None,
                                   warn):
                continue
            evaluator.members += rubric_items(source, entry[value_key], (*entry_path, value_key), entry, entry_path,
                                              warn)
            kinds = {bool(c.get("score_ranges")) for c, _ in evaluator.members}
            if len(kinds) > 1:
                warn.add(f"{source.at(entry_path)}: assertion {name!r} mixes checklist and score-range criteria; "
                         "AgentV then scores every item 0-10 and ignores required - imported as written "
                         "(met/unmet checklist criteria)")
        else:
            _check_member(source, entry, evaluator, kind, negated, warn)
        if evaluator.members:
            evaluators.append(evaluator)
    return _merge_split_keywords(evaluators)


def _check_member(source: Source, entry: dict[str, Any], evaluator: Evaluator, kind: str, negated: bool,
                  warn: Warnings) -> None:
    """Give ``evaluator`` the check a deterministic assertion imports as (nothing when it has none)."""
    path = evaluator.path
    found = _checks.import_check(kind, negated, entry.get("value"), entry.get("flags"), source.at(path), warn)
    if found is None:
        return
    spec, min_score, penalty = found
    label = f"{entry['type']}-{slugify(str(entry.get('value') or ''), max_words=4, fallback='')}".strip("-")
    # the assertion's weight is its one criterion's (it counts alone in the test's weighted mean)
    criterion = {"_default_id": label, "id": entry.get("metric") or entry.get("name"), "check": spec,
                 "weight": evaluator.weight}
    if min_score is not None:
        criterion["min_score"] = min_score
    if kind != "javascript" and len(spec.get("required", spec.get("forbidden")) or []) > 1:
        criterion["_pass_fail"] = True  # AgentV scores it 0/1: a gate means "passes", not a fraction
    evaluator.negate = penalty  # negated checks are already in their spec; only our penalty checks negate
    evaluator.members.append((criterion, path))


def _rubric_in_file(source: Source, entry: dict[str, Any], path: tuple[Any, ...], name: str, no_value: bool,
                    warn: Warnings) -> bool:
    """False (warned, counted) when an llm-rubric has no rubric text to import; a ``prompt`` file (AgentV's
    grader prompt for it) is named, since it is not read."""
    prompt = entry.get("prompt")
    where = f"{source.at(path)}: llm-rubric {name!r}"
    if no_value and isinstance(prompt, str):
        warn.skip("llm-rubric whose rubric is in a prompt file",
                  f"{where} keeps its rubric in the prompt file {prompt.strip()!r}, which is not imported; skipped")
        return False
    if no_value:
        warn.skip("llm-rubric without a value", f"{where} has no value; skipped")
        return False
    if isinstance(prompt, str):
        warn.add(f"{where}: its grader prompt {prompt.strip()!r} is not imported; rubric-studio's judge prompt applies")
    return True


def _assert_set(source: Source, entry: dict[str, Any], evaluator: Evaluator, warn: Warnings) -> bool:
    """Fill ``evaluator`` with an ``assert-set``'s criteria. AgentV scores a set as the weighted mean
    of its members' scores, so each criterion's share of the set is its share of its member times
    that member's share of the set; the set then weighs (and gates) like any other assertion."""
    path = evaluator.path
    key = "assertions" if "assert" not in entry and "assertions" in entry else "assert"  # AgentV 4's composite
    if not isinstance(entry.get(key), list) or not entry[key]:
        warn.add(f"{source.at(path)}: assert-set without an assert list skipped (AgentV skips it too)")
        return False
    members = read_asserts(source, entry[key], (*path, key), warn)
    if any(member.negate for member in members):
        raise source.error(path, "assert-set: a negated assertion inside an assert-set has no rubric-studio form; "
                                 "move it out of the set")
    if any(member.required for member in members):
        warn.add(f"{source.at(path)}: required inside an assert-set gates the whole AgentV test; imported as "
                 "written, but the gate applies to the member alone")
    set_weight = sum(member.weight for member in members)
    for member in members:
        own = sum(abs(c.get("weight", 1.0)) for c, _ in member.members) or 1.0
        for criterion, criterion_path in member.members:
            share = member.weight / set_weight * abs(criterion.get("weight", 1.0)) / own if set_weight else 0.0
            criterion["weight"] = share
            if member.required and len(members) == 1:
                criterion["required"] = True
            evaluator.members.append((criterion, criterion_path))
    aggregator = entry.get("aggregator")
    if isinstance(aggregator, dict) and aggregator.get("type") == "threshold":
        warn.add(f"{source.at(path)}: composite aggregator threshold {aggregator.get('threshold')} imported as the "
                 "members' weighted mean (the share of members that pass, for one-item checklist members); "
                 "the group is not rebuilt as a judge panel")
    elif isinstance(aggregator, dict) and aggregator.get("type") not in (None, "weighted_average"):
        warn.add(f"{source.at(path)}: composite aggregator {aggregator.get('type')} has no rubric-studio form; "
                 "imported as the members' weighted mean")
    if number(entry.get("threshold")) is not None:
        warn.add(f"{source.at(path)}: assert-set threshold {num(number(entry['threshold']))} only decides the set's "
                 "own verdict in AgentV (the test passes on its score); not imported")
    return bool(evaluator.members)


def _merge_split_keywords(evaluators: list[Evaluator]) -> list[Evaluator]:
    """Consecutive one-word keyword assertions with one metric name and equal weights (how the export
    splits a keywords check) → one keywords check; its weight is the exact sum, snapped once."""
    out: list[Evaluator] = []
    parts: dict[int, list[float]] = {}  # id(joined evaluator) -> the weights of its words
    for evaluator in evaluators:
        previous = out[-1] if out else None
        if previous is not None and _joins(previous, evaluator, parts.get(id(previous))):
            _checks.absorb_keywords(previous.members[0][0]["check"], evaluator.members[0][0]["check"])
            parts.setdefault(id(previous), [previous.weight]).append(evaluator.weight)
            previous.weight = previous.members[0][0]["weight"] = snap(math.fsum(parts[id(previous)]))
            continue
        out.append(evaluator)
    return out


def _joins(previous: Evaluator, evaluator: Evaluator, weights: list[float] | None) -> bool:
    if len(previous.members) != 1 or len(evaluator.members) != 1 or previous.name != evaluator.name:
        return False
    if (previous.required, previous.negate, previous.min_score) != (evaluator.required, evaluator.negate,
                                                                    evaluator.min_score):
        return False
    first = previous.members[0][0]
    check = first.get("check") or {}
    if weights is None and len(check.get("required", check.get("forbidden")) or []) != 1:
        return False  # only a join of one-word parts grows
    return (all(math.isclose(w, evaluator.weight, rel_tol=1e-9) for w in weights or [previous.weight])
            and _checks.joinable_keywords(first, evaluator.members[0][0]))
