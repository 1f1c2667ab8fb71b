"""How often the corrected pass rate's 95% interval covers the true pass rate.

Run: ``python bench/bench_pass_rate_coverage.py [--runs 4000] [--unlabelled 1000] [--seed 40]``
(prints a Markdown table; about a minute on one core).

A simulated judge of known sensitivity (share of truly passing samples it passes) and
specificity (share of truly failing samples it fails) grades samples whose true pass rate is
``p``. Each run draws ``n`` labelled samples (a human verdict and the judge's) and
``--unlabelled`` unlabelled ones (the judge's verdict only), and asks
:func:`rubric_studio.core.pass_rate.corrected_rate` for the corrected rate with the same counts
``grade`` would pass it. Coverage is the share of runs, among those that were not ``cant_tell``,
whose interval holds ``p``; width is the interval's mean width. "plain" is the same estimate with
``ppi_py``'s interval (``adjust=False``), for comparison. The target is 93–97%.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.core.agreement import Agreement  # noqa: E402
from rubric_studio.core.pass_rate import corrected_rate  # noqa: E402

LABELLED = (20, 50, 200)
#: (name, true pass rate, sensitivity, specificity)
JUDGES = (
    ("0.9 / 0.8", 0.72, 0.90, 0.80),
    ("0.8 / 0.9", 0.72, 0.80, 0.90),
    ("0.95 / 0.95", 0.72, 0.95, 0.95),
    ("0.7 / 0.7", 0.72, 0.70, 0.70),
    ("0.9 / 0.8, rate 0.5", 0.50, 0.90, 0.80),
    ("hard: 0.99 / 0.6, rate 0.85", 0.85, 0.99, 0.60),
    ("hard: 0.98 / 0.5, rate 0.9", 0.90, 0.98, 0.50),
    ("near-perfect: 0.99 / 0.95, rate 0.85", 0.85, 0.99, 0.95),
)


@dataclass
class Tally:
    runs: int = 0
    cant_tell: int = 0
    covered: int = 0
    covered_plain: int = 0
    width: float = 0.0
    width_plain: float = 0.0

    def row(self) -> str:
        told = self.runs - self.cant_tell
        if not told:
            return f"– | – | – | – | {self.cant_tell}"
        return (f"{self.covered / told:.1%} | {self.width / told:.3f} | {self.covered_plain / told:.1%} | "
                f"{self.width_plain / told:.3f} | {self.cant_tell}")  # fmt: skip


def one_run(rng: random.Random, p: float, sensitivity: float, specificity: float, n: int, unlabelled: int) -> tuple:
    """(labelled 2×2, judge passes over all samples, all samples) for one simulated run."""
    cells = [0, 0, 0, 0]  # both pass, both fail, judge pass / human fail, judge fail / human pass
    judged_positive = 0
    for index in range(n + unlabelled):
        human = rng.random() < p
        judge = rng.random() < (sensitivity if human else 1 - specificity)
        judged_positive += judge
        if index < n:
            cells[0 if human and judge else 1 if not (human or judge) else 2 if judge else 3] += 1
    return Agreement(*cells), judged_positive, n + unlabelled


def simulate(runs: int, unlabelled: int, seed: int) -> list[tuple[str, float, int, Tally]]:
    rows = []
    for name, p, sensitivity, specificity in JUDGES:
        for n in LABELLED:
            rng = random.Random(f"{seed}-{name}-{n}")
            tally = Tally()
            for _ in range(runs):
                labelled, positive, total = one_run(rng, p, sensitivity, specificity, n, unlabelled)
                tally.runs += 1
                rate = corrected_rate(labelled, positive, total)
                if rate.cant_tell is not None or rate.ci is None:
                    tally.cant_tell += 1
                    continue
                plain = corrected_rate(labelled, positive, total, adjust=False)
                assert plain.ci is not None
                tally.covered += rate.ci[0] <= p <= rate.ci[1]
                tally.width += rate.ci[1] - rate.ci[0]
                tally.covered_plain += plain.ci[0] <= p <= plain.ci[1]
                tally.width_plain += plain.ci[1] - plain.ci[0]
            rows.append((name, p, n, tally))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--unlabelled", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args()
    print(f"{args.runs} runs per row, {args.unlabelled} unlabelled samples, seed {args.seed}\n")
    print("| judge (sensitivity / specificity) | true rate | labelled | coverage | mean width "
          "| plain PPI++ coverage | plain width | cant_tell runs |")
    print("|---|---|---|---|---|---|---|---|")
    for name, p, n, tally in simulate(args.runs, args.unlabelled, args.seed):
        print(f"| {name} | {p} | {n} | {tally.row()} |")


if __name__ == "__main__":
    main()
