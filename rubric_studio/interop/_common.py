"""Helpers shared by the format modules: reading foreign files with positions,
collecting warnings, score bands, ids and threshold algebra (writing YAML and JSON is
:mod:`._output`).

Nothing here knows a particular eval tool; each format module keeps its own
mapping and explains it in its docstring.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rubric_studio.core.files import parse_user_json
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import (
    DEFAULT_TIE_RULE,
    ID_PATTERN,
    Criterion,
    JudgeSettings,
    PanelAggregate,
    Rubric,
)
from rubric_studio.core.trust import NO_TRUST, Trust
from rubric_studio.core.yamlpos import Positions, load_with_positions

_ID_RE = re.compile(ID_PATTERN)

#: Score bands used when a foreign judge scores 0.0–1.0 without describing bands.
GENERIC_BANDS: dict[int, str] = {
    0: "Does not meet the criterion",
    4: "Partially meets the criterion",
    7: "Mostly meets the criterion",
    10: "Fully meets the criterion",
}

#: Judge settings that only tune how calls are made (not what is judged).
RUNTIME_JUDGE_FIELDS = ("timeout", "max_retries", "max_retry_wait", "concurrency", "max_tokens", "mode", "reuse_batch",
                        "structured_output", "deadline")


class ExportRefused(Exception):
    """The target cannot hold this rubric at all (e.g. a judge-only format and a rubric of checks only):
    nothing is written, and the message says why."""


def refuse_without_judged(rubric: Rubric, target: str, hint: str = "") -> None:
    """Raise :class:`ExportRefused` when ``target`` (a phrase naming what the export writes) holds judge
    criteria only and ``rubric`` has none that can score: no judged criterion (the file would grade
    nothing), or only judged penalties (nothing to earn: no rubric, here or there, is penalties alone).
    ``hint`` says where the checks could go instead."""
    if any(c.is_judged and c.weight > 0 for c in rubric.criteria):
        return
    checks = ", ".join(c.key for c in rubric.criteria if c.check is not None) or "none"
    if any(c.is_judged for c in rubric.criteria):
        penalties = ", ".join(c.key for c in rubric.criteria if c.is_judged)
        raise ExportRefused(f"rubric {rubric.name!r} has no judged criterion with a positive weight: {target} holds "
                            f"judge criteria only, deterministic checks ({checks}) have no form there{hint}, and the "
                            f"judged penalties ({penalties}) alone cannot score; nothing is written")
    raise ExportRefused(f"rubric {rubric.name!r} has no judged criteria: {target} holds judge criteria only, and "
                        f"deterministic checks ({checks}) have no form there{hint}; the file would grade nothing, so "
                        "nothing is written")


def refuse_unscored(rubric: Rubric, target: str, warn: Warnings, penalties: Iterable[str] = ()) -> None:
    """Raise :class:`ExportRefused`: no criterion with a positive weight has a ``target`` form (the
    warnings say why, each naming its criterion), so the file would grade nothing - or only the
    ``penalties``, which cannot score alone."""
    left = ", ".join(penalties)
    what = f"only penalties ({left}) would be left, and penalties alone cannot score" if left \
        else "the file would grade nothing"
    raise ExportRefused(f"no criterion of rubric {rubric.name!r} with a positive weight has a {target} form ("
                        + "; ".join(warn.items) + f"): {what}, so nothing is written")


# -- numbers -----------------------------------------------------------------
def num(value: float) -> int | float:
    """``2.0`` → ``2``; other floats rounded to 10 places (drops float noise, keeps w/n exact enough)."""
    if isinstance(value, bool):
        return value
    value = round(float(value), 10)
    return int(value) if value.is_integer() else value


def snap(value: float) -> float:
    """Undo float noise from restated thresholds and split weights, and the boundary nudge
    (0.7999989 or 0.799998 → 0.8)."""
    return round(value, 5) if abs(value - round(value, 5)) < 5e-6 else round(value, 6)


def floor6(value: float) -> float:
    """Round down to 6 decimals: an exported threshold never fails a boundary sample."""
    return math.floor(value * 1_000_000 + 1e-6) / 1_000_000


#: How far below ours an exported threshold is written. promptfoo and AgentV compare a plain
#: ``score >= threshold``, and a weighted mean that is exactly 0.8 here comes out as
#: 0.7999999999999999 in JavaScript; 1e-6 is far above that noise and far below the gap
#: between two scores real weights can produce. Import rounds it back (:func:`snap`).
BOUNDARY_EPSILON = 1e-6
BOUNDARY_NOTE = ("thresholds are written 0.000001 below rubric-studio's (e.g. 0.8 as 0.799999) so that a "
                 "score of exactly the threshold, which JavaScript can compute as 0.7999999999999999, passes "
                 "there as it does here")


def read_threshold(value: float) -> float:
    """A threshold read from a foreign file, with :data:`BOUNDARY_EPSILON` given back before any
    restatement; the caller :func:`snap`s the result, which also makes this harmless on values
    nobody nudged (0.8 → 0.800001 → 0.8)."""
    return value + BOUNDARY_EPSILON if 0 < value < 1 else value


def boundary_safe(threshold: float) -> float:
    """``threshold`` for a tool that compares without tolerance (see :data:`BOUNDARY_EPSILON`)."""
    if threshold <= 0:
        return threshold
    return max(0.0, round(floor6(threshold) - BOUNDARY_EPSILON, 6))


# -- warnings -----------------------------------------------------------------
@dataclass
class Warnings:
    """Ordered, de-duplicated warning messages, and how many foreign items were skipped for each
    reason (a refusal when nothing is left must say why, and the warnings do not reach the user then)."""

    items: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    def add(self, message: str) -> None:
        if message not in self.items:
            self.items.append(message)

    def skip(self, reason: str, message: str) -> None:
        """Warn ``message`` about one skipped item and count it under the short ``reason``."""
        self.skipped[reason] += 1
        self.add(message)

    def skip_summary(self) -> str:
        """``reason: n; reason: n`` over the skipped items, most frequent first ("" when none)."""
        return "; ".join(f"{reason}: {n}" for reason, n in self.skipped.most_common())

    def criterion(self, criterion_id: str | None, message: str) -> None:
        self.add(f"criterion {criterion_id!r}: {message}" if criterion_id else message)


def common_export_warnings(rubric: Rubric, warn: Warnings, target: str, *, threshold: bool = True,
                           judge_fields: Iterable[str] = (), panel: bool = False) -> None:
    """Warnings every export shares: on_error, custom judge prompts, judge knobs the target lacks, and
    a judge panel the target does not carry (``panel``: the export writes the panel itself)."""
    if rubric.on_error == "ignore":
        warn.add(f"on_error: ignore has no {target} equivalent; errored criteria will count as failures there")
    if not threshold and abs(rubric.pass_threshold - 0.8) > 1e-9:
        warn.add(f"pass_threshold {num(rubric.pass_threshold)} is not expressible in {target}")
    judge = rubric.judge
    if judge is None:
        return
    if judge.panel and not panel:
        warn.add(panel_warning(judge, target))
    if judge.prompt is not None or judge.prompt_path is not None:
        warn.add(f"the custom judge prompt (judge.prompt/prompt_path) is not exported to {target}; "
                 f"{target}'s own judge prompt applies")
    supported = set(judge_fields)
    lost = [name for name in ("base_url", "temperature", "reasoning_effort", *RUNTIME_JUDGE_FIELDS)
            if name in judge.model_fields_set and name not in supported
            and getattr(judge, name) != JudgeSettings.model_fields[name].default]
    if lost:
        warn.add(f"judge settings not expressible in {target}: "
                 + ", ".join(f"{name}={getattr(judge, name)!r}" for name in lost))


def panel_warning(judge: JudgeSettings, target: str) -> str:
    """The line every export says about a judge panel it does not carry."""
    names = "+".join(member.model or "?" for member in judge.panel or [])
    rules = judge.aggregate or PanelAggregate()
    pooled = f"checklist {rules.checklist}, analytic {rules.analytic}"
    if judge.ties != DEFAULT_TIE_RULE and rules.checklist in ("majority", "mean"):
        pooled += f", ties {judge.ties}"
    return (f"judge.panel {names} ({pooled}) is not exported to {target}: each criterion there is graded by one "
            f"judge; pick one of the panel's models in {target}")


# -- ids and names --------------------------------------------------------------
def slugify(text: str, *, max_words: int = 0, fallback: str = "rubric") -> str:
    """A lowercase slug (``a-z0-9`` and ``-``); the first ``max_words`` words when given."""
    words = re.findall(r"[A-Za-z0-9]+", text.lower())
    if max_words:
        words = words[:max_words]
    return "-".join(words) or fallback


def clean_id(raw: Any) -> str | None:
    """A foreign id made valid for rubric-studio, or None when nothing usable is left."""
    if raw is None:
        return None
    text = str(raw).strip()
    if _ID_RE.match(text):
        return text
    cleaned = re.sub(r"[^A-Za-z0-9_.:-]+", "-", text).strip("-_.:")
    return cleaned if cleaned and _ID_RE.match(cleaned) else None


class IdAllocator:
    """Hands out unique criterion ids, suffixing ``-2``, ``-3`` ... on collisions."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def take(self, wanted: str | None, fallback: str) -> str:
        base = clean_id(wanted) or fallback
        candidate, n = base, 1
        while candidate in self.taken:
            n += 1
            candidate = f"{base}-{n}"
        self.taken.add(candidate)
        return candidate


