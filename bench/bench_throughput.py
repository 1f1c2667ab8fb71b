"""Judge-path client cost: CPU per judge call, and the warm path's process start.

1. Throughput: 2,500 samples × 4 judge criteria = 10,000 calls against a zero-latency fake
   judge running in a *separate process*, so only the client's CPU is counted
   (``time.process_time`` in this process; the SDK import is done before timing). Reports
   client CPU per call and calls per CPU-second at concurrency 16 and 64, beside the *SDK
   floor*: the same 10,000 request bodies posted through the SDK client alone (what any
   client on the SDK pays); the difference is rubric-studio's own work per call. Best of
   two rounds each (CPU time on a shared box only ever grows with interference).
2. Warm path: ``rubric-studio grade`` and ``calibrate`` of 40 samples × 5 criteria, every
   reply in the cache, as whole processes (median of 10) against a bare ``python -c pass``
   — what a CI re-run of an unchanged rubric costs. Bytecode is cached (in a temporary
   ``PYTHONPYCACHEPREFIX``), as in an installed package.

Run: ``python bench/bench_throughput.py`` (≈3 min). ``--profile`` profiles one 4,000-call
run at concurrency 64 and prints client CPU per call by package and the costliest
rubric-studio functions.
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
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.core.loading import parse_rubric  # noqa: E402
from rubric_studio.core.samples import Sample  # noqa: E402
from rubric_studio.engine.api import make_grader  # noqa: E402
from rubric_studio.judges import build_requests  # noqa: E402

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


def samples_for(count: int) -> list[Sample]:
    return [Sample(id=f"s{i}", output=f"Reply {i} about topic{i % 4} and more text here.") for i in range(count)]


def grader_for(rubric, port: int, cache: str | None):
    """A grader on the fake judge at ``port``; no reply cache when ``cache`` is None."""
    return make_grader(rubric, judge="openai:gpt-4o-mini", base_url=f"http://127.0.0.1:{port}/v1",
                       env={"OPENAI_API_KEY": "k"}, cache_path=cache, use_cache=cache is not None)  # fmt: skip


async def _grade(rubric, samples, port: int, cache: str):
    grader = grader_for(rubric, port, cache)
    grader.one_invocation()
    try:
        return await grader.run(rubric, samples)
    finally:
        await grader.aclose()


async def _post_through_sdk(judge, bodies: list[dict], concurrency: int) -> None:
    """The SDK floor: each body posted as rubric-studio posts it, nothing else done."""
    reply_type, gate = judge.reply_type(judge.sdk), asyncio.Semaphore(concurrency)

    async def post(body: dict) -> None:
        async with gate:
            await judge.client.post(judge.endpoint, body=body, cast_to=reply_type, options={"timeout": 30})

    try:
        await asyncio.gather(*(post(body) for body in bodies))
    finally:
        await judge.aclose()


def sdk_floor(port: int, samples: int, concurrency: int) -> float:
    """Client CPU seconds to post the run's request bodies through the SDK alone."""
    rubric = rubric_for(4, concurrency)
    judge = grader_for(rubric, port, None).judge
    bodies = [judge.body(request) for sample in samples_for(samples)
              for request in build_requests(rubric, sample, rubric.judge_criteria, judge.config)]  # fmt: skip
    cpu = time.process_time()
    asyncio.run(_post_through_sdk(judge, bodies, concurrency))
    return time.process_time() - cpu


def client_cpu(port: int, samples: int, concurrency: int) -> tuple[float, float, int]:
    """(client CPU s, wall s, requests) of one rubric-studio run over ``samples`` × 4 criteria."""
    rubric = rubric_for(4, concurrency)
    cpu, wall = time.process_time(), time.perf_counter()
    report = asyncio.run(_grade(rubric, samples_for(samples), port, tempfile.mktemp(suffix=".sqlite")))
    assert report.summary.errors == 0, report.summary
    return time.process_time() - cpu, time.perf_counter() - wall, report.usage.requests


