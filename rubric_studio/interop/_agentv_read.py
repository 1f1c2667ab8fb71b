"""Reading AgentV eval files (the import half of :mod:`.agentv`, whose docstring says how
AgentV scores and how import keeps its verdicts)."""

from __future__ import annotations

from typing import Any

from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import _checks
from rubric_studio.interop._common import (
    IdAllocator,
    Source,
    Warnings,
    build_rubric,
    expect_list,
    expect_mapping,
    num,
    ranges_to_bands,
    read_threshold,
    slugify,
    snap,
    threshold_from_negations,
)

DEFAULT_THRESHOLD = 0.8
ANALYTIC_PASS_MARK = 0.7  # AgentV marks a 0-10 item passed at 7/10 when it has no min_score
OLLAMA_URL = "http://localhost:11434/v1"
_RUBRIC_TYPES = ("llm-rubric", "agent-rubric", "rubric", "rubrics")


class _Evaluator:
    """One AgentV assertion after reading: its criteria and its own weight/gate."""

    def __init__(self, name: str, path: tuple[Any, ...], weight: float, *, required: Any = False,
                 min_score: float | None = None, negate: bool = False):
        self.name = name
        self.path = path
        self.weight = weight
        self.required = required is True or _number(required) is not None
        gate = _number(min_score) if _number(min_score) is not None else _number(required)
        self.min_score = snap(read_threshold(gate)) if gate is not None else None
        self.negate = negate
        self.context: str | None = None  # the test it belongs to; None for suite-level assertions
        self.members: list[tuple[dict[str, Any], tuple[Any, ...]]] = []


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


def _rubric_items(source: Source, raw: Any, path: tuple[Any, ...], entry: dict[str, Any],
                  evaluator: _Evaluator, warn: Warnings) -> None:
    """Fill ``evaluator.members`` from an llm-rubric ``value``."""
    if isinstance(raw, str):
        criterion: dict[str, Any] = {"id": entry.get("id"), "outcome": raw}
        if "score_ranges" in entry:
            criterion["score_ranges"] = _score_ranges(source, entry["score_ranges"], (*evaluator.path, "score_ranges"))
        if isinstance(entry.get("operator"), str):
            criterion["operator"] = entry["operator"]
        criterion["_default_id"] = "rubric-1"
        evaluator.members.append((criterion, path))
        return
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
            evaluator.members.append(({"outcome": item.strip(), "weight": 1.0, "_item_required": True,
                                       "_default_id": default_id}, item_path))
            continue
        item = expect_mapping(source, item, item_path, "rubric item")
        criterion = {"_default_id": default_id, "id": item.get("id")}
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
        criterion["_item_required"] = item.get("required", True) is not False or min_score is not None
        if "score_ranges" in item:
            criterion["score_ranges"] = _score_ranges(source, item["score_ranges"], (*item_path, "score_ranges"))
            criterion["min_score"] = max(min_score, ANALYTIC_PASS_MARK) if min_score is not None \
                else ANALYTIC_PASS_MARK
            if not isinstance(outcome, str) or not outcome.strip():
                label = str(item.get("id") or default_id)
                outcome = label.replace("_", " ").replace("-", " ")
                warn.add(f"{source.at(item_path)}: score-range criterion {label!r} has no outcome; "
                         "its id is used as the outcome text")
        else:
            if not isinstance(outcome, str) or not outcome.strip():
                warn.add(f"{source.at(item_path)}: rubric item without outcome skipped (AgentV skips it too)")
                continue
        criterion["outcome"] = outcome.strip() if isinstance(outcome, str) else outcome
        evaluator.members.append((criterion, item_path))


def _item_min_score(item: dict[str, Any]) -> float | None:
    """An item's own pass mark on 0-1 (``min_score``, or ``required_min_score`` on 0-10)."""
    if _number(item.get("min_score")) is not None:
        return snap(_number(item["min_score"]))
    if _number(item.get("required_min_score")) is not None:
        return _number(item["required_min_score"]) / 10
    return None


