"""Reading AgentV eval files (the import half of :mod:`.agentv`, whose docstring says how
AgentV scores and how import keeps its verdicts).

The assertions are read by :mod:`._agentv_asserts`; this module gathers them from the suite,
``default_test`` and the tests, turns assertion-level gates into required criteria, and
restates weights and threshold so the rubric gives AgentV's verdicts."""

from __future__ import annotations

from typing import Any

from rubric_studio.core.rubric import Rubric
from rubric_studio.interop._common import (
    BOUNDARY_EPSILON,
    IdAllocator,
    Source,
    Warnings,
    build_rubric,
    expect_mapping,
    num,
    read_threshold,
    snap,
    threshold_from_negations,
)
from rubric_studio.interop.agentv._asserts import Evaluator, read_asserts
from rubric_studio.interop.agentv._files import judge, load_tests
from rubric_studio.interop.agentv._items import ANALYTIC_PASS_MARK, number
from rubric_studio.interop.agentv._judge import OLLAMA_URL
from rubric_studio.interop.agentv._v4 import CASE_CRITERIA
from rubric_studio.interop.agentv._v4_judge import is_v4, judge_v4

DEFAULT_THRESHOLD = 0.8
__all__ = ["ANALYTIC_PASS_MARK", "OLLAMA_URL", "import_"]


def _apply_gate(source: Source, evaluator: Evaluator, threshold: float, warn: Warnings) -> None:
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
            if own is not None:
                warn.add(f"{source.at(evaluator.path)}: criterion {ids!r}: min_score {num(own)} (its own pass mark) "
                         f"imported as {num(gate)}, the gate of its required assertion, so that it fails a sample "
                         "where AgentV fails the test")
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


def _suite(source: Source, data: dict[str, Any], warn: Warnings) -> list[Evaluator]:
    """The assertions every test runs: suite-level and ``default_test`` ones."""
    suite: list[Evaluator] = []
    for key in ("assert", "assertions"):  # "assertions": AgentV 4's name for the suite-level list
        if key in data:
            suite += read_asserts(source, data[key], (key,), warn)
    default_test = data.get("default_test")
    if isinstance(default_test, str):
        warn.add(f"default_test is loaded from {default_test!r}; its assertions and threshold were not read")
    if isinstance(default_test, dict) and isinstance(default_test.get("options"), dict) \
            and default_test["options"].get("rubric_prompt"):
        warn.add("default_test.options.rubric_prompt (a custom grader prompt) is not imported; "
                 "rubric-studio's judge prompt applies")
    if isinstance(default_test, dict) and "assert" in default_test:
        suite = read_asserts(source, default_test["assert"], ("default_test", "assert"), warn) + suite
    return suite


def _read_tests(source: Source, tests: list[Any], prefix: tuple[Any, ...],
                warn: Warnings) -> tuple[list[tuple[str, list[Evaluator]]], list[float]]:
    """Each test's own assertions (by test id) and the thresholds the tests set, in order."""
    per_test: list[tuple[str, list[Evaluator]]] = []
    thresholds: list[float] = []
    for index, test in enumerate(tests):
        if not isinstance(test, dict):
            continue
        found: list[Evaluator] = []
        for key in ("assert", "assertions"):
            if key in test:
                found += read_asserts(source, test[key], (*prefix, index, key), warn)
        execution = test.get("execution")
        if isinstance(execution, dict) and "assert" in execution:
            found += read_asserts(source, execution["assert"], (*prefix, index, "execution", "assert"), warn)
        if isinstance(test.get("criteria"), str) and test["criteria"].strip() != CASE_CRITERIA:
            # (the sentence rubric-studio's AgentV 4 export gives every test is no criterion)
            warn.add(f"{source.at((*prefix, index, 'criteria'))}: legacy test-level criteria text describes "
                     "the whole test, not one rubric criterion; not imported")
        if found:
            per_test.append((str(test.get("id") or f"test-{index + 1}"), found))
        test_threshold = number(test.get("threshold"))
        if test_threshold is None and isinstance(execution, dict):
            test_threshold = number(execution.get("threshold"))
        if test_threshold is not None:
            thresholds.append(test_threshold)
    return per_test, thresholds


def _tests(source: Source, data: dict[str, Any], suite: list[Evaluator],
           warn: Warnings) -> tuple[list[tuple[str, list[Evaluator]]], list[float]]:
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
    """Returns the rubric of an AgentV eval file (what it cannot carry over goes to ``warn``).
    Raises :class:`~rubric_studio.core.problems.RubricError` with positions for a malformed file."""
    data = expect_mapping(source, source.data, (), "AgentV eval file")
    suite = _suite(source, data, warn)
    per_test, thresholds = _tests(source, data, suite, warn)
    threshold = number(data.get("threshold"))
    if threshold is None and isinstance(data.get("execution"), dict):  # AgentV 4: execution.threshold
        threshold = number(data["execution"].get("threshold"))
    default_test = data.get("default_test")
    if isinstance(default_test, dict) and number(default_test.get("threshold")) is not None:
        threshold = number(default_test["threshold"])
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


def _rescaling(evaluators: list[Evaluator]) -> tuple[dict[str | None, bool], dict[str | None, float]]:
    """Which groups of assertions scored together (the suite's plus one test's, keyed by test)
    have their criterion weights restated, and the factor that keeps each group's first
    multi-criterion llm-rubric at the weights its author wrote."""
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
    return rescale, factors


