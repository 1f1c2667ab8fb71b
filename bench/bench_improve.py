"""What ``improve`` does on the bundled rubrics and their labels, and what it costs in calls.

For every judge criterion of every bundled rubric on which the judge disagrees with a
labelled cell, ``improve --criterion ID`` runs with the seeded split (seed 0, 30 % held out)
and the best candidate is read: its status, kappa before → after on the holdout, and the
judge calls the whole run cost (baseline included; a rerun costs 0).

No live model is reachable here, so the judge is the test suite's local server with its
keyword-overlap judge (met when a word of the outcome occurs in the text): a stand-in that
really disagrees with the human labels, not a model. Rewordings need a model that writes, so
only ``examples``, ``check`` and ``scoring`` candidates are made. Run:
``python bench/bench_improve.py [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rubric_studio.cli.calibrate import load_all_labels  # noqa: E402
from rubric_studio.core.agreement import agreement  # noqa: E402
from rubric_studio.core.discovery import find_samples_for  # noqa: E402
from rubric_studio.core.loading import load_rubric  # noqa: E402
from rubric_studio.core.samples import load_samples  # noqa: E402
from rubric_studio.engine.api import make_grader  # noqa: E402
from rubric_studio.engine.improve import improve  # noqa: E402
from tests.fakellm import FakeLLM  # noqa: E402

KINDS = ["examples", "check", "scoring"]


def _k(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


async def bench_rubric(path: Path, server: FakeLLM, cache: Path) -> list[dict]:
    rubric = load_rubric(path)
    samples = load_samples(find_samples_for(str(path))).samples
    labels, _ = load_all_labels(str(path), None, samples)
    options = {"judge": "openai:gpt-4o-mini", "base_url": server.base_url_openai, "cache_path": cache}
    grader = make_grader(rubric, **options)
    baseline = await grader.run(rubric, [s for s in samples if s.id in labels])
    report = agreement(baseline.samples, labels, rubric)
    await grader.aclose()
    rows = []
    for criterion in rubric.judge_criteria:
        if not report.cell_disagreements(criterion.key):
            continue
        start = server.calls()
        grader = make_grader(rubric, **options)
        result = await improve(rubric, samples, labels, grader=grader, criterion_id=criterion.key, kinds=KINDS)
        await grader.aclose()
        best = next((c for c in result.candidates if c.kind != "scoring"), None)
        rows.append({"rubric": rubric.name, "criterion": criterion.key, "labelled_cells": len(result.fit_ids)
                     + len(result.holdout_ids), "holdout": len(result.holdout_ids),
                     "best": best.kind if best else None, "status": best.status if best else "no candidate",
                     "holdout_kappa": [best.holdout.kappa_before, best.holdout.kappa_after] if best and best.holdout
                     else None, "holdout_fixed_broke": [best.holdout.fixed, best.holdout.broke]
                     if best and best.holdout else None, "calls": server.calls() - start})
    return rows


async def main_async() -> list[dict]:
    paths = sorted(p for p in (ROOT / "sample_rubrics").glob("*/*.yaml")
                   if not p.name.endswith((".labels.yaml", ".samples.yaml")))
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as home, FakeLLM() as server:
        os.environ.update({"RUBRIC_STUDIO_HOME": home, "OPENAI_API_KEY": "bench"})
        for path in paths:
            rows += await bench_rubric(path, server, Path(home) / "cache.sqlite")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    rows = asyncio.run(main_async())
    if parser.parse_args().json:
        print(json.dumps(rows, indent=2))
        return 0
    print("| rubric | criterion | labelled cells (holdout) | best candidate | status | holdout fixes/breaks | "
          "holdout kappa | judge calls |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        kappa = "–" if r["holdout_kappa"] is None else f"{_k(r['holdout_kappa'][0])} → {_k(r['holdout_kappa'][1])}"
        fb = "–" if r["holdout_fixed_broke"] is None else "{} / {}".format(*r["holdout_fixed_broke"])
        print(f"| {r['rubric']} | {r['criterion']} | {r['labelled_cells']} ({r['holdout']}) | {r['best'] or '–'} | "
              f"{r['status']} | {fb} | {kappa} | {r['calls']} |")
    print(f"\ntotal judge calls: {sum(r['calls'] for r in rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