def _read_asserts(source: Source, items: Any, path: tuple[Any, ...], warn: Warnings) -> list[_Evaluator]:
    items = expect_list(source, items, path, "assert")
    evaluators: list[_Evaluator] = []
    strings = [(i, s) for i, s in enumerate(items) if isinstance(s, str) and s.strip()]
    if strings:
        group = _Evaluator("rubric", (*path, strings[0][0]), float(len(strings)))
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
            warn.add(f"{source.at(entry_path)}: assertion without a type skipped")
            continue
        negated = raw_type.startswith("not-") or entry.get("negate") is True
        kind = raw_type[4:] if raw_type.startswith("not-") else raw_type
        name = str(entry.get("metric") or entry.get("name") or kind)
        weight = entry.get("weight", 1.0)
        evaluator = _Evaluator(name, entry_path, float(weight), required=entry.get("required"),
                               min_score=entry.get("min_score"), negate=negated)
        if kind in ("assert-set", "composite"):
            if _assert_set(source, entry, evaluator, warn):
                evaluators.append(evaluator)
            continue
        if kind in _RUBRIC_TYPES:
            if kind == "rubric" or kind == "rubrics" and "criteria" not in entry:
                warn.add(f"{source.at(entry_path)}: legacy assertion type {kind!r} read as llm-rubric")
            value_key = next((k for k in ("value", "rubrics", "criteria") if k in entry), None)
            if value_key is None or entry[value_key] is None:
                warn.add(f"{source.at(entry_path)}: llm-rubric without value skipped")
                continue
            _rubric_items(source, entry[value_key], (*entry_path, value_key), entry, evaluator, warn)
            kinds = {bool(c.get("score_ranges")) for c, _ in evaluator.members}
            if len(kinds) > 1:
                warn.add(f"{source.at(entry_path)}: assertion {name!r} mixes checklist and score-range criteria; "
                         "AgentV then scores every item 0-10 and ignores required - imported as written "
                         "(met/unmet checklist criteria)")
        else:
            found = _checks.import_check(kind, negated, entry.get("value"), entry.get("flags"),
                                         source.at(entry_path), warn)
            if found is None:
                continue
            spec, min_score, penalty = found
            label = f"{raw_type}-{slugify(str(entry.get('value') or ''), max_words=4, fallback='')}".strip("-")
            criterion = {"_default_id": label, "id": entry.get("metric") or entry.get("name"),
                         "check": spec, "weight": 1.0}
            if min_score is not None:
                criterion["min_score"] = min_score
            evaluator.negate = penalty  # negated checks are already in their spec; only our penalty checks negate
            evaluator.members.append((criterion, entry_path))
        if evaluator.members:
            evaluators.append(evaluator)
    return _merge_split_keywords(evaluators)


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
    """Consecutive one-word keyword assertions with one metric name → one keywords check."""
    out: list[_Evaluator] = []
    for evaluator in evaluators:
        previous = out[-1] if out else None
        spec = evaluator.members[0][0].get("check") if len(evaluator.members) == 1 else None
        if (previous is not None and previous.name == evaluator.name and len(previous.members) == 1
                and previous.required == evaluator.required
                and _checks.absorb_keywords(previous.members[0][0].get("check"), spec)):
            previous.weight = snap(previous.weight + evaluator.weight)
            continue
        out.append(evaluator)
    return out


