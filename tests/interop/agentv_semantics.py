"""AgentV's own verdict for one test of an eval file, re-implemented from its source.

From EntityProcess/agentv (the npm 4.42.4 build and ``packages/core/src/evaluation`` of 5.x):

* plain-string asserts are grouped into one ``llm-rubric`` of weight = their count
  (``loaders/grader-parser.ts``); plain strings and object items default to ``required: true``;
* an ``llm-rubric`` scores its items by weight (``calculateRubricScore``), or — when any
  item has ``score_ranges`` — as the weighted mean of raw/10 (``calculateScoreRangeResult``);
  item ``required``/``min_score`` only set that assertion's own verdict;
* an ``assert-set`` scores as the weighted mean of its members (``AssertSetGrader``);
* ``negate`` turns a score s into 1 - s;
* the test: if an assertion with ``required`` scores below its ``min_score`` (default: the
  test threshold) the aggregate is 0; otherwise the weighted mean of assertion scores; the
  test passes when that reaches the threshold (default 0.8) (``orchestrator.ts``).

``leaf(entry, item)`` gives the judge's or check's score in [0, 1] for one rubric item (``item``
a dict with ``outcome``) or one deterministic assertion (``item`` None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Leaf = Callable[[dict[str, Any], dict[str, Any] | None], float]


def _group_strings(entries: list[Any]) -> list[dict[str, Any]]:
    strings = [e.strip() for e in entries if isinstance(e, str) and e.strip()]
    out: list[dict[str, Any]] = []
    inserted = False
    for entry in entries:
        if isinstance(entry, str):
            if strings and not inserted:
                out.append({"type": "llm-rubric", "value": strings, "weight": len(strings)})
                inserted = True
            continue
        out.append(entry)
    return out


def _items(entry: dict[str, Any]) -> list[dict[str, Any]]:
    value = entry.get("value", entry.get("criteria"))
    if isinstance(value, str):
        return [{"outcome": value, "weight": 1, **({"score_ranges": entry["score_ranges"]}
                                                  if "score_ranges" in entry else {})}]
    return [{"outcome": item, "weight": 1} if isinstance(item, str) else item for item in value]


def score(entry: dict[str, Any], leaf: Leaf) -> float:
    """One assertion's score in [0, 1] (negation applied)."""
    kind = entry["type"]
    negate = kind.startswith("not-") or entry.get("negate") is True
    if kind == "assert-set":
        members = [(m.get("weight", 1), score(m, leaf)) for m in _group_strings(entry["assert"])]
        total = sum(w for w, _ in members) or 1
        value = sum(s * w for w, s in members) / total
    elif kind in ("llm-rubric", "rubrics"):
        items = _items(entry)
        total = sum(i.get("weight", 1) for i in items)
        value = min(1.0, max(0.0, sum(leaf(entry, i) * i.get("weight", 1) for i in items) / total)) if total else 0.0
    else:
        value = leaf(entry, None)
    return 1 - value if negate else value


def assertions(data: dict[str, Any], test: dict[str, Any]) -> list[dict[str, Any]]:
    """The assertions that apply to ``test``: suite-level, ``default_test`` and the test's own."""
    entries: list[Any] = []
    default_test = data.get("default_test") if isinstance(data.get("default_test"), dict) else {}
    for holder in (default_test, data, test):
        entries += holder.get("assert", holder.get("assertions", [])) or []
    return _group_strings(entries)


def threshold(data: dict[str, Any], test: dict[str, Any]) -> float:
    default_test = data.get("default_test") if isinstance(data.get("default_test"), dict) else {}
    for holder in (test, default_test, data, data.get("execution") or {}):  # 4.x: execution.threshold
        if isinstance(holder.get("threshold"), int | float):
            return float(holder["threshold"])
    return 0.8


def passes(data: dict[str, Any], test: dict[str, Any], leaf: Leaf) -> bool:
    """AgentV's verdict for ``test`` of the eval file ``data``."""
    limit = threshold(data, test)
    scored = [(entry, score(entry, leaf)) for entry in assertions(data, test)]
    for entry, value in scored:
        required = entry.get("required")
        if required is True or (isinstance(required, int | float) and not isinstance(required, bool)):
            gate = entry.get("min_score", required if required is not True else limit)
            if value < gate:
                return limit <= 0
    total = sum(entry.get("weight", 1) for entry, _ in scored)
    aggregate = sum(value * entry.get("weight", 1) for entry, value in scored) / total if total else 0.0
    return aggregate >= limit
