"""Several annotators labelling one sidecar at once, each in its own OS process: no acknowledged
label is lost, the file is never broken, and another annotator's write never refuses one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rubric_studio.core.labels import load_labels
from tests._timing import scaled

ROOT = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).with_name("label_writer.py")


def _start(sidecar: Path, annotator: str, writes: int, seed: int, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(sidecar), annotator, str(writes), str(seed), str(log)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _outcomes(log: Path) -> tuple[dict[str, str], dict[str, str], int, int]:
    """(last acknowledged verdict by sample, the write in flight when the log ends by sample, acks, refusals)."""
    acked: dict[str, str] = {}
    in_flight: dict[str, str] = {}
    acks = refusals = 0
    pending: tuple[str, str] | None = None
    for line in log.read_text().splitlines():
        kind, sample, verdict = line.split()[:3]
        if kind == "try":
            pending = (sample, verdict)
        elif kind == "ack":
            acked[sample], pending, acks = verdict, None, acks + 1
        else:
            pending, refusals = None, refusals + 1
    if pending is not None:
        in_flight[pending[0]] = pending[1]
    return acked, in_flight, acks, refusals


def _on_disk(sidecar: Path) -> dict[str, dict[str, str]]:
    labels = load_labels(sidecar)
    assert labels.problems == []
    return {sample: {name: label.verdict for name, label in by.items()} for sample, by in labels.by_annotator.items()}


def _wait(process: subprocess.Popen) -> None:
    assert process.wait(timeout=scaled(240)) == 0


def test_four_annotators_writing_at_once_lose_nothing_and_are_never_refused(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    names = ["alice", "bob", "carol", "dave"]
    logs = {name: tmp_path / f"{name}.log" for name in names}
    writers = [_start(sidecar, name, 40, seed, logs[name]) for seed, name in enumerate(names)]
    for writer in writers:
        _wait(writer)
    disk = _on_disk(sidecar)
    for name in names:
        acked, _, acks, refusals = _outcomes(logs[name])
        assert acks == 40 and refusals == 0  # only the same field by the same annotator may refuse
        for sample, verdict in acked.items():
            assert disk[sample][name] == verdict, f"{name}'s last {sample}: {verdict} is {disk[sample].get(name)} on disk"


def test_a_writer_killed_mid_write_breaks_nothing_and_the_others_lose_nothing(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    names = ["alice", "bob", "carol"]
    logs = {name: tmp_path / f"{name}.log" for name in names}
    writers = {name: _start(sidecar, name, 80, seed + 10, logs[name]) for seed, name in enumerate(names)}
    victim = writers["carol"]
    started = time.monotonic()
    while logs["carol"].exists() is False or logs["carol"].read_text().count("ack ") < 15:
        assert victim.poll() is None and time.monotonic() - started < scaled(120), "carol never wrote"
        time.sleep(0.01)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    for name in ("alice", "bob"):
        _wait(writers[name])
    disk = _on_disk(sidecar)  # parses: the kill left no half-written sidecar
    for name in ("alice", "bob"):
        acked, _, acks, _ = _outcomes(logs[name])
        assert acks == 80
        assert all(disk[sample][name] == verdict for sample, verdict in acked.items())
    acked, in_flight, _, _ = _outcomes(logs["carol"])
    for sample, verdict in acked.items():  # her last write may have landed without its acknowledgement
        assert disk[sample]["carol"] in {verdict, in_flight.get(sample, verdict)}
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] or load_labels(sidecar).problems == []
    # a fresh writer after the kill is not blocked by the dead one's lock
    log = tmp_path / "erin.log"
    _wait(_start(sidecar, "erin", 5, 99, log))
    assert _outcomes(log)[2] == 5


@pytest.mark.parametrize("field_changed", [False, True])
def test_undo_is_refused_only_when_the_same_field_of_the_same_annotator_changed(tmp_path, field_changed):
    import asyncio

    from rubric_studio.core.labels import LabelChange, LabelConflict, apply_change
    from rubric_studio.session.labels import LabelWriter

    sidecar = tmp_path / "r.labels.yaml"
    writer = LabelWriter(sidecar, "alice")
    asyncio.run(writer.apply("s1", LabelChange("verdict", "pass")))
    asyncio.run(writer.apply("s1", LabelChange("verdict", "fail")))
    apply_change(sidecar, "s1", LabelChange("verdict", "pass"), "bob")  # another annotator: never a conflict
    apply_change(sidecar, "s1", LabelChange("note", "seen twice"), "alice")  # another field: never a conflict
    if field_changed:  # alice herself, in another window
        apply_change(sidecar, "s1", LabelChange("verdict", "pass"), "alice")
        with pytest.raises(LabelConflict, match="verdict changed on disk"):
            asyncio.run(writer.undo())
        assert _on_disk(sidecar)["s1"] == {"alice": "pass", "bob": "pass"}
    else:
        asyncio.run(writer.undo())
        assert _on_disk(sidecar)["s1"] == {"alice": "pass", "bob": "pass"}
        assert load_labels(sidecar).by_annotator["s1"]["alice"].note == "seen twice"
