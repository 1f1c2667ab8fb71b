"""What the label formats share: rows of one annotator's label of one sample, turned into label changes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.labels import UNNAMED, Label, LabelChange, check_name
from rubric_studio.core.rubric import Criterion, Rubric

#: The columns before the criteria, in order.
FIXED = ("id", "annotator", "verdict", "score", "note")
_FORMULA = re.compile(r"^'*[=+\-@]")


@dataclass
class ImportedLabels:
    """Label changes read from a file: (sample id, change, annotator), in order, and what was skipped."""

    changes: list[tuple[str, LabelChange, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    labels: set[tuple[str, str]] = field(default_factory=set)  # (sample id, annotator) pairs read

    def add(self, sample_id: str, annotator: str, changes: list[LabelChange]) -> None:
        self.labels.add((sample_id, annotator))
        self.changes.extend((sample_id, change, annotator) for change in changes)

    @property
    def annotators(self) -> list[str]:
        return sorted({name for _, name in self.labels})


def annotator_name(value: str) -> str:
    """An annotator named in a file (``(unnamed)`` is the unnamed annotator); ValueError when it cannot be one."""
    return UNNAMED if value.strip() == UNNAMED else check_name(value)


def cell_changes(criterion: Criterion, value: Any) -> list[LabelChange]:
    """The changes one criterion cell makes: ``met`` / ``unmet`` / None, or (analytic) a 0-10 score;
    ValueError says what was expected."""
    key, analytic = criterion.key, criterion.kind == "analytic"
    if isinstance(value, bool):
        value = "met" if value else "unmet"
    if isinstance(value, str) and value.strip().lower() in ("met", "unmet", ""):
        state = value.strip().lower() or None
        return [LabelChange("cell", state, key)] + ([LabelChange("cell_score", None, key)] if analytic else [])
    if value is None:
        return [LabelChange("cell", None, key)] + ([LabelChange("cell_score", None, key)] if analytic else [])
    number = number_in(value) if analytic else None
    if number is None:
        expected = "met, unmet, a score from 0 to 10 or nothing" if analytic else "met, unmet or nothing"
        raise ValueError(f"expected {expected}, got {value!r}")
    state = "met" if number / 10 >= criterion.effective_min_score else "unmet"
    return [LabelChange("cell", state, key), LabelChange("cell_score", number, key)]


def number_in(value: Any) -> float | None:
    """A number from 0 to 10 in ``value`` (a number or its text); None when it holds none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or not 0 <= value <= 10:
        return None
    return float(value)


def cell_value(criterion: Criterion, label: Label) -> str | float | None:
    """What a label holds for one criterion, as the export writes it (an analytic cell's score when it has one)."""
    if criterion.kind == "analytic" and criterion.key in label.criterion_scores:
        return plain_number(label.criterion_scores[criterion.key])
    return label.criteria.get(criterion.key)


def plain_number(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else float(value)


def defuse(text: str) -> str:
    """Free text as a spreadsheet cell: a leading ``=``, ``+``, ``-`` or ``@`` is quoted with ``'`` so a
    spreadsheet shows it rather than running it as a formula (:func:`restore` takes the quote off)."""
    return "'" + text if _FORMULA.match(text) else text


def restore(text: str) -> str:
    return text[1:] if _FORMULA.match(text) and text.startswith("'") else text


def row_changes(rubric: Rubric, fields: dict[str, Any]) -> list[LabelChange]:
    """The changes of one row: every field it has a column for (an empty one clears that field)."""
    changes: list[LabelChange] = []
    if "verdict" in fields:
        changes.append(LabelChange("verdict", fields["verdict"]))
    if "score" in fields:
        changes.append(LabelChange("score", fields["score"]))
    if "note" in fields:
        changes.append(LabelChange("note", fields["note"]))
    for criterion in rubric.criteria:
        if criterion.key in fields:
            changes.extend(fields[criterion.key])
    return changes
