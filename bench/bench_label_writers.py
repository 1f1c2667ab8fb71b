"""Annotators labelling one sidecar at once: lost labels, broken files, refusals, write latency.

    python bench/bench_label_writers.py [--writers 4] [--writes 500] [--kill-rounds 5] [--stored N]
                                        [--idle] [--root CHECKOUT]

Each writer is its own OS process labelling through the studio's own label path
(``tests/calibration/label_writer.py``: :class:`rubric_studio.session.labels.LabelWriter`), a
different annotator each, on samples s00..s09. A writer first opens its label store (reads the
sidecar and its journal: the ``open`` figure), says it is ready, and all start writing together,
so the latency is the writes' own. After the run every acknowledged label must be on disk (the
writer's last acknowledged verdict for each sample, read with ``load_labels``: sidecar and
journal); a kill round starts the writers again on a fresh sidecar with a fifth of the writes and
``kill -9``s one of them mid-run.

``--stored N`` fills the sidecar with N labels first (N/10 samples x 10 annotators, written as
people keep a sidecar: see ``bench_label_store.stored_sidecar``). ``--idle`` is one writer making
500 writes with nobody else writing (the latency a person labelling alone sees). ``--root`` runs
the writers against another checkout (e.g. a worktree of an older commit) to compare; the reading
after each round is this checkout's.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
WRITER = HERE / "tests" / "calibration" / "label_writer.py"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _wait_ready(procs: dict, logs: dict, timeout: float) -> None:
    """Until every writer logged ``ready`` (or ended)."""
    deadline = time.monotonic() + timeout
    waiting = set(procs)
    while waiting and time.monotonic() < deadline:
        for name in list(waiting):
            if procs[name].poll() is not None or (logs[name].exists() and logs[name].read_text().startswith("ready")):
                waiting.discard(name)
        time.sleep(0.01)


def run_round(folder: Path, root: Path, writers: int, writes: int, kill: bool, seed: int,
              stored: str | None) -> dict:
    sidecar = folder / "r.labels.yaml"
    if stored is not None:
        sidecar.write_text(stored)
    names = [f"annotator{n}" for n in range(writers)]
    logs = {name: folder / f"{name}.log" for name in names}
    go = folder / "go"
    env = {**os.environ, "PYTHONPATH": str(root)}
    procs = {name: subprocess.Popen([sys.executable, str(WRITER), str(sidecar), name, str(writes), str(seed + n),
                                     str(logs[name]), "ready", str(go)], env=env) for n, name in enumerate(names)}
    _wait_ready(procs, logs, timeout=600)
    go.touch()
    started = time.perf_counter()
    victim = None
    if kill:
        victim = random.Random(seed).choice(names)
        target = random.Random(seed + 1).randint(5, max(6, writes // 2))
        while procs[victim].poll() is None and logs[victim].read_text().count("ack ") < target:
            time.sleep(0.005)
        procs[victim].send_signal(signal.SIGKILL)
    for proc in procs.values():
        proc.wait()
    wall = time.perf_counter() - started
    died = [name for name, proc in procs.items() if proc.returncode != 0 and name != victim]
    from rubric_studio.core.labels import load_labels

    broken = 0
    try:
        labels = load_labels(sidecar)
        broken = len(labels.problems)
        disk = {s: {n: lab.verdict for n, lab in by.items()} for s, by in labels.by_annotator.items()}
    except Exception:  # noqa: BLE001 - a broken sidecar is what is counted here
        broken, disk = 1, {}
    lost = acks = refusals = unanswered = 0
    latencies: list[float] = []
    opened: list[float] = []
    for name in names:
        acked: dict[str, str] = {}
        pending = None
        for line in logs[name].read_text().splitlines():
            parts = line.split()
            if parts[0] == "ready":
                opened.append(float(parts[1]))
            elif parts[0] == "try":
                pending = (parts[1], parts[2])
            elif parts[0] == "ack":
                acked[parts[1]] = parts[2]
                latencies.append(float(parts[3]))
                acks += 1
                pending = None
            else:
                refusals += 1
                pending = None
        unanswered += pending is not None and name != victim
        for sample, verdict in acked.items():
            now = disk.get(sample, {}).get(name)
            allowed = {verdict} | ({pending[1]} if name == victim and pending and pending[0] == sample else set())
            lost += now not in allowed
    return {"acks": acks, "lost": lost, "broken": broken, "refusals": refusals, "latencies": latencies,
            "opened": opened, "wall": wall, "load": os.getloadavg()[0], "died": len(died), "unanswered": unanswered}


def _percentiles(values: list[float]) -> tuple[float, float]:
    """(p50, p99) in milliseconds (nan when empty)."""
    if not values:
        return float("nan"), float("nan")
    ordered = sorted(values)
    return 1000 * statistics.median(ordered), 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--kill-rounds", type=int, default=5)
    parser.add_argument("--stored", type=int, default=0, help="labels in the sidecar before the writers start")
    parser.add_argument("--idle", action="store_true", help="one writer, 500 writes, no kill round")
    parser.add_argument("--root", type=Path, default=HERE)
    args = parser.parse_args()
    if args.idle:
        args.writers, args.writes, args.kill_rounds = 1, 500, 0
    stored = None
    if args.stored:
        from bench_label_store import stored_sidecar

        stored = stored_sidecar(max(1, args.stored // 10), 10)
    print(f"{args.writers} writers x {args.writes} writes, {args.kill_rounds} kill rounds, {args.stored:,} labels "
          f"stored ({len(stored or '') / 1e6:.1f} MB); checkout {args.root.resolve()}; "
          f"load {os.getloadavg()[0]:.2f} at start", flush=True)
    rounds = [(False, 0)] + [(True, 100 + n) for n in range(args.kill_rounds)]
    total = {"acks": 0, "lost": 0, "broken": 0, "refusals": 0, "died": 0, "unanswered": 0, "latencies": []}
    started = time.perf_counter()
    for kill, seed in rounds:
        with tempfile.TemporaryDirectory() as folder:
            result = run_round(Path(folder), args.root.resolve(), args.writers,
                               args.writes if not kill else args.writes // 5, kill, seed, stored)
        for key in ("acks", "lost", "broken", "refusals", "died", "unanswered"):
            total[key] += result[key]
        total["latencies"] += result["latencies"]
        p50, p99 = _percentiles(result["latencies"])
        opened = f"open {max(result['opened']):.2f} s (slowest)" if result["opened"] else "no store to open"
        died = f"; {result['died']} writers died (an error, not a refusal)" if result["died"] else ""
        print(f"{'kill -9 round' if kill else 'full round':>14}: {result['acks']} acknowledged, {result['lost']} lost, "
              f"{result['broken']} broken, {result['refusals']} refused; write p50 {p50:.1f} ms, p99 {p99:.1f} ms; "
              f"{opened}; writing {result['wall']:.1f} s; load {result['load']:.1f}{died}", flush=True)
    p50, p99 = _percentiles(total["latencies"])
    writes = total["acks"] + total["refusals"]
    died = (f"; {total['died']} writers died with an error ({total['unanswered']} writes left unanswered, "
            "the rest never tried)") if total["died"] else ""
    print(f"total: {total['acks']} acknowledged writes, {total['lost']} lost, {total['broken']} broken, "
          f"{total['refusals']} refused ({100 * total['refusals'] / max(1, writes):.1f}% of writes){died}; "
          f"latency p50 {p50:.1f} ms, p99 {p99:.1f} ms; "
          f"{time.perf_counter() - started:.0f} s; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
