"""Human labels: the sidecar ``<rubric>.labels.yaml`` and ``label`` fields of samples.

Format (BRIEF §2)::

    sample-id:
      verdict: pass            # pass | fail
      score: 8                 # optional, 0-10
      criteria: {tone: met, refund-policy: unmet}
      criterion_scores: {tone: 8}   # optional: an analytic criterion's 0-10 score
      note: free text

An entry may hold several annotators' labels (``annotator:`` names the top-level label's,
``annotators:`` maps other names to labels; see :mod:`rubric_studio.core.labels._annotators`):
:attr:`LabelSet.labels` is their consensus, :attr:`LabelSet.by_annotator` keeps each one's.
A label may also be given inline in a samples file as ``label: pass`` or the same
mapping. Problems (unknown verdicts, bad criteria states) are reported with
positions; the other labels still load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rubric_studio.core.atomic import remove_stale_temps
from rubric_studio.core.files import read_user_file
from rubric_studio.core.labels._annotators import ADJUDICATED, ENTRY_KEYS, UNNAMED, check_name, majority
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.yamlpos import load_with_positions

VERDICTS = ("pass", "fail")
CELL_LABELS = ("met", "unmet")
LABEL_KEYS = ("verdict", "score", "criteria", "criterion_scores", "note")


@dataclass
class Label:
    """A person's judgement of one sample."""

    verdict: str | None = None
    score: float | None = None
    criteria: dict[str, str] = field(default_factory=dict)
    note: str | None = None
    #: An analytic criterion's 0-10 score, beside its met / unmet in ``criteria``.
    criterion_scores: dict[str, float] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return (self.verdict is None and self.score is None and not self.criteria and not self.note
                and not self.criterion_scores)

    def to_yaml_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.verdict is not None:
            data["verdict"] = self.verdict
        if self.score is not None:
            data["score"] = int(self.score) if float(self.score).is_integer() else self.score
        if self.criteria:
            data["criteria"] = dict(self.criteria)
        if self.criterion_scores:
            data["criterion_scores"] = {k: int(v) if float(v).is_integer() else v
                                        for k, v in self.criterion_scores.items()}
        if self.note:
            data["note"] = self.note
        return data


#: What a :class:`LabelChange` can set.
CHANGE_FIELDS = ("verdict", "score", "note", "cell", "cell_score", "label")
_CELL_FIELDS = ("cell", "cell_score")


@dataclass(frozen=True)
class LabelChange:
    """One change to a sample's label: ``field`` set to ``value`` (None clears it).

    ``field`` is ``verdict``, ``score``, ``note``, ``cell`` (``criterion`` names the cell:
    ``met`` / ``unmet``), ``cell_score`` (an analytic cell's 0-10 score; ``criterion`` names it)
    or ``label`` (the whole label: a :class:`Label` or None).
    """

    field: str
    value: Any = None
    criterion: str | None = None

    def __post_init__(self) -> None:
        if self.field not in CHANGE_FIELDS or (self.field in _CELL_FIELDS) != (self.criterion is not None):
            raise ValueError(f"not a label change: {self.field!r} {self.criterion!r}")

    def value_in(self, label: Label | None) -> Any:
        """What ``label`` holds for this change's field (None: nothing)."""
        if self.field == "label":
            return None if label is None or label.is_empty else label
        if label is None:
            return None
        if self.field == "cell":
            return label.criteria.get(self.criterion or "")
        if self.field == "cell_score":
            return label.criterion_scores.get(self.criterion or "")
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
    unknown = [k for k in value if k not in LABEL_KEYS and k not in ENTRY_KEYS]
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; expected {', '.join(LABEL_KEYS + ENTRY_KEYS)}")
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
    label.criterion_scores = _criterion_scores(value.get("criterion_scores"), where)
    note = value.get("note")
    if note is not None:
        label.note = str(note)
    return label


