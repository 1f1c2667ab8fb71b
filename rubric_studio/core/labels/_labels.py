"""Human labels: the sidecar ``<rubric>.labels.yaml`` and ``label`` fields of samples.

Format (BRIEF §2)::

    sample-id:
      verdict: pass            # pass | fail
      score: 8                 # optional, 0-10
      criteria: {tone: met, refund-policy: unmet}
      note: free text

A label may also be given inline in a samples file as ``label: pass`` or the same
mapping. Problems (unknown verdicts, bad criteria states) are reported with
positions; the other labels still load.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rubric_studio.core.atomic import remove_stale_temps
from rubric_studio.core.files import read_user_file
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.yamlpos import load_with_positions

VERDICTS = ("pass", "fail")
CELL_LABELS = ("met", "unmet")
LABEL_KEYS = ("verdict", "score", "criteria", "note")


@dataclass
class Label:
    """A person's judgement of one sample."""

    verdict: str | None = None
    score: float | None = None
    criteria: dict[str, str] = field(default_factory=dict)
    note: str | None = None

    @property
    def is_empty(self) -> bool:
        return self.verdict is None and self.score is None and not self.criteria and not self.note

    def to_yaml_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.verdict is not None:
            data["verdict"] = self.verdict
        if self.score is not None:
            data["score"] = int(self.score) if float(self.score).is_integer() else self.score
        if self.criteria:
            data["criteria"] = dict(self.criteria)
        if self.note:
            data["note"] = self.note
        return data


#: What a :class:`LabelChange` can set.
CHANGE_FIELDS = ("verdict", "score", "note", "cell", "label")


@dataclass(frozen=True)
class LabelChange:
    """One change to a sample's label: ``field`` set to ``value`` (None clears it).

    ``field`` is ``verdict``, ``score``, ``note``, ``cell`` (``criterion`` names the cell:
    ``met`` / ``unmet``) or ``label`` (the whole label: a :class:`Label` or None).
    """

    field: str
    value: Any = None
    criterion: str | None = None

    def __post_init__(self) -> None:
        if self.field not in CHANGE_FIELDS or (self.field == "cell") != (self.criterion is not None):
            raise ValueError(f"not a label change: {self.field!r} {self.criterion!r}")

    def value_in(self, label: Label | None) -> Any:
        """What ``label`` holds for this change's field (None: nothing)."""
        if self.field == "label":
            return None if label is None or label.is_empty else label
        if label is None:
            return None
        if self.field == "cell":
            return label.criteria.get(self.criterion or "")
        return getattr(label, self.field)

    def restoring(self, label: Label | None) -> LabelChange:
        """The change that gives this field back the value ``label`` has (undoing this change)."""
        return replace(self, value=self.value_in(label))


def labels_path_for(rubric_path: str | Path) -> Path:
    """Where the labels sidecar of a rubric lives: ``<stem>.labels.yaml`` beside it."""
    path = Path(rubric_path)
    return path.with_name(f"{path.stem}.labels.yaml")


def parse_label(value: Any, where: str = "label") -> Label:
    """A Label from ``pass`` / ``fail`` or a mapping; ValueError says what is wrong."""
    if isinstance(value, str):
        value = {"verdict": value}
    if isinstance(value, bool):
        value = {"verdict": "pass" if value else "fail"}
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected pass, fail or a mapping with {', '.join(LABEL_KEYS)}")
    unknown = [k for k in value if k not in LABEL_KEYS]
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; expected {', '.join(LABEL_KEYS)}")
    label = Label()
    verdict = value.get("verdict")
    if verdict is not None:
        if verdict is True or verdict is False:
            verdict = "pass" if verdict else "fail"
        if str(verdict).lower() not in VERDICTS:
            raise ValueError(f"{where}: verdict must be pass or fail, got {verdict!r}")
        label.verdict = str(verdict).lower()
    score = value.get("score")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 10:
            raise ValueError(f"{where}: score must be a number from 0 to 10, got {score!r}")
        label.score = float(score)
    criteria = value.get("criteria") or {}
    if not isinstance(criteria, dict):
        raise ValueError(f"{where}: criteria must be a mapping of criterion id -> met | unmet")
    for criterion_id, state in criteria.items():
        if state is True or state is False:
            state = "met" if state else "unmet"
        if str(state).lower() not in CELL_LABELS:
            raise ValueError(f"{where}: criteria.{criterion_id} must be met or unmet, got {state!r}")
        label.criteria[str(criterion_id)] = str(state).lower()
    note = value.get("note")
    if note is not None:
        label.note = str(note)
    return label


@dataclass
class LabelSet:
    """Labels by sample id, with the problems met while loading them."""

    path: str | None
    labels: dict[str, Label]
    problems: list[Problem] = field(default_factory=list)

    def get(self, sample_id: str) -> Label | None:
        return self.labels.get(sample_id)


def load_labels(path: str | Path, *, missing_ok: bool = True) -> LabelSet:
    """Load a labels sidecar; a missing file is an empty set unless ``missing_ok`` is False."""
    source = Path(path)
    if not source.exists():
        if missing_ok:
            return LabelSet(str(source), {})
        raise RubricError([Problem(str(source), None, None, "labels file not found")])
    remove_stale_temps(source)  # what a killed labels write left beside it
    data, positions, problems = load_with_positions(read_user_file(source, "labels"), str(source))
    labels: dict[str, Label] = {}
    if data is None:
        return LabelSet(str(source), {}, problems)
    if not isinstance(data, dict):
        raise RubricError([Problem(str(source), 1, 1, "expected a mapping of sample id -> {verdict, score, criteria, note}")])
    for sample_id, value in data.items():
        try:
            labels[str(sample_id)] = parse_label(value, where=str(sample_id))
        except ValueError as exc:
            problems.append(positions.problem((sample_id,), str(exc)))
    return LabelSet(str(source), labels, problems)


def labels_from_samples(samples: Any) -> dict[str, Label]:
    """Labels given inline in samples (``label`` field)."""
    found: dict[str, Label] = {}
    for sample in samples:
        if sample.label is not None:
            try:
                found[sample.id] = parse_label(sample.label, where=f"{sample.id}.label")
            except ValueError:
                continue
    return found
