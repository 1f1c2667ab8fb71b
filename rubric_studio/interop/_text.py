"""A rubric written as judge instructions (Docent ``rubric_text``, Letta prompts), and back.

Targets whose judge reads one prompt (Docent, Letta evals) get the criteria as
numbered lines with their attributes in parentheses, score bands indented under
them, and the scoring rule spelled out. The layout is regular so that
:func:`parse_criteria_text` can read a rubric back from text this module wrote::

    1. [tone] (weight 1; scored 0-10; met when score/10 >= 0.7) Warm, professional tone
       - 0-3: Rude or dismissive
       - 10: Warm and personal

Deterministic checks are not written (a judge cannot run them); callers warn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.interop._common import band_label, bands_to_ranges, num, outcome_with_examples

CRITERIA_HEADER = "Criteria:"
_CRITERION = re.compile(r"^\s*\d+\.\s+\[(?P<id>[^\]\s]+)\]\s+\((?P<attrs>[^()]*)\)\s?(?P<outcome>.*)$")
_BAND = re.compile(r"^\s+- (?P<low>\d+)(?:-(?P<high>\d+))?: (?P<text>.*)$")
_THRESHOLD = re.compile(r"PASS when total >= (?P<t>[0-9.]+)")
_NAME = re.compile(r"^Rubric: (?P<name>.+)$", re.M)


def attributes(criterion: Criterion) -> str:
    parts = [f"weight {num(criterion.weight)}"]
    if criterion.required:
        parts.append("required")
    if criterion.weight < 0:
        parts.append("penalty")
    if criterion.operator:
        parts.append(f"operator: {criterion.operator}")
    if criterion.score_ranges:
        parts.append("scored 0-10")
    if criterion.min_score is not None:
        parts.append(f"met when score/10 >= {num(criterion.min_score)}")
    elif criterion.score_ranges:
        parts.append(f"met when score/10 >= {num(criterion.effective_min_score)} by default")
    if criterion.tags:
        parts.append("tags: " + ", ".join(criterion.tags))
    return "; ".join(parts)


def render_criteria_text(rubric: Rubric, criteria: list[Criterion], *, heading: bool = True) -> str:
    """The rubric's judge criteria as instructions (checks are the caller's business)."""
    lines: list[str] = []
    if heading:
        lines.append(f"Rubric: {rubric.name}")
        if rubric.description.strip():
            lines.append(rubric.description.strip())
        lines.append("")
    lines.append("Judge the response against each criterion below, separately.")
    lines.append("")
    lines.append(CRITERIA_HEADER)
    for index, criterion in enumerate(criteria, 1):
        outcome_lines = outcome_with_examples(criterion).split("\n")
        lines.append(f"{index}. [{criterion.key}] ({attributes(criterion)}) {outcome_lines[0]}")
        lines.extend(f"   {line}" if line.strip() else "" for line in outcome_lines[1:])
        for low, high, text in bands_to_ranges(criterion.score_ranges or {}):
            lines.append(f"   - {band_label(low, high)}: {' '.join(text.split())}")
    lines.append("")
    lines.append("How to read the criteria:")
    lines.append("- A criterion is either met or not met. A \"scored 0-10\" criterion gets an integer score "
                 "from 0 to 10 chosen with its bands, and is met when score/10 reaches the given value.")
    if any(c.operator == "contradiction" for c in criteria):
        lines.append("- operator: contradiction - met unless the response contradicts the statement; "
                     "a response that does not mention it at all is met.")
    if any(c.operator == "correctness" for c in criteria):
        lines.append("- operator: correctness - met only when the response positively states it.")
    if any(c.weight < 0 for c in criteria):
        lines.append("- penalty - met means the response DOES the described (bad) thing; "
                     "its negative weight is subtracted.")
    if any(c.required for c in criteria):
        lines.append("- required - if it is not met, the response fails whatever its total.")
    lines.append("")
    lines.append("Scoring:")
    lines.append("- Each criterion scores 1 if met and 0 if not; a scored criterion scores its score/10.")
    positive = sum(c.weight for c in criteria if c.weight > 0)
    lines.append(f"- total = sum(weight x score) / {num(positive)} "
                 "(the sum of the positive weights), clipped to 0..1.")
    lines.append(f"- PASS when total >= {num(rubric.pass_threshold)}"
                 + (" and every required criterion is met" if any(c.required for c in criteria) else "")
                 + "; otherwise FAIL.")
    return "\n".join(lines)


@dataclass
class ParsedText:
    """What :func:`parse_criteria_text` found."""

    criteria: list[dict[str, Any]] = field(default_factory=list)
    name: str | None = None
    description: str | None = None
    pass_threshold: float | None = None


def _parse_attrs(text: str, criterion: dict[str, Any]) -> bool:
    """Fill ``criterion`` from an attribute list; True when it says "scored 0-10"."""
    analytic = False
    for part in (p.strip() for p in text.split(";")):
        if part.startswith("weight "):
            criterion["weight"] = float(part.split()[1])
        elif part == "required":
            criterion["required"] = True
        elif part.startswith("operator:"):
            criterion["operator"] = part.split(":", 1)[1].strip()
        elif part == "scored 0-10":
            analytic = True
        elif part.startswith("met when score/10 >=") and not part.endswith("by default"):
            criterion["min_score"] = float(part.rsplit(">=", 1)[1])
        elif part.startswith("tags:"):
            criterion["tags"] = [t.strip() for t in part.split(":", 1)[1].split(",") if t.strip()]
    return analytic


def parse_criteria_text(text: str) -> ParsedText | None:
    """Read back text written by :func:`render_criteria_text`; None if it is not such text."""
    if CRITERIA_HEADER not in text:
        return None
    result = ParsedText()
    name = _NAME.search(text)
    if name:
        result.name = name.group("name").strip()
        head = text[name.end():].split("Judge the response against each criterion", 1)[0].strip()
        result.description = head or None
    threshold = _THRESHOLD.search(text)
    if threshold:
        result.pass_threshold = float(threshold.group("t").rstrip("."))
    body = text.split(CRITERIA_HEADER, 1)[1]
    current: dict[str, Any] | None = None
    outcome: list[str] = []
    bands: dict[int, str] = {}
    analytic = False

    def finish() -> None:
        if current is None:
            return
        current["outcome"] = "\n".join(outcome).strip()
        if analytic and bands:
            current["score_ranges"] = dict(bands)
        result.criteria.append(current)

    for line in body.split("\n"):
        match = _CRITERION.match(line)
        if match:
            finish()
            current = {"id": match.group("id")}
            analytic = _parse_attrs(match.group("attrs"), current)
            outcome, bands = [match.group("outcome")], {}
            continue
        if current is None:
            continue
        band = _BAND.match(line)
        if band and analytic:
            bands[int(band.group("low"))] = band.group("text").strip()
        elif line.startswith("   ") and not bands:
            outcome.append(line[3:])
        elif line == "" and not bands:
            outcome.append("")
        else:
            finish()
            current = None
    finish()
    return result if result.criteria else None
