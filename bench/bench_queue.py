"""A server that queues and publishes no slot count: cells lost and wall time, vs the probed case.

24 cells (24 samples × 1 judge criterion) at ``--concurrency 6`` against the fake server with
2 generation slots, each scenario with the slot count published (``/props``: the run caps its
concurrency at 2 from the start) and not published (a proxy, vLLM, another host: the run
must find the limit from its timeouts):

* ``exclusive``: llama.cpp-like slots, a lone call 0.5 s, queued calls wait (timeout 0.8 s:
  the third pair of a first wave of six waits 1.0 s and times out);
* ``shared``: the 2 slots share one compute, a lone call 0.5 s, two at once 1.0 s each
  (timeout 0.8 s: one call fits, two at once do not).

Reports cells lost, requests sent, the lowest concurrency reached and wall time (median of
3). Run: ``python bench/bench_queue.py`` (≈1 min).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.core.loading import parse_rubric  # noqa: E402
from rubric_studio.core.results import Status  # noqa: E402
from rubric_studio.core.samples import Sample  # noqa: E402
from rubric_studio.engine.api import make_grader  # noqa: E402
from tests.fakellm import FakeLLM  # noqa: E402

CELLS = 24


async def one(shared: bool, published: bool) -> tuple[int, int, int, float]:
    rubric = parse_rubric("name: q\njudge: {concurrency: 6, timeout: 0.8, max_retries: 0}\n"
                          "criteria:\n  - {id: a, outcome: Mentions the word topic0}\n")
    items = [Sample(id=f"s{i}", output=f"Reply {i} about topic{i % 4}.") for i in range(CELLS)]
    with FakeLLM(slots=2, shared_compute=shared, publish_slots=published, latency=0.5) as server, \
            tempfile.TemporaryDirectory() as tmp:
        grader = make_grader(rubric, judge="openai:gpt-4o-mini", base_url=server.base_url_openai,
                             env={"OPENAI_API_KEY": "k"}, cache_path=Path(tmp) / "c.sqlite")
        started = time.monotonic()
        try:
            report = await grader.run(rubric, items)
        finally:
            await grader.aclose()
        wall = time.monotonic() - started
        lost = sum(1 for s in report.samples if s.criteria[0].status is Status.ERROR)
        return lost, server.calls(), grader.dispatch.concurrency.lowest, wall


def main() -> None:
    print("| slots | slot count | cells lost | requests | lowest limit | wall time (median of 3) |")
    print("|---|---|---|---|---|---|")
    for shared in (False, True):
        for published in (True, False):
            runs = [asyncio.run(one(shared, published)) for _ in range(3)]
            lost = max(r[0] for r in runs)
            requests = max(r[1] for r in runs)
            lowest = min(r[2] for r in runs)
            wall = statistics.median(r[3] for r in runs)
            print(f"| {'shared compute' if shared else 'exclusive (llama.cpp)'} | "
                  f"{'published (/props)' if published else 'not published'} | {lost} of {CELLS} (worst) | "
                  f"{requests} (most) | {lowest} | {wall:.1f} s |", flush=True)


if __name__ == "__main__":
    main()