def _judge(source: Source, data: dict[str, Any], warn: Warnings) -> dict[str, Any] | None:
    label = None
    default_test = data.get("default_test")
    if isinstance(default_test, dict) and isinstance(default_test.get("options"), dict):
        label = default_test["options"].get("provider")
    if not isinstance(label, str):
        return None
    providers = data.get("providers")
    entries = providers if isinstance(providers, list) else [providers]
    for entry in entries:
        if isinstance(entry, dict) and label in (entry.get("label"), entry.get("id")):
            config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
            provider = str(entry.get("id"))
            if provider not in ("openai", "anthropic"):
                warn.add(f"grader provider {provider!r} has no rubric-studio judge; set judge.model yourself")
                return None
            judge: dict[str, Any] = {}
            base_url = config.get("base_url")
            if base_url == OLLAMA_URL:
                provider, base_url = "ollama", None
            elif base_url and provider == "openai":
                provider = "openai-compatible"
            if config.get("model"):
                judge["model"] = f"{provider}:{config['model']}"
            if base_url:
                judge["base_url"] = str(base_url)
            if isinstance(config.get("temperature"), int | float):
                judge["temperature"] = float(config["temperature"])
            return judge or None
    warn.add(f"grader provider {label!r} is not defined in this file's providers; judge not imported")
    return None


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
        if criterion.get("check") is not None or criterion.get("score_ranges"):
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


def import_(source: Source, warn: Warnings) -> Rubric:
    data = expect_mapping(source, source.data, (), "AgentV eval file")
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
    tests_key = next((k for k in ("tests", "eval_cases", "evalcases") if k in data), None)
    if tests_key and tests_key != "tests":
        warn.add(f"legacy top-level {tests_key!r} read as tests")
    tests = data.get(tests_key) if tests_key else None
    per_test: list[tuple[str, list[_Evaluator]]] = []
    threshold = _number(data.get("threshold"))
    if threshold is None and isinstance(data.get("execution"), dict):  # AgentV 4: execution.threshold
        threshold = _number(data["execution"].get("threshold"))
    if isinstance(default_test, dict) and _number(default_test.get("threshold")) is not None:
        threshold = _number(default_test["threshold"])
    test_threshold_seen: float | None = None
    if isinstance(tests, list):
        for index, test in enumerate(tests):
            if not isinstance(test, dict):
                continue
            found: list[_Evaluator] = []
            for key in ("assert", "assertions"):
                if key in test:
                    found += _read_asserts(source, test[key], (tests_key, index, key), warn)
            execution = test.get("execution")
            if isinstance(execution, dict) and "assert" in execution:
                found += _read_asserts(source, execution["assert"], (tests_key, index, "execution", "assert"), warn)
            if isinstance(test.get("criteria"), str):
                warn.add(f"{source.at((tests_key, index, 'criteria'))}: legacy test-level criteria text describes "
                         "the whole test, not one rubric criterion; not imported")
            if found:
                per_test.append((str(test.get("id") or f"test-{index + 1}"), found))
            test_threshold = _number(test.get("threshold"))
            if test_threshold is None and isinstance(execution, dict):
                test_threshold = _number(execution.get("threshold"))
            if test_threshold is not None:
                if test_threshold_seen is not None and test_threshold_seen != test_threshold:
                    warn.add(f"tests use different thresholds; using {num(test_threshold_seen)}")
                elif test_threshold_seen is None:
                    test_threshold_seen = threshold = test_threshold
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
        raise source.error((), "no rubric criteria found: expected llm-rubric assertions or assert strings "
                               "(suite-level `assert` or in `tests`)")
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
        _apply_gate(source, evaluator, threshold, warn)
        for criterion, path in evaluator.members:
            weight = criterion.get("weight", 1.0)
            if weight == 0:
                warn.add(f"{source.at(path)}: weight 0 criterion skipped (it cannot change a score)")
                continue
            if rescale[evaluator.context] and total > 0:
                authored = weight
                weight = snap(weight * evaluator.weight / total * factors.get(evaluator.context, 1.0))
                if abs(weight - authored) > 1e-9:
                    restated.append((criterion, weight))
            item_required = criterion.pop("_item_required", False) and not criterion.get("required")
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
    judge = _judge(source, data, warn)
    if judge:
        rubric_data["judge"] = judge
    return build_rubric(rubric_data, source, origins)
