"""AgentV eval files (``*.eval.yaml``): ``assert`` strings and ``type: llm-rubric`` values.

How AgentV scores (EntityProcess/agentv, ``packages/core/src/evaluation``): each
assertion is an evaluator with a score in [0, 1] and a ``weight`` (default 1);
the test score is their weighted mean and passes at ``threshold`` (default 0.8).
An evaluator with ``required: true`` zeroes the test when its score is below its
``min_score``. Inside one ``llm-rubric`` the items are scored together:
checklist items by weight; as soon as one item has ``score_ranges`` the whole
assertion is scored 0–10 per item. Item ``required`` (default **true**) and an
analytic item's ``min_score`` only decide that assertion's own verdict.

Export keeps our verdicts in that model:

* criteria are grouped into assertions of one kind each (checklist, required
  checklist, analytic, each required analytic alone, penalties), each with
  ``weight`` = the sum of its items' weights, so the weighted mean of the
  assertions equals our weighted mean;
* required criteria also gate at assertion level (``required: true`` with
  ``min_score``), which is what fails the test in AgentV;
* penalties become an ``negate: true`` assertion of "does the bad thing" items
  (weight |w|); the test ``threshold`` is restated for that mean, so a sample
  passes in AgentV exactly when it passes here (scores differ, warned);
* checks become AgentV's deterministic assertions (see :mod:`._checks`).

Import applies AgentV's defaults (plain strings: required, weight 1; object
items: required unless ``required: false``; ids ``rubric-N``), merges suite-level
(``assert``, ``default_test.assert``) and test-level assertions, and undoes the
penalty/threshold restatement.
"""

from __future__ import annotations

from typing import Any

from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.interop import _checks
from rubric_studio.interop._common import (
    IdAllocator,
    Source,
    Warnings,
    bands_to_ranges,
    build_rubric,
    common_export_warnings,
    dump_yaml,
    expect_list,
    expect_mapping,
    flow,
    num,
    prepare,
    ranges_to_bands,
    slugify,
    snap,
    split_judge_model,
    threshold_from_negations,
    threshold_with_negations,
)

DEFAULT_THRESHOLD = 0.8
ANALYTIC_PASS_MARK = 0.7  # AgentV marks a 0-10 item passed at 7/10 when it has no min_score
JUDGE_LABEL = "rubric-judge"
OLLAMA_URL = "http://localhost:11434/v1"
_RUBRIC_TYPES = ("llm-rubric", "agent-rubric", "rubric", "rubrics")


# -- export ------------------------------------------------------------------
def _item(criterion: Criterion, warn: Warnings, *, negated: bool = False) -> dict[str, Any]:
    item: dict[str, Any] = {"id": criterion.key, "outcome": criterion.outcome}
    if criterion.operator:
        item["operator"] = criterion.operator
    item["weight"] = num(abs(criterion.weight))
    analytic = bool(criterion.score_ranges)
    item["required"] = bool(criterion.required and not negated)
    if analytic:
        if criterion.required and not negated:
            item["min_score"] = num(criterion.effective_min_score)
        elif abs(criterion.effective_min_score - ANALYTIC_PASS_MARK) > 1e-9:
            warn.criterion(criterion.key, f"min_score {num(criterion.effective_min_score)} only decides met/unmet "
                                          "here; AgentV treats a criterion min_score as a required gate, so it is "
                                          "not exported (AgentV marks 0-10 criteria passed at 7/10)")
        item["score_ranges"] = [
            {"score_range": flow(prepare([low, high])), "outcome": text}
            for low, high, text in bands_to_ranges(criterion.score_ranges or {})
        ]
    elif criterion.min_score is not None:
        item["min_score"] = num(criterion.min_score)
    return item


