"""Write a :class:`Rubric` as clean rubric-studio YAML (what ``import`` produces).

Key order follows docs/reference/files.md#writing-rubrics (name, description, pass_threshold, on_error, judge,
criteria; per criterion id, operator, outcome or check, weight, required,
score_ranges, min_score, tags). Values equal to their defaults are left out,
except ``pass_threshold``, which is always written because it decides every
verdict. A criterion that is only an outcome becomes a plain string when the id
rubric-studio would generate for it (``c1``, ``c2`` ...) is the id it has.
Checks and tag lists are written inline, as people write them by hand.
"""

from __future__ import annotations

from typing import Any

from rubric_studio.core.rubric import Criterion, JudgeSettings, Rubric
from rubric_studio.interop._common import num
from rubric_studio.interop._output import dump_yaml, flow, prepare

_FOLD_AT = 88


def _text(value: str) -> Any:
    """Long one-line prose as a folded ``>-`` block (as people write it); other text as is."""
    from ruamel.yaml.scalarstring import FoldedScalarString

    if (len(value) <= _FOLD_AT or "\n" in value or "  " in value or "\t" in value
            or value != value.strip() or value.startswith(("#", "-", ">", "|", "'", '"'))):
        return prepare(value)
    positions, start = [], 0
    while len(value) - start > _FOLD_AT:
        cut = value.rfind(" ", start, start + _FOLD_AT)
        if cut <= start:
            cut = value.find(" ", start + _FOLD_AT)
        if cut < 0:
            break
        positions.append(cut)
        start = cut + 1
    folded = FoldedScalarString(value)
    folded.fold_pos = positions
    return folded


_JUDGE_ORDER = ("model", "base_url", "temperature", "timeout", "max_retries", "max_retry_wait", "concurrency",
                "max_tokens", "mode", "reuse_batch", "structured_output", "deadline", "reasoning_effort", "prompt", "prompt_path")


def _judge(judge: JudgeSettings) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _JUDGE_ORDER:
        value = getattr(judge, name)
        if value != JudgeSettings.model_fields[name].default:
            out[name] = num(value) if isinstance(value, float) else value
    return out


def _check(criterion: Criterion) -> Any:
    assert criterion.check is not None
    data = criterion.check.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data = {"type": criterion.check.type, **{k: v for k, v in data.items() if k != "type"}}
    node = prepare(data)
    multi_line = any(isinstance(v, str) and "\n" in v for v in data.values())
    nested = isinstance(data.get("schema"), dict) or isinstance(data.get("command"), list)
    if not multi_line and not nested:
        flow(node)
    for key, value in data.items():
        if isinstance(value, list) and not multi_line:
            flow(node[key])
    return node


def _criterion(criterion: Criterion, *, with_id: bool) -> Any:
    out: dict[str, Any] = {}
    if with_id:
        out["id"] = criterion.key
    if criterion.operator:
        out["operator"] = criterion.operator
    node = prepare(out)
    if criterion.outcome is not None:
        node["outcome"] = _text(criterion.outcome)
    if criterion.check is not None:
        node["check"] = _check(criterion)
    if criterion.weight != 1.0:
        node["weight"] = num(criterion.weight)
    if criterion.required:
        node["required"] = True
    if criterion.score_ranges:
        node["score_ranges"] = prepare({int(k): _text(v) for k, v in criterion.score_ranges.items()})
    if criterion.min_score is not None:
        node["min_score"] = num(criterion.min_score)
    if criterion.tags:
        node["tags"] = flow(prepare(list(criterion.tags)))
    return node


def _plain_ok(criteria: list[Criterion]) -> list[bool]:
    """Which criteria can be written as a bare outcome string without changing their id."""
    plain = [c.check is None and c.operator is None and c.weight == 1.0 and not c.required
             and not c.score_ranges and c.min_score is None and not c.tags and "\n" not in (c.outcome or "")
             for c in criteria]
    while True:  # replay Rubric's id generation; drop mismatches until stable
        taken = {c.key for c, p in zip(criteria, plain, strict=True) if not p}
        counter = 0
        mismatch = None
        for index, (criterion, is_plain) in enumerate(zip(criteria, plain, strict=True)):
            if not is_plain:
                continue
            counter += 1
            while f"c{counter}" in taken:
                counter += 1
            taken.add(f"c{counter}")
            if f"c{counter}" != criterion.key:
                mismatch = index
                break
        if mismatch is None:
            return plain
        plain[mismatch] = False


def rubric_to_yaml(rubric: Rubric, header: str = "") -> str:
    """Clean rubric-studio YAML for ``rubric`` (round-trips through ``parse_rubric``)."""
    data = prepare({"name": rubric.name})
    if rubric.description.strip():
        data["description"] = _text(rubric.description.strip())
    data["pass_threshold"] = num(rubric.pass_threshold)
    if rubric.on_error != "error":
        data["on_error"] = rubric.on_error
    if rubric.judge is not None:
        judge = _judge(rubric.judge)
        if judge:
            data["judge"] = prepare(judge)
    plain = _plain_ok(rubric.criteria)
    criteria = prepare([])
    for criterion, is_plain in zip(rubric.criteria, plain, strict=True):
        criteria.append(prepare(criterion.outcome) if is_plain else _criterion(criterion, with_id=True))
    data["criteria"] = criteria
    return dump_yaml(data, header)
