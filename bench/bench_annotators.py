"""Many annotators on one rubric: ``calibrate`` and the studio's first screen.

The fixture: ``ANNOTATORS`` people label ``SAMPLES`` samples, each person ``PER_PERSON`` of them
(chosen at random, seed 7): a verdict, a 0-10 score and a met / unmet for each of the rubric's
three checks. A person agrees with the sample's "true" label 80% of the time, so pairs and alpha
have something to measure. The rubric has only deterministic checks: nothing is sent to a model.

1. ``rubric-studio calibrate RUBRIC SAMPLES --format json`` and ``--format table`` in a
   subprocess: wall time and the process's peak RSS (``wait4``), and the size of the output.
2. The studio opened on it (a fresh subprocess, Pilot): from ``StudioApp(...)`` to the first
   results screen (the matrix filled with every sample, graded, the humans row present), and to
   the humans row showing the annotators' figures (computed in a thread).

Run: ``python bench/bench_annotators.py [--annotators N] [--samples N] [--per-person N]``
(prints a Markdown table).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANNOTATORS = 1000
SAMPLES = 100
PER_PERSON = 10
CRITERIA = ("short", "no-sorry", "no-dates")
WORDS = ["refund", "invoice", "billing", "account", "charge", "customer", "support", "thanks", "please",
         "order", "payment", "card", "policy", "days", "business", "team", "help", "issue", "the", "a"]


def write_fixture(folder: Path, annotators: int = ANNOTATORS, samples: int = SAMPLES,
                  per_person: int = PER_PERSON, seed: int = 7) -> Path:
    """The rubric, its samples and a sidecar of ``annotators`` people; the rubric's path."""
    rng = random.Random(seed)
    rubric = folder / "crowd.yaml"
    rubric.write_text(
        "name: crowd\ncriteria:\n"
        "  - id: short\n    check: {type: length, max_words: 120}\n"
        "  - id: no-sorry\n    check: {type: keywords, forbidden: [apologize, inconvenience]}\n"
        "  - id: no-dates\n    check: {type: regex, pattern: '\\d{4}-\\d{2}-\\d{2}', expect_match: false}\n"
    )
    ids = [f"s{i:03d}" for i in range(samples)]
    with (folder / "crowd.samples.jsonl").open("w") as handle:
        for sid in ids:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 180)))
            handle.write(json.dumps({"id": sid, "input": "question", "output": text}) + "\n")
    truth = {sid: (rng.random() < 0.6, {c: rng.random() < 0.7 for c in CRITERIA}) for sid in ids}
    entries: dict[str, list[tuple[str, dict]]] = {sid: [] for sid in ids}
    for person in range(annotators):
        name = f"a{person:04d}"
        for sid in rng.sample(ids, min(per_person, samples)):
            passed, cells = truth[sid]

            def flip(value: bool) -> bool:
                return value if rng.random() < 0.8 else not value

            label = {
                "verdict": "pass" if flip(passed) else "fail",
                "score": rng.randint(5, 10) if passed else rng.randint(0, 6),
                "criteria": {c: "met" if flip(v) else "unmet" for c, v in cells.items()},
            }
            entries[sid].append((name, label))

    def flow(label: dict) -> str:
        cells = ", ".join(f"{c}: {v}" for c, v in label["criteria"].items())
        return f"{{verdict: {label['verdict']}, score: {label['score']}, criteria: {{{cells}}}}}"

    lines = ["# Labels of a crowd of annotators."]
    for sid, given in entries.items():
        if not given:
            continue
        (first, top), rest = given[0], given[1:]
        lines += [f"{sid}:", f"  annotator: {first}", f"  verdict: {top['verdict']}", f"  score: {top['score']}",
                  "  criteria: {" + ", ".join(f"{c}: {v}" for c, v in top["criteria"].items()) + "}"]
        if rest:
            lines.append("  annotators:")
            lines += [f"    {name}: {flow(label)}" for name, label in rest]
    (folder / "crowd.labels.yaml").write_text("\n".join(lines) + "\n")
    return rubric


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["RUBRIC_STUDIO_HOME"] = str(home / "config")
    env["RUBRIC_STUDIO_CACHE"] = str(home / "cache.sqlite")
    env["RUBRIC_STUDIO_ANNOTATOR"] = "a0000"
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        env.pop(name, None)
    return env


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """Run ``argv``; wall and CPU seconds, peak RSS (MB) of that process alone, exit code, stdout KB."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=env, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        process.stderr.close()  # type: ignore[union-attr]
        out.seek(0, os.SEEK_END)
        size = out.tell()
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
            "exit": process.returncode, "output_kb": size / 1024}


def calibrate(rubric: Path, env: dict[str, str], fmt: str) -> dict[str, float]:
    return _timed([sys.executable, "-m", "rubric_studio", "calibrate", str(rubric),
                   str(rubric.with_name("crowd.samples.jsonl")), "--format", fmt], env, rubric.parent)


async def _open_studio(rubric: Path, samples: int) -> tuple[float, float, float]:
    from textual.widgets import Static

    from rubric_studio.tui.app import StudioApp
    from rubric_studio.tui.results import ResultsMatrix

    started, cpu = time.perf_counter(), time.process_time()
    app = StudioApp(rubric)
    opened = figures = None
    async with app.run_test(size=(140, 40)) as pilot:
        while figures is None:
            session = app.session
            if session.report is not None and not session.running:
                matrix = app.query_one(ResultsMatrix)
                humans = str(app.query_one("#agreement-humans", Static).render())
                if opened is None and len(matrix.rows) == samples and "humans" in humans:
                    opened, cpu = time.perf_counter() - started, time.process_time() - cpu
                if opened is not None and ("κ" in humans or "kappa" in humans):
                    figures = time.perf_counter() - started
            if time.perf_counter() - started > 600:
                raise TimeoutError("the studio did not show its first screen in 600 s")
            await asyncio.sleep(0.01)
        await pilot.pause()
    return opened, cpu, figures


def _studio_part(rubric: str, samples: int) -> None:
    opened, cpu, figures = asyncio.run(_open_studio(Path(rubric), samples))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"open_s": opened, "cpu_s": cpu, "humans_s": figures, "peak_rss_mb": peak}))


def studio(rubric: Path, env: dict[str, str], samples: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--studio-part", str(rubric), str(samples)],
                          capture_output=True, text=True, env=env, cwd=rubric.parent, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=ANNOTATORS)
    parser.add_argument("--samples", type=int, default=SAMPLES)
    parser.add_argument("--per-person", type=int, default=PER_PERSON)
    parser.add_argument("--studio-part", nargs=2, metavar=("RUBRIC", "SAMPLES"), help=argparse.SUPPRESS)
    parser.add_argument("--formats", default="json,table", help="calibrate's formats to time (comma list)")
    parser.add_argument("--skip-studio", action="store_true")
    args = parser.parse_args()
    if args.studio_part:
        _studio_part(args.studio_part[0], int(args.studio_part[1]))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rubric = write_fixture(work, args.annotators, args.samples, args.per_person)
        env = _env(work / "home")
        sidecar_kb = rubric.with_name("crowd.labels.yaml").stat().st_size / 1024
        print(f"{args.annotators} annotators × {args.samples} samples, {args.per_person} labels each; "
              f"sidecar {sidecar_kb:.0f} KB\n")
        print("| run | wall s | CPU s | peak RSS MB | exit | output KB |\n|---|---:|---:|---:|---:|---:|")
        for fmt in args.formats.split(","):
            r = calibrate(rubric, env, fmt)
            print(f"| calibrate --format {fmt} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | {r['exit']} "
                  f"| {r['output_kb']:.0f} |", flush=True)
        if not args.skip_studio:
            r = studio(rubric, env, args.samples)
            print(f"| studio: first results screen | {r['open_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | | |")
            print(f"| studio: humans row with the pairs' figures | {r['humans_s']:.1f} | | | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