class _Criteria:
    """The rubric's criteria as the evaluators' members are added: final weights and ids, exact
    duplicates in different tests (one assertion each test repeats) merged - within one test, or
    the suite, each copy counts, as in AgentV - and what to warn about."""

    def __init__(self, source: Source, evaluators: list[Evaluator]):
        self.source = source
        self.rescale, self.factors = _rescaling(evaluators)
        self.ids = IdAllocator()
        self.criteria: list[dict[str, Any]] = []
        self.origins: dict[int, tuple[Any, ...]] = {}
        self.positive = self.negated = 0.0
        self.restated: list[tuple[dict[str, Any], float]] = []
        self.not_gating: list[str] = []
        self._seen: dict[str, list[int]] = {}
        self._contexts: dict[int, set[str | None]] = {}  # per criterion: the tests (None: the suite) it stands for

    def add_evaluator(self, evaluator: Evaluator, warn: Warnings) -> None:
        total = sum(abs(c.get("weight", 1.0)) for c, _ in evaluator.members)
        for criterion, path in evaluator.members:
            if criterion.get("weight", 1.0) == 0:
                warn.add(f"{evaluator.source.at(path)}: weight 0 criterion skipped (it cannot change a score)")
                continue
            self._add(evaluator, criterion, path, total)

    def _weight(self, evaluator: Evaluator, criterion: dict[str, Any], total: float) -> float:
        """The criterion's weight as its assertion's share (restated ones remembered), negative when negated."""
        weight = criterion.get("weight", 1.0)
        if self.rescale[evaluator.context] and total > 0:
            authored = weight
            weight = snap(weight * evaluator.weight / total * self.factors.get(evaluator.context, 1.0))
            if abs(weight - authored) > 1e-9:
                self.restated.append((criterion, weight))
        if evaluator.negate:
            criterion["required"] = False
            weight = -abs(weight)
            self.negated += abs(weight)
        elif weight > 0:
            self.positive += weight
        return weight

    def _add(self, evaluator: Evaluator, criterion: dict[str, Any], path: tuple[Any, ...], total: float) -> None:
        item_required = criterion.pop("_item_required", False) and not criterion.get("required")
        criterion.pop("_pass_fail", None)
        criterion["weight"] = self._weight(evaluator, criterion, total)
        default_id = criterion.pop("_default_id")
        criterion["id"] = self.ids.take(criterion.get("id"), default_id)
        if item_required:
            self.not_gating.append(criterion["id"])
        key = repr(sorted((k, v) for k, v in criterion.items() if k not in ("id", "tags")))
        copy_of = next((at for at in self._seen.get(key, []) if evaluator.context not in self._contexts[at]), None)
        if copy_of is not None:
            self._contexts[copy_of].add(evaluator.context)
            existing = self.criteria[copy_of]
            existing.setdefault("tags", []).extend(t for t in criterion.get("tags", []) if t not in existing.get("tags", []))
            return
        self._seen.setdefault(key, []).append(len(self.criteria))
        self._contexts[len(self.criteria)] = {evaluator.context}
        if evaluator.source is self.source:  # positions of a separate tests file are not known to the rubric
            self.origins[len(self.criteria)] = path
        self.criteria.append({k: v for k, v in criterion.items() if v is not None})

    def warn_restatements(self, warn: Warnings) -> None:
        if self.not_gating:
            warn.add("AgentV's item-level required only marks its own assertion failed, it does not fail the test "
                     "(only an assertion-level required does); imported as not required: " + ", ".join(self.not_gating))
        if self.restated:
            warn.add("AgentV weighs each assertion as a whole (a whole llm-rubric counts as much as one contains "
                     "check of equal weight); criterion weights restated to keep those proportions: "
                     + ", ".join(f"{criterion['id']}={num(weight)}" for criterion, weight in self.restated))


def _assemble(source: Source, data: dict[str, Any], evaluators: list[Evaluator], threshold: float,
              warn: Warnings) -> Rubric:
    # An item's effective weight is its assertion's weight x its share of that assertion, within
    # the assertions scored together (see _rescaling).
    found = _Criteria(source, evaluators)
    for evaluator in evaluators:
        _apply_gate(evaluator.source, evaluator, threshold, warn)
        found.add_evaluator(evaluator, warn)
    found.warn_restatements(warn)
    if found.negated:
        original = threshold
        threshold = threshold_from_negations(threshold, found.positive, found.negated)
        warn.add(f"negated llm-rubric items imported as penalties; threshold {num(original)} restated as "
                 f"pass_threshold {num(threshold)} on rubric-studio's scale (same verdicts)")
    name = data.get("name") or source.stem("agentv-eval")
    rubric_data: dict[str, Any] = {"name": str(name), "pass_threshold": snap(threshold), "criteria": found.criteria}
    if isinstance(data.get("description"), str) and data["description"].strip():
        rubric_data["description"] = data["description"].strip()
    found_judge = judge(data, warn) if not is_v4(data) else judge_v4(source, data, warn)
    if found_judge:
        rubric_data["judge"] = found_judge
    return build_rubric(rubric_data, source, found.origins)
