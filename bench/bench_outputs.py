"""Report formats at scale: ``grade --format table`` and ``--format json`` on many samples.

Run: ``python bench/bench_outputs.py`` (≈1 min; ``--quick`` for smaller sizes). Measures, in a
fresh interpreter each, the wall time of ``grade --format json`` and ``--format table`` on
20,000 check-only samples (output to /dev/null), and the peak RSS of ``--format json`` on
100,000 samples. Nothing calls a judge: the rubric has deterministic checks only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import make_texts  # noqa: E402

RUBRIC = """name: outputs-bench
criteria:
  - id: short
    check: {type: length, max_words: 120}
  - id: long-enough
    check: {type: length, min_chars: 200}
  - id: mentions-refund
    check: {type: keywords, required: [refund, policy]}
  - id: no-boilerplate
    check: {type: keywords, forbidden: ["as an ai"]}
  - id: no-dates
    check: {type: regex, pattern: '\\d{4}-\\d{2}-\\d{2}', expect_match: false}
"""


def write_samples(path: Path, n: int) -> None:
    texts = make_texts(1000, seed=n)
    with path.open("w") as handle:
        for i in range(n):
            handle.write(json.dumps({"id": f"s{i}", "output": texts[i % 1000]}) + "\n")


def timed_grade(rubric: Path, samples: Path, fmt: str) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one ``grade`` run in a fresh interpreter, stdout to /dev/null."""
    code = (
        "import resource, sys\n"
        "from rubric_studio.cli import main\n"
        f"rc = main(['grade', {str(rubric)!r}, {str(samples)!r}, '--format', {fmt!r}])\n"
        "sys.stderr.write('\\n' + str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    )
    started = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        done = subprocess.run([sys.executable, "-c", code], stdout=devnull, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""})
    wall = time.perf_counter() - started
    return wall, int(done.stderr.strip().splitlines()[-1]) / 1024


def main() -> None:
    quick = "--quick" in sys.argv
    small, large = (2_000, 10_000) if quick else (20_000, 100_000)
    with tempfile.TemporaryDirectory() as tmp:
        rubric = Path(tmp) / "rubric.yaml"
        rubric.write_text(RUBRIC)
        samples = Path(tmp) / "small.jsonl"
        write_samples(samples, small)
        for fmt in ("json", "table", "markdown"):
            wall, rss = min(timed_grade(rubric, samples, fmt) for _ in range(2))
            print(f"grade --format {fmt:8} {small:>7,} samples: {wall:6.2f} s, peak RSS {rss:6.0f} MB")
        samples = Path(tmp) / "large.jsonl"
        write_samples(samples, large)
        wall, rss = timed_grade(rubric, samples, "json")
        print(f"grade --format json     {large:>7,} samples: {wall:6.2f} s, peak RSS {rss:6.0f} MB")


if __name__ == "__main__":
    main()
