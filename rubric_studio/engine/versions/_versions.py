"""Rubric versions, what each was graded against, and what changed between any two of them.

Every graded save becomes a :class:`Version`: the rubric text and its hash, each sample's
verdict, cell statuses and score, the human labels at that moment, and the agreement
with them. A version also records what it was graded against — the rubric text hash, a
fingerprint of the samples, a fingerprint of the labels and a key of the judge — and so
what kind of event it is (:attr:`Version.kind`): a "rubric edit", a "samples change", a
"labels change", a "judge change", a "panel change", an "annotator change" (these two are
described in :mod:`rubric_studio.engine.versions._causes`), several of them joined with " + ",
or the "first run".
Grading the same four again updates the latest version in place.

That keeps the "this edit fixed 3 disagreements, broke 1" line of
:meth:`VersionHistory.diff` honest: a samples file changed after an outcome edit is its
own "samples change" version, not blamed on the edit; relabelling a sample is a "labels
change" version (:meth:`VersionHistory.record_labels`) whose diff compares each version
with its own labels. The diff itself lives in :mod:`rubric_studio.engine.versions._diff`.

A history may be backed by a store (:mod:`rubric_studio.engine.versions._history`): recorded
versions are appended to it and :meth:`VersionHistory.load_past` reads earlier sessions'
versions back, so today's version compares with yesterday's.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from rubric_studio.engine.versions._causes import causes, is_panel_key, judge_key_of
from rubric_studio.engine.versions._diff import (
    FIGURES,
    Fixes,
    LabelsSnapshot,
    Pairs,
    VersionDiff,
    agreement_changes,
    cell_flips,
    figures_of,
    pairs_from_labels,
    pairs_from_report,
    rubric_changes,
    verdict_flips,
)

if TYPE_CHECKING:
    from rubric_studio.core.agreement import AgreementReport
    from rubric_studio.core.labels import Label
    from rubric_studio.core.results import SampleResult
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.core.samples import Sample

__all__ = ["FIGURES", "Fixes", "LabelsSnapshot", "Version", "VersionDiff", "VersionHistory", "change_kind",
           "judge_key_of", "labels_fingerprint_of", "labels_snapshot", "rubric_changes", "samples_fingerprint_of",
           "text_hash"]  # fmt: skip

FIRST_RUN = "first run"
RUBRIC_EDIT, SAMPLES_CHANGE, LABELS_CHANGE, JUDGE_CHANGE = "rubric edit", "samples change", "labels change", "judge change"
PANEL_CHANGE, ANNOTATOR_CHANGE = "panel change", "annotator change"
NO_CHANGE = "no change"
_BASIS = (("text_hash", RUBRIC_EDIT), ("samples_fingerprint", SAMPLES_CHANGE),
          ("labels_fingerprint", LABELS_CHANGE), ("judge_key", JUDGE_CHANGE),
          ("annotators_key", ANNOTATOR_CHANGE))  # fmt: skip
#: Kinds a labelling run coalesces into (one version per run, not one per key).
LABEL_KINDS = (LABELS_CHANGE, ANNOTATOR_CHANGE)


# -- fingerprints ----------------------------------------------------------------------------
def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def text_hash(rubric: Rubric, text: str | None = None) -> str:
    """Hash of the rubric's file text (falls back to its content hash)."""
    source = text if text is not None else rubric._source_text
    if source is None:
        return rubric.content_hash()
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def samples_fingerprint_of(samples: Iterable[Sample]) -> str:
    """One hash of every sample's id and what a judge sees of it (order does not matter)."""
    return _digest(sorted((sample.id, sample.fingerprint()) for sample in samples))


def labels_snapshot(labels: Mapping[str, Label]) -> LabelsSnapshot:
    """The part of the labels a diff compares with: verdict and criteria per labelled sample."""
    out: LabelsSnapshot = {}
    for sid, label in labels.items():
        if label.verdict is not None or label.criteria:
            out[sid] = {"verdict": label.verdict, "criteria": dict(label.criteria)}
    return out


def labels_fingerprint_of(labels: Mapping[str, Label] | LabelsSnapshot) -> str:
    """One hash of the labels' verdicts and criteria (notes and scores do not count)."""
    snapshot = {sid: value for sid, value in labels.items() if isinstance(value, dict)}
    if len(snapshot) != len(labels):
        snapshot = labels_snapshot(labels)  # type: ignore[arg-type]
    return _digest(snapshot)


