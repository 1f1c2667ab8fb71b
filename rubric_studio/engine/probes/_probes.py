"""Bias probes: does the judge change its verdict when something it should ignore changes?

Judges reward length, confident tone and wording they like (MT-Bench's verbosity attack; CALM,
"Justice or Prejudice?", 2024, measures such biases by perturbing the judged text). A probe
grades the samples as they are (the *baseline*), then grades controlled perturbations of them
(:mod:`rubric_studio.engine.probes._perturb`) and counts, per judge criterion, the cells whose
verdict flipped: the flip rate with its Wilson 95% interval and the direction, each over its own
base ("4 of 7 unmet → met": 7 cells were unmet before). Checks are deterministic and not probed.

A judge that is merely noisy flips verdicts under *any* change of its request, so every run also
judges a null perturbation — the same meaning in other bytes
(:func:`~rubric_studio.engine.probes._perturb.null_sample`) — and each kind is compared with that
noise on the same cells. A bias belongs to the judge, so each kind is **decided once, pooled over
its criteria**, by an exact one-sided paired test in the kind's direction
(:mod:`rubric_studio.engine.probes._decision`): ``beyond_noise`` true, false, or *can't tell* with
the reason — too few cells to see a shift (and how large a shift would go unseen), a suggestive
shift that needs more samples, a judge that gave one verdict to every cell. No kind's decision
depends on the other kinds of the run. The per-criterion figures (a paired interval:
:mod:`rubric_studio.engine.probes._noise`) are detail. A cell that flipped under every flip kind
probed (two or more) is *unstable*: listed once, not as a finding of each.

Samples: the labelled ones when there are any (the cells someone cares enough about to label),
else all of them. Every run goes through one :class:`~rubric_studio.engine.grader.Grader` and
the reply cache, so a probe run again costs no calls. The baseline, the noise and every kind count
from the same base verdicts. The ``order`` probe compares the baseline — the criteria judged
together in one batch call in the rubric's order — with a seeded other order; since a batch
verdict is cached per criterion, the other order is filed under a cache identity of its own
(:attr:`Grader.cache_variant`), and when ``order`` is probed every request carries all the judge
criteria, so the baseline is that batch. Nothing is written to the rubric or the labels.
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
from rubric_studio.engine.probes._decision import (
    CANT_TELL,
    LEVEL,
    KindDecision,
    Reading,
    Table,
    counted_label,
    read_table,
)
from rubric_studio.engine.probes._noise import NoiseComparison, compare_with_noise
from rubric_studio.engine.probes._perturb import (
    DESCRIPTIONS,
    DIRECTIONS,
    FAVOURABLE,
    KINDS,
    NULL_DESCRIPTION,
    NULL_KIND,
    TEXT_KINDS,
    content_free_sample,
    null_sample,
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
    """One criterion under one perturbation: cells compared, flips each way, errored cells, and
    (once the null perturbation was judged) how it compares with the judge's own noise."""

    n: int = 0
    unmet_to_met: int = 0
    met_to_unmet: int = 0
    errors: int = 0
    flipped: list[Flip] = field(default_factory=list)
    #: The compared cells' baseline verdicts: the base of each direction.
    were_unmet: int = 0
    were_met: int = 0
    #: Sample id -> flipped, for every compared cell.
    cells: dict[str, bool] = field(default_factory=dict)
    #: Sample id -> (met before, met after), for every compared cell: what the paired test reads.
    verdicts: dict[str, tuple[bool, bool]] = field(default_factory=dict)
    #: A penalty criterion (weight < 0): its favourable verdict is unmet.
    penalty: bool = False
    #: Leniency: "before" is the verdict a content-free answer should get (unmet), not a baseline.
    content_free: bool = False
    #: Against the null perturbation (None for the noise itself, or when it was not measured).
    noise: NoiseComparison | None = None
    #: Sample ids of flipped cells that flipped under every kind probed (listed once, as unstable).
    unstable: set[str] = field(default_factory=set)

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
    def beyond_noise(self) -> bool:
        return self.noise is not None and self.noise.beyond_noise

    @property
    def direction(self) -> str:
        """``4 of 7 unmet → met`` — each direction over its own base, the cells that were unmet
        (met) before — the larger share first, then the other when it happened."""
        if not self.n:
            return "no cell judged both times"
        if self.content_free:
            return f"met {self.unmet_to_met} of {self.n} content-free answers"
        if not self.flips:
            return f"0 of {self.n} flipped"
        up = (self.unmet_to_met, self.were_unmet, "unmet → met")
        down = (self.met_to_unmet, self.were_met, "met → unmet")
        first, second = (up, down) if _share(up) >= _share(down) else (down, up)
        text = f"{first[0]} of {first[1]} {first[2]}"
        return text + (f", {second[0]} of {second[1]} {second[2]}" if second[0] else "")

    def add(
        self, sample_id: str, before: CriterionResult | None, after: CriterionResult | None, text: str
    ) -> None:
        """Count one cell: compared when both verdicts are met/unmet, an error when either errored."""
        statuses = (before.status if before else None, after.status if after else None)
        if Status.ERROR in statuses:
            self.errors += 1
        elif statuses[0] in _VERDICTS and statuses[1] in _VERDICTS:
            self.n += 1
            if statuses[0] is Status.MET:
                self.were_met += 1
            else:
                self.were_unmet += 1
            self.cells[sample_id] = statuses[0] != statuses[1]
            self.verdicts[sample_id] = (statuses[0] is Status.MET, statuses[1] is Status.MET)
            if statuses[0] != statuses[1]:
                if statuses[1] is Status.MET:
                    self.unmet_to_met += 1
                else:
                    self.met_to_unmet += 1
                self.flipped.append(Flip(sample_id, str(statuses[0]), str(statuses[1]), text))

    def add_content_free(self, sample_id: str, after: CriterionResult | None, text: str) -> None:
        """Count one cell of a content-free answer: it should be unmet; met is counted as a flip."""
        expected = CriterionResult(after.id if after else "", Status.UNMET)
        self.add(sample_id, expected if after is not None else None, after, text)

    def figures(self) -> dict[str, Any]:
        """``n``, ``flips``, ``rate``, ``ci``, ``direction``: the keys every flip rate carries."""
        ci = self.ci
        return {
            "n": self.n, "flips": self.flips, "rate": None if self.rate is None else round(self.rate, 4),
            "ci": None if ci is None else [round(ci[0], 4), round(ci[1], 4)], "direction": self.direction,
            "unmet_to_met": self.unmet_to_met, "met_to_unmet": self.met_to_unmet,
            "were_unmet": self.were_unmet, "were_met": self.were_met, "errors": self.errors,
        }  # fmt: skip

    def to_dict(self, with_text: bool) -> dict[str, Any]:
        data = self.figures()
        data["beyond_noise"] = self.beyond_noise
        data["difference"] = None if self.noise is None else self.noise.to_dict()
        data["noise_rate"] = None if self.noise is None or self.noise.noise_rate is None else round(self.noise.noise_rate, 4)
        data["flipped"] = [
            {"sample": f.sample_id, "from": f.before, "to": f.after,
             **({"unstable": True} if f.sample_id in self.unstable else {}),
             **({"output": f.text} if with_text else {})}
            for f in self.flipped
        ]  # fmt: skip
        return data


