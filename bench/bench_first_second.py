"""The first second: the studio's first screen and a fully cached ``grade``, as whole processes.

1. First screen: ``python -m rubric_studio support_reply.yaml`` in tmux at 120×35, from launch
   to the results header on screen ("sample" and "verdict"), and to the rows (a sample id and the
   legend) — the measure of ``bench/bench_tui.py`` (part "first"), here on the checkout given
   (``--root``) so two trees can be compared back to back. Beside it the *floor*: a Textual app with one static
   line, measured the same way (what Textual and Rich cost before any studio code runs).
2. Cached grade: ``python -m rubric_studio grade support_reply.yaml`` with every judge reply in
   the cache (filled once against the fake judge of ``tests/fakellm.py``, which is then stopped:
   a request would fail), beside a bare ``python -c pass`` and the *library floor*: a process that
   imports only what the command needs of other packages (pydantic with one model, PyYAML, regex,
   asyncio, Rich's table, sqlite3, argparse).
3. Imports: ``python -X importtime`` of ``import rubric_studio.tui.app`` and of the cached grade:
   how many modules (how many of them rubric-studio's), the sum of their own times and the entries
   with the largest cumulative time (medians over the runs; ``-X importtime`` itself slows imports).

Bytecode is cached in a temporary ``PYTHONPYCACHEPREFIX`` (primed by one run), as for an
installed package. Each figure is the median of ``--runs`` runs (default 9); the machine's load
average is printed before and after, because other processes on a shared machine move these.

Run: ``python bench/bench_first_second.py [--root PATH] [--runs N] [--part first|floor|grade|imports]``
(prints JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE = (120, 35)
#: What a cached grade needs of other packages, and nothing of rubric-studio: its floor.
GRADE_FLOOR = """
import argparse, asyncio, json, sqlite3, statistics
import regex, yaml
from pydantic import BaseModel, Field

class Floor(BaseModel):
    x: int = Field(default=1, ge=0)

Floor(x=2)
import rich.console, rich.table, rich.text
"""
FLOOR_APP = """
from textual.app import App
from textual.widgets import Static

class Floor(App):
    def compose(self):
        yield Static("sample  verdict  refund-within-window  unjudged")