# -- versions ----------------------------------------------------------------------------------
@dataclass
class Version:
    """One graded state of the rubric: what it was graded against, and the results.

    ``rubric`` is the parsed rubric; a version read back from a history file holds only its
    ``text`` and parses it the first time ``rubric`` is asked for (None when it no longer parses).
    """

    number: int
    timestamp: float
    text_hash: str
    verdicts: dict[str, str]
    cells: dict[str, dict[str, str]]  # sample id -> criterion id -> status
    scores: dict[str, float | None]
    agreement: AgreementReport | None = None
    kind: str = FIRST_RUN
    samples_fingerprint: str | None = None
    labels_fingerprint: str | None = None
    judge_key: str | None = None
    labels: LabelsSnapshot | None = None
    text: str | None = None
    rubric_path: str | None = None
    stored_figures: dict[str, Any] | None = None  # agreement figures read back from a history file
    #: Who gave any label, sorted and comma-separated (None: not recorded, a version from before annotators).
    annotators_key: str | None = None
    #: Who made the label edits of a labels / annotator change version (None: unknown, e.g. the file changed).
    labelled_by: str | None = None
    _rubric: Rubric | None = field(default=None, repr=False, compare=False)
    _unparsable: bool = field(default=False, repr=False, compare=False)

    @property
    def rubric(self) -> Rubric | None:
        if self._rubric is None and self.text is not None and not self._unparsable:
            from rubric_studio.core.loading import parse_rubric

            try:
                self._rubric = parse_rubric(self.text, self.rubric_path or "<version>")
            except Exception:  # a stored text that no longer parses: the version still lists and diffs
                self._unparsable = True
        return self._rubric

    @property
    def label(self) -> str:
        moment = datetime.datetime.fromtimestamp(self.timestamp)
        when = moment.strftime("%H:%M:%S") if moment.date() == datetime.date.today() else moment.strftime("%Y-%m-%d %H:%M")
        by = f" by {self.labelled_by}" if self.labelled_by and any(k in self.kind for k in LABEL_KINDS) else ""
        return f"v{self.number} {when} · {self.kind}{by}"

    @property
    def basis(self) -> tuple[str | None, ...]:
        """What the version was graded against: rubric text, samples, labels, judge, annotators."""
        return tuple(getattr(self, name) for name, _ in _BASIS)

    def same_basis(self, other: Version) -> bool:
        """The same basis; an annotators key not recorded (or nobody's) on either side matches any,
        as :func:`change_kind` sees no annotator change there."""
        return all(a == b or (name == "annotators_key" and not (a and b))
                   for (name, _), a, b in zip(_BASIS, self.basis, other.basis, strict=True))  # fmt: skip

    def counts(self) -> dict[str, int]:
        """How many samples pass, fail, and have no final verdict."""
        values = list(self.verdicts.values())
        passed, failed = values.count("pass"), values.count("fail")
        return {"pass": passed, "fail": failed, "other": len(values) - passed - failed}

    def own_pairs(self) -> Pairs | None:
        """(human, rubric) pairs against the labels this version was graded with."""
        if self.labels is not None:
            return pairs_from_labels(self.verdicts, self.cells, self.labels)
        return pairs_from_report(self.agreement)

    def figures(self) -> dict[str, Any] | None:
        """Agreement with its labels, overall and per criterion (None when nothing is known)."""
        pairs = self.own_pairs()
        if pairs is None:
            return self.stored_figures
        return figures_of(pairs)


def change_kind(before: Version | None, after: Version) -> str:
    """What changed from ``before`` to ``after``: "first run", "rubric edit + samples change" ..."""
    if before is None:
        return FIRST_RUN
    names = []
    for name, kind in _BASIS:
        a, b = getattr(before, name), getattr(after, name)
        if a == b or (name == "annotators_key" and not (a and b)):
            continue  # equal; who labelled not recorded (a history from before annotators); the first labeller
        names.append(PANEL_CHANGE if name == "judge_key" and (is_panel_key(a) or is_panel_key(b)) else kind)
    if ANNOTATOR_CHANGE in names and LABELS_CHANGE in names:
        names.remove(LABELS_CHANGE)  # the labels changed because someone's labels joined or left
    return " + ".join(names) or NO_CHANGE


