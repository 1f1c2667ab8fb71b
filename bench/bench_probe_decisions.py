"""Probe decisions, one per kind pooled over criteria: how often a judge with no bias gets a finding,
how often a real bias is found, and whether probing another kind changes a kind's decision.

Simulated judges through the engine's own decision (:func:`read_table` on the paired table the
report builds): each cell (sample × criterion, 2 criteria) has a right verdict, met or unmet with
probability ½, and every request the judge answers errs with probability ``q`` on its own — the
baseline, the null perturbation and each kind are separate requests. A kind with a bias also
turns a further share ``e`` of the cells that could move its way. Six kinds per run, as
``probe`` runs them: two towards the favourable verdict (verbosity, confidence), one towards the
unfavourable one (hedging), two without direction (paraphrase, order), and leniency (the
content-free answer's right verdict is unmet).

*Before* is the per-criterion decision this replaced: Newcombe's paired 95% interval of the flip
rates, at the Bonferroni level over every kind × criterion of the run (so with one kind probed it
ran at 2 comparisons, with the five kinds of the time at 10).

Run: ``python bench/bench_probe_decisions.py`` (prints Markdown).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.core.intervals import family_z  # noqa: E402
from rubric_studio.engine.probes._decision import Table, read_table  # noqa: E402
from rubric_studio.engine.probes._noise import paired_difference  # noqa: E402

CRITERIA = 2
KINDS = (("verbosity", True), ("confidence", True), ("hedging", False), ("paraphrase", None), ("order", None),
         ("leniency", "content-free"))  # fmt: skip
RUNS = 1000
#: The kinds of a run before leniency existed: what the replaced rule corrected over.
OLD_KINDS = 5


def _judge(right: bool, q: float, rng: random.Random) -> bool:
    return right != (rng.random() < q)


def _kind_cells(rng: random.Random, n: int, q: float, direction, extra: float = 0.0):
    """Per criterion, [(kind moved, noise moved, kind flipped, noise flipped)] on the cells the kind counts."""
    out = []
    for _ in range(CRITERIA):
        cells = []
        for _ in range(n):
            right = rng.random() < 0.5
            base, noise = _judge(right, q, rng), _judge(right, q, rng)
            if direction == "content-free":
                lenient = _judge(False, q, rng) or rng.random() < extra
                cells.append((lenient, noise != base, lenient, noise != base))
                continue
            after = _judge(right, q, rng)
            toward = direction
            if toward is not None and base != toward and rng.random() < extra:
                after = toward
            if toward is None:
                if extra and rng.random() < extra:
                    after = not base
                cells.append((after != base, noise != base, after != base, noise != base))
            elif base != toward:
                cells.append((after == toward, noise == toward, after != base, noise != base))
            else:
                cells.append((None, None, after != base, noise != base))
        out.append(cells)
    return out


def _after(cells) -> str:
    table = Table()
    for criterion in cells:
        table = table + Table.of([(k, z) for k, z, _, _ in criterion if k is not None])
    return read_table(table).outcome


def _before(cells, comparisons: int) -> bool:
    """The replaced rule: any criterion whose flip-rate difference's Bonferroni interval lies above 0."""
    for criterion in cells:
        table = Table.of([(kf, zf) for _, _, kf, zf in criterion])
        found = paired_difference(table.both, table.kind_only, table.noise_only, table.neither, family_z(comparisons))
        if found is not None and found[1][0] > 0 and found[0] > 0:
            return True
    return False


def false_findings() -> None:
    print("| noise q | samples (× 2 criteria) | kinds beyond noise | runs with any false finding (of 6 kinds) "
          "| can't tell | before: runs with any |")
    print("|---|---|---|---|---|---|")
    for q in (0.05, 0.2):
        for n in (20, 50, 100):
            rng = random.Random(17)
            beyond = unsure = anyrun = before = 0
            for _ in range(RUNS):
                outcomes = [_after(_kind_cells(rng, n, q, d)) for _, d in KINDS]
                beyond += outcomes.count("beyond")
                unsure += sum(o in ("cant_tell", "suggestive") for o in outcomes)
                anyrun += "beyond" in outcomes
                before += any(_before(_kind_cells(rng, n, q, d), OLD_KINDS * CRITERIA) for _, d in KINDS[:OLD_KINDS])
            kinds = RUNS * len(KINDS)
            print(f"| {q} | {n} | {beyond / kinds:.1%} | {anyrun / RUNS:.1%} | {unsure / kinds:.0%} | {before / RUNS:.1%} |",
                  flush=True)


def power() -> None:
    print("\n| noise q | samples (× 2 criteria) | bias: a further share of movable cells | verbosity beyond noise "
          "| before, verbosity alone | before, with the other 4 kinds |")
    print("|---|---|---|---|---|---|")
    for q in (0.05, 0.2):
        for n in (20, 50):
            for extra in (0.2, 0.4):
                rng = random.Random(23)
                after = alone = among = 0
                for _ in range(RUNS // 4):
                    cells = _kind_cells(rng, n, q, True, extra)
                    after += _after(cells) == "beyond"
                    alone += _before(cells, CRITERIA)
                    among += _before(cells, OLD_KINDS * CRITERIA)
                runs = RUNS // 4
                print(f"| {q} | {n} | {extra:.0%} | {after / runs:.0%} | {alone / runs:.0%} | {among / runs:.0%} |")


if __name__ == "__main__":
    false_findings()
    power()
