"""Probe decisions, one per kind pooled over criteria: how often a judge with no bias gets a finding,
how often a real bias is found, and whether probing another kind changes a kind's decision.

Simulated judges, decided by the engine itself: the verdicts are filed into a
:class:`~rubric_studio.engine.probes.ProbeReport` cell by cell (as the probe run files them) and
:func:`~rubric_studio.engine.probes._probes.against_noise` decides every kind, so the directions,
leniency's comparison and the constant-judge rule are the shipped ones. Each cell (sample ×
criterion, 2 criteria) has a right verdict, met or unmet with probability ½, and every request the
judge answers errs with probability ``q`` on its own — the baseline, the null perturbation and
each kind are separate requests. A kind with a bias also turns a further share ``e`` of the cells
that could move its way. Six kinds per run, as ``probe`` runs them: two towards the favourable
verdict (verbosity, confidence), one towards the unfavourable one (hedging), two without direction
(paraphrase, order), and leniency (the content-free answer's right verdict is unmet).

*Before* is the rule this replaced: per criterion, Newcombe's paired 95% interval of the two flip
rates (any flip, either way), at the Bonferroni level over every kind × criterion of the run (so
with one kind probed it ran at 2 comparisons, with the five kinds of the time at 10), a finding
when the interval lay above 0.

1. False findings: a judge with noise only, all six kinds probed.
2. Power: verbosity with a bias, decided alone and (before) among the other four kinds.
3. Independence: the same verdicts decided with verbosity alone and with all six kinds probed —
   the runs whose verbosity reading (outcome and words) differs.
4. The interval shown per criterion: how often Newcombe's paired 95% interval of the shift holds
   the true shift, beside Tango's score interval (the one ``calibrate --switch-to`` reports), on
   paired tables drawn with known cell probabilities — including many cells moved under both.

Run: ``python bench/bench_probe_decisions.py [--runs N] [--parts 1,2,3,4]`` (prints Markdown;
1,000 runs a row by default, a quarter of that for power and independence).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.core.intervals import family_z  # noqa: E402
from rubric_studio.core.results import CriterionResult, Status  # noqa: E402
from rubric_studio.engine.probes._decision import Table  # noqa: E402
from rubric_studio.engine.probes._noise import paired_difference  # noqa: E402
from rubric_studio.engine.probes._probes import CriterionProbe, KindProbe, ProbeReport, against_noise  # noqa: E402

CRITERIA = ("c0", "c1")
#: Kind -> the verdict it is suspected of pushing a cell to (met: True), None for any flip.
KINDS = {"verbosity": True, "confidence": True, "hedging": False, "paraphrase": None, "order": None,
         "leniency": True}  # fmt: skip
#: The kinds of a run before leniency existed: what the replaced rule corrected over.
OLD_KINDS = 5
VERDICT = {True: CriterionResult("", Status.MET), False: CriterionResult("", Status.UNMET)}


def _judge(right: bool, q: float, rng: random.Random) -> bool:
    return right != (rng.random() < q)


def _draw(rng: random.Random, n: int, q: float, biased: dict[str, float]) -> dict[str, list[tuple[bool, bool, dict]]]:
    """Per criterion, per cell: (baseline met, noise met, kind -> met under it)."""
    out = {}
    for cid in CRITERIA:
        cells = []
        for _ in range(n):
            right = rng.random() < 0.5
            base, noise = _judge(right, q, rng), _judge(right, q, rng)
            after = {}
            for kind, toward in KINDS.items():
                extra = biased.get(kind, 0.0)
                if kind == "leniency":
                    after[kind] = _judge(False, q, rng) or rng.random() < extra
                    continue
                verdict = _judge(right, q, rng)
                if extra and toward is not None and base != toward and rng.random() < extra:
                    verdict = toward
                elif extra and toward is None and rng.random() < extra:
                    verdict = not base
                after[kind] = verdict
            cells.append((base, noise, after))
        out[cid] = cells
    return out


def _report(cells: dict[str, list[tuple[bool, bool, dict]]], kinds) -> ProbeReport:
    """The verdicts filed as a probe run files them, every kind in ``kinds`` decided by the engine."""
    report = ProbeReport(list(CRITERIA), "graded", len(next(iter(cells.values()))), 0)
    for cid, rows in cells.items():
        noise = report.noise[cid] = CriterionProbe()
        for i, (base, null, _) in enumerate(rows):
            noise.add(f"s{i}", VERDICT[base], VERDICT[null], "")
    for kind in kinds:
        probe = report.kinds[kind] = KindProbe(kind)
        for cid, rows in cells.items():
            entry = probe.criteria[cid] = CriterionProbe(content_free=kind == "leniency")
            for i, (base, _, after) in enumerate(rows):
                if kind == "leniency":
                    entry.add_content_free(f"s{i}", VERDICT[after[kind]], "")
                else:
                    entry.add(f"s{i}", VERDICT[base], VERDICT[after[kind]], "")
    against_noise(report)
    return report


def _before(cells, kind: str, comparisons: int) -> bool:
    """The replaced rule: any criterion whose flip-rate difference's Bonferroni interval lies above 0."""
    for rows in cells.values():
        if kind == "leniency":
            pairs = [(after[kind], base != null) for base, null, after in rows]
        else:
            pairs = [(after[kind] != base, null != base) for base, null, after in rows]
        table = Table.of(pairs)
        found = paired_difference(table.both, table.kind_only, table.noise_only, table.neither, family_z(comparisons))
        if found is not None and found[1][0] > 0 and found[0] > 0:
            return True
    return False