def _share(direction: tuple[int, int, str]) -> float:
    flips, base, _ = direction
    return flips / base if base else 0.0


@dataclass
class KindProbe:
    """One perturbation kind over the probed criteria (or why it was skipped), and its one decision
    against the judge's noise, pooled over those criteria."""

    kind: str
    criteria: dict[str, CriterionProbe] = field(default_factory=dict)
    skipped: str | None = None
    usage: Usage = field(default_factory=Usage)
    #: Paraphrase: criterion id -> the reworded outcome. Order: the order judged.
    paraphrases: dict[str, str] = field(default_factory=dict)
    order: list[str] | None = None
    #: Against the noise, pooled over the criteria (None until compared, or when skipped).
    decision: KindDecision | None = None
    #: A remark on what was measured (leniency: samples that would send the same request).
    note: str | None = None

    @property
    def errors(self) -> int:
        return sum(c.errors for c in self.criteria.values())

    @property
    def beyond_noise(self) -> bool | None:
        """The pooled decision: True, False, or None (can't tell, skipped or not compared)."""
        return None if self.decision is None else self.decision.beyond_noise

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"description": DESCRIPTIONS[self.kind]}
        if self.skipped:
            data["skipped"] = self.skipped
        if self.note:
            data["note"] = self.note
        if self.decision is not None:
            data["beyond_noise"] = self.decision.json_value()
            data["reads"] = self.decision.reads()
            data["pooled"] = self.decision.to_dict()
        with_text = self.kind in TEXT_KINDS or self.kind == "leniency"
        data["criteria"] = {cid: c.to_dict(with_text) for cid, c in self.criteria.items()}
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
    #: The null perturbation (same meaning, other bytes) per criterion: the judge's own noise.
    noise: dict[str, CriterionProbe] = field(default_factory=dict)
    noise_usage: Usage = field(default_factory=Usage)
    #: ``met 42 of 42 cells: probes cannot see …`` when the judge gave one verdict to every cell of the run.
    constant: str | None = None

    @property
    def errors(self) -> int:
        """Errored cells: the baseline's (probed criteria only), the noise's and every kind's."""
        noise = sum(c.errors for c in self.noise.values())
        return self.baseline_errors + noise + sum(k.errors for k in self.kinds.values())

    @property
    def usage(self) -> Usage:
        total = Usage()
        total.merge(self.baseline_usage)
        total.merge(self.noise_usage)
        for kind in self.kinds.values():
            total.merge(kind.usage)
        return total

    def findings(self) -> list[tuple[str, list[str]]]:
        """(kind, the criteria where it shows on their own) of every kind beyond the judge's noise
        (the pooled decision): the only findings."""
        return [(kind, [cid for cid, c in probe.criteria.items() if c.beyond_noise])
                for kind, probe in self.kinds.items() if probe.beyond_noise is True]  # fmt: skip

    def cant_tell(self) -> list[tuple[str, str]]:
        """(kind, why) of every kind probed that can't tell."""
        return [(kind, probe.decision.reads()) for kind, probe in self.kinds.items()
                if probe.decision is not None and probe.beyond_noise is None]  # fmt: skip

    def unstable(self) -> list[tuple[str, str, list[str]]]:
        """(sample id, criterion id, kinds) of the cells that flipped under every flip kind probed."""
        out: dict[tuple[str, str], list[str]] = {}
        for kind, probe in self.kinds.items():
            for cid, c in probe.criteria.items():
                for sid in sorted(c.unstable):
                    out.setdefault((sid, cid), []).append(kind)
        return [(sid, cid, kinds) for (sid, cid), kinds in out.items()]

    def to_dict(self) -> dict[str, Any]:
        return {
            "samples": {"source": self.source, "n": self.samples}, "seed": self.seed, "judge": self.judge,
            "criteria": list(self.criteria),
            "noise": {cid: c.figures() for cid, c in self.noise.items()},
            "noise_description": NULL_DESCRIPTION,
            "kinds": {k: v.to_dict() for k, v in self.kinds.items()},
            "findings": [{"kind": k, "criteria": cids} for k, cids in self.findings()],
            "cant_tell": [{"kind": k, "why": why} for k, why in self.cant_tell()],
            "constant": self.constant,
            "unstable": [{"sample": s, "criterion": c, "kinds": k} for s, c, k in self.unstable()],
            "errors": self.errors, "note": self.note, "baseline_usage": self.baseline_usage.to_dict(),
            "noise_usage": self.noise_usage.to_dict(), "usage": self.usage.to_dict(),
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
    before: Report, after: Report, ids: Sequence[str], text_of: Callable[[str, str], str],
    penalties: frozenset[str] = frozenset(),
) -> dict[str, CriterionProbe]:
    """Per criterion, the cells of ``after`` whose verdict differs from ``before``'s."""
    probes = {cid: CriterionProbe(penalty=cid in penalties) for cid in ids}
    later = after.by_id()
    for sample in before.samples:
        cells = {c.id: c for c in sample.criteria}
        other = later.get(sample.id)
        others = {c.id: c for c in other.criteria} if other is not None else {}
        for cid in ids:
            probes[cid].add(sample.id, cells.get(cid), others.get(cid), text_of(sample.id, cid))
    return probes


