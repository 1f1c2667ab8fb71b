"""Judge-path client cost: CPU per judge call, and the warm path's process start.

1. Throughput: 2,500 samples × 4 judge criteria = 10,000 calls against a zero-latency fake
   judge running in a *separate process*, so only the client's CPU is counted
   (``time.process_time`` in this process; the SDK import is done before timing). Reports
   client CPU per call and calls per CPU-second at concurrency 16 and 64.
2. Warm path: ``rubric-studio grade`` of 40 samples × 5 criteria, every reply in the cache,
   as a whole process (median of 7) against a bare ``python -c pass`` — the time a CI
   re-run of an unchanged rubric costs.

Run: ``python bench/bench_throughput.py`` (≈1 min). ``--profile`` prints the top client
functions by cumulative time for one 2,000-call run.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.core.loading import parse_rubric  # noqa: E402
from rubric_studio.core.samples import Sample  # noqa: E402
from rubric_studio.engine.api import make_grader  # noqa: E402

SERVE = (
    "import sys, time; sys.path.insert(0, sys.argv[1]); from tests.fakellm import FakeLLM; "
    "fake = FakeLLM().start(); print(fake.port, flush=True); time.sleep(3600)"
)


def start_fake() -> tuple[subprocess.Popen, int]:
    server = subprocess.Popen([sys.executable, "-c", SERVE, str(ROOT)], stdout=subprocess.PIPE, text=True)
    return server, int(server.stdout.readline())


def rubric_for(criteria: int, concurrency: int):
    lines = "".join(f"  - {{id: c{i}, outcome: Mentions topic{i} clearly}}\n" for i in range(criteria))
    return parse_rubric(f"name: t\njudge: {{concurrency: {concurrency}, timeout: 30}}\ncriteria:\n{lines}")


async def _grade(rubric, samples, port: int, cache: str):
    grader = make_grader(rubric, judge="openai:gpt-4o-mini", base_url=f"http://127.0.0.1:{port}/v1",
                         env={"OPENAI_API_KEY": "k"}, cache_path=cache)  # fmt: skip
    grader.one_invocation()
    try:
        return await grader.run(rubric, samples)
    finally:
        await grader.aclose()


def throughput(port: int, samples: int, concurrency: int, profile: bool = False) -> dict:
    import openai  # noqa: F401 - imported before timing: the cost measured is per call

    rubric = rubric_for(4, concurrency)
    items = [Sample(id=f"s{i}", output=f"Reply {i} about topic{i % 4} and more text here.") for i in range(samples)]
    cache = tempfile.mktemp(suffix=".sqlite")
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    cpu, wall = time.process_time(), time.perf_counter()
    report = asyncio.run(_grade(rubric, items, port, cache))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    calls = report.usage.requests
    assert report.summary.errors == 0, report.summary
    return {"calls": calls, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
            "ms_cpu_per_call": round(1000 * cpu / calls, 3), "calls_per_cpu_s": round(calls / cpu)}  # fmt: skip


def _median_run(command: list[str], env: dict[str, str], runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def warm_path(port: int) -> dict:
    folder = Path(tempfile.mkdtemp())
    rubric = "name: w\njudge: {model: 'openai:gpt-4o-mini', concurrency: 16}\ncriteria:\n" + "".join(
        f"  - {{id: c{i}, outcome: Mentions topic{i} clearly}}\n" for i in range(5))
    (folder / "r.yaml").write_text(rubric)
    (folder / "s.jsonl").write_text("".join(json.dumps({"id": f"s{i}", "output": f"Reply {i} about topic{i % 5}."})
                                            + "\n" for i in range(40)))  # fmt: skip
    env = {**os.environ, "RUBRIC_STUDIO_HOME": str(folder / "home"), "OPENAI_API_KEY": "k",
           "RUBRIC_STUDIO_CACHE": str(folder / "c.sqlite")}  # fmt: skip
    grade = [sys.executable, "-m", "rubric_studio", "grade", str(folder / "r.yaml"), str(folder / "s.jsonl"),
             "--base-url", f"http://127.0.0.1:{port}/v1"]  # fmt: skip
    subprocess.run(grade, env=env, stdout=subprocess.DEVNULL, check=False)  # cold: fills the cache
    warm = _median_run(grade, env)
    bare = _median_run([sys.executable, "-c", "pass"], env)
    return {"warm_grade_s": round(warm, 3), "bare_python_s": round(bare, 3), "over_bare_s": round(warm - bare, 3)}


def main() -> None:
    server, port = start_fake()
    try:
        if "--profile" in sys.argv:
            throughput(port, 500, 16, profile=True)
            return
        results = {f"throughput_c{c}": throughput(port, 2500, c) for c in (16, 64)}
        results["warm_path"] = warm_path(port)
        print(json.dumps(results, indent=2))
    finally:
        server.kill()


if __name__ == "__main__":
    main()