def export(rubric: Rubric) -> tuple[str, list[str]]:
    warn = Warnings()
    common_export_warnings(rubric, warn, "AgentV", judge_fields=("base_url", "temperature"))
    groups: dict[str, list[Criterion]] = {}
    order: list[tuple[str, Criterion | None]] = []

    def place(key: str, criterion: Criterion) -> None:
        if key not in groups:
            groups[key] = []
            order.append((key, None))
        groups[key].append(criterion)

    for criterion in rubric.criteria:
        if criterion.check is not None:
            order.append(("check", criterion))
            continue
        analytic = bool(criterion.score_ranges)
        if criterion.required and analytic and criterion.effective_min_score <= 0:
            # met whatever the score: the gate can never fire (and AgentV needs min_score > 0)
            criterion = criterion.model_copy(update={"required": False})
        if criterion.weight < 0:
            if criterion.required:
                warn.criterion(criterion.key, "a required penalty cannot gate in AgentV; exported as a plain penalty")
            place("penalties-scored" if analytic else "penalties", criterion)
        elif criterion.required and analytic:
            order.append(("required-scored", criterion))
        elif criterion.required:
            place("required", criterion)
        else:
            place("rubric-scored" if analytic else "rubric", criterion)
    if any(c.tags for c in rubric.criteria):
        warn.add("criterion tags are not part of AgentV rubric items; not exported ("
                 + ", ".join(c.key for c in rubric.criteria if c.tags) + ")")

    asserts: list[dict[str, Any]] = []
    exported: list[Criterion] = [c for c in rubric.criteria if c.is_judged]
    for key, single in order:
        if key == "check":
            assert single is not None
            parts = _checks.export_check(single, "agentv", warn)
            if parts:
                exported.append(single)
            for part in parts:
                entry = {"metric": single.key, **part}
                if single.required and single.weight > 0 and single.effective_min_score > 0:
                    entry["required"] = True
                    entry["min_score"] = 1 if len(parts) > 1 else num(single.effective_min_score)
                asserts.append(entry)
            continue
        if key == "required-scored":
            assert single is not None
            asserts.append({"metric": single.key, "type": "llm-rubric", "weight": num(single.weight),
                            "required": True, "min_score": num(single.effective_min_score),
                            "value": [_item(single, warn)]})
            continue
        members = groups[key]
        entry: dict[str, Any] = {"metric": key, "type": "llm-rubric",
                                 "weight": num(sum(abs(c.weight) for c in members))}
        if key == "required":
            entry["required"] = True
            entry["min_score"] = 1
        if key.startswith("penalties"):
            entry["negate"] = True
        entry["value"] = [_item(c, warn, negated=key.startswith("penalties")) for c in members]
        asserts.append(entry)

    positive = sum(c.weight for c in exported if c.weight > 0)
    negated = sum(-c.weight for c in exported if c.weight < 0)
    threshold = num(threshold_with_negations(rubric.pass_threshold, positive, negated))
    if negated:
        warn.add(f"penalties ({', '.join(c.key for c in exported if c.weight < 0)}) become negated "
                 f"assertions (AgentV weights are positive); the threshold is restated as {threshold} so "
                 "verdicts match, but AgentV reports different scores")
    data: dict[str, Any] = {"name": slugify(rubric.name)}
    if rubric.description.strip():
        data["description"] = rubric.description.strip()
    judge_provider = _judge_provider(rubric)
    if judge_provider:
        data["providers"] = [judge_provider]
    default_test: dict[str, Any] = {"threshold": threshold}
    if judge_provider:
        default_test["options"] = {"provider": JUDGE_LABEL}
    data["default_test"] = default_test
    data["prompts"] = ["{{ input }}"]
    data["assert"] = asserts
    data["tests"] = [{"id": "example", "vars": {"input": "Replace with a real input for your target"}}]
    header = (f"AgentV eval exported by rubric-studio from rubric {rubric.name!r}.\n"
              "The suite-level `assert` list below is the rubric; it applies to every test.\n"
              "Add your target to `providers` and your cases to `tests`.")
    return dump_yaml(data, header), warn.items


