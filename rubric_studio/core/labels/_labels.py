"""Human labels: the sidecar ``<rubric>.labels.yaml`` and ``label`` fields of samples.

Format (docs/reference/files.md#labels)::

    sample-id:
      verdict: pass            # pass | fail
      score: 8                 # optional, 0-10
      criteria: {tone: met, refund-policy: unmet}
      given_under: {tone: 3f2a9c1b}  # the wording each cell answered (see _wording)
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

import gc
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rubric_studio.core.atomic import remove_stale_temps
from rubric_studio.core.files import read_user_file
from rubric_studio.core.labels._annotators import ADJUDICATED, ENTRY_KEYS, UNNAMED, check_name, majority
from rubric_studio.core.labels._wording import SEVERAL, check_fingerprint, consensus_wording
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.yamlpos import load_plain, load_with_positions

VERDICTS = ("pass", "fail")
CELL_LABELS = ("met", "unmet")
LABEL_KEYS = ("verdict", "score", "criteria", "given_under", "criterion_scores", "note")


@dataclass
class Label:
    """A person's judgement of one sample."""

    verdict: str | None = None
    score: float | None = None
    criteria: dict[str, str] = field(default_factory=dict)
    note: str | None = None
    #: An analytic criterion's 0-10 score, beside its met / unmet in ``criteria``.
    criterion_scores: dict[str, float] = field(default_factory=dict)
    #: In a consensus label: the fields annotators split evenly on, not adjudicated (``verdict``
    #: and / or criterion ids) — a tie, which has no value, unlike a field nobody labelled.
    ties: tuple[str, ...] = ()
    #: Criterion id -> the wording fingerprint its cell answered
    #: (:func:`~rubric_studio.core.labels.wording_fingerprint`); a cell without one is unrecorded.
    given_under: dict[str, str] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return (self.verdict is None and self.score is None and not self.criteria and not self.note
                and not self.criterion_scores and not self.ties)

    @property
    def verdict_tied(self) -> bool:
        """Annotators split evenly on the verdict (and nobody adjudicated it)."""
        return self.verdict is None and "verdict" in self.ties

    def to_yaml_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.verdict is not None:
            data["verdict"] = self.verdict
        if self.score is not None:
            data["score"] = int(self.score) if float(self.score).is_integer() else self.score
        if self.criteria:
            data["criteria"] = dict(self.criteria)
        given = {k: v for k, v in self.given_under.items() if k in self.criteria and v != SEVERAL}
        if given:
            data["given_under"] = given
        if self.criterion_scores:
            data["criterion_scores"] = {k: int(v) if float(v).is_integer() else v
                                        for k, v in self.criterion_scores.items()}
        if self.note:
            data["note"] = self.note
        return data


#: A verdict annotators split evenly on (a tie, not adjudicated): shown instead of a verdict.
TIE_MARK = "⋈"
TIE_TEXT = f"{TIE_MARK} tie"


def human_verdict(label: Label | None) -> str:
    """The human verdict a report shows: ``pass`` / ``fail``, ``⋈ tie`` when annotators split
    evenly on it, else empty (nobody labelled it)."""
    if label is None:
        return ""
    if label.verdict is not None:
        return label.verdict
    return TIE_TEXT if label.verdict_tied else ""


#: What a :class:`LabelChange` can set.
CHANGE_FIELDS = ("verdict", "score", "note", "cell", "cell_score", "label")
_CELL_FIELDS = ("cell", "cell_score")


@dataclass(frozen=True)
class LabelChange:
    """One change to a sample's label: ``field`` set to ``value`` (None clears it).

    ``field`` is ``verdict``, ``score``, ``note``, ``cell`` (``criterion`` names the cell:
    ``met`` / ``unmet``), ``cell_score`` (an analytic cell's 0-10 score; ``criterion`` names it)
    or ``label`` (the whole label: a :class:`Label` or None). A ``cell`` change records
    ``given_under``, the wording fingerprint of the criterion the value answers (None: not known,
    as for an import; the cell then records none).
    """

    field: str
    value: Any = None
    criterion: str | None = None
    given_under: str | None = None

    def __post_init__(self) -> None:
        if self.field not in CHANGE_FIELDS or (self.field in _CELL_FIELDS) != (self.criterion is not None):
            raise ValueError(f"not a label change: {self.field!r} {self.criterion!r}")
        if self.given_under is not None and self.field != "cell":
            raise ValueError(f"only a cell change records the wording it answered, not {self.field!r}")

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
        """The change that gives this field back the value ``label`` has (undoing this change); a
        cell gets back the wording it answered too."""
        value = self.value_in(label)
        if self.field != "cell":
            return replace(self, value=value)
        given = label.given_under.get(self.criterion or "") if label is not None and value is not None else None
        return replace(self, value=value, given_under=given if given != SEVERAL else None)


