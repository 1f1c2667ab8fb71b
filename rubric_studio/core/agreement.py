"""Judge–human agreement: how closely a rubric's verdicts match a person's labels.

Pure arithmetic over graded samples and :class:`~rubric_studio.core.labels._labels.Label`s,
in ``calibrate``'s JSON shape (docs/reference/reports.md#calibrate). "Positive" is **pass** for a sample and
**met** for a criterion cell (for a penalty criterion, met means the bad thing is
present: the arithmetic is the same, only the reading differs).

Definitions (r = rubric, h = human; counts over the compared items)::

    accuracy            = (both_pass + both_fail) / n
    kappa               = (p_o − p_e) / (1 − p_e)              Cohen's kappa
                          p_o = accuracy, p_e = (r_pass·h_pass + r_fail·h_fail) / n²
                          None when n < 2 (one item agrees or not; there is no chance
                          agreement to correct for) or p_e = 1 (both raters used one class only)
    kappa_ci            = Wilson's score interval of p_o mapped through κ = (p_o − p_e)/(1 − p_e)
                          with p_e held at its observed value, clipped to [−1, 1]
                          (:func:`rubric_studio.core.intervals.kappa_interval`: Cohen 1960's
                          interval with a score step in place of the Wald step; it keeps a
                          width when every item agrees or none does — 6 of 6 agreeing with
                          p_e = 0.5 give [0.2195, 1]; deterministic)
    false_pass_rate     = rubric_pass_human_fail / h_fail      human-failed items the rubric passes
    false_fail_rate     = rubric_fail_human_pass / h_pass      human-passed items the rubric fails
    coverage            = both_fail / h_fail  (= 1 − false_pass_rate)       EvalGen
    false_failure_rate  = rubric_fail_human_pass / h_pass (= false_fail_rate)  EvalGen
    alignment           = harmonic mean of coverage and (1 − false_failure_rate)

A rate is None when its denominator is 0. Only samples whose rubric verdict is
pass/fail count overall (pending, error and unjudged ones are excluded and counted
in the warnings); a criterion counts only cells that are met/unmet and that the
human labelled.

Each compared cell's label is also sorted by the wording it answered
(:mod:`rubric_studio.core.labels._wording`): ``labels_current`` answered the criterion as it
reads now, ``labels_older_wording`` an earlier wording, ``labels_unrecorded`` recorded none (a
label from before fingerprints, or imported); the three add up to the criterion's ``n``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.intervals import kappa_interval
from rubric_studio.core.labels import (
    CURRENT_WORDING,
    OLDER_MARK,
    OLDER_WORDING,
    UNRECORDED_WORDING,
    Label,
    rubric_fingerprints,
    wording_state,
)
from rubric_studio.core.results import SampleResult, Status, Verdict
from rubric_studio.core.rubric import Rubric

MIN_LABELS = 10
#: Cohen's kappa of fewer items is not reported (one item either agrees or not: nothing to correct for chance).
MIN_KAPPA_ITEMS = 2
MIN_CLASS_SHARE = 0.2
MIN_CELL_LABELS = 5
DIGITS = 4
AGREEMENT_KEYS = (
    "n", "accuracy", "kappa", "kappa_ci", "both_pass", "both_fail", "rubric_pass_human_fail",
    "rubric_fail_human_pass", "false_pass_rate", "false_fail_rate", "coverage",
    "false_failure_rate", "alignment",
)  # fmt: skip


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


@dataclass(frozen=True)
class Agreement:
    """A 2×2 confusion matrix (rubric × human) and the figures derived from it."""

    both_pass: int = 0
    both_fail: int = 0
    rubric_pass_human_fail: int = 0
    rubric_fail_human_pass: int = 0

    @classmethod
    def of(cls, pairs: Iterable[tuple[bool, bool]]) -> Agreement:
        """From (human_positive, rubric_positive) pairs."""
        counts = Counter(pairs)
        return cls(counts[(True, True)], counts[(False, False)], counts[(False, True)], counts[(True, False)])

    @property
    def n(self) -> int:
        return self.both_pass + self.both_fail + self.rubric_pass_human_fail + self.rubric_fail_human_pass

    @property
    def human_pass(self) -> int:
        return self.both_pass + self.rubric_fail_human_pass

    @property
    def human_fail(self) -> int:
        return self.both_fail + self.rubric_pass_human_fail

    @property
    def rubric_pass(self) -> int:
        return self.both_pass + self.rubric_pass_human_fail

    @property
    def rubric_fail(self) -> int:
        return self.both_fail + self.rubric_fail_human_pass

    @property
    def accuracy(self) -> float | None:
        return _ratio(self.both_pass + self.both_fail, self.n)

    @property
    def expected(self) -> float | None:
        """p_e: agreement expected by chance from the two raters' marginals."""
        n = self.n
        return (self.rubric_pass * self.human_pass + self.rubric_fail * self.human_fail) / (n * n) if n else None

    @property
    def kappa(self) -> float | None:
        p_o, p_e = self.accuracy, self.expected
        if self.n < MIN_KAPPA_ITEMS or p_o is None or p_e is None or math.isclose(p_e, 1.0):
            return None
        return (p_o - p_e) / (1 - p_e)

    @property
    def kappa_ci(self) -> tuple[float, float] | None:
        p_e = self.expected
        if self.kappa is None or p_e is None:
            return None
        return kappa_interval(self.both_pass + self.both_fail, self.n, p_e)

    @property
    def false_pass_rate(self) -> float | None:
        return _ratio(self.rubric_pass_human_fail, self.human_fail)

    @property
    def false_fail_rate(self) -> float | None:
        return _ratio(self.rubric_fail_human_pass, self.human_pass)

    @property
    def coverage(self) -> float | None:
        return _ratio(self.both_fail, self.human_fail)

    @property
    def false_failure_rate(self) -> float | None:
        return self.false_fail_rate

    @property
    def alignment(self) -> float | None:
        coverage, ffr = self.coverage, self.false_failure_rate
        if coverage is None or ffr is None:
            return None
        keep = 1 - ffr
        return 0.0 if coverage + keep == 0 else 2 * coverage * keep / (coverage + keep)

    def to_dict(self) -> dict[str, Any]:
        ci = self.kappa_ci
        return {
            "n": self.n,
            "accuracy": _round(self.accuracy),
            "kappa": _round(self.kappa),
            "kappa_ci": None if ci is None else [_round(ci[0]), _round(ci[1])],
            "both_pass": self.both_pass,
            "both_fail": self.both_fail,
            "rubric_pass_human_fail": self.rubric_pass_human_fail,
            "rubric_fail_human_pass": self.rubric_fail_human_pass,
            "false_pass_rate": _round(self.false_pass_rate),
            "false_fail_rate": _round(self.false_fail_rate),
            "coverage": _round(self.coverage),
            "false_failure_rate": _round(self.false_failure_rate),
            "alignment": _round(self.alignment),
        }


