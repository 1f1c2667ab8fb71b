"""The studio's results state, without Textual: rows, flips, filters, search, sorting, redaction.

:class:`ResultsModel` holds what the live pane shows — the samples in file order (with the
text a search looks through), their latest results, the human labels and the flip marks
against the previous completed run — and answers "which rows, in which order" for a filter,
a search and a sort. The app owns one and hands it to the matrix widget (attributes down).

Two filters are about one criterion (:data:`CRITERION_FILTERS`: its cell unmet, or in error):
the table passes the criterion it had in focus when the filter was picked; without one they
look at every cell of the row.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from rubric_studio.core.labels import Label
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict
from rubric_studio.core.rubric import Criterion
from rubric_studio.engine.report import Summary

FILTERS: dict[str, str] = {
    "all": "all samples",
    "failing": "failing",
    "disagree": "disagreeing with the label",
    "errors": "errors",
    "pending": "pending",
    "unmet": "criterion unmet",
    "cell-error": "criterion error",
    "made-up": "made-up quote",
    "unlabelled": "no label yet",
    "split": "split panel",
    "people": "people disagree",
}
#: Filters about one criterion's cell (the focused one), or about every cell without one.
CRITERION_FILTERS: dict[str, Status] = {"unmet": Status.UNMET, "cell-error": Status.ERROR}
SORTS: dict[str, str] = {
    "file": "file order",
    "id": "id",
    "score": "score",
    "verdict": "verdict",
    "contested": "most contested first",
}
_VERDICT_RANK = {
    Verdict.ERROR: 0,
    Verdict.FAIL: 1,
    Verdict.PENDING: 2,
    Verdict.UNJUDGED: 3,
    Verdict.PASS: 4,
}
UP, DOWN = 1, -1
FLIP_STATES = (Status.MET, Status.UNMET)


def label_verdict_disagrees(result: SampleResult | None, label: Label | None) -> bool:
    """The human's pass/fail differs from a final pass/fail verdict of the rubric."""
    if result is None or label is None or label.verdict is None:
        return False
    if result.verdict not in (Verdict.PASS, Verdict.FAIL):
        return False
    return str(result.verdict) != label.verdict


def cell_disagrees(cell: CriterionResult | None, label: Label | None) -> bool:
    """The human's met/unmet for this criterion differs from the cell's final status."""
    if cell is None or label is None or cell.status not in FLIP_STATES:
        return False
    human = label.criteria.get(cell.id)
    return human is not None and human != str(cell.status)


def disagrees(result: SampleResult | None, label: Label | None) -> bool:
    """Verdict or any labelled criterion disagrees with the human label."""
    if result is None or label is None:
        return False
    if label_verdict_disagrees(result, label):
        return True
    return any(cell_disagrees(cell, label) for cell in result.criteria)


def has_human_label(label: Label | None) -> bool:
    """A person judged the sample: a verdict, a score or a labelled criterion (a note alone is not one)."""
    return label is not None and (label.verdict is not None or label.score is not None or bool(label.criteria))


def has_made_up_quote(cell: CriterionResult | None) -> bool:
    """The cell's judge quoted something that is in no text it was shown (see ``Evidence.made_up``)."""
    return cell is not None and any(item.made_up for item in cell.evidence)


def filter_label(kind: str, criterion: str | None = None) -> str:
    """How a filter reads, naming its criterion: "unmet: tone"; "any criterion unmet" without one."""
    label = FILTERS[kind]
    if kind not in CRITERION_FILTERS:
        return label
    status = label.split(" ", 1)[1]
    return f"{status}: {criterion}" if criterion else f"any criterion {status}"


def matches(kind: str, result: SampleResult | None, label: Label | None, criterion: str | None = None) -> bool:
    """Whether a row passes the filter ``kind`` (a key of :data:`FILTERS`); ``criterion``
    narrows the :data:`CRITERION_FILTERS` to that criterion's cell."""
    if kind == "all":
        return True
    if kind == "unlabelled":
        return not has_human_label(label)
    if result is None:
        return kind == "pending"
    if kind in CRITERION_FILTERS:
        cells = result.criteria if criterion is None else [c for c in result.criteria if c.id == criterion]
        return any(c.status is CRITERION_FILTERS[kind] for c in cells)
    if kind == "made-up":
        return any(has_made_up_quote(c) for c in result.criteria)
    if kind == "failing":
        return result.verdict is Verdict.FAIL
    if kind == "errors":
        return result.verdict is Verdict.ERROR or any(c.status is Status.ERROR for c in result.criteria)
    if kind == "pending":
        return result.verdict is Verdict.PENDING or any(c.status is Status.PENDING for c in result.criteria)
    if kind == "disagree":
        return disagrees(result, label)
    if kind == "people":  # needs every annotator's labels: ResultsModel.visible answers it
        return False
    if kind == "split":  # a judge panel whose members did not agree on some criterion
        from rubric_studio.core.panel import is_split

        return any(is_split(c) for c in result.criteria)
    raise ValueError(f"unknown filter {kind!r}")


