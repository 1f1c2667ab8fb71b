"""``rubric-studio history RUBRIC [--json] [--diff A B]``: the rubric's versions graded in the studio.

Every graded save in the studio is a version, kept in the rubric's run-history file beside
the judge cache (:mod:`rubric_studio.engine.versions._history`). This lists them — number, date
and time, what kind of change it was (rubric edit, samples change, labels change, judge
change, panel change, annotator change — with who labelled, and which panel members or
annotators came or went), pass / fail / other counts, kappa against the labels when known, and the one-line
diff against the version before — or, with ``--diff A B``, shows what changed from A to B:
the summary, the per-criterion lines and the rubric's changes.

``grade`` does not write this history: CI grades all sorts of sample sets and judges, and
those runs are not edits of the rubric; the studio records the versions a person made.

Exit codes: 0 shown (also when nothing was recorded yet); 2 usage: no such rubric and no
history, or a version number the history does not hold.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rubric_studio.cli.common import echo, fail_usage
from rubric_studio.core.safe_text import terminal_safe


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = ("List the versions of a rubric graded in the studio (each save is one), or show what "
                          "changed between two of them.")  # fmt: skip
    parser.add_argument("rubric", metavar="RUBRIC")
    parser.add_argument("--diff", nargs=2, metavar=("A", "B"), help="what changed from version A to version B (3 or v3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--cache-path", metavar="FILE",
                        help="the judge cache the history is kept beside (default: the user cache)")


def run(args: argparse.Namespace) -> int:
    from rubric_studio.engine.versions import history_path, open_history

    rubric = Path(args.rubric)
    if rubric.is_dir():
        return fail_usage(f"{rubric}: expected a rubric .yaml file, got a folder")
    file = history_path(rubric, args.cache_path)
    if not rubric.exists() and not file.exists():
        return fail_usage(f"{rubric}: no such file, and no history recorded for it")
    history = open_history(rubric, cache_path=args.cache_path)
    for warning in history.warnings:
        echo(f"warning: {warning}", sys.stderr)
    if args.diff:
        return _diff(args, history)
    if args.json:
        data = {"rubric": str(rubric), "history_file": str(file), "versions": _rows(history),
                "warnings": list(history.warnings)}  # fmt: skip
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    if not history.versions:
        echo(f"no versions of {rubric} recorded yet: every graded save in the studio is one "
             f"(rubric-studio {rubric} [SAMPLES])")  # fmt: skip
        return 0
    echo(f"{rubric}: {len(history.versions)} version{'s' if len(history.versions) != 1 else ''} (oldest first)")
    for row in _rows(history):
        counts = row["counts"]
        kappa = "–" if row["kappa"] is None else f"{row['kappa']:.2f}"
        by = row["labelled_by"] if any(word in row["kind"] for word in ("labels", "annotator")) else None
        kind = row["kind"] + (f" by {by}" if by else "")
        echo(f"v{row['number']:<4} {row['time']}  {terminal_safe(kind):<28} pass {counts['pass']:<4} fail {counts['fail']:<4} "
             f"other {counts['other']:<4} kappa {kappa}")  # fmt: skip
        if row["summary"]:
            echo(f"      {row['summary']}")
        for cause in row["causes"]:
            echo(f"      {terminal_safe(cause)}")
    return 0


def _rows(history) -> list[dict[str, Any]]:
    """One entry per version, with its summary against the version listed before it."""
    import datetime

    rows = []
    previous = None
    for version in history.versions:
        figures = version.figures() or {}
        overall = figures.get("overall") or {}
        diff = None if previous is None else history.diff(previous, version, compare_rubrics=False)
        rows.append({
            "number": version.number, "timestamp": version.timestamp,
            "time": datetime.datetime.fromtimestamp(version.timestamp).strftime("%Y-%m-%d %H:%M:%S"),
            "kind": version.kind, "counts": version.counts(), "kappa": overall.get("kappa"),
            "labelled": overall.get("n"), "judge": version.judge_key,
            "annotators": version.annotators_key, "labelled_by": version.labelled_by,
            "summary": None if diff is None else diff.summary_line(), "causes": [] if diff is None else diff.causes,
        })  # fmt: skip
        previous = version
    return rows


def _number(text: str) -> int | None:
    digits = text[1:] if text[:1] in ("v", "V") else text
    return int(digits) if digits.isdigit() and len(digits) < 10 else None


def _diff(args: argparse.Namespace, history) -> int:
    numbers = []
    known = {version.number for version in history.versions}
    for text in args.diff:
        number = _number(text)
        if number is None or number not in known:
            have = f"versions {min(known)}–{max(known)}" if known else "no versions yet"
            return fail_usage(f"--diff: no version {text!r} in the history of {args.rubric} ({have})")
        numbers.append(number)
    diff = history.diff(*numbers)
    if args.json:
        sys.stdout.write(json.dumps(diff.to_dict(), indent=2) + "\n")
        return 0
    echo(diff.summary_line())
    for title, lines in (("per criterion", diff.criterion_lines()), ("rubric changes", diff.rubric_changes),
                         ("other changes", diff.causes), ("verdict changes", _flip_lines(diff))):  # fmt: skip
        if lines:
            echo(f"{title}:")
            for line in lines:
                echo(f"  {line}")
    return 0


def _flip_lines(diff) -> list[str]:
    lines = []
    if diff.to_pass:
        lines.append("fail→pass: " + ", ".join(diff.to_pass))
    if diff.to_fail:
        lines.append("pass→fail: " + ", ".join(diff.to_fail))
    lines.extend(f"{sid}: {before} → {after}" for sid, before, after in diff.other_changes)
    return lines
