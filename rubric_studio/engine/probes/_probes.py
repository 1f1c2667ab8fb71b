"""Bias probes: does the judge change its verdict when something it should ignore changes?

Judges reward length, confident tone and wording they like (MT-Bench's verbosity attack; CALM,
"Justice or Prejudice?", 2024, measures such biases by perturbing the judged text). A probe
grades the samples as they are (the *baseline*), then grades controlled perturbations of them
(:mod:`rubric_studio.engine.probes._perturb`) and counts, per judge criterion, the cells whose
verdict flipped: the flip rate with its Wilson 95% interval and the direction (unmet → met,
met → unmet). Checks are deterministic and not probed.

Samples: the labelled ones when there are any (the cells someone cares enough about to label),
else all of them. Every run goes through one :class:`~rubric_studio.engine.grader.Grader` and
the reply cache, so a probe run again costs no calls. The ``order`` probe compares the criteria
judged together in one batch call in the rubric's order and in a seeded other order; since a
batch verdict is cached per criterion, each order is filed under a cache identity of its own
(:attr:`Grader.cache_variant`). Nothing is written to the rubric or the labels.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.intervals import wilson_interval
from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.probes._perturb import (
    DESCRIPTIONS,
    KINDS,
    TEXT_KINDS,
    paraphrased_rubric,
    perturb_sample,
    reordered_rubric,
)
from rubric_studio.engine.report import Report
from rubric_studio.engine.usage import Usage

_VERDICTS = (Status.MET, Status.UNMET)


@dataclass
class Flip:
    """One cell whose verdict the perturbation changed, and the perturbed text the judge saw."""

    sample_id: str
    before: str
    after: str
    text: str


@dataclass
class CriterionProbe:
    """One criterion under one perturbation: cells compared, flips each way, errored cells."""

    n: int = 0
    unmet_to_met: int = 0
    met_to_unmet: int = 0
    errors: int = 0
    flipped: list[Flip] = field(default_factory=list)

    @property
    def flips(self) -> int:
        return self.unmet_to_met + self.met_to_unmet

    @property
    def rate(self) -> float | None:
        return self.flips / self.n if self.n else None

    @property
    def ci(self) -> tuple[float, float] | None:
        return wilson_interval(self.flips, self.n)

    @property
    def direction(self) -> str:
        """``4/30 unmet → met`` (the dominant direction), then the other when it happened:
        ``4/30 unmet → met, 1 met → unmet``."""
        if not self.n:
            return "no cell judged both times"
        if not self.flips:
            return f"0/{self.n} flipped"
        up, down = self.unmet_to_met, self.met_to_unmet
        main = f"{up}/{self.n} unmet → met" if up >= down else f"{down}/{self.n} met → unmet"
        other = down if up >= down else up
        return main + (f", {other} {'met → unmet' if up >= down else 'unmet → met'}" if other else "")

    def add(
        self, sample_id: str, before: CriterionResult | None, after: CriterionResult | None, text: str
    ) -> None:
        """Count one cell: compared when both verdicts are met/unmet, an error when either errored."""
        statuses = (before.status if before else None, after.status if after else None)
        if Status.ERROR in statuses:
            self.errors += 1
        elif statuses[0] in _VERDICTS and statuses[1] in _VERDICTS:
            self.n += 1
            if statuses[0] != statuses[1]:
                if statuses[1] is Status.MET:
                    self.unmet_to_met += 1
                else:
                    self.met_to_unmet += 1
                self.flipped.append(Flip(sample_id, str(statuses[0]), str(statuses[1]), text))

    def to_dict(self, with_text: bool) -> dict[str, Any]:
        ci = self.ci
        return {
            "n": self.n, "flips": self.flips, "rate": None if self.rate is None else round(self.rate, 4),
            "ci": None if ci is None else [round(ci[0], 4), round(ci[1], 4)], "direction": self.direction,
            "unmet_to_met": self.unmet_to_met, "met_to_unmet": self.met_to_unmet, "errors": self.errors,
            "flipped": [{"sample": f.sample_id, "from": f.before, "to": f.after, **({"output": f.text} if with_text else {})}
                        for f in self.flipped],
        }  # fmt: skip


@dataclass
class KindProbe:
    """One perturbation kind over the probed criteria (or why it was skipped)."""

    kind: str
    criteria: dict[str, CriterionProbe] = field(default_factory=dict)
    skipped: str | None = None
    usage: Usage = field(default_factory=Usage)
    #: Paraphrase: criterion id -> the reworded outcome. Order: the order judged.
    paraphrases: dict[str, str] = field(default_factory=dict)
    order: list[str] | None = None

    @property
    def errors(self) -> int:
        return sum(c.errors for c in self.criteria.values())

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"description": DESCRIPTIONS[self.kind]}
        if self.skipped:
            data["skipped"] = self.skipped
        data["criteria"] = {cid: c.to_dict(self.kind in TEXT_KINDS) for cid, c in self.criteria.items()}
        if self.paraphrases:
            data["paraphrases"] = dict(self.paraphrases)
        if self.order is not None:
            data["order"] = list(self.order)
        data["usage"] = self.usage.to_dict()
        return data


@dataclass
class ProbeReport:
    """Every kind probed, on which samples, with which judge and seed."""

    criteria: list[str]
    source: str  # "labelled" | "graded": which samples were probed
    samples: int
    seed: int
    judge: dict[str, str] | None = None
    baseline_usage: Usage = field(default_factory=Usage)
    baseline_errors: int = 0
    kinds: dict[str, KindProbe] = field(default_factory=dict)
    #: Why nothing was judged (no judge configured, judging stopped), or None.
    note: str | None = None

    @property
    def errors(self) -> int:
        """Errored cells: the baseline's (probed criteria only) and every kind's."""
        return self.baseline_errors + sum(k.errors for k in self.kinds.values())

    @property
    def usage(self) -> Usage:
        total = Usage()
        total.merge(self.baseline_usage)
        for kind in self.kinds.values():
            total.merge(kind.usage)
        return total

    def to_dict(self) -> dict[str, Any]:
        return {
            "samples": {"source": self.source, "n": self.samples}, "seed": self.seed, "judge": self.judge,
            "criteria": list(self.criteria), "kinds": {k: v.to_dict() for k, v in self.kinds.items()},
            "errors": self.errors, "note": self.note, "baseline_usage": self.baseline_usage.to_dict(),
            "usage": self.usage.to_dict(),
        }  # fmt: skip


def parse_kinds(text: str) -> list[str]:
    """Kinds from ``verbosity,order,...``; ValueError naming an unknown one."""
    kinds: list[str] = []
    for raw in text.split(","):
        kind = raw.strip().lower()
        if kind not in KINDS:
            raise ValueError(
                f"--kinds: {raw.strip()!r} is not a probe kind; expected some of {', '.join(KINDS)}"
            )
        if kind not in kinds:
            kinds.append(kind)
    return kinds


def probed_criteria(rubric: Rubric, criterion: str | None = None) -> list[str]:
    """The judge criteria to probe (all, or ``criterion``); ValueError says why one cannot be."""
    from rubric_studio.engine.starter import awaits_outcome

    judged = [c.key for c in rubric.judge_criteria if not awaits_outcome(c)]
    if criterion is None:
        if not judged:
            raise ValueError("the rubric has no judge criteria to probe (checks are deterministic)")
        return judged
    ids = [c.key for c in rubric.criteria]
    if criterion not in ids:
        raise ValueError(f"--criterion {criterion}: no such criterion (the rubric has {', '.join(ids)})")
    if criterion not in judged:
        kind = "a deterministic check" if not rubric.criterion(criterion).is_judged else "still a placeholder"
        raise ValueError(f"--criterion {criterion}: it is {kind}; probes measure judge criteria")
    return [criterion]


def samples_to_probe(samples: Sequence[Sample], labels: Mapping[str, Any] | None) -> tuple[list[Sample], str]:
    """(the labelled samples, "labelled") when any sample is labelled, else (all, "graded")."""
    from rubric_studio.engine.judge_compare import labelled

    chosen, _ = labelled(samples, labels or {})
    return (chosen, "labelled") if chosen else (list(samples), "graded")


def compare(
    before: Report, after: Report, ids: Sequence[str], text_of: Callable[[str, str], str]
) -> dict[str, CriterionProbe]:
    """Per criterion, the cells of ``after`` whose verdict differs from ``before``'s."""
    probes = {cid: CriterionProbe() for cid in ids}
    later = after.by_id()
    for sample in before.samples:
        cells = {c.id: c for c in sample.criteria}
        other = later.get(sample.id)
        others = {c.id: c for c in other.criteria} if other is not None else {}
        for cid in ids:
            probes[cid].add(sample.id, cells.get(cid), others.get(cid), text_of(sample.id, cid))
    return probes


