"""Whether to switch judges: the current judge and a candidate on the same labelled cells.

:func:`pair_up` lines up, per judged criterion and for the sample verdict, every labelled cell
both judges gave a verdict to (:class:`~rubric_studio.engine.judge_switch._stats.Paired`). A cell
either judge errored on — or that a judge panel pooled without a member that errored — is left
out and counted, never shown as a worse agreement; so is a sample verdict resting on such a cell.
Criteria graded by a deterministic check are left out: both judges read the same check.

:meth:`SwitchComparison.decision` gives one verdict, in this order:

1. **do not switch: worse on X** — the exact paired test (McNemar's, on the cells whose
   agreement changed) says the candidate is worse on X at ``p_worse < alpha / m``: Bonferroni
   over the ``m`` comparisons made (the overall verdict, each criterion with labelled cells, and
   all criteria pooled when there are two or more), so the chance of naming a criterion by
   accident stays under ``alpha`` (0.05) however many criteria the rubric has.
2. **can't tell** — a judge errored on some labelled cells (a switch is never shown on partial
   data), or the labels are too few to rule out a meaningful drop: for the overall verdicts and
   for all criterion cells pooled (each one that has labels), the 95% upper bound of the drop in
   agreement with the labels (Tango's score interval for paired data) must stay within ``margin`` (default
   5 points). Where it does not: "can't tell with n = …", with that bound and the margin.
3. **switch: as good or better** — otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.labels import Label
from rubric_studio.core.results import SampleResult, Status, Verdict, pooled_without
from rubric_studio.core.rubric import Rubric
from rubric_studio.engine.judge_switch._stats import Paired

#: The chance, over all comparisons together, of calling the candidate worse when it is not.
ALPHA = 0.05
#: The largest drop in agreement with the labels (a share of cells) a switch may hide.
MARGIN = 0.05
#: The name of the comparison of all criterion cells pooled.
ALL_CRITERIA = "all criteria"


def _cell_state(cell: Any) -> str:
    """``ok`` (met/unmet, whole), ``error`` (errored, or pooled without a member that errored) or ``other``."""
    if cell is None:
        return "other"
    if cell.status is Status.ERROR or pooled_without(cell):
        return "error"
    return "ok" if cell.status in (Status.MET, Status.UNMET) else "other"


def _sample_state(sample: SampleResult | None, judged: list[str]) -> str:
    """As :func:`_cell_state`, for a sample's verdict (any errored judge cell makes it an error)."""
    if sample is None:
        return "other"
    if sample.verdict is Verdict.ERROR or any(_cell_state(sample.cell(cid)) == "error" for cid in judged):
        return "error"
    return "ok" if sample.verdict in (Verdict.PASS, Verdict.FAIL) else "other"


def _add(paired: Paired, human: bool, states: tuple[str, str], verdicts: tuple[bool, bool]) -> None:
    """One labelled item: a pair when both judges gave it a whole verdict, else counted as left out."""
    if states == ("ok", "ok"):
        paired.pairs.append((human, *verdicts))
        return
    paired.current_errors += states[0] == "error"
    paired.candidate_errors += states[1] == "error"
    paired.other_excluded += "error" not in states


def pair_up(rubric: Rubric, labels: Mapping[str, Label], current: list[SampleResult],
            candidate: list[SampleResult]) -> tuple[Paired, dict[str, Paired]]:
    """The overall pairs (labelled sample verdicts) and the pairs of each judged criterion that
    has labelled cells, from the two judges' graded samples (see the module docstring)."""
    judged = [c.key for c in rubric.criteria if c.is_judged]
    before, after = {s.id: s for s in current}, {s.id: s for s in candidate}
    overall, criteria = Paired([]), {cid: Paired([]) for cid in judged}
    for sample_id, label in labels.items():
        cur, cand = before.get(sample_id), after.get(sample_id)
        if label.verdict in ("pass", "fail"):
            states = (_sample_state(cur, judged), _sample_state(cand, judged))
            verdicts = (cur is not None and cur.verdict is Verdict.PASS, cand is not None and cand.verdict is Verdict.PASS)
            _add(overall, label.verdict == "pass", states, verdicts)
        for cid, state in label.criteria.items():
            if cid not in criteria or state not in ("met", "unmet"):
                continue
            cells = (cur.cell(cid) if cur else None, cand.cell(cid) if cand else None)
            verdicts = tuple(cell is not None and cell.status is Status.MET for cell in cells)
            _add(criteria[cid], state == "met", (_cell_state(cells[0]), _cell_state(cells[1])), verdicts)  # type: ignore[arg-type]
    return overall, {cid: p for cid, p in criteria.items() if p.n or p.current_errors + p.candidate_errors + p.other_excluded}


@dataclass(frozen=True)
class Decision:
    """The one verdict: ``switch`` | ``do not switch`` | ``cant_tell``, its headline and why."""

    verdict: str
    headline: str
    reason: str
    worse_on: tuple[str, ...] = ()


