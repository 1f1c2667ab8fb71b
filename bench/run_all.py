"""Run every benchmark and print their tables: ``python bench/run_all.py``.

Each benchmark is also runnable alone (``python bench/bench_core.py`` ...). Results
with the machine and date go into BENCHMARKS.md.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ["bench_core.py", "bench_judge.py", "bench_tui.py", "bench_throughput.py", "bench_peers.py", "bench_improve.py",
           "bench_outputs.py", "bench_annotators.py", "bench_pass_rate_coverage.py", "bench_probe_decisions.py",
           "bench_first_second.py"]


def main() -> int:
    cpu = platform.processor() or platform.machine()
    print(f"# rubric-studio benchmarks — {date.today().isoformat()} — {platform.system()} {cpu}, "
          f"Python {platform.python_version()}\n")
    status = 0
    for script in SCRIPTS:
        path = HERE / script
        if not path.exists():
            continue
        print(f"## {script}\n")
        done = subprocess.run([sys.executable, str(path)], text=True)
        status = status or done.returncode
        print()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