async def run_probes(
    rubric: Rubric,
    samples: Sequence[Sample],
    kinds: Sequence[str],
    options: Mapping[str, Any],
    *,
    labels: Mapping[str, Any] | None = None,
    seed: int = 0,
    criterion: str | None = None,
    on_kind: Callable[[str], Any] | None = None,
) -> ProbeReport:
    """Grade the samples, then each kind's perturbation of them; ``options`` as
    :func:`~rubric_studio.engine.api.make_grader`. ValueError: an unknown or unprobeable criterion."""
    from rubric_studio.engine.api import make_grader

    ids = probed_criteria(rubric, criterion)
    chosen, source = samples_to_probe(samples, labels)
    grader = make_grader(rubric, **options)
    grader.one_invocation()
    report = ProbeReport(ids, source, len(chosen), seed)
    scope = _scoped(rubric, ids)
    try:
        baseline = await grader.run(scope, chosen)
        report.judge, report.baseline_usage = baseline.judge, baseline.usage
        report.baseline_errors = _errored(baseline, ids)
        report.note = baseline.judge_note or baseline.judge_stopped
        if baseline.judge_note:
            return report
        for kind in kinds:
            if on_kind is not None:
                on_kind(kind)
            report.kinds[kind] = await _probe(grader, rubric if kind == "order" else scope, chosen, baseline, kind,
                                              seed, ids)  # fmt: skip
            report.note = report.note or grader.last_stopped
    finally:
        await grader.aclose()
    return report


