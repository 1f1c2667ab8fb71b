"""``rubric-studio import FILE [--from F] [-o OUT]``: read a rubric written for another tool.

Writes rubric-studio YAML (stdout or OUT) with a header naming the source;
warnings go to stderr as ``warning: ...``; bad input exits 2 with
``file:line:col: message``.
"""

from __future__ import annotations

import argparse
import sys
from argparse import Namespace
from pathlib import Path


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Read a rubric written for another eval tool."
    parser.add_argument("file", metavar="FILE")
    from rubric_studio.cli._formats import builtin_format_names, format_choice

    parser.add_argument("--from", dest="source", default="auto", metavar="FORMAT", type=format_choice("import", "auto"),
                        help=f"auto (default), {', '.join(builtin_format_names('import'))}, or a plugin's")
    parser.add_argument("-o", "--output", metavar="FILE")
    parser.add_argument("--allow-code", action="store_true",
                        help="trust FILE for this run: read a prompt file it names outside its folder (without "
                             "it, only what you trusted before is read)")


def run(args: Namespace) -> int:
    from rubric_studio.cli.common import echo, fail_usage, print_problems, write_output
    from rubric_studio.core.problems import RubricError
    from rubric_studio.interop import FORMATS, import_rubric, rubric_to_yaml

    if args.file != "-" and not Path(args.file).is_file():
        what = "a folder" if Path(args.file).is_dir() else "no such file"
        return fail_usage(f"{args.file}: cannot import: {what}")
    try:
        if args.file == "-":
            result = import_rubric(sys.stdin.read(), args.source, name="<stdin>")
        else:
            result = import_rubric(Path(args.file), args.source, trust=_trust(args))
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    for warning in result.warnings:
        echo(f"warning: {warning}", sys.stderr)
    title = FORMATS[result.detected].title if result.detected in FORMATS else "rubric-studio"
    where = "standard input" if args.file == "-" else f"file {Path(args.file).name}"
    header = f"Imported by rubric-studio from {title} {where}."
    return 0 if write_output(rubric_to_yaml(result.rubric, header), args.output) else 2


def _trust(args: Namespace):
    """What the user trusts of the imported file: everything with --allow-code, else what they trusted
    before (the trust store, keyed by the file's path as for a rubric)."""
    from rubric_studio.core.trust import TRUST_ALL, load_trust

    return TRUST_ALL if args.allow_code else load_trust(args.file)
