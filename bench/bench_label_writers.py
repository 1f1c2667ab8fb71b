"""Annotators labelling one sidecar at once: lost labels, broken files, refusals, write latency.

    python bench/bench_label_writers.py [--writers 4] [--writes 500] [--kill-rounds 5] [--root CHECKOUT]

Each writer is its own OS process labelling through the studio's own label path
(``tests/calibration/label_writer.py``: :class:`rubric_studio.session.labels.LabelWriter`), a
different annotator each, on samples s00..s09. After the run every acknowledged label must be on
disk (the writer's last acknowledged verdict for each sample); a kill round starts the writers
again on a fresh sidecar and ``kill -9``s one of them mid-run. ``--root`` runs the writers against
another checkout (e.g. a worktree of an older commit) to compare.
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


def run_round(folder: Path, root: Path, writers: int, writes: int, kill: bool, seed: int) -> dict:
    sidecar = folder / "r.labels.yaml"
    names = [f"annotator{n}" for n in range(writers)]
    logs = {name: folder / f"{name}.log" for name in names}
    env = {**os.environ, "PYTHONPATH": str(root)}
    procs = {name: subprocess.Popen([sys.executable, str(WRITER), str(sidecar), name, str(writes), str(seed + n),
                                     str(logs[name])], env=env) for n, name in enumerate(names)}
    victim = None
    if kill:
        victim = random.Random(seed).choice(names)
        target = random.Random(seed + 1).randint(5, max(6, writes // 2))
        while procs[victim].poll() is None and (not logs[victim].exists()
                                                or logs[victim].read_text().count("ack ") < target):
            time.sleep(0.005)
        procs[victim].send_signal(signal.SIGKILL)
    for proc in procs.values():
        proc.wait()
    sys.path.insert(0, str(HERE))
    from rubric_studio.core.labels import load_labels

    broken = 0
    try:
        labels = load_labels(sidecar)
        broken = len(labels.problems)
        disk = {s: {n: lab.verdict for n, lab in by.items()} for s, by in labels.by_annotator.items()}
    except Exception:  # noqa: BLE001 - a broken sidecar is what is counted here
        broken, disk = 1, {}
    lost = acks = refusals = 0
    latencies: list[float] = []
    for name in names:
        acked: dict[str, str] = {}
        pending = None
        for line in logs[name].read_text().splitlines():
            parts = line.split()
            if parts[0] == "try":
                pending = (parts[1], parts[2])
            elif parts[0] == "ack":
                acked[parts[1]] = parts[2]
                latencies.append(float(parts[3]))
                acks += 1
                pending = None
            else:
                refusals += 1
                pending = None
        for sample, verdict in acked.items():
            now = disk.get(sample, {}).get(name)
            allowed = {verdict} | ({pending[1]} if name == victim and pending and pending[0] == sample else set())
            lost += now not in allowed
    return {"acks": acks, "lost": lost, "broken": broken, "refusals": refusals, "latencies": latencies}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--kill-rounds", type=int, default=5)
    parser.add_argument("--root", type=Path, default=HERE)
    args = parser.parse_args()
    rounds = [(False, 0)] + [(True, 100 + n) for n in range(args.kill_rounds)]
    total = {"acks": 0, "lost": 0, "broken": 0, "refusals": 0, "latencies": []}
    started = time.perf_counter()
    for kill, seed in rounds:
        with tempfile.TemporaryDirectory() as folder:
            result = run_round(Path(folder), args.root.resolve(), args.writers,
                               args.writes if not kill else args.writes // 5, kill, seed)
        for key in ("acks", "lost", "broken", "refusals"):
            total[key] += result[key]
        total["latencies"] += result["latencies"]
        print(f"{'kill -9 round' if kill else 'full round':>14}: {result['acks']} acknowledged, {result['lost']} lost, "
              f"{result['broken']} broken, {result['refusals']} refused")
    lat = sorted(total["latencies"])
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else float("nan")
    writes = total["acks"] + total["refusals"]
    print(f"total: {total['acks']} acknowledged writes, {total['lost']} lost, {total['broken']} broken, "
          f"{total['refusals']} refused ({100 * total['refusals'] / max(1, writes):.1f}% of writes); "
          f"latency p50 {1000 * statistics.median(lat):.1f} ms, p99 {1000 * p99:.1f} ms; "
          f"{time.perf_counter() - started:.0f} s; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
