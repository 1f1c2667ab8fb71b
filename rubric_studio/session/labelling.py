"""Labelling by several people at once: who labels which sample, in what order, what each may see,
and how a submitted label is checked and written.

The web labeller (``rubric-studio serve``) is HTTP around a :class:`LabellingSession`; the terminal
studio can use the same pieces (:func:`assign`, :func:`next_unlabelled`, :func:`label_from_payload`).

* **Assignment.** Each sample goes to ``overlap`` annotators (:func:`assign`): the annotators are
  taken in turn, in sample order, so shares differ by at most one sample and a sample added at the
  end never moves an earlier one to someone else. Two people on one sample give the agreement
  figures (Cohen's kappa) something to measure.
* **Blind labelling.** An annotator reads only the samples of their share, the criteria and their
  own label; they never see the judge's verdict nor anyone else's label. The lead sees everyone's
  labels beside the judge's and adjudicates: the lead's label is written as annotator
  :data:`~rubric_studio.core.labels.ADJUDICATED`, which wins over the majority.
* **Order.** An annotator's queue is their unlabelled share, then their labelled share (for review).
  The lead's puts first the samples whose annotators disagree, then those where the judge and the
  people disagree, then those a judge panel split on, then the rest. A sample counts as labelled
  once its label has a verdict.
* **Live files.** The rubric and the samples are read again when their files change; a rubric that
  no longer reads keeps the last good one, and :attr:`LabellingSession.rubric_problem` says why.
* **Wordings.** Each criterion label records the wording fingerprint of the criterion it answered
  (:mod:`rubric_studio.core.labels._wording`): the one the page showed when the person set the cell
  (``given_under`` in the payload), else the one already recorded when the cell kept its value, else
  the rubric's now. A person's labels given under an older wording are their **re-check queue**
  (:meth:`LabellingSession.recheck`), visited after their unlabelled samples.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric_studio.core.files import file_signature as signature
from rubric_studio.core.labels import (
    ADJUDICATED,
    Label,
    LabelChange,
    LabelStore,
    check_fingerprint,
    check_name,
    consensus,
    older_cells,
    rubric_fingerprints,
    wording_fingerprint,
)
from rubric_studio.core.problems import RubricError
from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.core.scoring import at_least

ANNOTATOR, LEAD = "annotator", "lead"
#: The longest note a label may carry (characters).
MAX_NOTE = 20_000
PAYLOAD_KEYS = ("verdict", "score", "criteria", "criterion_scores", "note", "given_under", "annotator")


# -- people and shares ------------------------------------------------------------------------
@dataclass(frozen=True)
class Person:
    """Someone who labels: an annotator, or the lead who adjudicates."""

    name: str
    role: str = ANNOTATOR

    @property
    def is_lead(self) -> bool:
        return self.role == LEAD

    @property
    def writes_as(self) -> str:
        """The annotator name this person's labels are written under."""
        return ADJUDICATED if self.is_lead else self.name


def check_people(annotators: Sequence[str], lead: str | None) -> list[Person]:
    """The people of a session; ValueError names the first name that cannot be used."""
    if not annotators:
        raise ValueError("give at least one annotator")
    people: list[Person] = []
    seen: set[str] = set()
    for raw in [*annotators, *([lead] if lead is not None else [])]:
        name = check_name(raw)
        if name == ADJUDICATED:
            raise ValueError(f"{ADJUDICATED!r} is the name the lead's labels are written under; choose another name")
        if name in seen:
            raise ValueError(f"{name!r} is named twice (an annotator cannot also be the lead)")
        seen.add(name)
        people.append(Person(name, ANNOTATOR if len(people) < len(annotators) else LEAD))
    return people


def default_overlap(annotators: int) -> int:
    """How many annotators label each sample unless told: 2 when there are two or more."""
    return 2 if annotators >= 2 else 1


def check_overlap(overlap: int | None, annotators: int) -> int:
    """``overlap`` checked against the number of annotators (None: the default); ValueError otherwise."""
    if overlap is None:
        return default_overlap(annotators)
    if not 1 <= overlap <= annotators:
        raise ValueError(f"--overlap must be from 1 to the number of annotators ({annotators}), got {overlap}")
    return overlap