def _judge_provider(rubric: Rubric) -> dict[str, Any] | None:
    """The judge as an AgentV provider entry (selected with ``default_test.options.provider``)."""
    judge = rubric.judge
    if judge is None or judge.model is None:
        return None
    provider, model = split_judge_model(judge.model)
    config: dict[str, Any] = {"model": model}
    if provider in ("ollama", "openai-compatible"):
        config["base_url"] = judge.base_url or (OLLAMA_URL if provider == "ollama" else None)
        provider = "openai"
    elif judge.base_url:
        config["base_url"] = judge.base_url
    if config.get("base_url") is None:
        config.pop("base_url", None)
    if "temperature" in judge.model_fields_set:
        config["temperature"] = num(judge.temperature)
    return {"id": provider, "label": JUDGE_LABEL, "config": config}


# -- import ------------------------------------------------------------------
class _Evaluator:
    """One AgentV assertion after reading: its criteria and its own weight/gate."""

    def __init__(self, name: str, path: tuple[Any, ...], weight: float, *, required: bool = False,
                 min_score: float | None = None, negate: bool = False):
        self.name = name
        self.path = path
        self.weight = weight
        self.required = required
        self.min_score = min_score
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
        else:
            criterion["required"] = bool(entry.get("required", False))
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
        if isinstance(item, str):
            evaluator.members.append(({"outcome": item.strip(), "weight": 1.0, "required": True,
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
        min_score = item.get("min_score")
        if "score_ranges" in item:
            criterion["score_ranges"] = _score_ranges(source, item["score_ranges"], (*item_path, "score_ranges"))
            if min_score is not None:
                criterion["required"] = True
                criterion["min_score"] = float(min_score)
            else:
                criterion["min_score"] = ANALYTIC_PASS_MARK
                if item.get("required") is True:
                    warn.add(f"{source.at((*item_path, 'required'))}: AgentV ignores required on score-range "
                             "criteria (min_score is their gate); imported as not required")
            if not isinstance(outcome, str) or not outcome.strip():
                label = str(item.get("id") or default_id)
                outcome = label.replace("_", " ").replace("-", " ")
                warn.add(f"{source.at(item_path)}: score-range criterion {label!r} has no outcome; "
                         "its id is used as the outcome text")
        else:
            if not isinstance(outcome, str) or not outcome.strip():
                warn.add(f"{source.at(item_path)}: rubric item without outcome skipped (AgentV skips it too)")
                continue
            criterion["required"] = item.get("required", True) is not False
            if min_score is not None:
                criterion["min_score"] = float(min_score)
        criterion["outcome"] = outcome.strip() if isinstance(outcome, str) else outcome
        evaluator.members.append((criterion, item_path))


def _read_asserts(source: Source, items: Any, path: tuple[Any, ...], warn: Warnings) -> list[_Evaluator]:
    items = expect_list(source, items, path, "assert")
    evaluators: list[_Evaluator] = []
    strings = [(i, s) for i, s in enumerate(items) if isinstance(s, str) and s.strip()]
    if strings:
        group = _Evaluator("rubric", (*path, strings[0][0]), float(len(strings)))
        for k, (i, text) in enumerate(strings, 1):
            group.members.append(({"outcome": text.strip(), "weight": 1.0, "required": True,
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
        evaluator = _Evaluator(name, entry_path, float(weight), required=entry.get("required") is True,
                               min_score=entry.get("min_score"), negate=negated)
        if kind in _RUBRIC_TYPES:
            if kind in ("rubric", "rubrics"):
                warn.add(f"{source.at(entry_path)}: legacy assertion type {kind!r} read as llm-rubric")
            value = entry.get("value", entry.get("rubrics", entry.get("criteria")))
            if value is None:
                warn.add(f"{source.at(entry_path)}: llm-rubric without value skipped")
                continue
            _rubric_items(source, value, (*entry_path, "value" if "value" in entry else "rubrics"), entry,
                          evaluator, warn)
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


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def import_(source: Source, warn: Warnings) -> Rubric:
    data = expect_mapping(source, source.data, (), "AgentV eval file")
    suite: list[_Evaluator] = []
    if "assert" in data:
        suite += _read_asserts(source, data["assert"], ("assert",), warn)
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
    if isinstance(default_test, dict) and _number(default_test.get("threshold")) is not None:
        threshold = _number(default_test["threshold"])
    test_threshold_seen: float | None = None
    if isinstance(tests, list):
        for index, test in enumerate(tests):
            if not isinstance(test, dict):
                continue
            found: list[_Evaluator] = []
            if "assert" in test:
                found += _read_asserts(source, test["assert"], (tests_key, index, "assert"), warn)
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
    return _assemble(source, data, evaluators, threshold if threshold is not None else DEFAULT_THRESHOLD, warn)


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
    restated: list[str] = []
    seen: dict[str, int] = {}
    for evaluator in evaluators:
        total = sum(abs(c.get("weight", 1.0)) for c, _ in evaluator.members)
        single = len(evaluator.members) == 1
        if evaluator.required and not single:
            all_required = all(c.get("required") for c, _ in evaluator.members)
            if not all_required or (evaluator.min_score not in (None, 1, 1.0)):
                warn.add(f"{source.at(evaluator.path)}: assertion {evaluator.name!r} is required as a group (fails "
                         "when its combined score is below its min_score); rubric-studio gates per criterion, so "
                         "only its items' own required flags were kept")
        for criterion, path in evaluator.members:
            weight = criterion.get("weight", 1.0)
            if weight == 0:
                warn.add(f"{source.at(path)}: weight 0 criterion skipped (it cannot change a score)")
                continue
            if rescale[evaluator.context] and total > 0:
                authored = weight
                weight = snap(weight * evaluator.weight / total * factors.get(evaluator.context, 1.0))
                if abs(weight - authored) > 1e-9:
                    restated.append(f"{criterion.get('id') or criterion['_default_id']}={num(weight)}")
            if single and evaluator.required:
                criterion["required"] = True
                if criterion.get("check") is not None or criterion.get("score_ranges"):
                    criterion["min_score"] = float(evaluator.min_score) if evaluator.min_score is not None \
                        else criterion.get("min_score", threshold)
            if evaluator.negate:
                criterion["required"] = False
                weight = -abs(weight)
                negated += abs(weight)
            elif weight > 0:
                positive += weight
            criterion["weight"] = weight
            default_id = criterion.pop("_default_id")
            criterion["id"] = ids.take(criterion.get("id"), default_id)
            key = repr(sorted((k, v) for k, v in criterion.items() if k not in ("id", "tags")))
            if key in seen:
                existing = criteria[seen[key]]
                existing.setdefault("tags", []).extend(t for t in criterion.get("tags", []) if t not in existing.get("tags", []))
                continue
            seen[key] = len(criteria)
            origins[len(criteria)] = path
            criteria.append({k: v for k, v in criterion.items() if v is not None})
    if restated:
        warn.add("AgentV weighs each assertion as a whole (a whole llm-rubric counts as much as one contains "
                 "check of equal weight); criterion weights restated to keep those proportions: "
                 + ", ".join(restated))
    if negated:
        original = threshold
        threshold = threshold_from_negations(threshold, positive, negated)
        warn.add(f"negated llm-rubric items imported as penalties; threshold {num(original)} restated as "
                 f"{num(threshold)} on rubric-studio's scale (same verdicts)")
    name = data.get("name") or source.stem("agentv-eval")
    rubric_data: dict[str, Any] = {"name": str(name), "pass_threshold": threshold, "criteria": criteria}
    if isinstance(data.get("description"), str) and data["description"].strip():
        rubric_data["description"] = data["description"].strip()
    judge = _judge(source, data, warn)
    if judge:
        rubric_data["judge"] = judge
    return build_rubric(rubric_data, source, origins)