def _criterion_scores(value: Any, where: str) -> dict[str, float]:
    """``criterion_scores:`` of a label (criterion id -> 0-10); ValueError says what is wrong."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{where}: criterion_scores must be a mapping of criterion id -> a score from 0 to 10")
    found: dict[str, float] = {}
    for criterion_id, score in value.items():
        if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 10:
            raise ValueError(f"{where}: criterion_scores.{criterion_id} must be a number from 0 to 10, got {score!r}")
        found[str(criterion_id)] = float(score)
    return found


@dataclass
class LabelSet:
    """Labels by sample id, with the problems met while loading them.

    ``labels`` is the consensus of the annotators (one annotator's labels are their own);
    ``by_annotator`` keeps each annotator's label: sample id -> annotator -> label.
    """

    path: str | None
    labels: dict[str, Label]
    problems: list[Problem] = field(default_factory=list)
    by_annotator: dict[str, dict[str, Label]] = field(default_factory=dict)

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
    by_annotator: dict[str, dict[str, Label]] = {}
    if data is None:
        return LabelSet(str(source), {}, problems)
    if not isinstance(data, dict):
        raise RubricError([Problem(str(source), 1, 1, "expected a mapping of sample id -> {verdict, score, criteria, note}")])
    for sample_id, value in data.items():
        try:
            by_annotator[str(sample_id)] = entry_labels(value, where=str(sample_id))
        except ValueError as exc:
            problems.append(positions.problem((sample_id,), str(exc)))
    return LabelSet(str(source), consensus_labels(by_annotator), problems, by_annotator)


# -- annotators (see rubric_studio.core.labels._annotators) ---------------------------------------
def entry_labels(value: Any, where: str) -> dict[str, Label]:
    """Every annotator's label in one sidecar entry (``pass`` / a mapping); ValueError says what is wrong.

    Empty labels are left out; the top-level label belongs to ``annotator:`` (or :data:`UNNAMED`).
    """
    if not isinstance(value, dict):
        label = parse_label(value, where=where)
        return {} if label.is_empty else {UNNAMED: label}
    own = {k: v for k, v in value.items() if k not in ENTRY_KEYS}
    owner = value.get("annotator")
    owner = UNNAMED if owner is None else check_name(str(owner))
    found: dict[str, Label] = {}
    top = parse_label(own, where=where)
    if not top.is_empty:
        found[owner] = top
    others = value.get("annotators") or {}
    if not isinstance(others, dict):
        raise ValueError(f"{where}: annotators must be a mapping of annotator name -> label")
    for name, label_value in others.items():
        label = parse_label(label_value, where=f"{where}.annotators.{name}")
        name = check_name(str(name))
        if not label.is_empty:
            found[name] = label
    return found


def consensus(by_annotator: Mapping[str, Label]) -> Label:
    """The consensus label of one sample (see the module docstring); one annotator's label is itself."""
    people = {name: label for name, label in by_annotator.items() if name != ADJUDICATED}
    if len(people) == 1 and ADJUDICATED not in by_annotator:
        return next(iter(people.values()))
    judged = by_annotator.get(ADJUDICATED, Label())
    labels = list(people.values())
    verdict = judged.verdict or majority([lab.verdict for lab in labels if lab.verdict is not None])
    scores = [lab.score for lab in labels if lab.score is not None]
    score = judged.score if judged.score is not None else (sum(scores) / len(scores) if scores else None)
    criteria: dict[str, str] = {}
    for criterion in dict.fromkeys(c for lab in labels for c in lab.criteria):
        state = majority([lab.criteria[criterion] for lab in labels if criterion in lab.criteria])
        if state is not None:
            criteria[criterion] = state
    criteria.update(judged.criteria)
    cell_scores: dict[str, float] = {}
    for criterion in dict.fromkeys(c for lab in labels for c in lab.criterion_scores):
        given = [lab.criterion_scores[criterion] for lab in labels if criterion in lab.criterion_scores]
        cell_scores[criterion] = sum(given) / len(given)
    cell_scores.update(judged.criterion_scores)
    notes = {name: lab.note for name, lab in by_annotator.items() if lab.note}
    note = next(iter(notes.values())) if len(notes) == 1 else "\n".join(f"{n}: {t}" for n, t in notes.items())
    return Label(verdict, score, criteria, note or None, cell_scores)


def consensus_labels(by_sample: Mapping[str, Mapping[str, Label]]) -> dict[str, Label]:
    """Consensus label per sample id (samples whose consensus is empty are left out)."""
    found = {sample_id: consensus(labels) for sample_id, labels in by_sample.items() if labels}
    return {sample_id: label for sample_id, label in found.items() if not label.is_empty}


def own_label(entry: Any, annotator: str | None, where: str) -> Label | None:
    """``annotator``'s label in a sidecar entry (None: the top-level label); None when it has none
    (or it does not read as a label)."""
    try:
        label = parse_label(dict(entry), where=where) if annotator is None else entry_labels(dict(entry), where).get(annotator)
    except ValueError:
        return None
    return None if label is None or label.is_empty else label


def has_label(entry: Any, where: str) -> bool:
    """Whether a sidecar entry holds anyone's label (an entry that does not read still counts)."""
    try:
        return bool(entry_labels(dict(entry), where))
    except ValueError:
        return True


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
