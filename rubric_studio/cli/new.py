"""``rubric-studio new NAME.yaml [SAMPLES]``: start a rubric from the starter template.

Writes the starter rubric (:mod:`rubric_studio.engine.starter`: one criterion whose
placeholder outcome is not judged until the user writes a real one and saves) and opens
the studio on it, with SAMPLES when given. Never replaces a file: an existing NAME exits 2.
With ``--no-open``, or when stdin or stdout is not a terminal, it prints the path and the
command that opens it instead. A NAME without an extension gets ``.yaml``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from rubric_studio.cli.common import echo, fail_usage, print_problems
from rubric_studio.cli.studio import add_studio_options


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Start a new rubric from a template, then open it in the studio."
    parser.add_argument("rubric", metavar="NAME.yaml", help="the rubric file to create (an existing file is never replaced)")
    parser.add_argument("samples", metavar="SAMPLES", nargs="?",
                        help="samples to open it with: folder of .txt/.md, or .jsonl/.yaml/.csv")
    parser.add_argument("--no-open", action="store_true", help="only create the file and print the command that opens it")
    add_studio_options(parser, "NAME")


def rubric_file(name: str) -> Path:
    """The file ``name`` asks for: ``.yaml`` added when it has no extension."""
    path = Path(name).expanduser()
    return path.with_name(path.name + ".yaml") if path.name and not path.suffix else path


def run(args: argparse.Namespace) -> int:
    from rubric_studio.core.problems import RubricError
    from rubric_studio.engine.starter import create_starter_rubric, new_rubric_problem

    path = rubric_file(args.rubric)
    problem = new_rubric_problem(path) or _argument_problem(args)
    if problem:
        return fail_usage(problem)
    try:
        create_starter_rubric(path)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    opens = [path.as_posix()] + ([args.samples] if args.samples else [])
    command = "rubric-studio " + " ".join(shlex.quote(part) for part in opens)
    if args.no_open or not sys.stdin.isatty() or not sys.stdout.isatty():
        echo(f"created {path}: replace its placeholder outcome with your first criterion, then save")
        echo(f"open it in the studio: {command}")
        return 0
    from rubric_studio.cli import studio

    args.rubric = str(path)
    return studio.run(args)


def _argument_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the other arguments, checked before anything is written."""
    if args.samples is not None and not Path(args.samples).exists():
        return f"{args.samples}: samples not found: no such file or folder"
    if args.repeat is not None and args.repeat < 1:
        return "--repeat must be at least 1"
    if args.concurrency is not None and args.concurrency < 1:
        return "--concurrency must be at least 1"
    if args.annotator is not None:
        from rubric_studio.core.labels import current_annotator

        try:
            current_annotator(args.annotator)
        except ValueError as exc:
            return f"--annotator: {exc}"
    return None
