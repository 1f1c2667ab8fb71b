"""Reading AgentV eval files (the import half of :mod:`.agentv`, whose docstring says how
AgentV scores and how import keeps its verdicts)."""

from __future__ import annotations

import math
from typing import Any

from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import _checks
from rubric_studio.interop._agentv_files import OLLAMA_URL, judge, load_tests
from rubric_studio.interop._agentv_items import ANALYTIC_PASS_MARK, rubric_items
from rubric_studio.interop._common import (
    BOUNDARY_EPSILON,
    IdAllocator,
    Source,
    Warnings,
    build_rubric,
    expect_list,
    expect_mapping,
    num,
    read_threshold,
    slugify,
    snap,
    threshold_from_negations,
)

DEFAULT_THRESHOLD = 0.8
__all__ = ["ANALYTIC_PASS_MARK", "OLLAMA_URL", "import_"]
_RUBRIC_TYPES = ("llm-rubric", "agent-rubric", "rubric", "rubrics")


class _Evaluator:
    """One AgentV assertion after reading: its criteria and its own weight/gate."""

    def __init__(self, source: Source, name: str, path: tuple[Any, ...], weight: float, *, required: Any = False,
                 min_score: float | None = None, negate: bool = False):
        self.source = source  # the file it was read from (the eval, or its separate tests file)
        self.name = name
        self.path = path
        self.weight = weight
        self.required = required is True or _number(required) is not None
        gate = _number(min_score) if _number(min_score) is not None else _number(required)
        self.min_score = snap(read_threshold(gate)) if gate is not None else None
        self.negate = negate
        self.context: str | None = None  # the test it belongs to; None for suite-level assertions
        self.members: list[tuple[dict[str, Any], tuple[Any, ...]]] = []