Floor().run()
"""


def _env(root: Path, work: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if name not in ("PYTHONDONTWRITEBYTECODE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL",
                           "ANTHROPIC_BASE_URL")}  # fmt: skip
    return {**env, "PYTHONPATH": str(root), "PYTHONPYCACHEPREFIX": str(work / "pycache"),
            "RUBRIC_STUDIO_HOME": str(work / "home"), "RUBRIC_STUDIO_CACHE": str(work / "cache.sqlite")}


def _load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _screen_times(command: str, env: dict[str, str], cwd: Path, runs: int) -> dict[str, float]:
    """Median seconds from launch to the header on screen and to the rows.

    A tmux server of our own, kept up by an idle session: a shared server would start the command
    with the server's environment, and starting a server is not the studio's time.
    """
    socket = f"first-second-{os.getpid()}-{time.monotonic_ns()}"  # a fresh server each time
    tmux = ["tmux", "-L", socket]
    pinned = [f"-e{name}={env[name]}" for name in ("PYTHONPATH", "PYTHONPYCACHEPREFIX", "RUBRIC_STUDIO_HOME",
                                                    "RUBRIC_STUDIO_CACHE")]  # fmt: skip
    subprocess.run([*tmux, "new-session", "-d", "-s", "keep", "sleep 3600"], check=True, env=env)
    headers, rows = [], []
    try:
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([*tmux, "new-session", "-d", "-s", "studio", "-x", str(SIZE[0]), "-y", str(SIZE[1]),
                            "-c", str(cwd), *pinned, command], check=True, env=env)  # fmt: skip
            header = row = None
            try:
                while time.perf_counter() - started < 15:
                    screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "studio"], capture_output=True,
                                            text=True).stdout  # fmt: skip
                    now = time.perf_counter() - started
                    if header is None and "sample" in screen and "verdict" in screen:
                        header = now
                    if "refund-within-window" in screen and "unjudged" in screen:
                        row = now
                        break
                    time.sleep(0.005)
            finally:
                subprocess.run([*tmux, "kill-session", "-t", "studio"], capture_output=True)
            if header is not None:
                headers.append(header)
            if row is not None:
                rows.append(row)
            time.sleep(0.3)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        (Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / socket).unlink(missing_ok=True)
    return {"first_screen_ms": round(statistics.median(headers) * 1000) if headers else None,
            "rows_ms": round(statistics.median(rows) * 1000) if rows else None,
            "first_screen_all_ms": sorted(round(h * 1000) for h in headers)}  # fmt: skip


def _median_run(command: list[str], env: dict[str, str], cwd: Path, runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times), sorted(times)


def first(root: Path, work: Path, runs: int) -> dict:
    env = _env(root, work)
    command = f"{sys.executable} -m rubric_studio support_reply/support_reply.yaml"
    subprocess.run(["timeout", "20", sys.executable, "-c", "import rubric_studio.tui.app"], env=env, cwd=work)
    _screen_times(command, env, work, 1)  # primes the bytecode of what the first frame loads
    return _screen_times(command, env, work, runs)


def floor(work: Path, runs: int) -> dict:
    env = _env(ROOT, work)
    (work / "floor.py").write_text(FLOOR_APP)
    command = f"{sys.executable} floor.py"
    _screen_times(command, env, work, 1)
    return _screen_times(command, env, work, runs)


def _warm_cache(root: Path, work: Path) -> tuple[list[str], dict]:
    """Grade once against the fake judge (every reply then cached); the warm command and what the cold run did."""
    sys.path.insert(0, str(ROOT))
    from tests.fakellm import FakeLLM

    env = {**_env(root, work), "OPENAI_API_KEY": "k"}
    rubric = "support_reply/support_reply.yaml"
    with FakeLLM() as server:
        base_url = ["--base-url", server.base_url_openai]
        cold = subprocess.run([sys.executable, "-m", "rubric_studio", "grade", rubric, *base_url, "--format", "json"],
                              env=env, cwd=work, capture_output=True, text=True)  # fmt: skip
        calls = server.calls()
    # The server is gone: a warm run that sent a request would end with errors (exit 3).
    warm_command = [sys.executable, "-m", "rubric_studio", "grade", rubric, *base_url]
    warm = subprocess.run(warm_command, env=env, cwd=work, capture_output=True, text=True)
    if warm.returncode == 3:
        raise SystemExit(f"the warm grade sent a request:\n{warm.stdout[-2000:]}")
    return warm_command, {"judge_calls_cold": calls, "samples": len(json.loads(cold.stdout).get("samples", [])),
                          "warm_exit": warm.returncode}


def grade(root: Path, work: Path, runs: int) -> dict:
    warm_command, cold = _warm_cache(root, work)
    env = {**_env(root, work), "OPENAI_API_KEY": "k"}
    bare, _ = _median_run([sys.executable, "-c", "pass"], env, work, runs)
    floor_imports, _ = _median_run([sys.executable, "-c", GRADE_FLOOR], env, work, runs)
    median, all_runs = _median_run(warm_command, env, work, runs)
    return {**cold, "bare_python_ms": round(bare * 1000), "library_floor_ms": round(floor_imports * 1000),
            "cached_grade_ms": round(median * 1000), "cached_grade_all_ms": [round(t * 1000) for t in all_runs]}


_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _importtime(command: list[str], env: dict[str, str], cwd: Path, runs: int, top: int = 12) -> dict:
    """Median ``-X importtime`` figures of ``command`` over ``runs`` runs."""
    per_run = []
    for _ in range(runs):
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
        rows = {}
        for line in done.stderr.splitlines():
            found = _IMPORT_LINE.match(line)
            if found and found[4] not in rows:
                rows[found[4]] = (int(found[1]), int(found[2]), len(found[3]) // 2)
        per_run.append(rows)
    names = set().union(*per_run)
    cumulative = {name: statistics.median(r[name][1] for r in per_run if name in r) for name in names}
    depth = {name: next(r[name][2] for r in per_run if name in r) for name in names}
    largest = sorted(cumulative, key=cumulative.get, reverse=True)[:top]
    return {
        "modules": round(statistics.median(len(r) for r in per_run)),
        "rubric_studio_modules": round(statistics.median(sum(n.startswith("rubric_studio") for n in r) for r in per_run)),
        "self_total_ms": round(statistics.median(sum(v[0] for v in r.values()) for r in per_run) / 1000),
        "largest_cumulative_ms": [f"{cumulative[n] / 1000:.1f} {'  ' * depth[n]}{n}" for n in largest],
    }


def imports(root: Path, work: Path, runs: int) -> dict:
    env = _env(root, work)
    studio = [sys.executable, "-X", "importtime", "-c", "import rubric_studio.tui.app"]
    subprocess.run(studio, env=env, cwd=work, capture_output=True)  # primes the bytecode
    warm_command, _ = _warm_cache(root, work)
    grade_env = {**env, "OPENAI_API_KEY": "k"}
    return {"tui_app": _importtime(studio, env, work, runs),
            "cached_grade": _importtime([warm_command[0], "-X", "importtime", *warm_command[1:]], grade_env, work, runs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(ROOT), help="the checkout whose rubric_studio is measured")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--part", choices=("first", "floor", "grade", "imports"), action="append")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    if shutil.which("tmux") is None and set(args.part or ()) != {"grade"}:
        raise SystemExit("tmux is needed for the first-screen measure")
    results: dict = {"root": str(root), "load_before": _load()}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(ROOT / "sample_rubrics", work, dirs_exist_ok=True)
        for part in args.part or ("floor", "first", "grade"):
            if part == "first":
                results["first"] = first(root, work, args.runs)
            elif part == "floor":
                results["floor"] = floor(work, args.runs)
            elif part == "imports":
                results["imports"] = imports(root, work, args.runs)
            else:
                results["grade"] = grade(root, work, args.runs)
    results["load_after"] = _load()
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
