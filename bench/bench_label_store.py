"""The label store at 100,000 labels: reading them, importing them, folding the journal into them.

    python bench/bench_label_store.py [--samples 10000] [--annotators 10] [--fold-lines 300]
                                      [--whole-document] [--root CHECKOUT]

The fixture is a rubric with three judged criteria, its samples (``--samples``), and a labels
sidecar as people keep one (:func:`stored_sidecar`: a header, every annotator's label of every
sample, scores, criteria, block notes, a comment every hundred entries, entries separated by
blank lines) of ``samples × annotators`` labels. Every figure is a fresh process (so its peak
RSS, read with ``wait4``, is its own; the interpreter and imports are in it, not in the seconds):

* reading every label: ``load_labels`` and ``LabelStore(...)`` (the seconds exclude the imports);
* ``rubric-studio labels import`` through ``python -m rubric_studio`` of (a) one CSV row into the
  full sidecar, (b) every label as CSV into an empty sidecar, (c) the same as JSON Lines, (d) the
  same as a Label Studio JSON export (one task per sample, one annotation per annotator, user ids
  mapped to e-mails with ``--users``), (e) as many labels by ``samples`` annotators of
  ``annotators`` samples (CSV) — wall seconds of the whole command;
* folding ``--fold-lines`` journal lines (written through a :class:`LabelStore`, untimed) into the
  full sidecar: ``fold_journal`` entry by entry, and with ``--whole-document`` the same lines
  through the whole-document editor (what every write cost before the journal).

``--root`` runs the commands against another checkout (e.g. a worktree of an older commit); the
steps that checkout has no code for are left out.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CRITERIA = ("tone", "resolves-issue", "policy-accurate")
RUBRIC = """\
# A billing-support rubric, for the label store benchmark.
name: bench-labels
criteria:
  - id: tone
    outcome: Polite and calm, never blames the customer
  - id: resolves-issue
    outcome: Answers the customer's question with a concrete next step
  - id: policy-accurate
    outcome: States the refund policy (30 days, 5-7 business days) correctly
"""
NOTES = ["Polite, but the refund window is wrong.", "Asks for the card number: fails on its own.",
         "Good answer; a little long.", "Missed the second question.",
         "Quotes the old policy.\nCheck with Dana before adjudicating.",
         "Fine.\nThe greeting is boilerplate but harmless."]
HEADER = ("# Human labels: sample id -> {verdict: pass|fail, score: 0-10, criteria: {id: met|unmet}, note}.\n"
          "# Written by rubric-studio when you label samples; edit freely, comments are kept.\n")


def sample_ids(count: int) -> list[str]:
    return [f"case-{n:05d}" for n in range(1, count + 1)]


def annotator_names(count: int) -> list[str]:
    return [f"rater{n}" for n in range(count)]


def _label(rng: random.Random) -> dict:
    """One person's label: a verdict, mostly a score, often criteria, sometimes a note."""
    label: dict = {"verdict": rng.choice(("pass", "fail"))}
    if rng.random() < 0.6:
        label["score"] = rng.randrange(11)
    if rng.random() < 0.5:
        label["criteria"] = {c: rng.choice(("met", "unmet")) for c in CRITERIA if rng.random() < 0.8}
    if rng.random() < 0.05:
        label["note"] = rng.choice(NOTES)
    return label


def _fields(label: dict, indent: str) -> list[str]:
    lines = [f"{indent}verdict: {label['verdict']}"]
    if "score" in label:
        lines.append(f"{indent}score: {label['score']}")
    if label.get("criteria"):
        lines.append(f"{indent}criteria:")
        lines += [f"{indent}  {c}: {state}" for c, state in label["criteria"].items()]
    if "note" in label:
        if "\n" in label["note"]:
            lines.append(f"{indent}note: |")
            lines += [f"{indent}  {line}" for line in label["note"].splitlines()]
        else:
            lines.append(f"{indent}note: {json.dumps(label['note'])}")
    return lines


def stored_labels(samples: int, annotators: int, seed: int = 7) -> dict[str, dict[str, dict]]:
    """sample id -> annotator -> label, ``samples × annotators`` of them."""
    rng = random.Random(seed)
    names = annotator_names(annotators)
    return {sample: {name: _label(rng) for name in names} for sample in sample_ids(samples)}