# -- score bands ------------------------------------------------------------------
def bands_to_ranges(score_ranges: dict[int, str]) -> list[tuple[int, int, str]]:
    """``{0: a, 4: b, 10: c}`` → ``[(0, 3, a), (4, 9, b), (10, 10, c)]`` (covers 0–10)."""
    keys = sorted(score_ranges)
    out = []
    for index, low in enumerate(keys):
        high = keys[index + 1] - 1 if index + 1 < len(keys) else 10
        out.append((low, high, score_ranges[low]))
    return out


def ranges_to_bands(ranges: list[tuple[int, int, str]]) -> dict[int, str]:
    """Inverse of :func:`bands_to_ranges`; raises ValueError unless they cover 0–10 exactly."""
    ordered = sorted(ranges)
    expected = 0
    bands: dict[int, str] = {}
    for low, high, text in ordered:
        if low != expected or high < low:
            raise ValueError(f"score ranges must cover 0-10 without gaps or overlaps (problem at {low}-{high})")
        bands[low] = text
        expected = high + 1
    if expected != 11:
        raise ValueError(f"score ranges must reach 10 (they end at {expected - 1})")
    return bands


def band_label(low: int, high: int, scale: float = 1.0) -> str:
    """``0-3`` on the 0–10 scale, ``0.0-0.3`` when ``scale`` is 0.1."""
    def fmt(v: int) -> str:
        return str(v) if scale == 1.0 else f"{v * scale:.1f}"

    return fmt(low) if low == high else f"{fmt(low)}-{fmt(high)}"


