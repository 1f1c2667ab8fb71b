"""rubric-studio beside promptfoo on one task: cold, warm (fully cached) and after an edit.

The same fake judge (``tests/fakellm.py``, answering after 0.2 s) serves both tools: 40
samples × 5 criteria, 16 calls in flight. Each run is a whole process (what a user or CI
waits for). rubric-studio: ``rubric-studio grade``; promptfoo: ``promptfoo eval`` with one
``llm-rubric`` assertion per criterion over fixed outputs (the ``echo`` provider), its
grader pointed at the fake. The judge-time floor is ⌈calls / concurrency⌉ × latency.

Run: ``python bench/bench_peers.py [--promptfoo PATH]`` — PATH defaults to
``$PROMPTFOO`` or ``promptfoo`` on PATH (``npm install promptfoo@0.121.20``); without it
only rubric-studio is measured.
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

from tests.fakellm import FakeLLM, keyword_brain  # noqa: E402

N, C, J, LATENCY = 40, 5, 16, 0.2
OUTCOMES = [f"Mentions topic{i} clearly" for i in range(C)]


def brain(call):
    """rubric-studio's requests get the keyword brain; promptfoo's llm-rubric gets its own JSON."""
    if call.criteria and call.criteria[0].outcome:
        return keyword_brain(call)
    return {"reason": "The output meets the rubric.", "pass": True, "score": 1.0}


def write_task(folder: Path, base_url: str, edited: bool = False) -> None:
    """The same task for both tools; ``edited`` changes the first criterion's outcome."""
    outcomes = list(OUTCOMES)
    if edited:
        outcomes[0] += " and early"
    head = f"name: peers\njudge: {{model: 'openai:gpt-4o-mini', concurrency: {J}}}\ncriteria:\n"
    (folder / "r.yaml").write_text(head + "".join(f"  - {{id: c{i}, outcome: {o}}}\n" for i, o in enumerate(outcomes)))
    (folder / "s.jsonl").write_text("".join(json.dumps({"id": f"s{i}", "output": f"Reply {i} about topic{i % C}."})
                                            + "\n" for i in range(N)))  # fmt: skip
    tests = [{"vars": {"output": f"Reply {i} about topic{i % C}."},
              "assert": [{"type": "llm-rubric", "value": o} for o in outcomes]} for i in range(N)]  # fmt: skip
    config = {"prompts": ["{{output}}"], "providers": ["echo"], "tests": tests,
              "defaultTest": {"options": {"provider": {"id": "openai:chat:gpt-4o-mini",
                                                       "config": {"apiBaseUrl": base_url, "apiKey": "k"}}}}}  # fmt: skip
    (folder / "promptfooconfig.json").write_text(json.dumps(config))


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   timeout=300)
    return time.perf_counter() - started


def measure(name: str, command: list[str], folder: Path, env: dict[str, str], server: FakeLLM) -> dict:
    write_task(folder, server.base_url_openai)
    server.reset()
    cold = timed(command, env, folder)
    cold_calls = server.calls()
    server.reset()
    warm = timed(command, env, folder)
    warm_calls = server.calls()
    write_task(folder, server.base_url_openai, edited=True)
    server.reset()
    edit = timed(command, env, folder)
    return {"tool": name, "cold_s": round(cold, 2), "cold_calls": cold_calls, "warm_s": round(warm, 2),
            "warm_calls": warm_calls, "edit_s": round(edit, 2), "edit_calls": server.calls()}  # fmt: skip


def main() -> None:
    promptfoo = None
    if "--promptfoo" in sys.argv:
        promptfoo = sys.argv[sys.argv.index("--promptfoo") + 1]
    promptfoo = promptfoo or os.environ.get("PROMPTFOO") or shutil.which("promptfoo")
    floor = math.ceil(N * C / J) * LATENCY
    rows = []
    with FakeLLM(latency=LATENCY, brain=brain) as server:
        folder = Path(tempfile.mkdtemp())
        env = {**os.environ, "RUBRIC_STUDIO_HOME": str(folder / "home"), "OPENAI_API_KEY": "k",
               "RUBRIC_STUDIO_CACHE": str(folder / "cache.sqlite"), "PROMPTFOO_CACHE_PATH": str(folder / "pf-cache"),
               "PROMPTFOO_CONFIG_DIR": str(folder / "pf"), "PROMPTFOO_DISABLE_TELEMETRY": "1",
               "PROMPTFOO_DISABLE_UPDATE": "1", "OPENAI_BASE_URL": server.base_url_openai}  # fmt: skip
        rows.append(measure("rubric-studio", [sys.executable, "-m", "rubric_studio", "grade", "r.yaml", "s.jsonl",
                                              "--base-url", server.base_url_openai], folder, env, server))  # fmt: skip
        if promptfoo:
            command = [promptfoo, "eval", "-c", str(folder / "promptfooconfig.json"), "-j", str(J),
                       "--no-progress-bar", "--no-table"]  # fmt: skip
            rows.append(measure("promptfoo", command, folder, env, server))
    bare = timed([sys.executable, "-c", "pass"], os.environ, ROOT)
    print(json.dumps({"floor_s": floor, "bare_python_s": round(bare, 3), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
