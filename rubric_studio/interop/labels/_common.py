"""What the label formats share: rows of one annotator's label of one sample, turned into label changes."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.files import parse_user_json
from rubric_studio.core.labels import UNNAMED, Label, LabelChange, check_name
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Criterion, Rubric

#: The columns before the criteria, in order.
FIXED = ("id", "annotator", "verdict", "score", "note")
#: What a spreadsheet may run as a formula at the start of a cell (after any ``'`` already there).
_FORMULA = re.compile(r"^'*[=+\-@\t\r]")
#: At most this many unknown sample ids get a "did you mean" (each is a search of every id).
_HINTED = 20
#: Reading stops after this many problems (a file of wrong ids would otherwise list every row).
MAX_PROBLEMS = 100


@dataclass
class ImportedLabels:
    """Label changes read from a file: (sample id, change, annotator), in order, and what was skipped.

    ``remarks`` are said after the summary line (how the file was read, what was left out)."""

    changes: list[tuple[str, LabelChange, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    labels: set[tuple[str, str]] = field(default_factory=set)  # (sample id, annotator) pairs read
    remarks: list[str] = field(default_factory=list)

    def add(self, sample_id: str, annotator: str, changes: list[LabelChange]) -> None:
        self.labels.add((sample_id, annotator))
        self.changes.extend((sample_id, change, annotator) for change in changes)

    @property
    def annotators(self) -> list[str]:
        return sorted({name for _, name in self.labels})


@dataclass
class SampleIds:
    """The ids of the samples labels must belong to, and where they were read (for the message)."""

    source: str
    ids: frozenset[str]
    skipped: int = 0  # records of the samples file that could not be read (their ids are unknown)
    _hinted: int = field(default=0, init=False, repr=False)  # unknown ids searched for a "did you mean"

    def unknown(self, sample_id: str) -> str | None:
        """Why a label of ``sample_id`` cannot be imported (it is in none of the samples), or None;
        only the first :data:`_HINTED` unknown ids get a "did you mean" (each is a search of every id)."""
        if sample_id in self.ids:
            return None
        self._hinted += 1
        close = difflib.get_close_matches(sample_id, self.ids, n=1) if self._hinted <= _HINTED else []
        hint = f"; did you mean {close[0]!r}?" if close else ""
        unread = f", {self.skipped} records of it unreadable" if self.skipped else ""
        return (f"sample {sample_id!r} is in no samples file of this rubric (not among the {len(self.ids)} samples "
                f"of {self.source}{unread}{hint}); fix the id, or name its samples with --samples FILE")


def enough(problems: list[Problem], path: str) -> bool:
    """True once ``problems`` holds :data:`MAX_PROBLEMS`; then it ends with a line saying reading stopped."""
    if len(problems) < MAX_PROBLEMS:
        return False
    problems.append(Problem(path, None, None, f"reading stopped after {MAX_PROBLEMS} problems; fix these first"))
    return True


def read_json(text: str, path: str, line: int = 1) -> Any:
    """JSON from a labels, export or users file, bounded in depth and number size
    (:func:`rubric_studio.core.files.parse_user_json`); RubricError with line and column otherwise."""
    try:
        return parse_user_json(text, path, line=line)
    except RubricError as exc:
        raise RubricError([Problem(p.file, p.line, p.column, p.message.replace("invalid JSON:", "not valid JSON:", 1))
                           for p in exc.problems]) from None


def json_kind(value: Any) -> str:
    """What a JSON value is, in a message: ``an object``, ``a list``, ``a number``, ``text``, ``true`` ..."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "text" if isinstance(value, str) else "a number"


def described(value: Any) -> str:
    """A value as a message shows it: text quoted (cut at 60 characters), a number as written, else its kind."""
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return json_kind(value)


def text_or_none(value: Any) -> str | None:
    """A free-text cell (a note): None when empty or only spaces, else exactly as written;
    ValueError when it is not text (an object, a list, a number or true/false is never taken as a note)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected text or nothing, got {json_kind(value)}")
    return value


def annotator_name(value: str) -> str:
    """An annotator named in a file (``(unnamed)`` is the unnamed annotator); ValueError when it cannot be one."""
    if value.strip() == UNNAMED:
        return UNNAMED
    try:
        return check_name(value)
    except ValueError:  # said again with the name cut short: a file may hold anything there
        raise ValueError(f"not an annotator name: {described(value)} (use letters, digits, '.', '-', '_' "
                         "or spaces)") from None


def cell_changes(criterion: Criterion, value: Any) -> list[LabelChange]:
    """The changes one criterion cell makes: ``met`` / ``unmet`` / None, or (analytic) a 0-10 score;
    ValueError says what was expected."""
    key, analytic = criterion.key, criterion.kind == "analytic"
    if isinstance(value, bool):  # true does not say met or unmet: a penalty criterion is met when its fault is there
        raise ValueError(f"expected {_expected(analytic)}, got {json_kind(value)}; write \"met\" or \"unmet\" "
                         "(true/false does not say which: a penalty criterion is met when its fault is present)")
    if isinstance(value, str) and value.strip().lower() in ("met", "unmet", ""):
        state = value.strip().lower() or None
        return [LabelChange("cell", state, key)] + ([LabelChange("cell_score", None, key)] if analytic else [])
    if value is None:
        return [LabelChange("cell", None, key)] + ([LabelChange("cell_score", None, key)] if analytic else [])
    number = number_in(value) if analytic else None
    if number is None:
        raise ValueError(f"expected {_expected(analytic)}, got {described(value)}")
    state = "met" if number / 10 >= criterion.effective_min_score else "unmet"
    return [LabelChange("cell", state, key), LabelChange("cell_score", number, key)]


def _expected(analytic: bool) -> str:
    return "met, unmet, a score from 0 to 10 or nothing" if analytic else "met, unmet or nothing"


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
    """Free text as a spreadsheet cell: text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
    return — after any number of ``'`` — gets one more ``'`` in front, so a spreadsheet shows it rather
    than running it as a formula. :func:`restore` takes exactly that quote off again, so every text
    comes back as it was (``'=x`` is written ``''=x``)."""
    return "'" + text if _FORMULA.match(text) else text


def restore(text: str) -> str:
    """The text :func:`defuse` was given: one ``'`` off the front of ``'`` + a defused start, else as it is."""
    return text[1:] if text.startswith("'") and _FORMULA.match(text) else text


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