def _read_asserts(source: Source, items: Any, path: tuple[Any, ...], warn: Warnings) -> list[_Evaluator]:
    items = expect_list(source, items, path, "assert")
    evaluators: list[_Evaluator] = []
    strings = [(i, s) for i, s in enumerate(items) if isinstance(s, str) and s.strip()]
    if strings:
        group = _Evaluator(source, "rubric", (*path, strings[0][0]), float(len(strings)))
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
        evaluator = _Evaluator(source, name, entry_path, float(weight), required=entry.get("required"),
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


def _check_member(source: Source, entry: dict[str, Any], evaluator: _Evaluator, kind: str, negated: bool,
                  warn: Warnings) -> None:
    """Give ``evaluator`` the check a deterministic assertion imports as (nothing when it has none)."""
    path = evaluator.path
    found = _checks.import_check(kind, negated, entry.get("value"), entry.get("flags"), source.at(path), warn)
    if found is None:
        return
    spec, min_score, penalty = found
    label = f"{entry['type']}-{slugify(str(entry.get('value') or ''), max_words=4, fallback='')}".strip("-")
    criterion = {"_default_id": label, "id": entry.get("metric") or entry.get("name"), "check": spec, "weight": 1.0}
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


def _assert_set(source: Source, entry: dict[str, Any], evaluator: _Evaluator, warn: Warnings) -> bool:
    """Fill ``evaluator`` with an ``assert-set``'s criteria. AgentV scores a set as the weighted mean
    of its members' scores, so each criterion's share of the set is its share of its member times
    that member's share of the set; the set then weighs (and gates) like any other assertion."""
    path = evaluator.path
    if not isinstance(entry.get("assert"), list) or not entry["assert"]:
        warn.add(f"{source.at(path)}: assert-set without an assert list skipped (AgentV skips it too)")
        return False
    members = _read_asserts(source, entry["assert"], (*path, "assert"), warn)
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
    if _number(entry.get("threshold")) is not None:
        warn.add(f"{source.at(path)}: assert-set threshold {num(_number(entry['threshold']))} only decides the set's "
                 "own verdict in AgentV (the test passes on its score); not imported")
    return bool(evaluator.members)


def _merge_split_keywords(evaluators: list[_Evaluator]) -> list[_Evaluator]:
    """Consecutive one-word keyword assertions with one metric name and equal weights (how the export
    splits a keywords check) → one keywords check; its weight is the exact sum, snapped once."""
    out: list[_Evaluator] = []
    parts: dict[int, list[float]] = {}  # id(joined evaluator) -> the weights of its words
    for evaluator in evaluators:
        previous = out[-1] if out else None
        if previous is not None and _joins(previous, evaluator, parts.get(id(previous))):
            _checks.absorb_keywords(previous.members[0][0]["check"], evaluator.members[0][0]["check"])
            parts.setdefault(id(previous), [previous.weight]).append(evaluator.weight)
            previous.weight = snap(math.fsum(parts[id(previous)]))
            continue
        out.append(evaluator)
    return out


def _joins(previous: _Evaluator, evaluator: _Evaluator, weights: list[float] | None) -> bool:
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


def _apply_gate(source: Source, evaluator: _Evaluator, threshold: float, warn: Warnings) -> None:
    """An assertion-level ``required`` zeroes the AgentV test when the assertion scores below its
    ``min_score`` (default: the test threshold). Say that per criterion where it means the same:
    the one criterion of a single-item assertion; in a checklist, each item whose miss alone takes
    the assertion below the gate. Anything else is warned, naming the criteria."""
    gate = evaluator.min_score if evaluator.min_score is not None else threshold
    if not evaluator.required or gate <= 0:
        return
    members = [c for c, _ in evaluator.members]
    ids = ", ".join(str(c.get("id") or c["_default_id"]) for c in members)
    if evaluator.negate:
        warn.add(f"{source.at(evaluator.path)}: negated assertion {evaluator.name!r} is required (the test fails "
                 f"when it scores below {num(gate)}); rubric-studio cannot gate on a penalty: {ids} imported "
                 "without that gate")
        return
    if len(members) == 1:
        criterion = members[0]
        criterion["required"] = True
        own = criterion.get("min_score")  # a gate written from it (nudged, then snapped back) is the same mark
        if (criterion.get("check") is not None and not criterion.get("_pass_fail") or criterion.get("score_ranges")) \
                and (own is None or abs(own - gate) > 10 * BOUNDARY_EPSILON):
            criterion["min_score"] = gate
        return
    total = sum(abs(c.get("weight", 1.0)) for c in members)
    decisive = [c for c in members if not c.get("score_ranges")
                and (total - abs(c.get("weight", 1.0))) / total < gate - 1e-9]
    for criterion in decisive:
        criterion["required"] = True
    if len(decisive) < len(members):
        kept = ", ".join(str(c.get("id") or c["_default_id"]) for c in decisive) or "none"
        warn.add(f"{source.at(evaluator.path)}: assertion {evaluator.name!r} is required as a group (the AgentV test "
                 f"fails when its combined score is below {num(gate)}); rubric-studio gates per criterion, so "
                 f"only criteria whose miss alone fails it are required (required: {kept}; of {ids})")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _suite(source: Source, data: dict[str, Any], warn: Warnings) -> list[_Evaluator]:
    """The assertions every test runs: suite-level and ``default_test`` ones."""
    suite: list[_Evaluator] = []
    for key in ("assert", "assertions"):  # "assertions": AgentV 4's name for the suite-level list
        if key in data:
            suite += _read_asserts(source, data[key], (key,), warn)
    default_test = data.get("default_test")
    if isinstance(default_test, str):
        warn.add(f"default_test is loaded from {default_test!r}; its assertions and threshold were not read")
    if isinstance(default_test, dict) and isinstance(default_test.get("options"), dict) \
            and default_test["options"].get("rubric_prompt"):
        warn.add("default_test.options.rubric_prompt (a custom grader prompt) is not imported; "
                 "rubric-studio's judge prompt applies")
    if isinstance(default_test, dict) and "assert" in default_test:
        suite = _read_asserts(source, default_test["assert"], ("default_test", "assert"), warn) + suite
    return suite


def _read_tests(source: Source, tests: list[Any], prefix: tuple[Any, ...],
                warn: Warnings) -> tuple[list[tuple[str, list[_Evaluator]]], list[float]]:
    """Each test's own assertions (by test id) and the thresholds the tests set, in order."""
    per_test: list[tuple[str, list[_Evaluator]]] = []
    thresholds: list[float] = []
    for index, test in enumerate(tests):
        if not isinstance(test, dict):
            continue
        found: list[_Evaluator] = []
        for key in ("assert", "assertions"):
            if key in test:
                found += _read_asserts(source, test[key], (*prefix, index, key), warn)
        execution = test.get("execution")
        if isinstance(execution, dict) and "assert" in execution:
            found += _read_asserts(source, execution["assert"], (*prefix, index, "execution", "assert"), warn)
        if isinstance(test.get("criteria"), str):
            warn.add(f"{source.at((*prefix, index, 'criteria'))}: legacy test-level criteria text describes "
                     "the whole test, not one rubric criterion; not imported")
        if found:
            per_test.append((str(test.get("id") or f"test-{index + 1}"), found))
        test_threshold = _number(test.get("threshold"))
        if test_threshold is None and isinstance(execution, dict):
            test_threshold = _number(execution.get("threshold"))
        if test_threshold is not None:
            thresholds.append(test_threshold)
    return per_test, thresholds


def _tests(source: Source, data: dict[str, Any], suite: list[_Evaluator],
           warn: Warnings) -> tuple[list[tuple[str, list[_Evaluator]]], list[float]]:
    tests_key = next((k for k in ("tests", "eval_cases", "evalcases") if k in data), None)
    if tests_key and tests_key != "tests":
        warn.add(f"legacy top-level {tests_key!r} read as tests")
    tests = data.get(tests_key) if tests_key else None
    if isinstance(tests, list):
        return _read_tests(source, tests, (tests_key,), warn)
    if not isinstance(tests, str):
        return [], []
    external = load_tests(source, tests)
    if external.error is None and external.source is not None:
        return _read_tests(external.source, external.tests, external.prefix, warn)
    message = f"tests are loaded from {external.label!r}, which is not read: {external.error}"
    if not suite:
        raise source.error((tests_key,), f"no rubric criteria found: {message}")
    warn.add(f"{message}; only the suite-level assertions were imported")
    return [], []


def import_(source: Source, warn: Warnings) -> Rubric:
    data = expect_mapping(source, source.data, (), "AgentV eval file")
    suite = _suite(source, data, warn)
    per_test, thresholds = _tests(source, data, suite, warn)
    threshold = _number(data.get("threshold"))
    if threshold is None and isinstance(data.get("execution"), dict):  # AgentV 4: execution.threshold
        threshold = _number(data["execution"].get("threshold"))
    default_test = data.get("default_test")
    if isinstance(default_test, dict) and _number(default_test.get("threshold")) is not None:
        threshold = _number(default_test["threshold"])
    if thresholds:
        threshold = thresholds[0]
        if len(set(thresholds)) > 1:
            warn.add(f"tests use different thresholds; using {num(threshold)}")
    evaluators = list(suite)
    tag_tests = len(per_test) > 1
    if tag_tests:
        warn.add(f"{len(per_test)} tests have their own assertions ({', '.join(t for t, _ in per_test)}); a "
                 "rubric-studio rubric applies every criterion to every sample, so they were merged "
                 "(each tagged test:<id>)")
    for test_id, found in per_test:
        for evaluator in found:
            evaluator.context = test_id
            if tag_tests:
                for criterion, _ in evaluator.members:
                    criterion.setdefault("tags", []).append(f"test:{test_id}")
            evaluators.append(evaluator)
    if not evaluators:
        skipped = f"every assertion was skipped ({warn.skip_summary()}); " if warn.skipped else ""
        raise source.error((), f"no rubric criteria found: {skipped}expected llm-rubric assertions or assert "
                               "strings (suite-level `assert` or in `tests`)")
    threshold = read_threshold(threshold) if threshold is not None else DEFAULT_THRESHOLD
    return _assemble(source, data, evaluators, threshold, warn)


def _assemble(source: Source, data: dict[str, Any], evaluators: list[_Evaluator], threshold: float,
              warn: Warnings) -> Rubric:
    # An item's effective weight is its assertion's weight x its share of that assertion, within
    # the assertions scored together (the suite's plus one test's). Each such group is scaled so
    # its first multi-criterion llm-rubric keeps the weights its author wrote.
    suite_count = sum(1 for e in evaluators if e.context is None)
    factors: dict[str | None, float] = {}
    rescale: dict[str | None, bool] = {}
    for evaluator in evaluators:
        context = evaluator.context
        if context not in rescale:
            size = sum(1 for e in evaluators if e.context == context)
            rescale[context] = size + (suite_count if context is not None else 0) > 1
        total = sum(abs(c.get("weight", 1.0)) for c, _ in evaluator.members)
        if (context not in factors and rescale[context] and len(evaluator.members) > 1 and evaluator.weight > 0
                and abs(total - evaluator.weight) > 1e-9):
            factors[context] = total / evaluator.weight
    ids = IdAllocator()
    criteria: list[dict[str, Any]] = []
    origins: dict[int, tuple[Any, ...]] = {}
    positive = negated = 0.0
    restated: list[tuple[dict[str, Any], float]] = []
    seen: dict[str, int] = {}
    not_gating: list[str] = []
    for evaluator in evaluators:
        total = sum(abs(c.get("weight", 1.0)) for c, _ in evaluator.members)
        _apply_gate(evaluator.source, evaluator, threshold, warn)
        for criterion, path in evaluator.members:
            weight = criterion.get("weight", 1.0)
            if weight == 0:
                warn.add(f"{evaluator.source.at(path)}: weight 0 criterion skipped (it cannot change a score)")
                continue
            if rescale[evaluator.context] and total > 0:
                authored = weight
                weight = snap(weight * evaluator.weight / total * factors.get(evaluator.context, 1.0))
                if abs(weight - authored) > 1e-9:
                    restated.append((criterion, weight))
            item_required = criterion.pop("_item_required", False) and not criterion.get("required")
            criterion.pop("_pass_fail", None)
            if evaluator.negate:
                criterion["required"] = False
                weight = -abs(weight)
                negated += abs(weight)
            elif weight > 0:
                positive += weight
            criterion["weight"] = weight
            default_id = criterion.pop("_default_id")
            criterion["id"] = ids.take(criterion.get("id"), default_id)
            if item_required:
                not_gating.append(criterion["id"])
            key = repr(sorted((k, v) for k, v in criterion.items() if k not in ("id", "tags")))
            if key in seen:
                existing = criteria[seen[key]]
                existing.setdefault("tags", []).extend(t for t in criterion.get("tags", []) if t not in existing.get("tags", []))
                continue
            seen[key] = len(criteria)
            if evaluator.source is source:  # positions of a separate tests file are not known to the rubric
                origins[len(criteria)] = path
            criteria.append({k: v for k, v in criterion.items() if v is not None})
    if not_gating:
        warn.add("AgentV's item-level required only marks its own assertion failed, it does not fail the test "
                 "(only an assertion-level required does); imported as not required: " + ", ".join(not_gating))
    if restated:
        warn.add("AgentV weighs each assertion as a whole (a whole llm-rubric counts as much as one contains "
                 "check of equal weight); criterion weights restated to keep those proportions: "
                 + ", ".join(f"{criterion['id']}={num(weight)}" for criterion, weight in restated))
    if negated:
        original = threshold
        threshold = threshold_from_negations(threshold, positive, negated)
        warn.add(f"negated llm-rubric items imported as penalties; threshold {num(original)} restated as "
                 f"{num(threshold)} on rubric-studio's scale (same verdicts)")
    name = data.get("name") or source.stem("agentv-eval")
    rubric_data: dict[str, Any] = {"name": str(name), "pass_threshold": snap(threshold), "criteria": criteria}
    if isinstance(data.get("description"), str) and data["description"].strip():
        rubric_data["description"] = data["description"].strip()
    found = judge(data, warn)
    if found:
        rubric_data["judge"] = found
    return build_rubric(rubric_data, source, origins)