def assign(sample_ids: Sequence[str], annotators: Sequence[str], overlap: int) -> dict[str, tuple[str, ...]]:
    """Sample id -> the annotators who label it, ``overlap`` each, deterministic and balanced.

    Sample ``i`` (in sample order) goes to annotators ``i*K .. i*K+K-1`` (modulo their number), so
    every annotator gets the same number of samples, give or take one, and a sample appended later
    leaves the earlier ones where they were.
    """
    count = len(annotators)
    if not 1 <= overlap <= count:
        raise ValueError(f"overlap must be from 1 to {count}, got {overlap}")
    shares: dict[str, tuple[str, ...]] = {}
    for index, sample_id in enumerate(dict.fromkeys(sample_ids)):
        start = index * overlap
        shares[sample_id] = tuple(annotators[(start + step) % count] for step in range(overlap))
    return shares


def is_labelled(label: Label | None) -> bool:
    """Whether a label counts as done: it gives the sample's verdict."""
    return label is not None and label.verdict is not None


def next_sample_where(order: Sequence[str], after: str | None, wanted: Callable[[str], bool]) -> str | None:
    """The first sample of ``order`` after ``after`` (wrapping round; from the start when None or not
    in ``order``) that is ``wanted``; None when none is. "Next sample" of the web labeller and of the
    studio's labelling queue (``g`` / ``G``) both."""
    start = order.index(after) + 1 if after is not None and after in order else 0
    for offset in range(len(order)):
        sample_id = order[(start + offset) % len(order)]
        if wanted(sample_id):
            return sample_id
    return None


def next_unlabelled(order: Sequence[str], labels: Mapping[str, Mapping[str, Label]], annotator: str,
                    after: str | None = None) -> str | None:
    """The first sample of ``order`` after ``after`` (wrapping round) that ``annotator`` has not
    labelled in ``labels`` (sample -> annotator -> label); None when every one is labelled."""
    return next_sample_where(order, after, lambda s: not is_labelled(labels.get(s, {}).get(annotator)))


def next_unlabelled_in(store: LabelStore, order: Sequence[str], annotator: str, after: str | None = None) -> str | None:
    """:func:`next_unlabelled` over a label store as last refreshed (safe while others write to it):
    what the web labeller and the studio ask for "the next sample person P has to label"."""
    return next_sample_where(order, after, lambda s: not is_labelled(store.label(s, annotator)))


def unlabelled_first(order: Sequence[str], labels: Mapping[str, Mapping[str, Label]], annotator: str) -> list[str]:
    """``order`` with ``annotator``'s unlabelled samples first, then the labelled ones (each in order)."""
    done = [s for s in order if is_labelled(labels.get(s, {}).get(annotator))]
    taken = set(done)
    return [s for s in order if s not in taken] + done


# -- disagreements ----------------------------------------------------------------------------
def people_disagree(labels: Mapping[str, Label]) -> bool:
    """Whether the annotators of one sample (the adjudication aside) differ on its verdict or on a
    criterion's met / unmet."""
    people = [label for name, label in labels.items() if name != ADJUDICATED]
    if len({label.verdict for label in people if label.verdict is not None}) > 1:
        return True
    criteria = {criterion for label in people for criterion in label.criteria}
    return any(len({label.criteria[c] for label in people if c in label.criteria}) > 1 for c in criteria)


def judge_disagrees(labels: Mapping[str, Label], judged: Mapping[str, Any] | None) -> bool:
    """Whether the judge's verdict, or one of its met / unmet cells, differs from the annotators'
    consensus (the adjudication aside, so adjudicating does not reorder the lead's queue)."""
    if not judged:
        return False
    people = {name: label for name, label in labels.items() if name != ADJUDICATED}
    if not people:
        return False
    human = consensus(people)
    verdict = judged.get("verdict")
    if human.verdict is not None and verdict in ("pass", "fail") and verdict != human.verdict:
        return True
    return any(cell.get("status") in ("met", "unmet") and cell.get("status") != human.criteria.get(cell_id)
               and cell_id in human.criteria for cell_id, cell in judge_cells(judged).items())


