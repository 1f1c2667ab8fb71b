"""Run corpus cases in this process, one after another, each under a watchdog.

Usage: ``python runner.py CASES.json RESULTS.jsonl SECONDS``

``CASES.json`` is a list of ``{"id", "argv"}``. For each case this writes ``{"start": id}``
to ``RESULTS.jsonl`` (flushed), calls ``rubric_studio.cli.main(argv)`` with stdout and
stderr captured, and writes ``{"id", "code", "stdout", "stderr", "escaped", "seconds"}``.
A case that runs past SECONDS makes the watchdog dump the stacks and end the process with
status 1, and a crash ends it by its signal: either way the last ``start`` without a result
names the case, and the caller resumes with the cases after it.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import sys
import time
import traceback
from pathlib import Path


def run_case(cli_main, argv: list[str]) -> dict:
    out, err = io.StringIO(), io.StringIO()
    code, escaped = None, None
    began = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main(argv)
        except BaseException:  # anything escaping main is a defect to report, not to crash on
            escaped = traceback.format_exc()
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(), "escaped": escaped,
            "seconds": round(time.monotonic() - began, 3)}


def limit_memory(max_bytes: int = 3 << 30) -> None:
    """A case that reads without end (``/dev/zero``) gets a MemoryError, not the machine's memory."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
    except (ImportError, ValueError, OSError):
        pass


def main() -> int:
    cases_file, results_file, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    limit_memory()
    cases = json.loads(Path(cases_file).read_text())
    from rubric_studio.cli import main as cli_main

    faulthandler.enable()
    with open(results_file, "a", encoding="utf-8") as results:
        for case in cases:
            results.write(json.dumps({"start": case["id"]}) + "\n")
            results.flush()
            faulthandler.dump_traceback_later(seconds, exit=True)
            outcome = run_case(cli_main, case["argv"])
            faulthandler.cancel_dump_traceback_later()
            results.write(json.dumps({"id": case["id"], **outcome}) + "\n")
            results.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