# -- thresholds with penalties ---------------------------------------------------------
def positive_weight(rubric: Rubric) -> float:
    return sum(c.weight for c in rubric.criteria if c.weight > 0)


def penalty_weight(rubric: Rubric) -> float:
    return sum(-c.weight for c in rubric.criteria if c.weight < 0)


def threshold_with_negations(threshold: float, positive: float, negated: float) -> float:
    """Our threshold restated for a plain weighted mean where each penalty became a
    "does NOT" item of weight |w|. With P positive and W penalty weight, such a mean
    is (P·S + W) / (P + W) for our score S, so S ≥ t exactly when it is ≥ this value."""
    if negated <= 0 or threshold <= 0:
        return threshold
    return floor6((threshold * positive + negated) / (positive + negated))


def threshold_from_negations(threshold: float, positive: float, negated: float) -> float:
    """Inverse of :func:`threshold_with_negations` (clipped to 0–1). The restated threshold was
    rounded down to 6 places and nudged by :data:`BOUNDARY_EPSILON`; this inverse multiplies that
    error by (P + W) / P, so it is undone by :func:`tidy` within that much."""
    if negated <= 0 or positive <= 0 or threshold <= 0:
        return threshold
    value = (threshold * (positive + negated) - negated) / positive
    return min(1.0, max(0.0, tidy(value, 2 * BOUNDARY_EPSILON * (positive + negated) / positive)))


def tidy(value: float, tolerance: float) -> float:
    """``value`` with the fewest decimals (up to 6) that stay within ``tolerance`` of it: a threshold
    computed back from a restated one (0.499994 → 0.5 when the restatement can be off by 1.3e-5)."""
    for digits in range(7):
        rounded = round(value, digits)
        if abs(rounded - value) <= tolerance + 1e-12:
            return rounded
    return round(value, 6)


