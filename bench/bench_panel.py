"""Judge panel benchmark: a 3-member panel against one judge, and against the three judges run
one after another.

A local fake server (real HTTP, the real openai SDK) answers every call after ``LATENCY``
seconds. N samples × 5 judge criteria, each judge at concurrency ``CONCURRENCY``, no cache.
Reports calls and wall time of: one judge; the three judges one after another; the panel
(its members run at once, each at its own concurrency). The panel's calls must be exactly
3 × one judge's, and its wall time should be near one judge's, not three.

Run: ``python bench/bench_panel.py [N_SAMPLES]`` (default 1000)
"""

from __future__ import annotations

import asyncio
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.core.loading import parse_rubric  # noqa: E402
from rubric_studio.core.samples import Sample  # noqa: E402
from rubric_studio.engine.api import make_grader  # noqa: E402
from tests.fakellm import FakeLLM  # noqa: E402

RUBRIC = """\
name: bench-panel
judge: {concurrency: 16, timeout: 30, max_retries: 0}
criteria:
  - {id: refund, outcome: Mentions the refund timeline}
  - {id: thanks, outcome: Thanks the customer}
  - {id: policy, outcome: States the refund policy}
  - {id: next-steps, outcome: Gives clear next steps}
  - {id: tone, outcome: Warm professional tone, score_ranges: {0: cold, 5: neutral, 8: warm}}
"""
MEMBERS = ("openai-compatible:judge-a", "openai-compatible:judge-b", "openai-compatible:judge-c")
LATENCY = 0.1


def samples(n: int) -> list[Sample]:
    return [
        Sample(
            id=f"s{i:04d}",
            output=f"Ticket {i}: thanks, your refund policy allows 30 days; next steps follow.",
        )
        for i in range(n)
    ]


async def timed(server: FakeLLM, judge: str, items: list[Sample]) -> tuple[int, float]:
    """(calls the server received, wall seconds) of one grading run with ``judge``."""
    rubric = parse_rubric(RUBRIC)
    grader = make_grader(rubric, judge=judge, base_url=server.base_url_openai, use_cache=False, env={})
    before = server.calls()
    started = time.perf_counter()
    try:
        report = await grader.run(rubric, items)
    finally:
        await grader.aclose()
    wall = time.perf_counter() - started
    assert report.errored_cells == 0, report.errored_cells
    return server.calls() - before, wall


async def main(n: int) -> None:
    items = samples(n)
    with FakeLLM(latency=LATENCY) as server:
        one = await timed(server, MEMBERS[0], items)
        each = [await timed(server, member, items) for member in MEMBERS]
        panel = await timed(server, ",".join(MEMBERS), items)
    print(
        f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{n} samples x 5 criteria, latency {LATENCY}s, concurrency 16 per judge"
    )
    print("| run | calls | wall s |\n|---|---:|---:|")
    print(f"| one judge | {one[0]} | {one[1]:.1f} |")
    print(f"| three judges one after another | {sum(c for c, _ in each)} | {sum(w for _, w in each):.1f} |")
    print(f"| panel of the three | {panel[0]} | {panel[1]:.1f} |")
    assert panel[0] == 3 * one[0], (panel[0], one[0])


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