@dataclass
class SwitchComparison:
    """The current judge and the candidate on the same labelled cells."""

    current: str
    candidate: str
    overall: Paired
    criteria: dict[str, Paired]
    margin: float = MARGIN
    alpha: float = ALPHA

    @property
    def all_criteria(self) -> Paired | None:
        """Every criterion's pairs pooled (None without criterion labels)."""
        pooled = None
        for paired in self.criteria.values():
            pooled = paired if pooled is None else pooled.merged(paired)
        return pooled

    def tested(self) -> dict[str, Paired]:
        """The comparisons the paired test is made on (the Bonferroni family)."""
        found = {"overall": self.overall} if self.overall.n else {}
        found.update({cid: p for cid, p in self.criteria.items() if p.n})
        pooled = self.all_criteria
        if pooled is not None and sum(1 for p in self.criteria.values() if p.n) >= 2:
            found[ALL_CRITERIA] = pooled
        return found

    @property
    def threshold(self) -> float:
        """The p below which one comparison calls the candidate worse: alpha / comparisons."""
        return self.alpha / max(1, len(self.tested()))

    def worse_on(self) -> list[str]:
        """The comparisons on which the paired test calls the candidate worse."""
        return [name for name, p in self.tested().items() if p.p_worse < self.threshold]

    def errors(self) -> tuple[int, int]:
        """Labelled items left out because (the current judge, the candidate) errored on them."""
        parts = [self.overall, *self.criteria.values()]
        return sum(p.current_errors for p in parts), sum(p.candidate_errors for p in parts)

    def decision(self) -> Decision:
        """The verdict (see the module docstring)."""
        worse = self.worse_on()
        if worse:
            return Decision("do not switch", f"do not switch: worse on {', '.join(worse)}",
                            "; ".join(self._worse_words(name) for name in worse), tuple(worse))
        current_errors, candidate_errors = self.errors()
        if current_errors or candidate_errors:
            return self._errored(current_errors, candidate_errors)
        scopes = self.scopes()
        if not scopes:
            return Decision("cant_tell", "can't tell with n = 0",
                            "no labelled sample verdict or criterion cell was judged by both judges")
        short = [(unit, p) for unit, p in scopes if p.drop_ci is not None and p.drop_ci[1] > self.margin]
        if short:
            sizes = ", ".join(f"{p.n} {unit}" for unit, p in short)
            return Decision("cant_tell", f"can't tell with n = {sizes}", "; ".join(self._short_words(u, p) for u, p in short)
                            + f"; label more samples, or widen the margin (--switch-margin, now {_points(self.margin)} points)")
        return Decision("switch", "switch: as good or better",
                        f"{self.candidate} is worse than {self.current} on nothing tested (exact paired test, "
                        f"Bonferroni over {len(self.tested())} comparisons), and a drop beyond the "
                        f"{_points(self.margin)}-point margin is ruled out: " + "; ".join(_shown(u, p) for u, p in scopes))

    def scopes(self) -> list[tuple[str, Paired]]:
        """The pooled comparisons a switch must clear the margin on: the sample verdicts and all
        criterion cells, each that has pairs."""
        pooled = self.all_criteria
        found = [("sample verdicts", self.overall)] if self.overall.n else []
        return found + ([("criterion cells", pooled)] if pooled is not None and pooled.n else [])

    def _worse_words(self, name: str) -> str:
        paired = self.tested()[name]
        _, worse, better, _ = paired.counts()
        unit = "sample verdicts" if name == "overall" else "cells"
        m = len(self.tested())
        return (f"{name}: {worse} of {paired.n} labelled {unit} worse, {better} better (exact paired test "
                f"p = {paired.p_worse:.3g} < {self.alpha:g}/{m} = {self.threshold:.3g}, Bonferroni over {m} comparisons)")

    def _short_words(self, unit: str, paired: Paired) -> str:
        ci = paired.drop_ci
        assert ci is not None
        return (f"on {paired.n} labelled {unit} {self.candidate} could agree with the labels up to "
                f"{_points(ci[1])} points less often than {self.current} (95% upper bound of the drop), "
                f"more than the {_points(self.margin)}-point margin")

    def _errored(self, current_errors: int, candidate_errors: int) -> Decision:
        parts = [f"{who} errored on {count} labelled item{'s' if count != 1 else ''}"
                 for who, count in ((self.candidate, candidate_errors), (self.current, current_errors)) if count]
        n = self.overall.n + sum(p.n for p in self.criteria.values())
        return Decision("cant_tell", f"can't tell with n = {n}: {'; '.join(parts)}",
                        f"{'; '.join(parts)} (left out, never counted as worse); a switch is not shown on partial "
                        "data: run again (replies already received come from the cache)")

    def to_dict(self) -> dict[str, Any]:
        pooled = self.all_criteria
        return {
            "overall": self.overall.to_dict(self.threshold),
            "criteria": {cid: p.to_dict(self.threshold) for cid, p in self.criteria.items()},
            "all_criteria": None if pooled is None else pooled.to_dict(self.threshold),
            "test": {"method": "exact McNemar (binomial test on the cells whose agreement changed), one-sided",
                     "alpha": self.alpha, "comparisons": len(self.tested()), "correction": "Bonferroni",
                     "threshold": round(self.threshold, 6)},
            "margin": self.margin,
        }  # fmt: skip


def _shown(unit: str, paired: Paired) -> str:
    """``on 40 sample verdicts agreement 90% → 100%, a drop of at most 0.6 points (95% bound)``."""
    before, after, ci = paired.before.accuracy, paired.after.accuracy, paired.drop_ci
    assert before is not None and after is not None and ci is not None
    return (f"on {paired.n} {unit} agreement with the labels {before:.0%} → {after:.0%}, "
            f"a drop of at most {_points(ci[1])} points (95% bound)")


def _points(share: float) -> str:
    """A share as points of agreement: 0.161 → ``16.1``, 0.05 → ``5``."""
    return f"{share * 100:.1f}".rstrip("0").rstrip(".")
