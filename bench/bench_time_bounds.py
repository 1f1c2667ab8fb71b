"""The time bounds the studio promises, measured (tests assert the behaviour, never the clock).

    python bench/bench_time_bounds.py

Each line: what is bounded, the bound it is given, and the wall time it took here. A test that
asserted these wall times failed on a busy machine; the behaviour behind each (an error cell that
names the bound, a request count) is asserted in the tests named beside it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from rubric_studio.core.check_runner import CheckRunner  # noqa: E402
from rubric_studio.core.loading import parse_rubric  # noqa: E402
from rubric_studio.core.samples import Sample  # noqa: E402
from tests.fakellm import FakeLLM, Slow, rate_limited  # noqa: E402


def _check(check: str, text: str, folder: Path, allow_code: bool = False) -> float:
    rubric = parse_rubric(f"name: t\ncriteria:\n  - id: k\n    check: {check}\n", str(folder / "r.yaml"))
    runner = CheckRunner(rubric, allow_code=allow_code, base_dir=folder)
    started = time.perf_counter()
    runner.run_sample(Sample(id="s", output=text))
    return time.perf_counter() - started


def _grade(server: FakeLLM, folder: Path, *extra: str, base_url: str | None = None) -> float:
    (folder / "r.yaml").write_text("name: r\ncriteria:\n  - id: refund\n    outcome: mentions the refund\n")
    (folder / "s.jsonl").write_text(json.dumps({"id": "a", "output": "your refund is on its way"}) + "\n")
    env = {"OPENAI_API_KEY": "sk-test", "PATH": "/usr/bin:/bin", "HOME": str(folder),
           "XDG_CACHE_HOME": str(folder / "cache")}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rubric_studio", "grade", "r.yaml", "s.jsonl", "--no-cache",
                    "--judge", "openai:gpt-4o-mini", "--base-url", base_url or server.base_url_openai,
                    "--format", "json", *extra], cwd=folder, env=env, capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows.append(("catastrophic regex `^(a|a)+$` on 41 chars", "timeout 0.2 s",
                     _check("{type: regex, pattern: '^(a|a)+$', timeout: 0.2}", "a" * 40 + "!", folder),
                     "tests/core/test_checks.py"))
        (folder / "slowchecks.py").write_text("import time\ndef hang(text):\n    time.sleep(30)\n")
        rows.append(("python check that sleeps 30 s", "timeout 0.2 s",
                     _check("{type: python, function: 'slowchecks:hang', timeout: 0.2}", "x", folder, True),
                     "tests/core/test_checks.py"))
        with FakeLLM() as server:
            server.always(Slow(5))
            rows.append(("`grade`, a judge answering after 5 s", "--timeout 0.3, 1 retry",
                         _grade(server, folder, "--timeout", "0.3"), "tests/judges/test_judge_providers.py"))
        with FakeLLM() as server:
            server.always(rate_limited(retry_after=3600))
            rows.append(("`grade`, a 429 asking to wait 3600 s", "refused at once (over the wait cap)",
                         _grade(server, folder), "tests/judges/test_judge_providers.py"))
        rows.append(("`grade`, connection refused", "capped back-off",
                     _grade(server, folder, base_url="http://127.0.0.1:9/v1"), "tests/judges/test_judge_providers.py"))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rubric_studio", "validate", str(HERE / "sample_rubrics" / "support_reply"
                    / "support_reply.yaml")], capture_output=True, check=False)
    rows.append(("`validate` of the sample rubric (start-up, for scale)", "-", time.perf_counter() - started, "-"))
    print("| bounded | bound | wall time | behaviour tested in |\n|---|---|---|---|")
    for what, bound, seconds, test in rows:
        print(f"| {what} | {bound} | {seconds:.2f} s | `{test}` |")


if __name__ == "__main__":
    main()
