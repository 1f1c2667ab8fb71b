"""Probes against the judge's own noise: how often a run reports a bias that is not there, and
how often it finds one that is — one kind × criterion at a time.

1. Simulation, through the engine's per-criterion comparison (:func:`compare_with_noise`): a judge
   that turns over each verdict with probability ``q`` on every new request (the baseline, the null
   perturbation and each kind are independent draws), 5 kinds × 2 criteria per run, ``n`` cells per
   criterion, a cell "moved" when it flipped either way. *Before*: a kind × criterion whose flip
   rate's Wilson 95% interval lies above 0 (what the report showed as "k/n unmet → met" with no
   baseline). *After*: that comparison's ``beyond_noise``. Then the power: one kind also flips a
   further share of the cells, over the same noise.
2. Through the real openai SDK and the fake server (tests/fakellm.py): the calls a probe run
   makes with and without the null perturbation.

The rule behind *after* has changed since BENCHMARKS.md's table of 2026-11-28: then, a kind ×
criterion was beyond noise when Newcombe's paired 95% interval of the difference lay above 0, with
no correction; now :func:`compare_with_noise` is the per-criterion detail of the current decision —
the exact one-sided McNemar test, here at 0.05 (one comparison; in a probe run at 0.05/k over the
kind's k criteria). A kind's decision, pooled over its criteria and in its direction, is measured
by ``bench/bench_probe_decisions.py``.

Run: ``python bench/bench_probe_noise.py`` (prints Markdown).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.engine.probes._noise import compare_with_noise, wilson_interval  # noqa: E402

KINDS, CRITERIA, RUNS = 5, 2, 2000


def _run(rng: random.Random, n: int, q: float, extra: float = 0.0) -> tuple[int, int, int]:
    """(kinds read as bias before, kinds beyond noise after, criteria on which the biased kind was
    found) for one run."""
    before = after = found = 0
    for _ in range(CRITERIA):
        base = [rng.random() < q for _ in range(n)]
        null = {i: base[i] != (rng.random() < q) for i in range(n)}
        rate = sum(null.values()) / n
        for k in range(KINDS):
            kind = {i: (base[i] != (rng.random() < q)) or (k == 0 and rng.random() < extra) for i in range(n)}
            low = wilson_interval(sum(kind.values()), n)
            before += low is not None and low[0] > 0
            beyond = compare_with_noise(kind, null, rate).beyond_noise
            if k == 0 and extra:
                found += beyond
            else:
                after += beyond
    return before, after, found


def simulate() -> None:
    print("| judge | n cells | before: kinds read as bias | after: kinds beyond noise | runs with any false finding |")
    print("|---|---|---|---|---|")
    for q in (0.3, 0.1):
        for n in (20, 40, 100):
            rng = random.Random(11)
            results = [_run(rng, n, q) for _ in range(RUNS)]
            tests = KINDS * CRITERIA * RUNS
            before = sum(r[0] for r in results) / tests
            after = sum(r[1] for r in results) / tests
            anyrun = sum(1 for r in results if r[1]) / RUNS
            print(f"| noise only, q = {q} | {n} | {before:.1%} | {after:.1%} | {anyrun:.1%} |")
    print()
    print("| noise q | n cells | a kind flipping a further … of cells | found beyond noise (share of kind × criterion) |")
    print("|---|---|---|---|")
    for q in (0.1, 0.3):
        for n in (20, 40, 100):
            for extra in (0.3, 0.6):
                rng = random.Random(5)
                found = sum(_run(rng, n, q, extra)[2] for _ in range(RUNS // 4)) / (CRITERIA * (RUNS // 4))
                print(f"| {q} | {n} | {extra:.0%} | {found:.0%} |")


def through_the_server() -> None:
    from rubric_studio.cli import main
    from tests.engine.test_probe_noise import SECRET, brain, project_files
    from tests.fakellm import FakeLLM

    folder = Path(tempfile.mkdtemp())
    os.environ.update({"RUBRIC_STUDIO_HOME": str(folder / "home"), "RUBRIC_STUDIO_CACHE": str(folder / "c.sqlite"),
                       "RUBRIC_STUDIO_SECRET": SECRET, "OPENAI_API_KEY": "k"})  # fmt: skip
    project_files(folder)
    with FakeLLM(brain=brain) as server:
        os.environ["OPENAI_BASE_URL"] = server.base_url_openai
        out = folder / "out.json"
        main(["probe", str(folder / "r.yaml"), str(folder / "s.jsonl"), "--kinds", "verbosity,confidence,hedging,paraphrase",
              "--judge", "openai:judge-noisy", "--format", "json", "-o", str(out)])  # fmt: skip
        data = json.loads(out.read_text())
        calls = server.calls()
    noise = data["noise_usage"]["judge_calls"]
    rates = ", ".join(f"{k} {c['rate']:.0%}" for k, e in data["kinds"].items() for c in [e["criteria"]["refund"]])
    print(f"\nnoisy judge (q = 0.3), 40 samples × 2 criteria, per-criterion calls: {calls} calls, of which "
          f"{noise} for the null perturbation (+{noise / (calls - noise):.0%}); refund flip rates {rates}; "
          f"noise {data['noise']['refund']['rate']:.0%}; findings {data['findings']}")


if __name__ == "__main__":
    simulate()
    through_the_server()
