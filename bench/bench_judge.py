"""Judge-path benchmark (issue: judges).

A local fake server answers every call after 200 ms. 40 samples × 5 judge criteria at
concurrency 16 must finish within 1.2 × ⌈200/16⌉ × 0.2 s + 1 s. Also reports calls,
cache hits and wall time for a cold run, a warm re-run in a new session (SQLite cache),
and a one-criterion edit. Real SDK (openai), real HTTP on 127.0.0.1.

Run: ``python bench/bench_judge.py``
"""

from __future__ import annotations

import asyncio
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.core.loading import parse_rubric  # noqa: E402
from rubric_studio.core.samples import Sample  # noqa: E402
from rubric_studio.engine.api import make_grader  # noqa: E402
from tests.fakellm import FakeLLM  # noqa: E402

RUBRIC = """\
name: bench-judge
judge: {model: "openai:bench-model", concurrency: 16, timeout: 10, max_retries: 0}
criteria:
  - {id: refund, outcome: Mentions the refund timeline}
  - {id: thanks, outcome: Thanks the customer}
  - {id: policy, outcome: States the refund policy}
  - {id: next-steps, outcome: Gives clear next steps}
  - {id: tone, outcome: Warm professional tone, score_ranges: {0: cold, 5: neutral, 8: warm}}
"""
N_SAMPLES, LATENCY, CONCURRENCY = 40, 0.2, 16


def samples() -> list[Sample]:
    return [
        Sample(id=f"s{i}", output=f"Thank you for writing. Your refund of order {i} takes 5-7 business days. Next steps: reply here.")
        for i in range(N_SAMPLES)
    ]


async def measure(server: FakeLLM, cache_dir: Path) -> list[tuple[str, int, int, float]]:
    rows = []
    rubric = parse_rubric(RUBRIC, "bench.yaml")
    env = {"OPENAI_API_KEY": "bench"}
    options = dict(judge=None, base_url=server.base_url_openai, env=env, cache_path=cache_dir / "c.sqlite", concurrency=CONCURRENCY)

    grader = make_grader(rubric, **options)
    report = await grader.run(rubric, samples())
    rows.append(("cold run", report.usage.judge_calls, report.usage.cache_hits, report.usage.wall_seconds))
    await grader.aclose()

    fresh = make_grader(rubric, **options)
    report = await fresh.run(rubric, samples())
    rows.append(("warm re-run (new session, SQLite cache)", report.usage.judge_calls, report.usage.cache_hits, report.usage.wall_seconds))

    edited = rubric.model_copy(deep=True)
    edited.criteria[0].outcome += " in business days"
    report = await fresh.run(edited, samples())
    rows.append(("one-criterion edit (same session)", report.usage.judge_calls, report.usage.cache_hits, report.usage.wall_seconds))
    await fresh.aclose()
    return rows


def main() -> None:
    bound = 1.2 * math.ceil(N_SAMPLES * 5 / CONCURRENCY) * LATENCY + 1
    with FakeLLM(latency=LATENCY) as server, tempfile.TemporaryDirectory() as tmp:
        rows = asyncio.run(measure(server, Path(tmp)))
        served = server.calls()
    print(f"40 samples x 5 judge criteria, concurrency {CONCURRENCY}, server latency {LATENCY * 1000:.0f} ms")
    print("| run | judge calls | cache hits | wall s |\n|---|---|---|---|")
    for name, calls, hits, wall in rows:
        print(f"| {name} | {calls} | {hits} | {wall:.3f} |")
    cold = rows[0][3]
    print(f"\ncold run {cold:.3f} s vs bound {bound:.3f} s: {'OK' if cold <= bound else 'OVER'}; server saw {served} requests")


if __name__ == "__main__":
    main()
