"""The hostile corpus through ``validate`` and ``grade``: no traceback, no hang, no crash, clear results.

Each class of hostile file runs in its own subprocess (``runner.py``: many cases per
process, each under a watchdog), so a signal or a hang is attributed to its class and case,
and the cases after it still run. Prints one summary line: files tried, runs, tracebacks,
hangs, signals.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests._timing import scaled
from tests.hostile.corpus import Case, cases, groups, hostile_files, write_corpus

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("runner.py")
CASE_SECONDS = scaled(10.0)  # a case still running after this is a hang (normal cases take well under a second)
RAW_CONTROLS = ("\x1b", "\x07", "\x9b")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")


def _read_results(path: Path) -> tuple[dict[str, dict], str | None]:
    """Finished results by case id, and the id of a case that started but never finished."""
    finished: dict[str, dict] = {}
    started = None
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if "start" in entry:
                started = entry["start"]
            else:
                finished[entry["id"]] = entry
                started = None
    return finished, started


def _checkout_env() -> dict[str, str]:
    """The environment for the runner: this checkout's rubric_studio first on the path."""
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def run_group(group_cases: list[Case], workdir: Path) -> dict[str, dict]:
    """Run the cases in subprocesses until all have a result; a crash or hang resumes after its case."""
    outcomes: dict[str, dict] = {}
    remaining = list(group_cases)
    attempt = 0
    while remaining:
        attempt += 1
        cases_file, results_file = workdir / f"cases-{attempt}.json", workdir / f"results-{attempt}.jsonl"
        cases_file.write_text(json.dumps([{"id": c.id, "argv": list(c.argv)} for c in remaining]))
        command = [sys.executable, str(RUNNER), str(cases_file), str(results_file), str(CASE_SECONDS)]
        try:
            done = subprocess.run(command, cwd=ROOT, env=_checkout_env(), capture_output=True, text=True,
                                  errors="replace", timeout=CASE_SECONDS * len(remaining) + scaled(30))
            returncode, stderr = done.returncode, done.stderr
        except subprocess.TimeoutExpired as exc:
            returncode, stderr = None, str(exc.stderr or "")
        finished, unfinished = _read_results(results_file)
        outcomes.update(finished)
        if unfinished is None:
            if returncode != 0 or "Traceback" in stderr:  # printed outside any case, or the runner broke
                kind = "traceback" if "Traceback" in stderr else "runner failed"
                outcomes[remaining[-1].id] = {"died": kind, "returncode": returncode, "stderr": stderr[-3000:]}
            break
        kind = "signal" if returncode is not None and returncode < 0 else "hang"
        outcomes[unfinished] = {"died": kind, "returncode": returncode, "stderr": stderr[-3000:]}
        ids = [c.id for c in remaining]
        remaining = remaining[ids.index(unfinished) + 1 :]
    return outcomes


def _graded_ids(case: Case, stdout: str) -> list[str] | None:
    try:
        if case.fmt == "json":
            return [s["id"] for s in json.loads(stdout)["samples"]]
        if case.fmt == "jsonl":
            lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
            return [entry["id"] for entry in lines if "id" in entry]
    except (ValueError, KeyError, TypeError):
        return None
    return None


def wrong_results(case: Case, outcome: dict) -> list[str]:
    """Everything wrong with one case's outcome (empty when it behaved)."""
    if "died" in outcome:
        return [f"{outcome['died']} (returncode {outcome.get('returncode')}): {outcome.get('stderr', '')[-600:]}"]
    wrong = []
    out, err = outcome["stdout"], outcome["stderr"]
    if outcome["escaped"]:
        return [f"exception escaped main: {outcome['escaped'][-1500:]}"]
    if "Traceback" in err:
        wrong.append(f"traceback printed: {err[-1500:]}")
    if outcome["code"] not in case.codes:
        wrong.append(f"exit code {outcome['code']}, expected {sorted(case.codes)}; stderr: {err[-600:]!r}")
    if any(c in out + err for c in RAW_CONTROLS):
        wrong.append("a raw control character (ESC/BEL/CSI) reached the output")
    if case.graded:
        ids = _graded_ids(case, out)
        if ids is not None and not set(case.graded) <= set(ids):
            wrong.append(f"good records not graded: missing {sorted(set(case.graded) - set(ids))!r}, got {ids!r}")
    if case.named_in_stderr is True and case.named not in err:
        wrong.append(f"no message names {case.named}: stderr {err[-400:]!r}")
    if case.named_in_stderr is False and case.named in err:
        wrong.append(f"a clean file was reported: {err[-400:]!r}")
    return wrong


def _tally(all_cases: list[Case], outcomes: dict[str, dict]) -> tuple[str, list[str]]:
    counts = {"traceback": 0, "hang": 0, "signal": 0, "other": 0}
    failures = []
    for case in all_cases:
        outcome = outcomes.get(case.id, {"died": "not run"})
        wrong = wrong_results(case, outcome)
        if not wrong:
            continue
        died = outcome.get("died")
        kind = died if died in ("hang", "signal", "traceback") else (
            "traceback" if outcome.get("escaped") or any("traceback" in w for w in wrong) else "other")
        counts[kind] += 1
        failures.append(f"[{case.group}] {case.id}: " + "; ".join(wrong))
    summary = (f"hostile corpus: {len(hostile_files())} files tried in {len(all_cases)} runs: "
               f"{counts['traceback']} tracebacks, {counts['hang']} hangs, {counts['signal']} signals, "
               f"{counts['other']} other wrong results")
    return summary, failures


@pytest.mark.timeout(600)
def test_hostile_corpus_never_crashes_hangs_or_loses_good_records(tmp_path: Path, capsys):
    root = tmp_path / "corpus"
    write_corpus(root)
    all_cases = cases(root)
    by_group = {group: [c for c in all_cases if c.group == group] for group in groups()}
    for group in by_group:
        (tmp_path / group).mkdir()
    with ThreadPoolExecutor(max_workers=2) as pool:
        parts = pool.map(lambda group: run_group(by_group[group], tmp_path / group), by_group)
    outcomes = {case_id: outcome for part in parts for case_id, outcome in part.items()}
    summary, failures = _tally(all_cases, outcomes)
    with capsys.disabled():
        print(f"\n{summary}")
    assert not failures, summary + "\n" + "\n".join(failures)


def test_every_group_and_case_is_distinct(tmp_path: Path):
    all_cases = cases(tmp_path)
    assert len({c.id for c in all_cases}) == len(all_cases)
    assert len({h.name for h in hostile_files()}) == len(hostile_files())
    assert {c.group for c in all_cases} == set(groups())