def _penalties(rubric: Rubric) -> frozenset[str]:
    return frozenset(c.key for c in rubric.judge_criteria if c.is_penalty)


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
    # With ``order`` on a batched rubric every request carries all the judge criteria in one batch call,
    # so that the baseline is the rubric-order batch the other order is compared with.
    scope = rubric if "order" in kinds and _orderable(grader, rubric) is None else _scoped(rubric, ids)
    try:
        baseline = await grader.run(scope, chosen)
        report.judge, report.baseline_usage = baseline.judge, baseline.usage
        report.baseline_errors = _errored(baseline, ids)
        report.note = baseline.judge_note or baseline.judge_stopped
        if baseline.judge_note:
            return report
        if on_kind is not None:
            on_kind(NULL_KIND)
        await _probe_noise(grader, scope, chosen, baseline, ids, report)
        for kind in kinds:
            if on_kind is not None:
                on_kind(kind)
            report.kinds[kind] = await _probe(grader, scope, chosen, baseline, kind, seed, ids)
            report.note = report.note or grader.last_stopped
    finally:
        await grader.aclose()
    against_noise(report)
    return report


async def _probe_noise(grader: Any, rubric: Rubric, samples: list[Sample], baseline: Report, ids: list[str],
                       report: ProbeReport) -> None:  # fmt: skip
    """The null perturbation: every sample with a blank line added, judged and compared with the baseline."""
    nulled = [null_sample(s) for s in samples]
    after = await grader.run(rubric, nulled)
    report.noise_usage.merge(after.usage)
    outputs = {s.id: s.output for s in nulled}
    report.noise = compare(baseline, after, ids, lambda sid, cid: outputs[sid], _penalties(rubric))
    report.note = report.note or grader.last_stopped