# -- foreign files ------------------------------------------------------------------
@dataclass
class Source:
    """A foreign file's text, parsed data and positions, for positioned errors."""

    text: str
    file: str
    data: Any = None
    positions: Positions | None = None
    base_dir: Path | None = None
    #: What the user trusts of this file: a file it names outside its folder is read only when covered.
    trust: Trust = NO_TRUST

    def error(self, path: tuple[Any, ...], message: str) -> RubricError:
        if self.positions is None:
            return RubricError([Problem(self.file, None, None, message)])
        return RubricError([self.positions.problem(path, message)])

    def stem(self, fallback: str) -> str:
        """The file's name without folder and suffixes (``fallback`` for text without a file)."""
        if self.file.startswith("<"):
            return fallback
        return Path(self.file).name.split(".")[0] or fallback

    def at(self, path: tuple[Any, ...]) -> str:
        """``file:line:col`` of ``path`` (for warnings)."""
        if self.positions is None:
            return self.file
        line, column = self.positions.locate(path)
        return f"{self.file}:{line}:{column}" if line else self.file

    @classmethod
    def parse_yaml(cls, text: str, file: str, base_dir: Path | None = None, trust: Trust = NO_TRUST) -> Source:
        data, positions, problems = load_with_positions(text, file, core_schema=True)
        if problems:
            raise RubricError(problems)
        return cls(text, file, data, positions, base_dir, trust)


def expect_mapping(source: Source, value: Any, path: tuple[Any, ...], what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        kind = "nothing" if value is None else type(value).__name__
        raise source.error(path, f"{what}: expected a mapping, got {kind}")
    return value


def expect_list(source: Source, value: Any, path: tuple[Any, ...], what: str) -> list[Any]:
    if not isinstance(value, list):
        kind = "nothing" if value is None else type(value).__name__
        raise source.error(path, f"{what}: expected a list, got {kind}")
    return value


# -- criterion examples in rubric text -------------------------------------------
#: Leads the examples appended to a criterion's text where a target has no field for them.
EXAMPLES_HEAD = "Graded examples (apply the criterion the same way):"


def outcome_with_examples(criterion: Criterion) -> str:
    """The outcome, followed by its few-shot examples as one JSON object a line, so a judge in
    the target tool reads them and :func:`split_examples` gives them back on import."""
    text = (criterion.outcome or "").strip()
    if not criterion.examples:
        return text
    lines = [json.dumps(e.model_dump(mode="json", exclude_none=True), ensure_ascii=False) for e in criterion.examples]
    return text + "\n\n" + EXAMPLES_HEAD + "\n" + "\n".join(f"- {line}" for line in lines)


def split_examples(text: str) -> tuple[str, list[dict[str, Any]]]:
    """(outcome, examples) of text written by :func:`outcome_with_examples`; text without a
    well-formed examples block comes back whole, with no examples."""
    head = "\n" + EXAMPLES_HEAD + "\n"
    at = text.rfind(head)
    if at < 0:
        return text, []
    examples = []
    for line in text[at + len(head):].strip().split("\n"):
        line = line.strip()
        try:  # bounded: a line nested 5,000 deep or with a 5,000-digit number is text, not an example
            value = parse_user_json(line[2:], "<examples>") if line.startswith("- {") else None
        except RubricError:
            value = None
        if not isinstance(value, dict) or not isinstance(value.get("sample"), str):
            return text, []
        examples.append(value)
    return text[:at].rstrip(), examples


def _restore_examples(data: dict[str, Any]) -> None:
    for criterion in data.get("criteria") or []:
        if isinstance(criterion, dict) and isinstance(criterion.get("outcome"), str) and "examples" not in criterion:
            outcome, examples = split_examples(criterion["outcome"])
            if examples:
                criterion["outcome"], criterion["examples"] = outcome, examples


def build_rubric(data: dict[str, Any], source: Source, origins: dict[int, tuple[Any, ...]] | None = None) -> Rubric:
    """Validate imported data as a Rubric (criterion examples written into outcome text are
    restored first); problems point at the foreign node they came from."""
    _restore_examples(data)
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            loc = tuple(error["loc"])
            path: tuple[Any, ...] = ()
            if len(loc) >= 2 and loc[0] == "criteria" and isinstance(loc[1], int) and origins:
                path = origins.get(loc[1], ())
            message = error["msg"].removeprefix("Value error, ")
            where = ".".join(str(p) for p in loc) or "rubric"
            problems.append(source.error(path, f"cannot import: {where}: {message}").problems[0])
        raise RubricError(problems) from None


def split_judge_model(model: str | None) -> tuple[str | None, str | None]:
    """``"openai:gpt-4o-mini"`` → ``("openai", "gpt-4o-mini")``."""
    if not model:
        return None, None
    provider, _, name = model.partition(":")
    return provider, name