def false_findings(runs: int) -> None:
    print("| noise q | samples (× 2 criteria) | kinds beyond noise | runs with any false finding (of 6 kinds) "
          "| worst kind | can't tell or suggestive | before: runs with any (of 5 kinds) |")
    print("|---|---|---|---|---|---|---|")
    per_kind_rows = []
    for q in (0.05, 0.2):
        for n in (20, 50, 100):
            rng = random.Random(17)
            beyond = {kind: 0 for kind in KINDS}
            unsure = anyrun = before = 0
            for _ in range(runs):
                cells = _draw(rng, n, q, {})
                report = _report(cells, KINDS)
                outcomes = {kind: p.decision.reading.outcome for kind, p in report.kinds.items()}
                for kind, outcome in outcomes.items():
                    beyond[kind] += outcome == "beyond"
                unsure += sum(o in ("cant_tell", "suggestive") for o in outcomes.values())
                anyrun += "beyond" in outcomes.values()
                before += any(_before(cells, kind, OLD_KINDS * len(CRITERIA)) for kind in list(KINDS)[:OLD_KINDS])
            worst = max(beyond, key=beyond.__getitem__)
            total = runs * len(KINDS)
            print(f"| {q} | {n} | {sum(beyond.values()) / total:.1%} | {anyrun / runs:.1%} | {worst} "
                  f"{beyond[worst] / runs:.1%} | {unsure / total:.0%} | {before / runs:.1%} |", flush=True)
            per_kind_rows.append((q, n, {kind: beyond[kind] / runs for kind in KINDS}))
    print("\nFalse findings per kind (share of runs):\n")
    print("| noise q | samples | " + " | ".join(KINDS) + " |")
    print("|---|---|" + "---|" * len(KINDS))
    for q, n, shares in per_kind_rows:
        print(f"| {q} | {n} | " + " | ".join(f"{shares[kind]:.1%}" for kind in KINDS) + " |")