def compute_flips(previous: SampleResult | None, current: SampleResult) -> tuple[dict[str, int], int]:
    """Cells of ``current`` that changed met↔unmet since ``previous`` (↑ +1 now met, ↓ −1 now
    unmet), and the verdict's pass↔fail flip (+1 now pass, −1 now fail, 0 none)."""
    if previous is None:
        return {}, 0
    before = {c.id: c.status for c in previous.criteria}
    flips: dict[str, int] = {}
    for cell in current.criteria:
        old = before.get(cell.id)
        if old in FLIP_STATES and cell.status in FLIP_STATES and old != cell.status:
            flips[cell.id] = UP if cell.status is Status.MET else DOWN
    verdict = 0
    pair = (previous.verdict, current.verdict)
    if pair == (Verdict.FAIL, Verdict.PASS):
        verdict = UP
    elif pair == (Verdict.PASS, Verdict.FAIL):
        verdict = DOWN
    return flips, verdict


class SearchableSample(Protocol):
    """What a search looks through (a :class:`~rubric_studio.core.samples._samples.Sample` is one)."""

    id: str
    input: str | None
    output: str


def matches_search(query: str, sample_id: str, text: str | None) -> bool:
    """``query`` (already case-folded) is part of the sample id or of ``text`` (case-folded)."""
    return query in sample_id.casefold() or (text is not None and query in text)


@dataclass
class Counts(Summary):
    """The run's verdict tallies, plus what the human labels add."""

    disagree: int = 0
    labelled: int = 0


