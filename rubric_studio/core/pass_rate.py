"""The pass rate a team reports, raw and corrected by its human labels.

The judge's raw pass rate is biased by exactly the false passes and false fails that
``calibrate`` measures. Where some graded samples are labelled, the labelled ones
*rectify* the judge on the rest: prediction-powered inference (Angelopoulos, Bates,
Fannjiang, Jordan, Zrnic, *Science* 2023) with the power-tuned λ of PPI++ (Angelopoulos,
Duchi, Zrnic 2023), as ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, lam=None)`` computes
it. Every value is 0/1 (pass/fail, met/unmet), so everything is arithmetic on counts —
the labelled 2×2 of (human, judge) and the judge's pass count on the unlabelled — which
also lets a streaming grade fold chunks together (:class:`PassRateTally`).

Definitions (n labelled with human Y and judge Ŷ; N unlabelled with judge Ŷᵘ)::

    λ        = Cov(Y, Ŷ) / ((1 + n/N) · Var(Ŷ ∪ Ŷᵘ)), clipped to [0, 1]
               Cov over the labelled (divisor n), Var over all n + N judge verdicts
               (divisor n + N − 1); λ = 0 when the judge gave one verdict to every sample
    θ        = λ · mean(Ŷᵘ) + mean(Y − λŶ)             the corrected rate
    SE²      = λ² · Var(Ŷᵘ)/N + Var(Y − λŶ)/n           (both divisors N and n)
    plain interval = θ ± z₀.₉₇₅ · SE        (``ppi_py``'s; the reported one is below)

λ = 0 is the labelled share alone (the classical estimate), λ = 1 is plain PPI. With no
unlabelled samples (N = 0) the rate is the labelled share with its interval (λ = 0).

Small-sample adjustment (``adjust=True``, what the program reports). The plain interval
θ ± z·SE under-covers with few labels: the rectifier Y − λŶ takes one of four values, one per
(human, judge) cell, and with 20 labels the cell of a judge's rare errors is often empty, so the
plug-in variance is too small exactly when θ is off — and λ, tuned on the same labels, leans the
same way. Simulated (``bench/bench_pass_rate_coverage.py``), the plain interval covered a true
rate of 0.85 in 70% of runs for a judge of sensitivity 0.99 and specificity 0.6 with 20 labels.
The reported interval is instead a *score* interval, as Wilson's is for a proportion: every rate t
for which θ would not be surprising had t been the truth::

    (θ − t)² ≤ z² · (λ² · Var(Ŷᵘ)/N + V(t)/n)

    V(t)  = ½ (V_labels(t) + V_judge(t)), each the variance of Y − λŶ when a share t passes for a
            human and the judge passes a share s = (n₁₁ + ¼)/(n₁· + ½) of those (its sensitivity,
            smoothed), and for the human fails:
    V_labels(t): the judge passes a share (n₀₁ + ¼)/(n₀· + ½) of them (its false-pass rate
            among the labels, smoothed by a quarter of a pseudo-observation per cell:
            :data:`PSEUDO_COUNT`)
    V_judge(t):  the share of all samples that are human fails judged pass is q − t·s, clipped
            to [0, 1 − t] — what the judge's pass rate q over all n + N samples implies
            for the false passes if t were the truth

The point estimate θ and λ are unchanged; with λ = 0 (and without unlabelled samples) the
interval is Wilson's interval of the labelled share. The labels' own false-pass rate is noisy
when few labels fail (none seen among 5 does not mean none); the judge's pass rate over every
sample tells how many false passes a hypothesised t requires. Either alone missed some judges
in the simulation (one under-covered judges with rare errors, the other good judges); their
average kept every simulated judge at 93% or more at 20, 50 and 200 labels (BENCHMARKS.md).
With 20 labels and a judge whose errors are rare it over-covers (up to 99%): three or four
failing labels cannot show how rare its false passes are, and the interval stays wide to say so.
Reported value and interval are clipped to [0, 1].
``adjust=False`` gives the plain PPI++ interval, equal to ``ppi_py.ppi_mean_ci``.

The labels cannot carry a corrected rate (``cant_tell``) when fewer than
:data:`MIN_LABELLED` graded samples are labelled, or every label is one class.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rubric_studio.core.agreement import Agreement
from rubric_studio.core.intervals import Z95
from rubric_studio.core.results import SampleResult, Status, Verdict

if TYPE_CHECKING:
    from rubric_studio.core.labels import Label
    from rubric_studio.core.rubric import Rubric

#: Fewer labelled graded samples than this cannot carry a corrected rate.
MIN_LABELLED = 10
#: Pseudo-observations added to each (human, judge) cell where the small-sample interval reads the
#: judge's sensitivity and false-pass share (never to the estimate).
PSEUDO_COUNT = 0.25
#: Halvings of the search for each bound of the small-sample interval (1.5 · 2⁻⁴⁸ ≈ 5e-15).
_BISECTIONS = 48
DIGITS = 4


@dataclass(frozen=True)
class CorrectedRate:
    """A corrected pass (or met) rate with its 95% interval, or why the labels cannot carry one."""

    value: float | None
    ci: tuple[float, float] | None
    n_labelled: int
    n_unlabelled: int
    cant_tell: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.cant_tell is not None or self.value is None or self.ci is None:
            return {"cant_tell": self.cant_tell, "n_labelled": self.n_labelled, "n_unlabelled": self.n_unlabelled}
        return {
            "value": round(self.value, DIGITS),
            "ci": [round(self.ci[0], DIGITS), round(self.ci[1], DIGITS)],
            "n_labelled": self.n_labelled,
            "n_unlabelled": self.n_unlabelled,
        }


@dataclass(frozen=True)
class PPIEstimate:
    """The unclipped PPI++ estimate: point, interval bounds, the λ used and the standard error."""

    value: float
    lo: float
    hi: float
    lam: float
    se: float


def power_tuned_lambda(labelled: Agreement, unlabelled_positive: int, unlabelled_total: int) -> float:
    """PPI++'s λ for a mean, clipped to [0, 1] (see the module docstring); 0 without unlabelled
    samples or when the judge gave every sample one verdict."""
    n, big_n = labelled.n, unlabelled_total
    if n == 0 or big_n == 0:
        return 0.0
    mean_y = labelled.human_pass / n
    mean_yhat = labelled.rubric_pass / n
    covariance = labelled.both_pass / n - mean_y * mean_yhat
    total = n + big_n
    share = (labelled.rubric_pass + unlabelled_positive) / total
    variance = share * (1 - share) * total / (total - 1) if total > 1 else 0.0
    if variance <= 0:
        return 0.0
    lam = covariance / ((1 + n / big_n) * variance)
    return min(1.0, max(0.0, lam))


def _plain_variance(labelled: Agreement, lam: float) -> float:
    """Var(Y − λŶ) over the labelled 2×2, divisor n (what ``ppi_py`` computes)."""
    n = labelled.n
    cells = (  # (count, value of Y − λŶ)
        (labelled.both_pass, 1 - lam),
        (labelled.rubric_fail_human_pass, 1.0),
        (labelled.rubric_pass_human_fail, -lam),
        (labelled.both_fail, 0.0),
    )
    mean = sum(count * value for count, value in cells) / n
    return max(0.0, sum(count * (value - mean) ** 2 for count, value in cells) / n)


def _rectifier_variance_at(rate: float, lam: float, sensitivity: float, fail_judged_pass: float) -> float:
    """Var(Y − λŶ) had the true rate been ``rate``: a share ``rate`` of samples pass for a human and
    the judge passes ``sensitivity`` of them (Y − λŶ = 1 − λ, else 1); ``fail_judged_pass`` is the
    share of samples a human fails and the judge passes (Y − λŶ = −λ; the rest 0)."""
    second_moment = rate * (sensitivity * (1 - lam) ** 2 + 1 - sensitivity) + lam * lam * fail_judged_pass
    mean = rate * (1 - lam * sensitivity) - lam * fail_judged_pass
    return max(0.0, second_moment - mean * mean)


def _score_bounds(
    labelled: Agreement, judge_rate: float, lam: float, value: float, imputed: float, z: float
) -> tuple[float, float]:
    """The small-sample interval: every rate t with (θ − t)² ≤ z²·(imputed + V(t)/n), V(t) the
    rectifier's variance had the true rate been t (see the module docstring). Found by bisection
    on each side of θ (where the inequality holds)."""
    w = PSEUDO_COUNT
    sensitivity = (labelled.both_pass + w) / (labelled.human_pass + 2 * w)
    false_pass = (labelled.rubric_pass_human_fail + w) / (labelled.human_fail + 2 * w)
    n = labelled.n

    def outside(rate: float) -> bool:
        from_labels = _rectifier_variance_at(rate, lam, sensitivity, (1 - rate) * false_pass)
        implied = min(max(judge_rate - rate * sensitivity, 0.0), max(1 - rate, 0.0))
        from_judge_rate = _rectifier_variance_at(rate, lam, sensitivity, implied)
        variance = imputed + (from_labels + from_judge_rate) / (2 * n)
        return (value - rate) ** 2 > z * z * variance

    def crossing(inside: float, far: float) -> float:
        if not outside(far):
            return far
        for _ in range(_BISECTIONS):
            middle = (inside + far) / 2
            if outside(middle):
                far = middle
            else:
                inside = middle
        return inside

    return crossing(value, value - 1.5), crossing(value, value + 1.5)


def ppi_estimate(
    labelled: Agreement,
    unlabelled_positive: int,
    unlabelled_total: int,
    *,
    adjust: bool = True,
    lam: float | None = None,
    z: float = Z95,
) -> PPIEstimate:
    """The PPI++ mean of human Y from the labelled 2×2 and the judge's pass count on the
    unlabelled samples; ``lam=None`` tunes λ. ``adjust=False`` gives ``ppi_py``'s plain interval
    θ ± z·SE; ``adjust=True`` the small-sample score-type interval (module docstring). The point
    estimate is the same either way. Requires at least one labelled sample."""
    n, big_n = labelled.n, unlabelled_total
    if n == 0:
        raise ValueError("a corrected rate needs at least one labelled sample")
    if big_n < 0 or not 0 <= unlabelled_positive <= big_n:
        raise ValueError(f"unlabelled passes {unlabelled_positive} outside 0..{big_n}")
    if big_n == 0:
        lam = 0.0
    elif lam is None:
        lam = power_tuned_lambda(labelled, unlabelled_positive, big_n)
    mean_y = labelled.human_pass / n
    mean_yhat = labelled.rubric_pass / n
    unlabelled_share = unlabelled_positive / big_n if big_n else 0.0
    value = lam * unlabelled_share + mean_y - lam * mean_yhat
    imputed = lam * lam * unlabelled_share * (1 - unlabelled_share) / big_n if big_n else 0.0
    se = math.sqrt(imputed + _plain_variance(labelled, lam) / n)
    if not adjust:
        return PPIEstimate(value, value - z * se, value + z * se, lam, se)
    judge_rate = (labelled.rubric_pass + unlabelled_positive) / (n + big_n)
    lo, hi = _score_bounds(labelled, judge_rate, lam, value, imputed, z)
    if not lo <= value <= hi:  # labels at odds with the judge's rate (θ outside [0, 1]): widen to the plain interval too
        lo, hi = min(lo, value - z * se), max(hi, value + z * se)
    return PPIEstimate(value, lo, hi, lam, se)


def _cant_tell(labelled: Agreement, positive: str, negative: str) -> str | None:
    n = labelled.n
    if n == 0:
        return "no labelled graded sample"
    if n < MIN_LABELLED:
        return f"{n} labelled sample{'s' if n != 1 else ''}; need at least {MIN_LABELLED}"
    if labelled.human_fail == 0:
        return f"every label is {positive}"
    if labelled.human_pass == 0:
        return f"every label is {negative}"
    return None


def corrected_rate(
    labelled: Agreement, judged_positive: int, judged_total: int, *, adjust: bool = True,
    positive: str = "pass", negative: str = "fail",
) -> CorrectedRate:  # fmt: skip
    """The corrected rate from ``labelled`` — the (human, judge) 2×2 on the labelled graded
    samples — and the judge's ``judged_positive`` of ``judged_total`` over ALL graded samples,
    labelled or not (the unlabelled are all minus labelled). ``positive``/``negative`` name the
    classes in a ``cant_tell`` reason (``met``/``unmet`` for a criterion)."""
    n = labelled.n
    big_n = judged_total - n
    unlabelled_positive = judged_positive - labelled.rubric_pass
    if big_n < 0 or not 0 <= unlabelled_positive <= big_n:
        raise ValueError(
            f"judge counts ({judged_positive} of {judged_total}) do not include the {n} labelled samples"
        )
    why = _cant_tell(labelled, positive, negative)
    if why is not None:
        return CorrectedRate(None, None, n, big_n, why)
    estimate = ppi_estimate(labelled, unlabelled_positive, big_n, adjust=adjust)
    return CorrectedRate(_clip(estimate.value), (_clip(estimate.lo), _clip(estimate.hi)), n, big_n)


def _clip(share: float) -> float:
    return min(1.0, max(0.0, share))


@dataclass
class RateTally:
    """Counts behind one raw and corrected rate: the judge's positives of all it judged, and the
    (human, judge) 2×2 of the labelled ones. Folds with :meth:`add` (streaming)."""

    judged_positive: int = 0
    judged_total: int = 0
    both_pass: int = 0
    both_fail: int = 0
    rubric_pass_human_fail: int = 0
    rubric_fail_human_pass: int = 0

    def count(self, judge: bool, human: bool | None) -> None:
        self.judged_total += 1
        self.judged_positive += judge
        if human is None:
            return
        if human and judge:
            self.both_pass += 1
        elif human:
            self.rubric_fail_human_pass += 1
        elif judge:
            self.rubric_pass_human_fail += 1
        else:
            self.both_fail += 1

    def add(self, other: RateTally) -> None:
        self.judged_positive += other.judged_positive
        self.judged_total += other.judged_total
        self.both_pass += other.both_pass
        self.both_fail += other.both_fail
        self.rubric_pass_human_fail += other.rubric_pass_human_fail
        self.rubric_fail_human_pass += other.rubric_fail_human_pass

    @property
    def labelled(self) -> Agreement:
        return Agreement(self.both_pass, self.both_fail, self.rubric_pass_human_fail, self.rubric_fail_human_pass)

    @property
    def raw(self) -> float | None:
        return self.judged_positive / self.judged_total if self.judged_total else None

    def corrected(self, positive: str = "pass", negative: str = "fail") -> CorrectedRate:
        return corrected_rate(self.labelled, self.judged_positive, self.judged_total,
                              positive=positive, negative=negative)  # fmt: skip

    def to_dict(self, positive: str = "pass", negative: str = "fail") -> dict[str, Any]:
        raw = self.raw
        return {"raw": None if raw is None else round(raw, DIGITS),
                "corrected": self.corrected(positive, negative).to_dict()}  # fmt: skip


@dataclass
class PassRateTally:
    """The counts of :func:`pass_rates`, overall and per criterion, foldable chunk by chunk."""

    overall: RateTally = field(default_factory=RateTally)
    criteria: dict[str, RateTally] = field(default_factory=dict)
    #: The rubric's criterion ids: the order :meth:`to_dict` lists criteria in.
    order: tuple[str, ...] = ()

    def count(self, sample: SampleResult, label: Label | None) -> None:
        """Tally one graded sample and its label (if any). Only pass/fail samples and met/unmet
        cells count; a label's verdict counts when it is pass or fail, a cell's when met or unmet."""
        if sample.verdict in (Verdict.PASS, Verdict.FAIL):
            human = label.verdict if label is not None else None
            self.overall.count(sample.verdict is Verdict.PASS, None if human not in ("pass", "fail") else human == "pass")
        for cell in sample.criteria:
            if cell.status not in (Status.MET, Status.UNMET):
                continue
            state = label.criteria.get(cell.id) if label is not None else None
            human_met = None if state not in ("met", "unmet") else state == "met"
            self.criteria.setdefault(cell.id, RateTally()).count(cell.status is Status.MET, human_met)

    def add(self, other: PassRateTally) -> None:
        self.order = self.order or other.order
        self.overall.add(other.overall)
        for cid, tally in other.criteria.items():
            self.criteria.setdefault(cid, RateTally()).add(tally)

    @property
    def n_labelled(self) -> int:
        return self.overall.labelled.n

    def to_dict(self) -> dict[str, Any]:
        """``{"raw", "corrected", "criteria": {cid: {"raw", "corrected"}}}``, criteria in
        :attr:`order` first, then any others as counted."""
        order = list(dict.fromkeys([*[c for c in self.order if c in self.criteria], *self.criteria]))
        return {
            **self.overall.to_dict(),
            "criteria": {cid: self.criteria[cid].to_dict("met", "unmet") for cid in order},
        }


def tally(samples: Iterable[SampleResult], labels: Mapping[str, Label], order: Iterable[str] = ()) -> PassRateTally:
    """The :class:`PassRateTally` of graded ``samples`` and their ``labels`` (by sample id);
    ``order``: the rubric's criterion ids."""
    result = PassRateTally(order=tuple(order))
    for sample in samples:
        result.count(sample, labels.get(sample.id))
    return result


