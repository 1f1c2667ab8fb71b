"""``rubric-studio validate RUBRIC...``: every problem with file:line:column; exit 2 if any error."""

from __future__ import annotations

import json
import sys
from argparse import Namespace


def run(args: Namespace) -> int:
    from rubric_studio.core.loading import check_rubric_file

    report = []
    any_error = False
    for path in args.rubrics:
        rubric, problems = check_rubric_file(path)
        errors = [p for p in problems if p.severity == "error"]
        any_error = any_error or bool(errors) or rubric is None
        entry: dict = {"path": path, "valid": rubric is not None, "problems": [p.to_dict() for p in problems]}
        if rubric is not None:
            entry.update(
                name=rubric.name,
                criteria=len(rubric.criteria),
                judge_criteria=len(rubric.judge_criteria),
                checks=len(rubric.check_criteria),
                code_checks=[
                    {"id": c.key, "type": c.check.type, "runs": c.check.function if c.check.type == "python" else c.check.command}  # type: ignore[union-attr]
                    for c in rubric.code_criteria
                ],
            )
        report.append(entry)
        if args.format == "text":
            for problem in problems:
                sys.stderr.write(f"{problem}\n")
            if rubric is not None:
                line = (
                    f"{path}: ok — {rubric.name}: {len(rubric.criteria)} criteria "
                    f"({len(rubric.judge_criteria)} judged, {len(rubric.check_criteria)} checks)"
                )
                sys.stdout.write(line + "\n")
                for code in entry["code_checks"]:
                    sys.stdout.write(
                        f"  runs code: {code['id']} ({code['type']}: {code['runs']}) — only with --allow-code\n"
                    )
    if args.format == "json":
        sys.stdout.write(json.dumps({"files": report, "valid": not any_error}, indent=2) + "\n")
    return 2 if any_error else 0