def stored_sidecar(samples: int, annotators: int = 10, seed: int = 7) -> str:
    """A labels sidecar of ``samples × annotators`` labels, as people keep one: the first
    annotator's label at the top of each entry, the others under ``annotators:`` (a bare verdict
    written short), a comment every hundred entries, entries separated by blank lines."""
    lines = [HEADER.rstrip("\n")]
    for number, (sample, by) in enumerate(stored_labels(samples, annotators, seed).items()):
        lines.append("")
        if number % 100 == 0:
            lines.append(f"# batch {number // 100 + 1}: reviewed together")
        (first, label), *others = by.items()
        lines.append(f"{sample}:")
        lines.append(f"  annotator: {first}")
        lines += _fields(label, "  ")
        if others:
            lines.append("  annotators:")
            for name, other in others:
                if list(other) == ["verdict"]:
                    lines.append(f"    {name}: {other['verdict']}")
                else:
                    lines.append(f"    {name}:")
                    lines += _fields(other, "      ")
    return "\n".join(lines) + "\n"


def _samples_file(ids: list[str]) -> str:
    return "".join(json.dumps({"id": i, "input": f"Customer question {i}: where is my refund?",
                               "output": "Hi, your refund was sent today; it takes 5-7 business days."}) + "\n"
                   for i in ids)


def _rows(by_sample: dict[str, dict[str, dict]]) -> list[dict]:
    rows = []
    for sample, by in by_sample.items():
        for name, label in by.items():
            row = {"id": sample, "annotator": name, "verdict": label["verdict"], "score": label.get("score"),
                   "note": label.get("note")}
            row.update({c: label.get("criteria", {}).get(c) for c in CRITERIA})
            rows.append(row)
    return rows


def csv_text(by_sample: dict[str, dict[str, dict]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=["id", "annotator", "verdict", "score", "note", *CRITERIA],
                            lineterminator="\n")
    writer.writeheader()
    for row in _rows(by_sample):
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buffer.getvalue()


def jsonl_text(by_sample: dict[str, dict[str, dict]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in _rows(by_sample))


def label_studio_export(by_sample: dict[str, dict[str, dict]]) -> tuple[str, str]:
    """(a Label Studio JSON export with one annotation per label, the users file mapping ids to e-mails)."""
    names = sorted({name for by in by_sample.values() for name in by})
    user_ids = {name: number + 1 for number, name in enumerate(names)}
    tasks, annotation_id = [], 0
    for task_id, (sample, by) in enumerate(by_sample.items(), start=1):
        annotations = []
        for name, label in by.items():
            annotation_id += 1
            result = [{"from_name": "verdict", "to_name": "output", "type": "choices",
                       "value": {"choices": [label["verdict"]]}}]
            if "score" in label:
                result.append({"from_name": "score", "to_name": "output", "type": "number",
                               "value": {"number": label["score"]}})
            for criterion, state in label.get("criteria", {}).items():
                result.append({"from_name": f"criterion:{criterion}", "to_name": "output", "type": "choices",
                               "value": {"choices": [state]}})
            if "note" in label:
                result.append({"from_name": "note", "to_name": "output", "type": "textarea",
                               "value": {"text": [label["note"]]}})
            annotations.append({"id": annotation_id, "completed_by": user_ids[name], "was_cancelled": False,
                                "result": result, "created_at": "2026-11-29T10:00:00Z", "lead_time": 12.5})
        tasks.append({"id": task_id, "data": {"sample_id": sample, "rubric": "bench-labels",
                                              "input": "Customer question", "output": "Reply"},
                      "annotations": annotations, "predictions": []})
    users = {str(number): f"{name}@example.org" for name, number in user_ids.items()}
    return json.dumps(tasks), json.dumps(users)


# -- running a step in a fresh process ------------------------------------------------------------
def run_child(argv: list[str], root: Path, cwd: Path) -> dict:
    """Run ``argv``; wall seconds, peak RSS (MB, from ``wait4``), exit code, the last stderr line and
    what it printed on stdout."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:  # files, not pipes: nothing blocks
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        said, printed = err.read().decode(errors="replace"), out.read().decode(errors="replace")
    last = said.strip().splitlines()[-1:] or [""]
    return {"wall": wall, "rss_mb": usage.ru_maxrss / 1024, "code": proc.returncode, "said": last[0], "out": printed}


READ = """
import json, sys, time
from rubric_studio.core.labels import LabelStore, load_labels
path, how = sys.argv[1:3]
started = time.perf_counter()
labels = load_labels(path) if how == "load_labels" else LabelStore(path).label_set()
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "labels": sum(len(b) for b in labels.by_annotator.values()),
                  "problems": len(labels.problems)}))