# -- the values a label holds ------------------------------------------------------
def score_value(score: float | None) -> int | float | None:
    if score is None:
        return None
    if isinstance(score, bool) or not 0 <= float(score) <= 10:
        raise ValueError(f"score must be a number from 0 to 10, got {score!r}")
    return int(score) if float(score).is_integer() else float(score)


def check_verdict(verdict: str | None) -> None:
    if verdict is not None and verdict not in VERDICTS:
        raise ValueError(f"verdict must be pass or fail, got {verdict!r}")


def change_value(change: LabelChange) -> Any:
    """The value ``change`` sets, as a label holds it (a score as int when whole, a blank note as
    None); ValueError for a value no label can hold."""
    field, value = change.field, change.value
    if field == "label":
        if value is not None:
            check_verdict(value.verdict)
            score_value(value.score)
            for score in value.criterion_scores.values():
                score_value(score)
            for state in value.criteria.values():
                check_cell(state)
        return value
    if field == "verdict":
        check_verdict(value)
        return value
    if field in ("score", "cell_score"):
        return score_value(value)
    if field == "cell":
        check_cell(value)
        if change.given_under is not None:
            check_fingerprint(change.given_under, f"the wording of {change.criterion}")
        return value
    return None if value is None or not str(value).strip() else str(value)


def check_cell(state: str | None) -> None:
    if state is not None and state not in CELL_LABELS:
        raise ValueError(f"a criterion label must be met or unmet, got {state!r}")



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
    label.given_under = _given_under(value.get("given_under"), where)
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