def _scoped(rubric: Rubric, ids: Sequence[str]) -> Rubric:
    """``rubric`` without the judge criteria not probed (their cells would be paid for and never read);
    the ``order`` probe keeps them all, since the order of all of them is what it changes."""
    if len(ids) == len([c for c in rubric.criteria if c.is_judged]):
        return rubric
    from rubric_studio.engine.probes._perturb import rubric_with

    return rubric_with(rubric, [c for c in rubric.criteria if not c.is_judged or c.key in ids])


def _errored(report: Report, ids: Sequence[str]) -> int:
    wanted = set(ids)
    return sum(1 for s in report.samples for c in s.criteria if c.id in wanted and c.status is Status.ERROR)


async def _probe(grader: Any, rubric: Rubric, samples: list[Sample], baseline: Report, kind: str, seed: int,
                 ids: list[str]) -> KindProbe:  # fmt: skip
    """One kind: grade the perturbation and compare it with the baseline."""
    probe = KindProbe(kind)
    if kind in TEXT_KINDS:
        perturbed = [perturb_sample(kind, s, seed) for s in samples]
        outputs = {s.id: s.output for s in perturbed}
        after = await grader.run(rubric, perturbed)
        probe.usage.merge(after.usage)
        probe.criteria = compare(baseline, after, ids, lambda sid, cid: outputs[sid])
    elif kind == "paraphrase":
        reworded, probe.paraphrases = paraphrased_rubric(rubric, seed, ids)
        after = await grader.run(reworded, samples)
        probe.usage.merge(after.usage)
        probe.criteria = compare(baseline, after, ids, lambda sid, cid: probe.paraphrases[cid])
    else:
        await _probe_order(grader, rubric, samples, seed, ids, probe)
    return probe


def _variant(order: Sequence[str]) -> int:
    """A cache identity for one order of the criteria in a batch call (far from real repeat indexes)."""
    return 1_000_000 + int(hashlib.sha256("\x1f".join(order).encode()).hexdigest()[:8], 16)


async def _probe_order(grader: Any, rubric: Rubric, samples: list[Sample], seed: int, ids: list[str],
                       probe: KindProbe) -> None:  # fmt: skip
    """Both orders judged in one batch call each, each under its own cache identity."""
    if grader.config is None or grader.config.mode != "batch":
        probe.skipped = (
            "the rubric is not batched: each criterion is judged in its own call, so their order never "
            "reaches the judge (set judge.mode: batch, or pass --batch)"
        )
        return
    judged = [c.key for c in rubric.judge_criteria]
    if len(judged) < 2:
        probe.skipped = "the rubric has one judge criterion: there is no other order to judge it in"
        return
    reordered, probe.order = reordered_rubric(rubric, seed)
    text = " → ".join(probe.order)
    try:
        grader.cache_variant = _variant(judged)
        before = await grader.run(rubric, samples)
        grader.cache_variant = _variant(probe.order)
        after = await grader.run(reordered, samples)
    finally:
        grader.cache_variant = 0
    probe.usage.merge(before.usage)
    probe.usage.merge(after.usage)
    probe.criteria = compare(before, after, ids, lambda sid, cid: text)