class HistoryStore(Protocol):
    """Where versions outlive the session (see :class:`rubric_studio.engine.versions._history.RunHistory`)."""

    warnings: list[str]

    def load(self) -> list[Version]: ...

    def append(self, version: Version) -> bool: ...


class VersionHistory:
    """The versions of one rubric, oldest first (at most ``limit`` kept); appended to ``store`` if given."""

    def __init__(self, limit: int = 200, store: HistoryStore | None = None):
        self.versions: list[Version] = []
        self.limit = limit
        self.store = store
        self.warnings: list[str] = []  # what the store could not read or write
        self._next = 1

    def __len__(self) -> int:
        return len(self.versions)

    @property
    def latest(self) -> Version | None:
        return self.versions[-1] if self.versions else None

    def get(self, number: int) -> Version:
        for version in self.versions:
            if version.number == number:
                return version
        raise KeyError(number)

    def load_past(self) -> int:
        """Read the store's versions into an empty history (numbering continues after them);
        how many were loaded. Unreadable entries become :attr:`warnings`, never errors."""
        if self.store is None or self.versions:
            return 0
        past = sorted(self.store.load(), key=lambda v: v.number)[-self.limit :]
        self._take_warnings()
        self.versions = past
        self._next = (past[-1].number + 1) if past else 1
        return len(past)

    def record(
        self,
        rubric: Rubric,
        results: list[SampleResult],
        agreement: AgreementReport | None = None,
        *,
        text: str | None = None,
        timestamp: float | None = None,
        samples_fingerprint: str | None = None,
        labels_fingerprint: str | None = None,
        judge_key: str | None = None,
        labels: Mapping[str, Label] | None = None,
        annotators_key: str | None = None,
    ) -> Version:
        """Record graded results. ``labels`` (the labels graded against) are kept as a snapshot
        and fingerprinted unless ``labels_fingerprint`` is given. The same rubric text, samples,
        labels and judge as the latest version update it in place; anything else is a new version."""
        if labels_fingerprint is None and labels is not None:
            labels_fingerprint = labels_fingerprint_of(labels)
        candidate = Version(
            self._next, time.time() if timestamp is None else timestamp, text_hash(rubric, text),
            {r.id: str(r.verdict) for r in results}, {r.id: {c.id: str(c.status) for c in r.criteria} for r in results},
            {r.id: r.score for r in results}, agreement, samples_fingerprint=samples_fingerprint,
            labels_fingerprint=labels_fingerprint, judge_key=judge_key,
            labels=labels_snapshot(labels) if labels is not None else None,
            text=text if text is not None else rubric._source_text, rubric_path=rubric.path, _rubric=rubric,
            annotators_key=annotators_key,
        )  # fmt: skip
        return self._add(candidate)

    def record_labels(
        self,
        labels: Mapping[str, Label],
        *,
        agreement: AgreementReport | None = None,
        labels_fingerprint: str | None = None,
        timestamp: float | None = None,
        coalesce: bool = False,
        persist: bool = True,
        annotators_key: str | None = None,
        by: str | None = None,
    ) -> Version | None:
        """The labels changed, the results did not: a "labels change" version with the latest
        version's results and the new labels (None before anything was graded).

        ``coalesce``: when the latest version is itself a labels change, it takes the new labels
        in place (a labelling run is one version, not one per key pressed); with ``persist`` False
        that update is not written to the store until :meth:`persist` is called.

        ``annotators_key``: who has labels now (see :func:`~rubric_studio.engine.versions._causes.annotators_key_of`;
        a change of it makes the version an "annotator change"); ``by``: who made this edit (None:
        unknown). A labelling run coalesces only while the same person labels."""
        latest = self.latest
        if latest is None:
            return None
        fingerprint = labels_fingerprint or labels_fingerprint_of(labels)
        annotators_key = latest.annotators_key if annotators_key is None else annotators_key
        if coalesce and self.coalesces_with(by):
            latest.labels_fingerprint, latest.labels = fingerprint, labels_snapshot(labels)
            latest.annotators_key = annotators_key
            latest.agreement, latest.stored_figures = agreement, None
            latest.kind = change_kind(self.versions[-2], latest)
            if persist:
                self._persist(latest)
            return latest
        candidate = replace(latest, number=self._next, timestamp=time.time() if timestamp is None else timestamp,
                            labels_fingerprint=fingerprint, labels=labels_snapshot(labels),
                            agreement=agreement, stored_figures=None, annotators_key=annotators_key,
                            labelled_by=by)  # fmt: skip
        return self._add(candidate)

    def coalesces_with(self, by: str | None) -> bool:
        """Whether a label edit by ``by`` would update the latest version in place: it is itself a
        labels (or annotator) change, not the first version, and made by the same person."""
        latest = self.latest
        return (latest is not None and latest.kind in LABEL_KINDS and len(self.versions) > 1
                and latest.labelled_by == by)  # fmt: skip

    def _add(self, candidate: Version) -> Version:
        latest = self.latest
        if latest is not None and latest.same_basis(candidate):
            latest.verdicts, latest.cells, latest.scores = candidate.verdicts, candidate.cells, candidate.scores
            latest.agreement, latest.stored_figures = candidate.agreement, None
            latest.labels = candidate.labels if candidate.labels is not None else latest.labels
            latest.text = candidate.text if candidate.text is not None else latest.text
            latest.annotators_key = latest.annotators_key if candidate.annotators_key is None else candidate.annotators_key
            latest._rubric = candidate._rubric or latest._rubric
            self._persist(latest)
            return latest
        candidate.kind = change_kind(latest, candidate)
        self._next = candidate.number + 1
        self.versions.append(candidate)
        del self.versions[: max(0, len(self.versions) - self.limit)]
        self._persist(candidate)
        return candidate

    def persist(self, version: Version) -> None:
        """Write ``version`` (as it is now) to the store, if there is one."""
        self._persist(version)

    def _persist(self, version: Version) -> None:
        if self.store is not None:
            self.store.append(version)
            self._take_warnings()

    def _take_warnings(self) -> None:
        if self.store is not None and self.store.warnings:
            self.warnings.extend(self.store.warnings)
            self.store.warnings.clear()

    def diff_latest(self, labels: Mapping[str, Label] | None = None) -> VersionDiff | None:
        """The diff of the latest version against the one before, if there are two."""
        if len(self.versions) < 2:
            return None
        return self.diff(self.versions[-2], self.versions[-1], labels)

    def diff(
        self, a: Version | int, b: Version | int, labels: Mapping[str, Label] | None = None, *, compare_rubrics: bool = True
    ) -> VersionDiff:
        """What changed from ``a`` to ``b`` (versions or their numbers), and what kind of change it was.

        Without ``labels`` each version is compared with the labels it was graded against.
        With ``labels`` both are compared with those (so a label edited after the two versions
        is not credited to the rubric edit between them) — unless the two versions were graded
        against different labels: then the labels change is part of what the diff describes,
        and each version is compared with its own labels. ``compare_rubrics=False`` leaves
        :attr:`VersionDiff.rubric_changes` empty (no stored rubric text is parsed: a listing).
        """
        va = self.get(a) if isinstance(a, int) else a
        vb = self.get(b) if isinstance(b, int) else b
        out = VersionDiff(va.number, vb.number, change_kind(va, vb))
        out.causes = causes(va, vb)
        verdict_flips(out, va.verdicts, vb.verdicts)
        cell_flips(out, va.cells, vb.cells)
        pa, pb = _compared_pairs(va, vb, labels)
        if pa is not None and pb is not None:
            agreement_changes(out, pa, pb)
        if compare_rubrics and va.text_hash != vb.text_hash:
            ra, rb = va.rubric, vb.rubric
            known = ra is not None and rb is not None
            out.rubric_changes = rubric_changes(ra, rb) if known else ["rubric changes unknown: a text is not kept or no longer parses"]
        return out


def _compared_pairs(va: Version, vb: Version, labels: Mapping[str, Label] | None) -> tuple[Pairs | None, Pairs | None]:
    given = None if labels is None else labels_snapshot(labels)
    if given is not None and va.labels_fingerprint == vb.labels_fingerprint:
        return (pairs_from_labels(va.verdicts, va.cells, given), pairs_from_labels(vb.verdicts, vb.cells, given))
    pairs = []
    for version in (va, vb):
        own = version.own_pairs()
        if own is None and given is not None:
            own = pairs_from_labels(version.verdicts, version.cells, given)
        pairs.append(own)
    return pairs[0], pairs[1]