def _toward_met(kind: str, penalty: bool) -> bool | None:
    """The verdict a kind is suspected of pushing a cell to (met: True), or None (any flip counts)."""
    direction = DIRECTIONS[kind]
    if direction is None:
        return None
    return (direction == FAVOURABLE) != penalty


def paired_events(kind: str, entry: CriterionProbe, noise: CriterionProbe) -> tuple[dict[str, bool], dict[str, bool]]:
    """(the kind's events, the noise's) per cell, on the cells that could move the kind's way and
    were compared under both: a flip for a kind without direction, else the verdict reaching the
    kind's side (for the noise: reaching it from the other). Leniency: the content-free answer
    judged met, against the noise flipping the cell either way — a content-free answer is met by
    the judge's noise about as often as the noise turns a verdict over, no more, so its share met
    is held against the noise's flip rate."""
    toward = _toward_met(kind, entry.penalty)
    moved: dict[str, bool] = {}
    noise_moved: dict[str, bool] = {}
    for sid, (before, after) in entry.verdicts.items():
        other = noise.verdicts.get(sid)
        if other is None:
            continue
        if toward is None or entry.content_free:
            moved[sid], noise_moved[sid] = before != after, other[0] != other[1]
        elif before != toward:
            moved[sid], noise_moved[sid] = after == toward, other[0] != toward and other[1] == toward
    return moved, noise_moved


