"""HealthBench rubric items: JSONL of ``{"criterion", "points", "tags"}``.

HealthBench (openai/simple-evals ``healthbench_eval.py``) grades each item met or
not met and scores a response as the points of met items over the sum of the
*positive* points — negative points are penalties. That is our rule with
weight = points, so weights and penalties map both ways unchanged (HealthBench
clips only the mean over examples to 0–1; we clip each sample).

Items have no ids, required flags, operators, score bands or checks, and
HealthBench has no pass threshold or judge settings: export warns about each of
those. Import accepts item lines, full example rows (``{"prompt", "rubrics",
...}``; their ``rubrics`` are read) or a JSON array, and names criteria after
the first words of their text.
"""

from __future__ import annotations

from typing import Any

from rubric_studio.core.files import parse_user_json
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Rubric
from rubric_studio.interop._common import (
    RUNTIME_JUDGE_FIELDS,
    IdAllocator,
    Source,
    Warnings,
    build_rubric,
    common_export_warnings,
    num,
    refuse_without_judged,
    slugify,
)
from rubric_studio.interop._formats import ExportResult
from rubric_studio.interop._output import jsonl_line

CONTRADICTION = "Does not contradict the following (not mentioning it at all is fine): "
CORRECTNESS = "Positively states the following: "


def export(rubric: Rubric) -> ExportResult:
    refuse_without_judged(rubric, "a HealthBench file (judged statements)")
    warn = Warnings()
    common_export_warnings(rubric, warn, "HealthBench", threshold=False,
                           judge_fields=("base_url", "temperature", "reasoning_effort", *RUNTIME_JUDGE_FIELDS))
    if rubric.judge is not None and rubric.judge.model is not None:
        warn.add(f"judge {rubric.judge.model}: HealthBench items carry no grader settings; not exported")
    warn.add(f"rubric name {rubric.name!r}"
             + (" and description" if (rubric.description or "").strip() else "")
             + ": HealthBench JSONL holds only items; import names the rubric after the file")
    lines = []
    for criterion in rubric.criteria:
        if criterion.check is not None:
            warn.criterion(criterion.key, f"deterministic {criterion.check.type} check has no HealthBench form; "
                                          "not exported")
            continue
        text = (criterion.outcome or "").strip()
        if criterion.operator == "contradiction":
            text = CONTRADICTION + text
        elif criterion.operator == "correctness":
            text = CORRECTNESS + text
        if criterion.operator:
            warn.criterion(criterion.key, f"operator {criterion.operator} is written into the criterion text "
                                          "(HealthBench items have no operator)")
        if criterion.required:
            warn.criterion(criterion.key, "required has no HealthBench form (items only add or subtract points); "
                                          "a sample missing it is no longer failed outright")
        if criterion.examples:
            warn.criterion(criterion.key, f"{len(criterion.examples)} graded example(s) dropped: HealthBench items "
                                          "are one statement each")
        if criterion.score_ranges:
            warn.criterion(criterion.key, "score_ranges and min_score dropped: HealthBench items are met or not "
                                          "met (met here when the 0-10 score reaches "
                                          f"{num(criterion.effective_min_score * 10)})")
        lines.append(jsonl_line({"criterion": text, "points": num(criterion.weight), "tags": list(criterion.tags)}))
    warn.add("criterion ids are not part of HealthBench items; import names criteria after their text")
    return ExportResult("\n".join(lines) + "\n", warn.items)


# -- import ------------------------------------------------------------------
def _records(source: Source) -> list[tuple[Any, int]]:
    """JSON values with their 1-based line numbers (a JSON array counts as one per element)."""
    if source.text.lstrip().startswith("["):
        return [(value, 1) for value in parse_user_json(source.text, source.file)]
    records = []
    for number, line in enumerate(source.text.split("\n"), 1):
        if line.strip():
            records.append((parse_user_json(line, source.file, line=number), number))
    return records


_SAMPLE_KEYS = ("output", "submission", "messages", "input", "expected", "ground_truth")


def _refuse_sample_record(value: dict[str, Any], file: str, line: int) -> None:
    """A record shaped like a sample (``id``/``output``...), not a rubric item, gets a message that
    says so, rather than a complaint about a missing ``criterion``."""
    if "criterion" in value or not any(key in value for key in _SAMPLE_KEYS):
        return
    keys = ", ".join(sorted(map(str, value))[:6])
    raise RubricError([Problem(file, line, 1, f"expected a HealthBench rubric item {{criterion, points, tags}}; "
                                              f"this record has {keys}: it looks like a samples file - grade it "
                                              "with `rubric-studio grade RUBRIC FILE`")])


def import_(source: Source, warn: Warnings) -> Rubric:
    items: list[tuple[dict[str, Any], int]] = []
    name = None
    examples = 0
    for value, line in _records(source):
        if isinstance(value, dict) and isinstance(value.get("rubrics"), list):
            examples += 1
            if examples > 1:
                continue
            name = value.get("prompt_id")
            items += [(item, line) for item in value["rubrics"]]
        elif isinstance(value, dict):
            _refuse_sample_record(value, source.file, line)
            items.append((value, line))
        else:
            raise RubricError([Problem(source.file, line, 1, "expected a JSON object {criterion, points, tags}")])
    if examples > 1:
        warn.add(f"{examples} HealthBench examples found; each has its own rubric - imported the first one's")
    if not items:
        raise RubricError([Problem(source.file, 1, 1, "no HealthBench rubric items found")])
    ids = IdAllocator()
    criteria = []
    origins: dict[int, tuple[Any, ...]] = {}
    for item, line in items:
        text, points = item.get("criterion"), item.get("points")
        if not isinstance(text, str) or not text.strip():
            raise RubricError([Problem(source.file, line, 1, "rubric item: 'criterion' must be non-empty text")])
        if not isinstance(points, int | float) or isinstance(points, bool):
            raise RubricError([Problem(source.file, line, 1, f"rubric item: 'points' must be a number, got {points!r}")])
        if points == 0:
            warn.add(f"{source.file}:{line}: item with 0 points skipped (it cannot change a score)")
            continue
        criterion: dict[str, Any] = {}
        outcome = text.strip()
        for prefix, operator in ((CONTRADICTION, "contradiction"), (CORRECTNESS, "correctness")):
            if outcome.startswith(prefix):
                outcome, criterion["operator"] = outcome[len(prefix):], operator
        criterion["id"] = ids.take(slugify(outcome, max_words=5, fallback="item"), "item")
        criterion["outcome"] = outcome
        criterion["weight"] = float(points)
        tags = item.get("tags")
        if isinstance(tags, list) and tags:
            criterion["tags"] = [str(t) for t in tags]
        origins[len(criteria)] = ()
        criteria.append(criterion)
    if not criteria:
        raise RubricError([Problem(source.file, 1, 1, "no HealthBench rubric items with non-zero points")])
    if not any(c["weight"] > 0 for c in criteria):
        raise RubricError([Problem(source.file, 1, 1, "every item has negative points; HealthBench needs at least "
                                                      "one positive item to score")])
    if name is None:
        name = source.stem("healthbench-rubric")
    return build_rubric({"name": str(name or "healthbench-rubric"), "criteria": criteria}, source, origins)
