"""People labelling through the web labeller at once: lost labels and request latency.

    python bench/bench_web_labellers.py [--people 20] [--labels 200] [--samples 2000] [--stored 0] [--think 0]

Starts the real ``rubric-studio serve`` (uvicorn, the real label store) on a free port with
``--people`` annotators (overlap 2) over ``--samples`` samples, optionally with ``--stored``
labels already in the sidecar (10 annotators per sample, other names). Each person is an OS
process using the JSON API with their bearer token, as the page does: ``GET /api/samples/next``,
then ``PUT /api/labels/{id}`` with a verdict, a criterion and a note, ``--labels`` times. After
the run the server is stopped with Ctrl-C (it folds the journal into the sidecar) and every
acknowledged label (a 200 to its PUT) must be in the sidecar as that person's: lost = 0.
Prints p50/p99 of the PUT and of the whole next+PUT step, and the machine's load. With
``--think S`` each person waits S seconds between labels (people read before they click; without
it, twenty clients hammer one server process as fast as it answers: the worst case).
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

RUBRIC = """\
name: bench
criteria:
  - id: correct
    outcome: Gives the right answer
  - id: tone
    outcome: Warm tone
"""


def person(args: tuple[str, str, int, int, int, float]) -> dict:
    """One annotator's run: (acknowledged labels, PUT latencies, step latencies, errors)."""
    name, token, port, count, seed, think = args
    rng = random.Random(seed)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    acked: dict[str, dict] = {}
    put_times: list[float] = []
    step_times: list[float] = []
    errors = 0
    after = None
    for _ in range(count):
        if think:
            time.sleep(rng.uniform(0.5, 1.5) * think)
        started = time.perf_counter()
        path = "/api/samples/next" + (f"?after={after}" if after else "")
        connection.request("GET", path, headers=headers)
        reply = connection.getresponse()
        body = json.loads(reply.read() or b"{}")
        sample = body.get("id")
        if reply.status != 200 or sample is None:
            errors += 1
            break
        label = {"verdict": rng.choice(["pass", "fail"]), "criteria": {"correct": rng.choice(["met", "unmet"])},
                 "note": f"{name} on {sample}"}
        sent = time.perf_counter()
        connection.request("PUT", f"/api/labels/{sample}", body=json.dumps(label), headers=headers)
        reply = connection.getresponse()
        reply.read()
        done = time.perf_counter()
        if reply.status == 200:
            acked[sample] = label
            put_times.append(done - sent)
            step_times.append(done - started)
        else:
            errors += 1
        after = sample
    connection.close()
    return {"name": name, "acked": acked, "put": put_times, "step": step_times, "errors": errors}


def _stored_sidecar(path: Path, samples: int, stored: int) -> None:
    per_sample, lines = 10, ["# labels written before the run\n"]
    for n in range(min(samples, stored // per_sample)):
        lines.append(f"s{n:05d}:\n  verdict: pass\n  annotator: earlier0\n  annotators:\n")
        lines += [f"    earlier{a}: {{verdict: fail, criteria: {{tone: met}}}}\n" for a in range(1, per_sample)]
    path.write_text("".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=20)
    parser.add_argument("--labels", type=int, default=200)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--stored", type=int, default=0)
    parser.add_argument("--think", type=float, default=0.0, help="seconds each person waits between labels")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "r.yaml").write_text(RUBRIC)
        (root / "r.samples.jsonl").write_text("".join(
            json.dumps({"id": f"s{n:05d}", "input": f"question {n}", "output": f"answer {n}"}) + "\n"
            for n in range(args.samples)))
        if args.stored:
            _stored_sidecar(root / "r.labels.yaml", args.samples, args.stored)
        names = [f"person{n:02d}" for n in range(args.people)]
        server = subprocess.Popen(
            [sys.executable, "-m", "rubric_studio", "serve", str(root / "r.yaml"), str(root / "r.samples.jsonl"),
             "--annotators", ",".join(names), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root,
            env={**os.environ, "PYTHONPATH": str(HERE)})
        tokens, port = {}, 0
        while len(tokens) < len(names):
            line = server.stdout.readline()
            if not line:
                raise SystemExit(f"serve stopped: {server.stderr.read()}")
            name, _, link = line.strip().partition(": ")
            if name in names:
                parsed = urlparse(link)
                tokens[name], port = parse_qs(parsed.query)["token"][0], parsed.port
        started = time.perf_counter()
        with multiprocessing.Pool(len(names)) as pool:
            runs = pool.map(person, [(n, tokens[n], port, args.labels, i, args.think) for i, n in enumerate(names)])
        elapsed = time.perf_counter() - started
        load = os.getloadavg()[0]
        server.send_signal(signal.SIGINT)
        server.wait(timeout=120)
        from rubric_studio.core.labels import load_labels
        from rubric_studio.core.labels._labels import load_sidecar

        sidecar = load_sidecar(root / "r.labels.yaml")
        with_journal = load_labels(root / "r.labels.yaml")
        lost = errors = acks = 0
        puts: list[float] = []
        steps: list[float] = []
        for run in runs:
            errors += run["errors"]
            puts += run["put"]
            steps += run["step"]
            for sample, label in run["acked"].items():
                acks += 1
                got = sidecar.by_annotator.get(sample, {}).get(run["name"])
                if got is None or got.verdict != label["verdict"] or got.note != label["note"] \
                        or got.criteria.get("correct") != label["criteria"]["correct"]:
                    lost += 1
        journal_left = sum(len(v) for v in with_journal.by_annotator.values()) - sum(
            len(v) for v in sidecar.by_annotator.values())

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")

    print(f"{args.people} people × {args.labels} labels over {args.samples} samples ({args.stored} stored, "
          f"think {args.think:g} s): "
          f"{acks} acknowledged (last label per sample and person), {lost} lost after the server stopped, "
          f"{errors} errors, {len(sidecar.problems)} problems, {journal_left} labels left unfolded; "
          f"PUT p50 {1000 * statistics.median(puts):.1f} ms, p99 {pct(puts, 0.99):.1f} ms; next+PUT p50 "
          f"{1000 * statistics.median(steps):.1f} ms, p99 {pct(steps, 0.99):.1f} ms; {elapsed:.1f} s; load {load:.1f}")


if __name__ == "__main__":
    main()