def _constant(report: ProbeReport) -> tuple[bool, int] | None:
    """(the verdict, the baseline's cells) when the judge gave one verdict to every cell of the run."""
    seen: set[bool] = set()
    for entry in report.noise.values():
        for before, after in entry.verdicts.values():
            seen.update((before, after))
    for probe in report.kinds.values():
        for entry in probe.criteria.values():
            for before, after in entry.verdicts.values():
                seen.update((after,) if entry.content_free else (before, after))
    cells = sum(entry.n for entry in report.noise.values())
    return (next(iter(seen)), cells) if len(seen) == 1 and cells else None


def _kind_decision(kind: str, probe: KindProbe, report: ProbeReport) -> KindDecision:
    """The pooled decision of one kind (see :mod:`rubric_studio.engine.probes._decision`)."""
    entries = {cid: c for cid, c in probe.criteria.items() if cid in report.noise}
    counted = counted_label(DIRECTIONS[kind], [c.penalty for c in entries.values()], kind == "leniency")
    table = Table()
    for cid, entry in entries.items():
        moved, noise_moved = paired_events(kind, entry, report.noise[cid])
        table = table + Table.of([(moved[sid], noise_moved[sid]) for sid in moved])
    constant = _constant(report)
    why = short = None
    if not entries:
        why, short = "the judge's own noise was not measured: nothing to compare with", "can't tell: no noise measured"
    elif constant is not None and not (kind == "leniency" and constant[0]):
        verdict, cells = ("met" if constant[0] else "unmet"), constant[1]
        why = f"{verdict} {cells} of {cells} cells: probes cannot see a bias in a judge that never changes its verdict"
        short = f"can't tell: {verdict} every cell, always"
    elif table.n == 0:
        compared = sum(c.n for c in entries.values())
        toward = _toward_met(kind, False)
        side = "its side" if any(c.penalty for c in entries.values()) else ("met" if toward else "unmet")
        if compared and toward is not None:
            why, short = f"no cell could turn {side}: all {compared} were {side} before", f"can't tell: no cell could turn {side}"
        else:
            why, short = "no cell was judged under both the kind and the noise", "can't tell: no cell compared"
    reading = Reading(CANT_TELL, table, LEVEL, why=why, why_short=short) if why else read_table(table)
    return KindDecision(reading, counted)


def against_noise(report: ProbeReport) -> None:
    """Each kind decided against the noise, pooled over its criteria; per criterion the same paired
    table as detail (decided at 0.05/k within the kind, never across kinds); and the cells that
    flipped under every flip kind probed (two kinds or more) marked unstable."""
    report.constant = None
    found = _constant(report)
    if found is not None:
        verdict = "met" if found[0] else "unmet"
        report.constant = (f"{verdict} {found[1]} of {found[1]} cells: probes cannot see a bias in a judge that "
                           "never changes its verdict")  # fmt: skip
    probed = {kind: p for kind, p in report.kinds.items() if not p.skipped}
    for kind, probe in probed.items():
        compared = [cid for cid in probe.criteria if cid in report.noise]
        for cid in compared:
            entry, noise = probe.criteria[cid], report.noise[cid]
            moved, noise_moved = paired_events(kind, entry, noise)
            entry.noise = compare_with_noise(moved, noise_moved, noise.rate, len(compared))
        probe.decision = _kind_decision(kind, probe, report)
    flips = [p for kind, p in probed.items() if kind != "leniency"]
    for cid in report.noise:
        entries = [p.criteria[cid] for p in flips if cid in p.criteria]
        if len(entries) < 2:
            continue
        flipped_everywhere = set.intersection(*({s for s, f in e.cells.items() if f} for e in entries))
        for entry in entries:
            entry.unstable = flipped_everywhere