def pass_rates(samples: Iterable[SampleResult], labels: Mapping[str, Label], rubric: Rubric) -> dict[str, Any]:
    """``{"raw": float|None, "corrected": CorrectedRate.to_dict(), "criteria": {cid: {"raw",
    "corrected"}}}`` — the shape of ``grade --format json``'s ``summary.pass_rate``."""
    return tally(samples, labels, (c.key for c in rubric.criteria)).to_dict()


def _percent(share: float) -> str:
    return f"{share:.1%}"


def rate_text(entry: Mapping[str, Any]) -> str:
    """One ``{"raw", "corrected"}`` entry in words: ``raw 62.0% · corrected 55.3% (95% CI 41.2–68.0%)``,
    or ``raw 62.0% · corrected: can't tell (7 labelled samples; need at least 10)``."""
    raw = entry.get("raw")
    corrected = entry.get("corrected") or {}
    head = "raw –" if raw is None else f"raw {_percent(raw)}"
    if "cant_tell" in corrected:
        return f"{head} · corrected: can't tell ({corrected['cant_tell']})"
    low, high = corrected["ci"]
    return f"{head} · corrected {_percent(corrected['value'])} (95% CI {_percent(low)}–{_percent(high)})"


def labels_text(entry: Mapping[str, Any], noun: str = "samples") -> str:
    """``corrected by 24 labelled samples, 76 unlabelled``: how many labels carried a correction
    (``7 labelled samples, 93 unlabelled`` where they could not)."""
    corrected = entry.get("corrected") or {}
    labelled, unlabelled = corrected.get("n_labelled", 0), corrected.get("n_unlabelled", 0)
    verb = "corrected by " if "cant_tell" not in corrected else ""
    return f"{verb}{labelled} labelled {noun}, {unlabelled} unlabelled"


def pass_rate_lines(pass_rate: Mapping[str, Any]) -> list[str]:
    """The ``pass_rate`` object (of :func:`pass_rates`) as plain lines: the pass rate, then the met
    share per criterion. Each renderer makes them safe for its output."""
    lines = [f"pass rate: {rate_text(pass_rate)} — {labels_text(pass_rate)}"]
    criteria = pass_rate.get("criteria") or {}
    if criteria:
        lines.append("met share per criterion:")
        lines += [f"  {cid}: {rate_text(entry)} — {labels_text(entry, 'cells')}" for cid, entry in criteria.items()]
    return lines
