"""rubric-studio beside promptfoo on one task: cold, warm (fully cached) and after an edit.

The same fake judge (``tests/fakellm.py``, answering after 0.2 s) serves both tools: 40
samples × 5 criteria, 16 calls in flight. Each run is a whole process (what a user or CI
waits for). rubric-studio: ``rubric-studio grade``; promptfoo: ``promptfoo eval`` with one
``llm-rubric`` assertion per criterion over fixed outputs (the ``echo`` provider), its
grader pointed at the fake. The judge-time floor is ⌈calls / concurrency⌉ × latency.
Before timing, each tool runs once on a one-sample copy of the task (own cache) so its
code is compiled and on disk, as after an install; rubric-studio's bytecode is cached in a
temporary ``PYTHONPYCACHEPREFIX``.

Run: ``python bench/bench_peers.py [--promptfoo PATH]`` — PATH defaults to
``$PROMPTFOO`` or ``promptfoo`` on PATH (``npm install promptfoo@0.121.20``); without it
only rubric-studio is measured, and the reason is printed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_throughput import installed_env, median_run  # noqa: E402

from tests.fakellm import FakeLLM, keyword_brain  # noqa: E402

N, C, J, LATENCY = 40, 5, 16, 0.2
OUTCOMES = [f"Mentions topic{i} clearly" for i in range(C)]


def brain(call):
    """rubric-studio's requests get the keyword brain; promptfoo's llm-rubric gets its own JSON."""
    if call.criteria and call.criteria[0].outcome:
        return keyword_brain(call)
    return {"reason": "The output meets the rubric.", "pass": True, "score": 1.0}


def write_task(folder: Path, base_url: str, edited: bool = False, samples: int = N) -> None:
    """The same task for both tools; ``edited`` changes the first criterion's outcome."""
    folder.mkdir(parents=True, exist_ok=True)
    outcomes = list(OUTCOMES)
    if edited:
        outcomes[0] += " and early"
    head = f"name: peers\njudge: {{model: 'openai:gpt-4o-mini', concurrency: {J}}}\ncriteria:\n"
    (folder / "r.yaml").write_text(head + "".join(f"  - {{id: c{i}, outcome: {o}}}\n" for i, o in enumerate(outcomes)))
    (folder / "s.jsonl").write_text("".join(json.dumps({"id": f"s{i}", "output": f"Reply {i} about topic{i % C}."})
                                            + "\n" for i in range(samples)))  # fmt: skip
    tests = [{"vars": {"output": f"Reply {i} about topic{i % C}."},
              "assert": [{"type": "llm-rubric", "value": o} for o in outcomes]} for i in range(samples)]  # fmt: skip
    config = {"prompts": ["{{output}}"], "providers": ["echo"], "tests": tests,
              "defaultTest": {"options": {"provider": {"id": "openai:chat:gpt-4o-mini",
                                                       "config": {"apiBaseUrl": base_url, "apiKey": "k"}}}}}  # fmt: skip
    (folder / "promptfooconfig.json").write_text(json.dumps(config))


def env_for(folder: Path, server: FakeLLM) -> dict[str, str]:
    """Both tools' caches and settings inside ``folder``; bytecode cached beside them."""
    return {**installed_env(folder.parent), "RUBRIC_STUDIO_HOME": str(folder / "home"), "OPENAI_API_KEY": "k",
            "RUBRIC_STUDIO_CACHE": str(folder / "cache.sqlite"), "PROMPTFOO_CACHE_PATH": str(folder / "pf-cache"),
            "PROMPTFOO_CONFIG_DIR": str(folder / "pf"), "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1", "OPENAI_BASE_URL": server.base_url_openai}  # fmt: skip


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   timeout=300)
    return time.perf_counter() - started


def measure(name: str, command: list[str], base: Path, server: FakeLLM) -> dict:
    """Prime once on a one-sample copy, then time cold, warm and one-outcome-edited runs."""
    prime, folder = base / f"{name}-prime", base / name
    write_task(prime, server.base_url_openai, samples=1)
    timed(command, env_for(prime, server), prime)
    write_task(folder, server.base_url_openai)
    env = env_for(folder, server)
    runs = {}
    for run in ("cold", "warm", "edit"):
        if run == "edit":
            write_task(folder, server.base_url_openai, edited=True)
        server.reset()
        runs[f"{run}_s"], runs[f"{run}_calls"] = round(timed(command, env, folder), 2), server.calls()
    return {"tool": name, **runs}


def find_promptfoo() -> tuple[str | None, str]:
    """The promptfoo command, or None and why not."""
    given = sys.argv[sys.argv.index("--promptfoo") + 1] if "--promptfoo" in sys.argv else None
    found = given or os.environ.get("PROMPTFOO") or shutil.which("promptfoo")
    if not found:
        return None, "promptfoo not found (give --promptfoo PATH or $PROMPTFOO; npm install promptfoo@0.121.20)"
    try:
        version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"promptfoo at {found} does not run: {error}"
    return (found, version) if version else (None, f"promptfoo at {found} printed no version")


def main() -> None:
    promptfoo, about = find_promptfoo()
    if promptfoo is None:
        print(f"promptfoo column skipped: {about}", file=sys.stderr)
    floor = math.ceil(N * C / J) * LATENCY
    rows = []
    with FakeLLM(latency=LATENCY, brain=brain) as server:
        base = Path(tempfile.mkdtemp())
        rows.append(measure("rubric-studio", [sys.executable, "-m", "rubric_studio", "grade", "r.yaml", "s.jsonl",
                                              "--base-url", server.base_url_openai], base, server))  # fmt: skip
        if promptfoo:
            command = [promptfoo, "eval", "-c", "promptfooconfig.json", "-j", str(J), "--no-progress-bar", "--no-table"]
            rows.append({**measure("promptfoo", command, base, server), "version": about})
        bare = median_run([sys.executable, "-c", "pass"], installed_env(base))
    for row in rows:
        row["cold_over_floor"] = round(row["cold_s"] / floor, 2)
        row["warm_over_bare_python_s"] = round(row["warm_s"] - bare, 3)
    print(json.dumps({"floor_s": floor, "bare_python_s": round(bare, 3), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
