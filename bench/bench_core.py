"""Core benchmarks (issue: core).

1. 10,000 samples × 20 deterministic criteria through CheckRunner + scoring, on one
   core, against the bare regex / keyword / length operations over the same texts.
2. ``rubric-studio --help`` wall time beyond a bare interpreter start.
3. ``grade --format jsonl`` peak RSS over 10k and 100k streamed samples.

Run: ``python bench/bench_core.py`` (prints a Markdown table).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ["refund", "invoice", "billing", "account", "charge", "customer", "support", "thanks", "please", "order", "payment", "card", "policy", "days", "business", "team", "help", "issue", "request", "update", "plan", "subscription", "the", "a", "to", "and", "of", "we", "you"]


def make_texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 160))) for _ in range(n)]


def rubric_yaml() -> str:
    lines = ["name: bench", "criteria:"]
    for i in range(7):
        lines.append(f"  - id: len{i}\n    check: {{type: length, max_words: {80 + 10 * i}, min_chars: 50}}")
    for i in range(7):
        words = ", ".join(repr(w) for w in WORDS[i * 3 : i * 3 + 3])
        kind = "required" if i % 2 else "forbidden"
        lines.append(f"  - id: kw{i}\n    check: {{type: keywords, {kind}: [{words}]}}")
    patterns = [r"\d{4}-\d{2}", r"refund\s+\w+", r"^the", r"(card|payment) policy", r"help$", r"[A-Z]{3,}"]
    for i, pattern in enumerate(patterns):
        lines.append(f"  - id: re{i}\n    check: {{type: regex, pattern: '{pattern}', expect_match: {str(i % 2 == 0).lower()}}}")
    return "\n".join(lines) + "\n"


def bench_checks() -> dict[str, float]:
    import regex

    from rubric_studio.core.check_runner import CheckRunner
    from rubric_studio.core.loading import parse_rubric
    from rubric_studio.core.samples import Sample
    from rubric_studio.core.scoring import score_sample

    rubric = parse_rubric(rubric_yaml(), "bench.yaml")
    assert len(rubric.criteria) == 20
    texts = make_texts(10_000)
    samples = [Sample(id=str(i), output=t) for i, t in enumerate(texts)]
    runner = CheckRunner(rubric)

    def graded() -> float:
        started = time.perf_counter()
        for sample in samples:
            score_sample(rubric, runner.run_sample(sample))
        return time.perf_counter() - started

    compiled = [c.check.compiled() for c in rubric.criteria if c.check.type == "regex"]
    keyword_lists = [[w.lower() for w in (c.check.required or c.check.forbidden)] for c in rubric.criteria if c.check.type == "keywords"]
    n_length = sum(1 for c in rubric.criteria if c.check.type == "length")

    def bare(patterns, search_kwargs) -> float:
        started = time.perf_counter()
        for text in texts:
            lower = text.lower()
            for _ in range(n_length):
                len(text.split())
                len(text)
            for words in keyword_lists:
                for word in words:
                    lower.find(word)
            for pattern in patterns:
                pattern.search(text, **search_kwargs)
        return time.perf_counter() - started

    import re

    stdlib_compiled = [re.compile(p.pattern) for p in compiled]
    del regex
    full = min(graded() for _ in range(3))
    ops = min(bare(compiled, {"timeout": 2.0}) for _ in range(3))
    ops_std = min(bare(stdlib_compiled, {}) for _ in range(3))
    return {"graded_s": full, "bare_ops_s": ops, "bare_stdlib_re_s": ops_std, "ratio": full / ops, "ratio_vs_stdlib": full / ops_std}


def bench_help() -> dict[str, float]:
    def timed(args: list[str]) -> float:
        runs = []
        for _ in range(15):
            started = time.perf_counter()
            subprocess.run(args, capture_output=True, check=True)
            runs.append(time.perf_counter() - started)
        return statistics.median(runs)

    bare = timed([sys.executable, "-c", "pass"])
    helped = timed([sys.executable, "-m", "rubric_studio", "--help"])
    grade_help = timed([sys.executable, "-m", "rubric_studio", "grade", "--help"])
    return {"bare_python_s": bare, "help_s": helped, "help_extra_s": helped - bare, "grade_help_extra_s": grade_help - bare}


def bench_stream_rss() -> dict[str, float]:
    out: dict[str, float] = {}
    root = Path(__file__).resolve().parent.parent
    rubric = root / "sample_rubrics/support_reply/support_reply.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        for n in (10_000, 100_000):
            path = Path(tmp) / f"s{n}.jsonl"
            texts = make_texts(1000, seed=n)
            with path.open("w") as handle:
                for i in range(n):
                    handle.write(json.dumps({"id": f"s{i}", "output": texts[i % 1000]}) + "\n")
            code = (
                "import resource, sys\n"
                "from rubric_studio.cli import main\n"
                f"rc = main(['grade', {str(rubric)!r}, {str(path)!r}, '--format', 'jsonl', '-o', '/dev/null'])\n"
                "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
            )
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env={**os.environ, "OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""})
            out[f"jsonl_{n}_s"] = time.perf_counter() - started
            out[f"jsonl_{n}_peak_rss_mb"] = int(done.stderr.strip().splitlines()[-1]) / 1024
    return out


def main() -> None:
    results = {}
    results.update(bench_checks())
    results.update(bench_help())
    results.update(bench_stream_rss())
    print("| measure | value |\n|---|---|")
    for key, value in results.items():
        print(f"| {key} | {value:.3f} |")


if __name__ == "__main__":
    main()