@dataclass
class AgreementReport:
    """Agreement overall and per criterion, the disagreeing samples, and caveats.

    ``pairs`` / ``cell_pairs`` keep the compared (human, rubric) values by sample id
    (``"pass"``/``"fail"``, ``"met"``/``"unmet"``) so versions can be diffed.
    """

    overall: Agreement
    criteria: dict[str, Agreement]
    disagreements: list[dict[str, Any]]
    warnings: list[str]
    pairs: dict[str, tuple[str, str]] = field(default_factory=dict)
    cell_pairs: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    #: Criterion id -> sample id -> the wording the compared cell's label answered
    #: (``current`` / ``older`` / ``unrecorded``, see the module docstring).
    cell_wordings: dict[str, dict[str, str]] = field(default_factory=dict)

    def wording_counts(self, criterion_id: str) -> dict[str, int]:
        """``{labels_current, labels_older_wording, labels_unrecorded}`` over the criterion's compared cells."""
        states = list(self.cell_wordings.get(criterion_id, {}).values())
        return {"labels_current": states.count(CURRENT_WORDING), "labels_older_wording": states.count(OLDER_WORDING),
                "labels_unrecorded": states.count(UNRECORDED_WORDING)}

    def older_wording(self, criterion_id: str) -> list[str]:
        """The samples whose compared label of the criterion was given under an older wording."""
        return [sid for sid, state in self.cell_wordings.get(criterion_id, {}).items() if state == OLDER_WORDING]

    def disagreeing_ids(self) -> list[str]:
        """Sample ids of :attr:`disagreements`, in sample order."""
        return [d["id"] for d in self.disagreements]

    def verdict_disagreements(self) -> set[str]:
        return {sid for sid, (human, rubric) in self.pairs.items() if human != rubric}

    def cell_disagreements(self, criterion_id: str) -> set[str]:
        return {sid for sid, (human, rubric) in self.cell_pairs.get(criterion_id, {}).items() if human != rubric}

    def disagreement_words(self, entry: dict[str, Any]) -> str:
        """What a human and the judge disagree on in one of :attr:`disagreements`, each as the pair
        it is: ``human: fail · judge: pass`` for the verdict, ``human: action-items unmet · judge:
        met`` for a cell. A sample whose verdicts agree is not shown as if they did not."""
        parts = []
        pair = self.pairs.get(entry["id"])
        if pair is not None and pair[0] != pair[1]:
            parts.append(f"human: {pair[0]} · judge: {pair[1]}")
        elif entry["human"] is not None and pair is None:
            parts.append(f"human: {entry['human']} · judge: {entry['rubric']} (not compared)")
        for criterion_id in entry["criteria"]:
            human, judge = self.cell_pairs.get(criterion_id, {}).get(entry["id"], ("?", "?"))
            parts.append(f"human: {criterion_id} {human} · judge: {judge}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The object of docs/reference/reports.md#calibrate (without ``fit``)."""
        return {
            "overall": self.overall.to_dict(),
            "criteria": {cid: {**a.to_dict(), **self.wording_counts(cid)} for cid, a in self.criteria.items()},
            "disagreements": [dict(d, criteria=list(d["criteria"])) for d in self.disagreements],
            "warnings": list(self.warnings),
        }


_COUNTED = (Verdict.PASS, Verdict.FAIL)
_CELL_COUNTED = (Status.MET, Status.UNMET)


def agreement(samples: Iterable[SampleResult], labels: Mapping[str, Label], rubric: Rubric) -> AgreementReport:
    """Compare rubric verdicts and cells with human labels (see the module docstring)."""
    samples = list(samples)
    criterion_ids = [c.key for c in rubric.criteria]
    fingerprints = rubric_fingerprints(rubric.criteria)
    pairs: dict[str, tuple[str, str]] = {}
    cell_pairs: dict[str, dict[str, tuple[str, str]]] = {}
    cell_wordings: dict[str, dict[str, str]] = {}
    labelled_criteria: set[str] = set()
    excluded: Counter[str] = Counter()
    excluded_cells: Counter[str] = Counter()
    unknown_criteria: set[str] = set()
    disagreements: list[dict[str, Any]] = []
    present = {s.id for s in samples}

    for sample in samples:
        label = labels.get(sample.id)
        if label is None:
            continue
        if label.verdict is not None:
            if sample.verdict in _COUNTED:
                pairs[sample.id] = (label.verdict, str(sample.verdict))
            else:
                excluded[str(sample.verdict)] += 1
        wrong_cells: list[str] = []
        for criterion_id, state in label.criteria.items():
            if criterion_id not in criterion_ids:
                unknown_criteria.add(criterion_id)
                continue
            labelled_criteria.add(criterion_id)
            cell = sample.cell(criterion_id)
            if cell is None or cell.status not in _CELL_COUNTED:
                excluded_cells[str(cell.status) if cell else "missing"] += 1
                continue
            cell_pairs.setdefault(criterion_id, {})[sample.id] = (state, str(cell.status))
            cell_wordings.setdefault(criterion_id, {})[sample.id] = \
                wording_state(label, criterion_id, fingerprints[criterion_id]) or UNRECORDED_WORDING
            if state != str(cell.status):
                wrong_cells.append(criterion_id)
        verdict_wrong = sample.id in pairs and pairs[sample.id][0] != pairs[sample.id][1]
        if verdict_wrong or wrong_cells:
            wrong_cells.sort(key=criterion_ids.index)
            disagreements.append(
                {"id": sample.id, "human": label.verdict, "rubric": str(sample.verdict), "criteria": wrong_cells}
            )

    overall = Agreement.of((h == "pass", r == "pass") for h, r in pairs.values())
    criteria = {
        cid: Agreement.of((h == "met", r == "met") for h, r in cell_pairs.get(cid, {}).values())
        for cid in criterion_ids
        if cid in labelled_criteria
    }
    warnings = _warnings(
        overall, criteria, excluded, excluded_cells, sorted(unknown_criteria),
        sorted(set(labels) - present), labels_given=bool(labels),
    )  # fmt: skip
    report = AgreementReport(overall, criteria, disagreements, warnings, pairs, cell_pairs, cell_wordings)
    warnings.extend(_older_wording_warnings(report))
    return report


def _older_wording_warnings(report: AgreementReport) -> list[str]:
    """A warning per criterion with labels compared that were given under an older wording of it."""
    out = []
    for cid, figures in report.criteria.items():
        older = len(report.older_wording(cid))
        if older:
            out.append(f"criterion {cid}: {older} of {figures.n} labels compared were {OLDER_MARK} given "
                       f"under an older wording of it; re-check them (R in the studio)")
    return out


def _warnings(
    overall: Agreement,
    criteria: dict[str, Agreement],
    excluded: Counter[str],
    excluded_cells: Counter[str],
    unknown_criteria: list[str],
    orphan_labels: list[str],
    *,
    labels_given: bool,
) -> list[str]:
    out: list[str] = []
    if not labels_given:
        out.append("no human labels: label samples (p / f in the studio) or write the labels sidecar")
    if excluded:
        detail = ", ".join(f"{count} {status}" for status, count in sorted(excluded.items()))
        out.append(f"{sum(excluded.values())} labelled samples excluded: rubric verdict not pass/fail ({detail})")
    if excluded_cells:
        detail = ", ".join(f"{count} {status}" for status, count in sorted(excluded_cells.items()))
        out.append(f"{sum(excluded_cells.values())} labelled cells excluded: not met/unmet ({detail})")
    n = overall.n
    if labels_given and n < MIN_LABELS:
        out.append(f"only {n} labelled samples compared; kappa and rates mean little below {MIN_LABELS}")
    if n:
        minority, name = min((overall.human_pass, "pass"), (overall.human_fail, "fail"))
        if minority / n < MIN_CLASS_SHARE:
            out.append(
                f"labels are unbalanced: {minority} of {n} human verdicts are {name} "
                f"({minority / n:.0%}); kappa is unstable when a class is under {MIN_CLASS_SHARE:.0%}"
            )
    for cid, agreement_ in criteria.items():
        if agreement_.n < MIN_CELL_LABELS:
            out.append(f"criterion {cid}: only {agreement_.n} labelled cells compared (fewer than {MIN_CELL_LABELS})")
    if unknown_criteria:
        out.append(f"labels name criteria the rubric does not have: {', '.join(unknown_criteria)}")
    if orphan_labels:
        shown = ", ".join(orphan_labels[:5]) + (" ..." if len(orphan_labels) > 5 else "")
        out.append(f"{len(orphan_labels)} labels are for samples not in this set: {shown}")
    return out