def _scoped(rubric: Rubric, ids: Sequence[str]) -> Rubric:
    """``rubric`` without the judge criteria not probed (their cells would be paid for and never read)."""
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
    penalties = _penalties(rubric)
    if kind in TEXT_KINDS:
        perturbed = [perturb_sample(kind, s, seed) for s in samples]
        outputs = {s.id: s.output for s in perturbed}
        after = await grader.run(rubric, perturbed)
        probe.usage.merge(after.usage)
        probe.criteria = compare(baseline, after, ids, lambda sid, cid: outputs[sid], penalties)
    elif kind == "paraphrase":
        reworded, probe.paraphrases = paraphrased_rubric(rubric, seed, ids)
        after = await grader.run(reworded, samples)
        probe.usage.merge(after.usage)
        probe.criteria = compare(baseline, after, ids, lambda sid, cid: probe.paraphrases[cid], penalties)
    elif kind == "leniency":
        await _probe_leniency(grader, rubric, samples, seed, [cid for cid in ids if cid not in penalties], probe)
    else:
        await _probe_order(grader, rubric, baseline, samples, seed, ids, probe)
    return probe


async def _probe_leniency(grader: Any, rubric: Rubric, samples: list[Sample], seed: int, ids: list[str],
                          probe: KindProbe) -> None:  # fmt: skip
    """Every sample's output replaced by a content-free answer: each met verdict is a lenient one.
    Penalty criteria are left out (a content-free answer may rightly meet "fails to answer"). Two
    samples whose content-free requests are identical (the same answer, no input or the same one
    to tell them apart) are one request, judged and counted once: the cells of the test are
    distinct requests."""
    if not ids:
        probe.skipped = ("every probed criterion is a penalty: a content-free answer may rightly meet one, "
                         "so leniency has nothing to measure")  # fmt: skip
        return
    replaced: list[Sample] = []
    seen: set[str] = set()
    for sample in samples:
        answer = content_free_sample(sample, seed)
        if answer.fingerprint() not in seen:
            seen.add(answer.fingerprint())
            replaced.append(answer)
    if len(replaced) < len(samples):
        probe.note = (f"{len(samples) - len(replaced)} of {len(samples)} samples would send the same content-free "
                      "request as another (the same answer, and no input to tell them apart): each request is "
                      "counted once")  # fmt: skip
    outputs = {s.id: s.output for s in replaced}
    after = await grader.run(rubric, replaced)
    probe.usage.merge(after.usage)
    later = after.by_id()
    probe.criteria = {cid: CriterionProbe(content_free=True) for cid in ids}
    for sample in replaced:
        judged = later.get(sample.id)
        cells = {c.id: c for c in judged.criteria} if judged is not None else {}
        for cid in ids:
            probe.criteria[cid].add_content_free(sample.id, cells.get(cid), outputs[sample.id])


def _variant(order: Sequence[str]) -> int:
    """A cache identity for one order of the criteria in a batch call (far from real repeat indexes)."""
    return 1_000_000 + int(hashlib.sha256("\x1f".join(order).encode()).hexdigest()[:8], 16)


def _orderable(grader: Any, rubric: Rubric) -> str | None:
    """Why the criteria's order cannot reach the judge, or None when it can."""
    if grader.config is None or grader.config.mode != "batch":
        return ("the rubric is not batched: each criterion is judged in its own call, so their order never "
                "reaches the judge (set judge.mode: batch, or pass --batch)")  # fmt: skip
    if len(rubric.judge_criteria) < 2:
        return "the rubric has one judge criterion: there is no other order to judge it in"
    return None


async def _probe_order(grader: Any, rubric: Rubric, baseline: Report, samples: list[Sample], seed: int,
                       ids: list[str], probe: KindProbe) -> None:  # fmt: skip
    """The baseline (the rubric-order batch) against the criteria in a seeded other order, judged in
    one batch call per sample under a cache identity of its own."""
    probe.skipped = _orderable(grader, rubric)
    if probe.skipped:
        return
    reordered, probe.order = reordered_rubric(rubric, seed)
    text = " → ".join(probe.order)
    try:
        grader.cache_variant = _variant(probe.order)
        after = await grader.run(reordered, samples)
    finally:
        grader.cache_variant = 0
    probe.usage.merge(after.usage)
    probe.criteria = compare(baseline, after, ids, lambda sid, cid: text, _penalties(rubric))