"""
FOLD = """
import json, random, sys, time
from rubric_studio.core.labels import LabelChange, LabelStore, fold_journal, load_labels
from rubric_studio.core.labels import _store
path, lines, samples, annotators, how = sys.argv[1:6]
rng = random.Random(11)
store = LabelStore(path)
for number in range(int(lines)):  # untimed: the journal the fold finds
    sample = f"case-{rng.randrange(1, int(samples) + 1):05d}" if number % 10 else f"new-{number:04d}"
    name = f"rater{rng.randrange(int(annotators))}" if number % 7 else f"newcomer{number % 3}"
    change = rng.choice([LabelChange("verdict", rng.choice(["pass", "fail"])), LabelChange("score", rng.randrange(11)),
                         LabelChange("cell", rng.choice(["met", "unmet"]), "tone"), LabelChange("note", "seen again")])
    store.write(sample, change, name)
expected = load_labels(path).by_annotator
if how == "whole-document":
    _store.entries = lambda text: None  # the entry splitter declines: the whole-document editor folds
started = time.perf_counter()
folded = fold_journal(path)
seconds = time.perf_counter() - started
from rubric_studio.core.labels._labels import load_sidecar
same = load_sidecar(path).by_annotator == expected
print(json.dumps({"seconds": seconds, "folded": folded, "same": same}))
"""


def _import_in_parts(by_sample: dict, folder: Path, root: Path, fresh_sidecar, report) -> None:
    """The Label Studio export cut into parts under the labels file cap, imported one after another
    into one sidecar (what a person would do when the whole export is refused)."""
    export, users = label_studio_export(by_sample)
    parts = len(export) // (18 * 1024 * 1024) + 1
    samples = list(by_sample)
    size = len(samples) // parts + 1
    fresh_sidecar(None)
    total = {"wall": 0.0, "rss_mb": 0.0, "code": 0, "said": ""}
    for number in range(parts):
        chunk = {s: by_sample[s] for s in samples[number * size:(number + 1) * size]}
        path = folder / f"part{number}.json"
        path.write_text(label_studio_export(chunk)[0])
        result = run_child([sys.executable, "-m", "rubric_studio", "labels", "import", str(folder / "bench.yaml"),
                            str(path), "--users", str(folder / "users.json")], root, folder)
        print(f"    part {number + 1} of {parts} ({path.stat().st_size / 1e6:.1f} MB): {result['wall']:.2f} s, "
              f"peak RSS {result['rss_mb']:.0f} MB, exit {result['code']};{result['said'].rsplit(';', 1)[-1]}",
              flush=True)
        total["wall"] += result["wall"]
        total["rss_mb"] = max(total["rss_mb"], result["rss_mb"])
        total["code"] = total["code"] or result["code"]
        total["said"] = result["said"]
    report(f"labels import (d) the same export in {parts} parts, one after another", total, " (sum; max RSS)")


def has_store(root: Path) -> bool:
    return (root / "rubric_studio" / "core" / "labels" / "_live.py").exists()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--fold-lines", type=int, default=300)
    parser.add_argument("--whole-document", action="store_true",
                        help="also fold the same lines through the whole-document editor (slow)")
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--only", help="comma-separated steps: read,import,fold")
    args = parser.parse_args()
    root = args.root.resolve()
    steps = set((args.only or "read,import,fold").split(","))
    total = args.samples * args.annotators
    py = sys.executable
    print(f"{total:,} labels ({args.samples:,} samples x {args.annotators} annotators); checkout {root}; "
          f"load {os.getloadavg()[0]:.2f} at start", flush=True)
    results: list[tuple[str, dict]] = []

    def report(name: str, result: dict, extra: str = "") -> None:
        results.append((name, result))
        ok = "" if result.get("code", 0) == 0 else f"  EXIT {result['code']}: {result['said']}"
        seconds = result.get("seconds")
        inner = f", {seconds:.2f} s in the call" if seconds is not None else ""
        print(f"{name:<58} {result['wall']:8.2f} s wall{inner}, peak RSS {result['rss_mb']:6.0f} MB"
              f"{extra}{ok}", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-label-store-") as tmp:
        folder = Path(tmp)
        by_sample = stored_labels(args.samples, args.annotators)
        full_text = stored_sidecar(args.samples, args.annotators)
        (folder / "bench.yaml").write_text(RUBRIC)
        (folder / "bench.samples.jsonl").write_text(_samples_file(sample_ids(args.samples)))
        sidecar = folder / "bench.labels.yaml"
        print(f"sidecar: {len(full_text) / 1e6:.1f} MB, {full_text.count(chr(10)):,} lines", flush=True)

        def fresh_sidecar(text: str | None) -> None:
            for leftover in (folder / ".rubric-studio").glob("bench.labels.yaml*"):
                leftover.unlink()
            if text is None:
                sidecar.unlink(missing_ok=True)
            else:
                sidecar.write_text(text)

        if "read" in steps and has_store(root):
            fresh_sidecar(full_text)
            for how in ("load_labels", "LabelStore"):
                result = run_child([py, "-c", READ, str(sidecar), how], root, folder)
                result.update(json.loads(result["out"]) if result["code"] == 0 else {})
                report(f"read all: {how}", result, f"; {result.get('labels', '?'):,} labels")

        if "import" in steps:
            many_annotators = {f"case-{n:05d}": {} for n in range(1, args.annotators + 1)}
            rng = random.Random(3)
            for name in annotator_names(args.samples):
                for sample in many_annotators:
                    many_annotators[sample][name] = _label(rng)
            one_row = {"case-00042": {"rater3": {"verdict": "fail", "score": 2, "criteria": {"tone": "unmet"}}}}
            export, users = label_studio_export(by_sample)
            files = {"one.csv": csv_text(one_row), "all.csv": csv_text(by_sample), "all.jsonl": jsonl_text(by_sample),
                     "all.json": export, "users.json": users, "annotators.csv": csv_text(many_annotators)}
            for name, text in files.items():
                (folder / name).write_text(text)
            cases = [("(a) 1 CSV row into the full sidecar", "one.csv", full_text, []),
                     (f"(b) {total:,} CSV rows into an empty sidecar", "all.csv", None, []),
                     (f"(c) {total:,} JSON Lines rows into an empty sidecar", "all.jsonl", None, []),
                     (f"(d) Label Studio export, {total:,} annotations", "all.json", None,
                      ["--users", str(folder / "users.json")]),
                     (f"(e) {total:,} labels by {args.samples:,} annotators of {args.annotators} samples (CSV)",
                      "annotators.csv", None, [])]
            for title, name, start, extra in cases:
                fresh_sidecar(start)
                result = run_child([py, "-m", "rubric_studio", "labels", "import", str(folder / "bench.yaml"),
                                    str(folder / name), "--annotator", "importer", *extra], root, folder)
                report(f"labels import {title}", result, f"; {(folder / name).stat().st_size / 1e6:.1f} MB file")
                if result["code"] == 0:  # "N labels by K annotators (names...) read from F; M changed in S"
                    said = result["said"]
                    print(f"    {said[:60]}{' ...' if len(said) > 60 else ''};{said.rsplit(';', 1)[-1]}", flush=True)
                elif name == "all.json" and "larger than" in result["said"]:
                    _import_in_parts(by_sample, folder, root, fresh_sidecar, report)

        if "fold" in steps and has_store(root):
            for how in ("entry-by-entry", *(["whole-document"] if args.whole_document else [])):
                fresh_sidecar(full_text)
                result = run_child([py, "-c", FOLD, str(sidecar), str(args.fold_lines), str(args.samples),
                                    str(args.annotators), how], root, folder)
                result.update(json.loads(result["out"]) if result["code"] == 0 else {})
                report(f"fold {args.fold_lines} journal lines ({how})", result,
                       f"; labels as before the fold: {result.get('same')}")
    print(f"load {os.getloadavg()[0]:.2f} at the end", flush=True)


if __name__ == "__main__":
    main()