def _given_under(value: Any, where: str) -> dict[str, str]:
    """``given_under:`` of a label (criterion id -> wording fingerprint); ValueError says what is wrong."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{where}: given_under must be a mapping of criterion id -> wording fingerprint")
    return {str(cid): check_fingerprint(given, f"{where}: given_under.{cid}") for cid, given in value.items()}


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


def load_sidecar(path: str | Path) -> LabelSet:
    """The labels the sidecar file itself holds (its journal not read); a missing file is empty.

    Raises:
        RubricError: the file is unreadable or malformed.
    """
    source = Path(path)
    if not source.exists():
        return LabelSet(str(source), {})
    remove_stale_temps(source)  # what a killed labels write left beside it
    text = read_user_file(source, "labels")
    fast = _load_plain_labels(text, str(source))
    return fast if fast is not None else _load_careful_labels(text, str(source))


def _load_careful_labels(text: str, file: str) -> LabelSet:
    """The labels of a sidecar read the careful way (:func:`~rubric_studio.core.yamlpos.load_with_positions`):
    every problem placed at its line; the same labels as :func:`_load_plain_labels` where that answers.

    Raises:
        RubricError: the text is not YAML, or not a mapping.
    """
    data, positions, problems = load_with_positions(text, file)
    by_annotator: dict[str, dict[str, Label]] = {}
    if data is None:
        return LabelSet(file, {}, problems)
    if not isinstance(data, dict):
        raise RubricError([Problem(file, 1, 1, "expected a mapping of sample id -> {verdict, score, criteria, note}")])
    for sample_id, value in data.items():
        try:
            by_annotator[str(sample_id)] = entry_labels(value, where=str(sample_id))
        except ValueError as exc:
            problems.append(positions.problem((sample_id,), str(exc)))
    return LabelSet(file, consensus_labels(by_annotator), problems, by_annotator)


def _load_plain_labels(text: str, file: str) -> LabelSet | None:
    """The labels of a clean sidecar read the fast way (:func:`~rubric_studio.core.yamlpos.load_plain`);
    None when that reading declines or any entry has a problem (the careful reading then places it).
    The cyclic garbage collector is paused while the labels are built (they form no cycles; its
    passes over 100,000 new labels took a third of the time)."""
    readable, data = load_plain(text)
    if not readable or (data is not None and not isinstance(data, dict)):
        return None
    by_annotator: dict[str, dict[str, Label]] = {}
    collecting = gc.isenabled()
    gc.disable()
    try:
        for sample_id, value in (data or {}).items():
            by_annotator[str(sample_id)] = entry_labels(value, where=str(sample_id))
        labels = consensus_labels(by_annotator)
    except ValueError:
        return None
    finally:
        if collecting:
            gc.enable()
    if len(by_annotator) != len(data or {}):  # two ids that read as one string (1 and "1")
        return None
    return LabelSet(file, labels, [], by_annotator)


# -- annotators (see rubric_studio.core.labels._annotators) ---------------------------------------
class _CheckedNames(dict):
    """Annotator names already checked (a sidecar repeats a few names thousands of times)."""

    def __missing__(self, name: Any) -> str | None:
        if not isinstance(name, str) or len(self) > 4096:
            return None
        self[name] = checked = check_name(name)
        return checked


_checked_names = _CheckedNames()


def entry_labels(value: Any, where: str) -> dict[str, Label]:
    """Every annotator's label in one sidecar entry (``pass`` / a mapping); ValueError says what is wrong.

    Empty labels are left out; the top-level label belongs to ``annotator:`` (or :data:`UNNAMED`).
    """
    if not isinstance(value, dict):
        label = parse_label(value, where=where)
        return {} if label.is_empty else {UNNAMED: label}
    own = {k: v for k, v in value.items() if k not in ENTRY_KEYS}
    owner = value.get("annotator")
    owner = UNNAMED if owner is None else (_checked_names[owner] or check_name(str(owner)))
    found: dict[str, Label] = {}
    top = parse_label(own, where=where)
    if not top.is_empty:
        found[owner] = top
    others = value.get("annotators") or {}
    if not isinstance(others, dict):
        raise ValueError(f"{where}: annotators must be a mapping of annotator name -> label")
    for name, label_value in others.items():
        try:
            label = parse_label(label_value)
        except ValueError:  # read again to say where (the place is not formatted for every label)
            label = parse_label(label_value, where=f"{where}.annotators.{name}")
        name = _checked_names[name] or check_name(str(name))
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
    verdicts = [lab.verdict for lab in labels if lab.verdict is not None]
    verdict = judged.verdict or majority(verdicts)
    ties = ["verdict"] if verdict is None and verdicts else []
    scores = [lab.score for lab in labels if lab.score is not None]
    score = judged.score if judged.score is not None else (sum(scores) / len(scores) if scores else None)
    criteria: dict[str, str] = {}
    for criterion in dict.fromkeys(c for lab in labels for c in lab.criteria):
        state = majority([lab.criteria[criterion] for lab in labels if criterion in lab.criteria])
        if state is not None:
            criteria[criterion] = state
        elif criterion not in judged.criteria:
            ties.append(criterion)
    criteria.update(judged.criteria)
    cell_scores: dict[str, float] = {}
    for criterion in dict.fromkeys(c for lab in labels for c in lab.criterion_scores):
        given = [lab.criterion_scores[criterion] for lab in labels if criterion in lab.criterion_scores]
        cell_scores[criterion] = sum(given) / len(given)
    cell_scores.update(judged.criterion_scores)
    notes = {name: lab.note for name, lab in by_annotator.items() if lab.note}
    note = next(iter(notes.values())) if len(notes) == 1 else "\n".join(f"{n}: {t}" for n, t in notes.items())
    given: dict[str, str] = {}
    for criterion in criteria:
        if criterion in judged.criteria:
            wording = judged.given_under.get(criterion)
        else:
            wording = consensus_wording([lab.given_under.get(criterion) for lab in labels if criterion in lab.criteria])
        if wording is not None:
            given[criterion] = wording
    return Label(verdict, score, criteria, note or None, cell_scores, tuple(ties), given)


def consensus_labels(by_sample: Mapping[str, Mapping[str, Label]]) -> dict[str, Label]:
    """Consensus label per sample id (samples whose consensus is empty are left out)."""
    found = {sample_id: consensus(labels) for sample_id, labels in by_sample.items() if labels}
    return {sample_id: label for sample_id, label in found.items() if not label.is_empty}


def find_key(mapping: Any, text: str) -> Any:
    """The key of ``mapping`` that reads as ``text`` (the number ``1`` for "1", ``True`` for "True"),
    None when there is none. A lookup, not a scan: an entry of 10,000 annotators is edited in
    time linear in its edits."""
    if text in mapping:
        return text
    for candidate in _typed_keys(text):
        if candidate in mapping:
            key = next((k for k in mapping if k == candidate and type(k) is type(candidate)), None)
            if key is not None and str(key) == text:
                return key
    return None


def _typed_keys(text: str) -> list[Any]:
    """What a plain YAML key written so that ``str()`` gives ``text`` may have been read as."""
    found: list[Any] = []
    for convert in (int, float):
        try:
            found.append(convert(text))
        except ValueError:
            pass
    if text in ("True", "False"):
        found.append(text == "True")
    if text == "None":
        found.append(None)
    return found


def own_label(entry: Any, annotator: str | None, where: str) -> Label | None:
    """``annotator``'s label in a sidecar entry (None: the top-level label); None when it has none
    (or it does not read as a label). Reads only that label, however many the entry holds."""
    try:
        entry = dict(entry)
        owner = entry.get("annotator")
        owner = UNNAMED if owner is None else str(owner).strip()
        if annotator is None or annotator == owner:
            label = parse_label({k: v for k, v in entry.items() if k not in ENTRY_KEYS}, where=where)
        else:
            others = entry.get("annotators")
            if not isinstance(others, dict):
                return None
            key = find_key(others, annotator)
            if key is None:
                return None
            value = others[key]
            label = parse_label(value, where=f"{where}.annotators.{annotator}")
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