def power(runs: int) -> None:
    print("\n| noise q | samples (× 2 criteria) | bias: a further share of movable cells | verbosity beyond noise "
          "| before, verbosity alone | before, with the other 4 kinds |")
    print("|---|---|---|---|---|---|")
    for q in (0.05, 0.2):
        for n in (20, 50):
            for extra in (0.2, 0.4):
                rng = random.Random(23)
                after = alone = among = 0
                for _ in range(runs):
                    cells = _draw(rng, n, q, {"verbosity": extra})
                    after += _report(cells, ["verbosity"]).kinds["verbosity"].decision.reading.outcome == "beyond"
                    alone += _before(cells, "verbosity", len(CRITERIA))
                    among += _before(cells, "verbosity", OLD_KINDS * len(CRITERIA))
                print(f"| {q} | {n} | {extra:.0%} | {after / runs:.0%} | {alone / runs:.0%} | {among / runs:.0%} |",
                      flush=True)


def independence(runs: int) -> None:
    print("\n| noise q | samples (× 2 criteria) | verbosity's bias | runs | verbosity's reading changed by the other "
          "five kinds | before: its finding changed by the other four |")
    print("|---|---|---|---|---|---|")
    for q in (0.05, 0.2):
        for extra in (0.0, 0.3):
            rng = random.Random(29)
            changed = changed_before = 0
            for _ in range(runs):
                cells = _draw(rng, 30, q, {"verbosity": extra})
                alone = _report(cells, ["verbosity"]).kinds["verbosity"].decision
                among = _report(cells, KINDS).kinds["verbosity"].decision
                changed += (alone.reading.outcome, alone.reads()) != (among.reading.outcome, among.reads())
                changed_before += (_before(cells, "verbosity", len(CRITERIA))
                                   != _before(cells, "verbosity", OLD_KINDS * len(CRITERIA)))  # fmt: skip
            print(f"| {q} | 30 | {extra:.0%} | {runs} | {changed} | {changed_before} |", flush=True)


#: (moved under both, the kind only, the noise only) per cell, and the cells of a table.
SCENARIOS = ((0.0, 0.0, 0.0, 20), (0.0, 0.05, 0.02, 40), (0.02, 0.15, 0.02, 25), (0.1, 0.1, 0.05, 30),
             (0.3, 0.03, 0.0, 100), (0.45, 0.015, 0.0, 100), (0.45, 0.02, 0.0, 100), (0.45, 0.03, 0.0, 100),
             (0.49, 0.02, 0.0, 200))  # fmt: skip


def interval_coverage(runs: int) -> None:
    from rubric_studio.engine.judge_switch import paired_difference_interval as tango

    print("\n| cells moved: both / kind only / noise only | n | true shift | Newcombe: covers | mean width "
          "| Tango: covers | mean width |")
    print("|---|---|---|---|---|---|---|")
    for both, kind_only, noise_only, n in SCENARIOS:
        rng = random.Random(31)
        true = kind_only - noise_only
        covered = {"newcombe": 0, "tango": 0}
        width = {"newcombe": 0.0, "tango": 0.0}
        for _ in range(runs):
            counts = [0, 0, 0, 0]
            for _ in range(n):
                u = rng.random()
                counts[0 if u < both else 1 if u < both + kind_only else 2 if u < both + kind_only + noise_only else 3] += 1
            found = paired_difference(*counts)
            assert found is not None
            for name, (low, high) in (("newcombe", found[1]), ("tango", tango(*counts))):
                covered[name] += low - 1e-12 <= true <= high + 1e-12
                width[name] += high - low
        print(f"| {both:.0%} / {kind_only:.1%} / {noise_only:.0%} | {n} | {true:+.3f} | "
              f"{covered['newcombe'] / runs:.1%} | {width['newcombe'] / runs:.3f} | "
              f"{covered['tango'] / runs:.1%} | {width['tango'] / runs:.3f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs per row (power and independence: a quarter)")
    parser.add_argument("--parts", default="1,2,3,4", help="which parts to run (see the module docstring)")
    args = parser.parse_args()
    parts = {part.strip() for part in args.parts.split(",")}
    runs = args.runs
    if "1" in parts:
        false_findings(runs)
    if "2" in parts:
        power(max(1, runs // 4))
    if "3" in parts:
        independence(max(1, runs // 4))
    if "4" in parts:
        interval_coverage(runs)


if __name__ == "__main__":
    main()
