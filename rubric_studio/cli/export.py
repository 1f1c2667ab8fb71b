"""``rubric-studio export RUBRIC --to T [-o FILE]``: write the rubric for another eval tool.

Warnings (what the target cannot express) go to stderr as ``warning: ...``;
the exported file goes to stdout or FILE. Exit 2 when the rubric is invalid.
"""

from __future__ import annotations

import argparse
import sys
from argparse import Namespace

EXPORT_TARGETS = ("agentv", "promptfoo", "letta", "docent", "healthbench", "markdown")


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Write a rubric in another eval tool's format."
    parser.add_argument("rubric", metavar="RUBRIC")
    parser.add_argument("--to", required=True, choices=EXPORT_TARGETS)
    parser.add_argument("--agentv-version", choices=("4", "5"), default="5",
                        help="AgentV layout: 5 (default, the newest) or 4 (the 4.x line on npm)")
    parser.add_argument("-o", "--output", metavar="FILE")


def run(args: Namespace) -> int:
    from rubric_studio.cli.common import echo, print_problems, write_output
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.problems import RubricError
    from rubric_studio.interop import ExportRefused, export_rubric

    try:
        rubric = load_rubric(args.rubric)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    try:
        result = export_rubric(rubric, args.to, **_options(args))
    except ExportRefused as exc:
        echo(f"error: {args.rubric}: cannot export to {args.to}: {exc}", sys.stderr)
        return 2
    for warning in result.warnings:
        echo(f"warning: {warning}", sys.stderr)
    return 0 if write_output(result.text, args.output) else 2


def _options(args: Namespace) -> dict[str, object]:
    """The target's own export options given on the command line."""
    if args.to == "agentv" and getattr(args, "agentv_version", None):
        return {"agentv_version": int(args.agentv_version)}
    return {}