@dataclass
class ResultsModel:
    """Everything the live pane shows, keyed by sample id."""

    criteria: list[Criterion] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    results: dict[str, SampleResult] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)
    #: Results of the last completed run before the current one (flips compare with it).
    baseline: dict[str, SampleResult] = field(default_factory=dict)
    flips: dict[str, dict[str, int]] = field(default_factory=dict)
    verdict_flips: dict[str, int] = field(default_factory=dict)
    #: The files changed into something invalid: these results are the last good ones.
    stale: bool = False
    version: int = 0
    #: Samples whose annotators labelled a verdict or a cell differently, not adjudicated yet
    #: (the filter "people disagree"; see :meth:`set_labels`).
    people_disagree: set[str] = field(default_factory=set)
    #: The current annotator's own labels, and whether the table shows them (the human column,
    #: its ≠ marks and the label filters) instead of the consensus (:meth:`show_own_labels`).
    own_labels: dict[str, Label] = field(default_factory=dict)
    show_own: bool = False
    #: Sample id -> the sample, when :meth:`set_samples` was given samples (a search reads their text).
    samples: dict[str, SearchableSample] = field(default_factory=dict)
    _folded: dict[str, str] = field(default_factory=dict, repr=False)

    # -- updates -------------------------------------------------------------
    def set_samples(self, samples: Iterable[str | SearchableSample]) -> None:
        """The samples, in file order: ids, or samples whose input and output a search reads too."""
        self.order = []
        self.samples = {}
        self._folded = {}
        for item in samples:
            if isinstance(item, str):
                self.order.append(item)
            else:
                self.order.append(item.id)
                self.samples[item.id] = item
        keep = set(self.order)
        self.results = {k: v for k, v in self.results.items() if k in keep}
        self.flips = {k: v for k, v in self.flips.items() if k in keep}
        self.verdict_flips = {k: v for k, v in self.verdict_flips.items() if k in keep}
        self.version += 1

    def set_criteria(self, criteria: list[Criterion]) -> None:
        self.criteria = list(criteria)
        self.version += 1

    def set_labels(self, labels: Mapping[str, Label], people_disagree: Iterable[str] | None = None) -> None:
        """The labels (each sample's consensus) and, when given, the samples whose annotators disagree
        with no adjudication yet."""
        self.labels = dict(labels)
        if people_disagree is not None:
            self.people_disagree = set(people_disagree)
        self.version += 1

    def set_own_labels(self, labels: Mapping[str, Label]) -> None:
        """The current annotator's own labels (shown while :attr:`show_own` is set)."""
        self.own_labels = dict(labels)
        self.version += 1

    def show_own_labels(self, show: bool) -> None:
        """Show the current annotator's labels (True) or the consensus (False) in the table."""
        self.show_own = show
        self.version += 1

    @property
    def shown_labels(self) -> dict[str, Label]:
        """The labels the table shows: the current annotator's or the consensus."""
        return self.own_labels if self.show_own else self.labels

    def start_run(self, baseline: Mapping[str, SampleResult] | None) -> None:
        """A new run begins: flips are now counted against ``baseline``."""
        self.baseline = dict(baseline or {})
        self.flips.clear()
        self.verdict_flips.clear()
        self.version += 1

    def update(self, results: Iterable[SampleResult]) -> list[str]:
        """Store new results; return the ids whose row changed."""
        changed = []
        for result in results:
            self.results[result.id] = result
            cells, verdict = compute_flips(self.baseline.get(result.id), result)
            if cells:
                self.flips[result.id] = cells
            else:
                self.flips.pop(result.id, None)
            if verdict:
                self.verdict_flips[result.id] = verdict
            else:
                self.verdict_flips.pop(result.id, None)
            changed.append(result.id)
        self.version += 1
        return changed

    # -- queries -------------------------------------------------------------
    def flip_counts(self) -> tuple[int, int]:
        up = down = 0
        for cells in self.flips.values():
            for direction in cells.values():
                if direction > 0:
                    up += 1
                else:
                    down += 1
        return up, down

    def counts(self) -> Counts:
        """Verdict tallies, disagreements with the labels, and the pass rate's counts (overall only:
        the header shows the raw and corrected pass rate)."""
        from rubric_studio.core.pass_rate import PassRateTally

        rate_counts = PassRateTally()
        counts = Counts(samples=len(self.order), pass_rate=rate_counts)
        rates = rate_counts.overall
        for sample_id in self.order:
            result = self.results.get(sample_id)
            label = self.labels.get(sample_id)
            if label is not None and label.verdict is not None:
                counts.labelled += 1
            if result is None:
                counts.pending += 1
                continue
            counts.count(result.verdict)
            if result.verdict in (Verdict.PASS, Verdict.FAIL):
                human = label.verdict if label is not None and label.verdict in ("pass", "fail") else None
                rates.count(result.verdict is Verdict.PASS, None if human is None else human == "pass")
            if label is not None and disagrees(result, label):
                counts.disagree += 1
        return counts

    def searchable_text(self, sample_id: str) -> str | None:
        """The sample's input and output, case-folded (once, on the first search), or None."""
        text = self._folded.get(sample_id)
        if text is None:
            sample = self.samples.get(sample_id)
            if sample is None:
                return None
            text = self._folded[sample_id] = f"{sample.input or ''}\n{sample.output}".casefold()
        return text

    def visible(self, filter_kind: str = "all", sort: str = "file", reverse: bool = False, *,
                criterion: str | None = None, search: str = "") -> list[str]:
        """Sample ids passing ``filter_kind`` (about ``criterion`` for a criterion filter) whose id,
        input or output holds ``search`` (any case), ordered by ``sort``."""
        ids = list(self.order)
        if filter_kind == "people":  # about every annotator's labels, not the consensus one row holds
            ids = [i for i in ids if i in self.people_disagree]
        elif filter_kind != "all":
            results, labels = self.results, self.shown_labels
            ids = [i for i in ids if matches(filter_kind, results.get(i), labels.get(i), criterion)]
        query = search.casefold() if search.strip() else ""
        if query:
            ids = [i for i in ids if matches_search(query, i, self.searchable_text(i))]
        if sort == "id":
            ids.sort(key=_natural_key)
        elif sort == "score":
            # Worst first; then rows with only a partial figure (no final verdict), by it; rows
            # without either go last. A partial figure is never ranked as if it were a score.
            def by_score(i: str) -> tuple[int, float]:
                result = self.results.get(i)
                if result is not None and result.score is not None:
                    return (0, result.score)
                if result is not None and result.partial_score is not None:
                    return (1, result.partial_score)
                return (2, 0.0)

            ids.sort(key=by_score)
        elif sort == "contested":  # a judge panel's closest splits first: the labels worth a person's time
            from rubric_studio.core.panel import contest

            def by_contest(i: str) -> float:
                result = self.results.get(i)
                return -max((contest(c) for c in result.criteria), default=0.0) if result is not None else 0.0

            ids.sort(key=by_contest)
        elif sort == "verdict":
            def by_verdict(i: str) -> int:
                result = self.results.get(i)
                return 2 if result is None else _VERDICT_RANK.get(result.verdict, 5)

            ids.sort(key=by_verdict)
        elif sort != "file":
            raise ValueError(f"unknown sort {sort!r}")
        if reverse:
            ids.reverse()
        return ids


def _natural_key(text: str) -> list[object]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


# -- redaction -----------------------------------------------------------------
_SECRET_PATTERNS = [
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)([\"']?(?:api[_-]?key|x-api-key|authorization|access[_-]?token)[\"']?\s*[:=]\s*[\"']?)([^\s\"',}]{4,})"),
]
SECRET_ENV = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with API keys and bearer tokens replaced by ``••••``."""
    values = [s for s in (secrets if secrets is not None else (os.environ.get(n) for n in SECRET_ENV)) if s and len(s) >= 6]
    for value in values:
        text = text.replace(value, "••••")
    text = _SECRET_PATTERNS[0].sub("sk-••••", text)
    text = _SECRET_PATTERNS[1].sub(lambda m: f"{m.group(1)} ••••", text)
    text = _SECRET_PATTERNS[2].sub(lambda m: f"{m.group(1)}••••", text)
    return text