def throughput(port: int, samples: int, concurrency: int, rounds: int = 2) -> dict:
    """Best of ``rounds`` for rubric-studio and for the SDK floor, alternated (the box is shared)."""
    import openai  # noqa: F401 - imported before timing: the cost measured is per call

    runs, floors = [], []
    for _ in range(rounds):
        runs.append(client_cpu(port, samples, concurrency))
        floors.append(sdk_floor(port, samples, concurrency))
    (cpu, wall, calls), floor = min(runs), min(floors)
    return {"calls": calls, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
            "ms_cpu_per_call": round(1000 * cpu / calls, 3), "calls_per_cpu_s": round(calls / cpu),
            "sdk_floor_ms_per_call": round(1000 * floor / calls, 3),
            "own_ms_per_call": round(1000 * (cpu - floor) / calls, 3)}  # fmt: skip


def _package_of(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/")[1].split("/")[0]
    if "rubric_studio/" in filename:
        return "rubric_studio." + filename.split("rubric_studio/")[1].split("/")[0]
    return "builtins and C methods" if filename == "~" else "stdlib"


def profile(port: int, samples: int = 1000, concurrency: int = 64) -> None:
    """Client CPU per call by package (self time), then the costliest rubric-studio functions."""
    import cProfile
    import pstats

    import openai  # noqa: F401

    rubric = rubric_for(4, concurrency)
    profiler = cProfile.Profile()
    profiler.enable()
    report = asyncio.run(_grade(rubric, samples_for(samples), port, tempfile.mktemp(suffix=".sqlite")))
    profiler.disable()
    stats, calls = pstats.Stats(profiler), report.usage.requests
    by_package: Counter[str] = Counter()
    for (filename, _, _), (_, _, self_time, _, _) in stats.stats.items():
        by_package[_package_of(filename)] += self_time
    total = sum(by_package.values())
    print(f"{calls} calls, {1000 * total / calls:.2f} ms profiled client CPU per call (cProfile inflates ≈2.5×)")
    for package, seconds in by_package.most_common(15):
        print(f"  {1000 * seconds / calls:7.3f} ms/call  {100 * seconds / total:5.1f}%  {package}")
    stats.sort_stats("cumulative").print_stats("rubric_studio", 30)


def installed_env(folder: Path) -> dict[str, str]:
    """This environment with bytecode cached outside the checkout, as for an installed package."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(folder / "pycache")}


def median_run(command: list[str], env: dict[str, str], runs: int = 10, cwd: Path | None = None) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def warm_path(port: int) -> dict:
    folder = Path(tempfile.mkdtemp())
    rubric = "name: w\njudge: {model: 'openai:gpt-4o-mini', concurrency: 16}\ncriteria:\n" + "".join(
        f"  - {{id: c{i}, outcome: Mentions topic{i} clearly}}\n" for i in range(5))
    (folder / "r.yaml").write_text(rubric)
    (folder / "s.jsonl").write_text("".join(json.dumps({"id": f"s{i}", "output": f"Reply {i} about topic{i % 5}."})
                                            + "\n" for i in range(40)))  # fmt: skip
    (folder / "r.labels.yaml").write_text("".join(f"s{i}: {{verdict: {'pass' if i % 2 else 'fail'}}}\n"
                                                  for i in range(10)))  # fmt: skip
    env = {**installed_env(folder), "RUBRIC_STUDIO_HOME": str(folder / "home"), "OPENAI_API_KEY": "k",
           "RUBRIC_STUDIO_CACHE": str(folder / "c.sqlite")}  # fmt: skip
    args = [str(folder / "r.yaml"), str(folder / "s.jsonl"), "--base-url", f"http://127.0.0.1:{port}/v1"]
    grade = [sys.executable, "-m", "rubric_studio", "grade", *args]
    subprocess.run(grade, env=env, stdout=subprocess.DEVNULL, check=False)  # cold: fills the cache and bytecode
    bare = median_run([sys.executable, "-c", "pass"], env)
    warm = median_run(grade, env)
    calibrate = median_run([sys.executable, "-m", "rubric_studio", "calibrate", *args], env)
    return {"bare_python_s": round(bare, 3), "warm_grade_s": round(warm, 3), "over_bare_s": round(warm - bare, 3),
            "warm_calibrate_s": round(calibrate, 3), "calibrate_over_bare_s": round(calibrate - bare, 3)}  # fmt: skip


def main() -> None:
    server, port = start_fake()
    try:
        if "--profile" in sys.argv:
            profile(port)
            return
        results = {f"throughput_c{c}": throughput(port, 2500, c) for c in (16, 64)}
        results["warm_path"] = warm_path(port)
        print(json.dumps(results, indent=2))
    finally:
        server.kill()


if __name__ == "__main__":
    main()