def panel_split(judged: Mapping[str, Any] | None) -> bool:
    """Whether a judged cell of the sample is contested: a tie, repeats that did not all agree, or a
    panel whose members split."""
    for cell in judge_cells(judged or {}).values():
        agreement = cell.get("agreement")
        panel = cell.get("panel") if isinstance(cell.get("panel"), dict) else {}
        if cell.get("tie") or panel.get("split") or (isinstance(agreement, int | float) and agreement < 1):
            return True
    return False


def judge_cells(judged: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A report sample's cells by criterion id."""
    cells = judged.get("criteria") or []
    return {str(c["id"]): c for c in cells if isinstance(c, dict) and "id" in c}


def lead_order(sample_ids: Sequence[str], labels: Mapping[str, Mapping[str, Label]],
               judged: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The lead's queue: people disagree, then judge and people disagree, then panel splits, then
    the rest (each group in sample order)."""
    return sorted(sample_ids, key=lambda s: attention(labels.get(s, {}), judged.get(s)) or 4)


def attention(labels: Mapping[str, Label], judged: Mapping[str, Any] | None) -> int | None:
    """Why the lead should look at a sample: 1 people disagree, 2 judge and people disagree,
    3 a panel split; None when nothing calls for it."""
    if people_disagree(labels):
        return 1
    if judge_disagrees(labels, judged):
        return 2
    if panel_split(judged):
        return 3
    return None


# -- judge report -----------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeReport:
    """The verdicts of a ``rubric-studio grade --format json`` report, by sample id."""

    path: str
    rubric_hash: str | None
    model: str | None
    samples: Mapping[str, Mapping[str, Any]]


def read_report(text: str, path: str) -> JudgeReport:
    """A grading report read from its JSON text, with the bounds of every JSON file read
    (:func:`rubric_studio.interop.labels.read_grade_report`); ValueError says what is wrong, naming
    ``path`` (line and column for JSON that does not parse)."""
    from rubric_studio.interop.labels import read_grade_report

    try:
        report = read_grade_report(text, path)
    except RubricError as exc:
        raise ValueError(str(exc.problems[0]) if exc.problems else str(exc)) from None
    return JudgeReport(path, report.rubric_hash, report.model, report.samples)


# -- payloads ---------------------------------------------------------------------------------
class Refused(Exception):
    """A request this person may not make (HTTP 403)."""


class NotFound(Exception):
    """No such sample (HTTP 404)."""


class PayloadError(ValueError):
    """A submitted label that cannot be written: ``field`` names the part (HTTP 422)."""

    def __init__(self, field_name: str, message: str) -> None:
        self.field = field_name
        super().__init__(f"{field_name}: {message}")


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0 <= value <= 10:
        raise PayloadError(where, f"expected a number from 0 to 10, got {json.dumps(value)}")
    return value if isinstance(value, int) else float(value)


def label_from_payload(payload: Any, rubric: Rubric, stored: Label | None = None) -> Label | None:
    """The label a submitted ``{verdict, score, criteria, criterion_scores, note, given_under}``
    describes, checked against ``rubric`` (None: an empty label, which removes the person's label).

    ``criteria`` maps a judged criterion's id to ``met`` / ``unmet``, or, for an analytic criterion,
    to a 0-10 score (met when score/10 reaches its ``min_score``). ``given_under`` maps a criterion id
    to the wording fingerprint the page showed when the cell was set; a cell without one keeps the
    wording ``stored`` (the person's label now) recorded when its value is unchanged, and otherwise
    answers the rubric's wording now. ``annotator`` is ignored: a label is always the submitter's.
    Raises :class:`PayloadError` naming the field.
    """
    if not isinstance(payload, dict):
        raise PayloadError("body", "expected a JSON object {verdict, score, criteria, note}")
    unknown = [key for key in payload if key not in PAYLOAD_KEYS]
    if unknown:
        raise PayloadError(str(unknown[0]), f"unknown field; expected {', '.join(PAYLOAD_KEYS[:-1])}")
    label = Label()
    verdict = payload.get("verdict")
    if verdict is not None and verdict not in ("pass", "fail"):
        raise PayloadError("verdict", f"expected \"pass\", \"fail\" or null, got {json.dumps(verdict)}")
    label.verdict = verdict
    if payload.get("score") is not None:
        label.score = _number(payload["score"], "score")
    _criteria_from_payload(payload, rubric, label)
    note = payload.get("note")
    if note is not None and not isinstance(note, str):
        raise PayloadError("note", "expected text or null")
    if note is not None and len(note) > MAX_NOTE:
        raise PayloadError("note", f"longer than {MAX_NOTE} characters")
    label.note = note if note and note.strip() else None
    label.given_under = _wordings_from_payload(payload.get("given_under"), rubric, label, stored)
    return None if label.is_empty else label


def _wordings_from_payload(given: Any, rubric: Rubric, label: Label, stored: Label | None) -> dict[str, str]:
    """The wording each cell of ``label`` answered (see :func:`label_from_payload`)."""
    given = {} if given is None else given
    if not isinstance(given, dict):
        raise PayloadError("given_under", "expected an object of criterion id -> wording fingerprint")
    found: dict[str, str] = {}
    for criterion_id in label.criteria:
        if given.get(criterion_id) is not None:
            try:
                found[criterion_id] = check_fingerprint(given[criterion_id], "a wording fingerprint")
            except ValueError as exc:
                raise PayloadError(f"given_under.{criterion_id}", str(exc)) from None
        elif stored is not None and stored.criteria.get(criterion_id) == label.criteria[criterion_id]:
            if criterion_id in stored.given_under:
                found[criterion_id] = stored.given_under[criterion_id]
        else:
            found[criterion_id] = wording_fingerprint(rubric.criterion(criterion_id))
    return found


def _criteria_from_payload(payload: Mapping[str, Any], rubric: Rubric, label: Label) -> None:
    criteria = payload.get("criteria") or {}
    scores = payload.get("criterion_scores") or {}
    for key, value in (("criteria", criteria), ("criterion_scores", scores)):
        if not isinstance(value, dict):
            raise PayloadError(key, "expected an object of criterion id -> value")
    for criterion_id, value in criteria.items():
        criterion = _judged_criterion(rubric, criterion_id, "criteria")
        where = f"criteria.{criterion_id}"
        if value is None:
            continue
        if isinstance(value, str):
            if value not in ("met", "unmet"):
                raise PayloadError(where, f"expected \"met\", \"unmet\" or a 0-10 score, got {json.dumps(value)}")
            label.criteria[criterion.key] = value
        elif criterion.kind != "analytic":
            raise PayloadError(where, f"expected \"met\" or \"unmet\" (a 0-10 score is for analytic criteria), "
                                      f"got {json.dumps(value)}")
        else:
            label.criterion_scores[criterion.key] = _number(value, where)
            label.criteria[criterion.key] = analytic_state(criterion, label.criterion_scores[criterion.key])
    for criterion_id, value in scores.items():
        criterion = _judged_criterion(rubric, criterion_id, "criterion_scores")
        where = f"criterion_scores.{criterion_id}"
        if value is None:
            continue
        if criterion.kind != "analytic":
            raise PayloadError(where, "only an analytic criterion (one with score_ranges) takes a 0-10 score")
        label.criterion_scores[criterion.key] = _number(value, where)
        label.criteria.setdefault(criterion.key, analytic_state(criterion, label.criterion_scores[criterion.key]))


def analytic_state(criterion: Criterion, score: float) -> str:
    """``met`` when a 0-10 score reaches the criterion's ``min_score`` (as the judge's score does)."""
    return "met" if at_least(score / 10, criterion.effective_min_score) else "unmet"


def _judged_criterion(rubric: Rubric, criterion_id: Any, key: str) -> Criterion:
    try:
        criterion = rubric.criterion(str(criterion_id))
    except KeyError:
        known = ", ".join(c.key for c in rubric.judge_criteria)
        raise PayloadError(f"{key}.{criterion_id}", f"no criterion {str(criterion_id)!r} in the rubric "
                                                    f"(judged criteria: {known})") from None
    if not criterion.is_judged:
        raise PayloadError(f"{key}.{criterion_id}", "a deterministic check: people label judged criteria only")
    return criterion


# -- files ------------------------------------------------------------------------------------
def file_signature(path: Path) -> tuple[Any, ...] | None:
    """What changes when a file, or a folder's files, change (None: it is not there)."""
    own = signature(path)
    if own is None or not path.is_dir():
        return own
    try:
        with os.scandir(path) as entries:
            inside = sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in entries if e.is_file())
    except OSError:
        return own
    return (own, tuple(inside))


@dataclass
class SampleView:
    """What one person sees of one sample (the lead's fields stay empty for an annotator)."""

    sample: Sample
    criteria: list[Criterion]
    label: Label | None
    position: int
    total: int
    previous: str | None
    next: str | None
    assigned: tuple[str, ...] = ()
    #: Lead only: annotator -> label (the adjudication under ADJUDICATED), and the judge's sample.
    labels: dict[str, Label] = field(default_factory=dict)
    judged: Mapping[str, Any] | None = None
    attention: int | None = None
    #: Criterion id -> its wording fingerprint now (judged criteria).
    fingerprints: dict[str, str] = field(default_factory=dict)

    @property
    def older_wording(self) -> list[str]:
        """The criteria whose cell in the person's own label was given under an older wording."""
        return older_cells(self.label, self.fingerprints)


class LabellingSession:
    """One rubric, its samples and its label store, labelled by several people (see the module docstring).

    Thread-safe: the web labeller calls it from many requests at once. Every call first reads what
    changed on disk (:meth:`sync`): the rubric, the samples, labels written by anyone else.
    """

    def __init__(self, rubric_path: str | Path, samples_path: str | Path, people: Iterable[Person], *,
                 store: LabelStore, overlap: int | None = None, report: JudgeReport | None = None,
                 extractor: str = "last_assistant") -> None:
        """Raises RubricError when the rubric or the samples cannot be read at all, ValueError for
        an overlap the annotators cannot give."""
        self.rubric_path, self.samples_path = Path(rubric_path), Path(samples_path)
        self.people = {person.name: person for person in people}
        self.annotators = [person.name for person in self.people.values() if not person.is_lead]
        self.overlap = check_overlap(overlap, len(self.annotators))
        self.store, self.report, self.extractor = store, report, extractor
        #: Why the rubric on disk is not the one in use (``file:line:col: message``), or None.
        self.rubric_problem: str | None = None
        #: Why the samples on disk are not (all) in use, or None.
        self.samples_problem: str | None = None
        self._lock = threading.RLock()
        self._rubric_signature = file_signature(self.rubric_path)
        self._samples_signature = file_signature(self.samples_path)
        self.rubric = _load_rubric(self.rubric_path)
        self._set_samples(self._load_samples())

    # -- files --------------------------------------------------------------------------------
    def sync(self) -> None:
        """Read again whatever changed on disk: rubric, samples, labels."""
        with self._lock:
            signature = file_signature(self.rubric_path)
            if signature != self._rubric_signature:
                self._rubric_signature = signature
                try:
                    self.rubric, self.rubric_problem = _load_rubric(self.rubric_path), None
                except RubricError as exc:
                    self.rubric_problem = str(exc.problems[0]) if exc.problems else str(exc)
            signature = file_signature(self.samples_path)
            if signature != self._samples_signature:
                self._samples_signature = signature
                try:
                    self._set_samples(self._load_samples())
                except RubricError as exc:
                    first = str(exc.problems[0]) if exc.problems else str(exc)
                    self.samples_problem = f"the samples no longer read, the last good ones are shown: {first}"
        self.store.refresh()

    def _load_samples(self) -> list[Sample]:
        from rubric_studio.core.samples import load_samples

        loaded = load_samples(self.samples_path, extractor=self.extractor)
        skipped = len(loaded.problems)
        self.samples_problem = (f"{skipped} record{'s' if skipped != 1 else ''} skipped: {loaded.problems[0]}"
                                if skipped else None)
        return list(loaded.samples)

    def _set_samples(self, samples: list[Sample]) -> None:
        self._samples = {sample.id: sample for sample in samples}
        self.sample_ids = list(self._samples)
        self.assignment = assign(self.sample_ids, self.annotators, self.overlap)

    # -- people and orders --------------------------------------------------------------------
    def person(self, name: str) -> Person:
        """The person called ``name``; KeyError when there is none."""
        return self.people[name]

    def share(self, person: Person) -> list[str]:
        """The samples ``person`` labels, in sample order (the lead: every sample)."""
        if person.is_lead:
            return list(self.sample_ids)
        return [s for s in self.sample_ids if person.name in self.assignment.get(s, ())]

    def order(self, person: Person) -> list[str]:
        """The order ``person`` steps through with previous / next: their share in sample order;
        the lead's queue (:func:`lead_order`)."""
        if not person.is_lead:
            return self.share(person)
        return lead_order(self.sample_ids, self._labels(), self._judged())

    def queue(self, person: Person) -> list[str]:
        """``person``'s queue: an annotator's unlabelled share then the labelled; the lead's order."""
        order = self.order(person)
        return order if person.is_lead else unlabelled_first(order, self._own_labels(person, order), person.name)

    def next_sample(self, person: Person, after: str | None = None) -> str | None:
        """The next sample ``person`` has to label, after ``after`` in their order (wrapping round);
        for the lead, the next sample calling for a look and not adjudicated yet. Then the next of
        their re-check queue (:meth:`recheck`). None: done."""
        order = self.order(person)
        if not person.is_lead:
            found = next_unlabelled_in(self.store, order, person.name, after)
            return found if found is not None else self._next_recheck(person, order, after)
        labels, judged = self._labels(), self._judged()
        needed = [s for s in order if attention(labels.get(s, {}), judged.get(s)) is not None]
        start = after
        if after in order and after not in needed:  # continue from where the lead is in the full order
            later = set(order[order.index(after) + 1:])
            needed = [s for s in needed if s in later] + [s for s in needed if s not in later]
            start = None
        found = next_unlabelled(needed, labels, ADJUDICATED, start)
        return found if found is not None else self._next_recheck(person, order, after)

    def fingerprints(self) -> dict[str, str]:
        """Judged criterion id -> its wording fingerprint in the rubric now."""
        return rubric_fingerprints(self.rubric.judge_criteria)

    def recheck(self, person: Person) -> list[str]:
        """``person``'s re-check queue: the samples of their order whose own label (the lead's:
        adjudication) has a cell given under an older wording of its criterion."""
        fingerprints = self.fingerprints()
        return [s for s in self.order(person) if older_cells(self.store.label(s, person.writes_as), fingerprints)]

    def _next_recheck(self, person: Person, order: Sequence[str], after: str | None) -> str | None:
        """The first sample of the re-check queue after ``after`` in ``order`` (wrapping round)."""
        waiting = set(self.recheck(person))
        return next_sample_where(order, after, waiting.__contains__) if waiting else None

    def _labels(self) -> dict[str, dict[str, Label]]:
        return self.store.label_set().by_annotator

    def _own_labels(self, person: Person, order: Iterable[str]) -> dict[str, dict[str, Label]]:
        found: dict[str, dict[str, Label]] = {}
        for sample_id in order:
            label = self.store.label(sample_id, person.writes_as)
            if label is not None:
                found[sample_id] = {person.writes_as: label}
        return found

    def _judged(self) -> Mapping[str, Mapping[str, Any]]:
        return self.report.samples if self.report is not None else {}

    # -- reading ------------------------------------------------------------------------------
    def _readable(self, person: Person, sample_id: str) -> Sample:
        """The sample, if ``person`` may see it: Refused outside an annotator's share, NotFound
        for an id the lead asks for that no sample has."""
        if not person.is_lead and person.name not in self.assignment.get(sample_id, ()):
            raise Refused(f"{sample_id!r} is not one of your samples")
        sample = self._samples.get(sample_id)
        if sample is None:
            raise NotFound(f"no sample {sample_id!r}")
        return sample

    def view(self, person: Person, sample_id: str) -> SampleView:
        """What ``person`` sees of a sample: the sample, the judged criteria, their own label, where
        it is in their order; for the lead also every label and the judge's verdict."""
        self.sync()
        sample = self._readable(person, sample_id)
        order = self.order(person)
        index = order.index(sample_id)
        view = SampleView(sample, list(self.rubric.judge_criteria), self.store.label(sample_id, person.writes_as),
                          index + 1, len(order), order[index - 1] if index > 0 else None,
                          order[index + 1] if index + 1 < len(order) else None, fingerprints=self.fingerprints())
        if person.is_lead:
            view.assigned = self.assignment.get(sample_id, ())
            view.labels = dict(self._labels().get(sample_id, {}))
            view.judged = self._judged().get(sample_id)
            view.attention = attention(view.labels, view.judged)
        return view

    def label_of(self, person: Person, sample_id: str, annotator: str | None = None) -> Label | None:
        """A label: ``person``'s own, or (the lead only) ``annotator``'s. Refused otherwise."""
        self.sync()
        self._readable(person, sample_id)
        wanted = person.writes_as if annotator is None or annotator == person.name else annotator
        if wanted != person.writes_as and not person.is_lead:
            raise Refused("an annotator reads only their own labels")
        return self.store.label(sample_id, wanted)

    def progress(self, person: Person) -> dict[str, Any]:
        """``{person, role, done, total, recheck}`` (``recheck``: samples of their re-check queue; the
        lead: adjudicated of the samples calling for a look, with ``samples`` and each annotator's
        ``{done, total}`` under ``people``)."""
        self.sync()
        if not person.is_lead:
            share = self.share(person)
            done = sum(1 for s in share if is_labelled(self.store.label(s, person.name)))
            return {"person": person.name, "role": person.role, "done": done, "total": len(share),
                    "recheck": len(self.recheck(person))}
        labels, judged = self._labels(), self._judged()
        needed = [s for s in self.sample_ids if attention(labels.get(s, {}), judged.get(s)) is not None]
        people = {}
        for name in self.annotators:
            share = self.share(self.people[name])
            people[name] = {"done": sum(1 for s in share if is_labelled(labels.get(s, {}).get(name))),
                            "total": len(share)}
        return {"person": person.name, "role": person.role,
                "done": sum(1 for s in needed if is_labelled(labels.get(s, {}).get(ADJUDICATED))),
                "total": len(needed), "samples": len(self.sample_ids),
                "adjudicated": sum(1 for s in self.sample_ids if ADJUDICATED in labels.get(s, {})), "people": people,
                "recheck": len(self.recheck(person))}

    def judge_note(self) -> str | None:
        """What the lead should know about the judge's verdicts shown (None: they are current)."""
        if self.report is None:
            return "no judge verdicts: start serve with --results REPORT.json"
        current = self.rubric.content_hash()
        if self.report.rubric_hash != current:
            return (f"the judge verdicts in {self.report.path} are for another version of the rubric (hash "
                    f"{self.report.rubric_hash or 'missing'}, the rubric now {current}): grade again and restart "
                    f"serve with --results")
        return None

    def overview(self, person: Person) -> list[dict[str, Any]]:
        """The lead's table: per sample in the lead's order, who it is assigned to, every label, the
        judge's verdict and why it calls for a look. Refused for an annotator."""
        if not person.is_lead:
            raise Refused("only the lead sees everyone's labels")
        self.sync()
        labels, judged = self._labels(), self._judged()
        return [{"id": s, "assigned": self.assignment.get(s, ()), "labels": labels.get(s, {}),
                 "judged": judged.get(s), "attention": attention(labels.get(s, {}), judged.get(s))}
                for s in lead_order(self.sample_ids, labels, judged)]

    # -- writing ------------------------------------------------------------------------------
    def save(self, person: Person, sample_id: str, payload: Any) -> Label | None:
        """Replace ``person``'s whole label of the sample with the one ``payload`` describes (see
        :func:`label_from_payload`); the label as written (None: removed). The annotator is always
        ``person`` (the lead writes as :data:`ADJUDICATED`), whatever the payload says."""
        self.sync()
        self._readable(person, sample_id)
        label = label_from_payload(payload, self.rubric, self.store.label(sample_id, person.writes_as))
        try:
            _before, after = self.store.write(sample_id, LabelChange("label", label), person.writes_as)
        except ValueError as exc:
            raise PayloadError("body", str(exc)) from None
        return after


def _load_rubric(path: Path) -> Rubric:
    from rubric_studio.core.loading import load_rubric

    return load_rubric(path)
