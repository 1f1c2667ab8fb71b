"""One annotator labelling through the studio's own label path, as a separate OS process.

``python tests/calibration/label_writer.py SIDECAR ANNOTATOR WRITES SEED LOG [ready [GO]]`` (with
``PYTHONPATH`` naming the checkout to test) makes WRITES verdict changes (random samples
s00..s09, random pass / fail) through :class:`rubric_studio.session.labels.LabelWriter`, and
logs each to LOG, flushed before the next: ``try S V`` before the write, ``ack S V SECONDS``
once it returned, ``refused S V`` when it raised. A writer killed with ``kill -9`` leaves at
most one ``try`` without its outcome.

The writer opens its label store (reads the sidecar and its journal) before the first write, so
the seconds logged are the writes' own; with ``ready`` it logs ``ready SECONDS`` (the time that
opening took) once it is open, and then waits for the file GO to exist, when given (so that
writers reading a large sidecar all start writing together). A checkout whose writer has no store
(one that rewrote the sidecar for every label) has nothing to open.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from pathlib import Path

from rubric_studio.core.labels import LabelChange
from rubric_studio.session.labels import LabelWriter

SAMPLES = [f"s{n:02d}" for n in range(10)]


def _log(fd: int, line: str) -> None:
    os.write(fd, (line + "\n").encode())


async def write_labels(sidecar: Path, annotator: str, writes: int, seed: int, log: Path,
                       say_ready: bool = False, go: Path | None = None) -> None:
    rng = random.Random(seed)
    writer = LabelWriter(sidecar, annotator)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        started = time.perf_counter()
        open_store = getattr(writer, "store", None)
        if open_store is not None:
            await asyncio.to_thread(open_store)
        if say_ready:
            _log(fd, f"ready {time.perf_counter() - started:.6f}")
        while go is not None and not go.exists():
            await asyncio.sleep(0.005)
        for _ in range(writes):
            sample, verdict = rng.choice(SAMPLES), rng.choice(("pass", "fail"))
            _log(fd, f"try {sample} {verdict}")
            started = time.perf_counter()
            try:
                await writer.apply(sample, LabelChange("verdict", verdict))
            except ValueError:
                _log(fd, f"refused {sample} {verdict}")
                continue
            _log(fd, f"ack {sample} {verdict} {time.perf_counter() - started:.6f}")
    finally:
        os.close(fd)


if __name__ == "__main__":
    path, name, count, seed, log = sys.argv[1:6]
    go = Path(sys.argv[7]) if len(sys.argv) > 7 else None
    asyncio.run(write_labels(Path(path), name, int(count), int(seed), Path(log), sys.argv[6:7] == ["ready"], go))
