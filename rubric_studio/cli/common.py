"""Helpers shared by the subcommands: printing problems and messages, writing output, and the
option groups several subcommands' parsers share (judge options, the transcript extractor).

Every line a subcommand prints that holds text from a user file (ids, names, paths,
messages quoting a file) goes through :func:`echo` or :func:`print_problems`, which show
control characters as visible stand-ins: a file cannot send escape sequences to the
terminal. Whole reports are made safe by their renderer (see ``formats``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from rubric_studio.cli.output import OutputFailed, stdout
from rubric_studio.core.problems import Problem
from rubric_studio.core.safe_text import terminal_safe


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    """The judge option group of the commands that grade (and of the studio)."""
    group = parser.add_argument_group("judge")
    from rubric_studio.core.providers import builtin_names

    providers = ", ".join(builtin_names())
    group.add_argument("--judge", metavar="P:M", help=f"judge model as provider:model ({providers}, or a plugin's); "
                       "a comma list A,B,C (or A+B+C) is a judge panel")
    group.add_argument("--base-url", metavar="URL", help="endpoint of the judge's provider (an OpenAI- or "
                       "Anthropic-compatible server, an Azure OpenAI resource)")
    group.add_argument("--concurrency", type=int, metavar="N", help="judge calls in flight at once")
    group.add_argument("--repeat", type=int, default=1, metavar="K", help="judge each cell K times (majority / median)")
    group.add_argument("--no-cache", action="store_true", help="do not read or write the judge reply cache")
    group.add_argument("--batch", action="store_true", help="grade all judge criteria of a sample in one call")
    group.add_argument("--no-reuse-batch", action="store_true",
                       help="judge again, one call per criterion, the cells whose cached verdict came from a batch "
                            "call (judge.reuse_batch: false)")
    group.add_argument("--timeout", type=float, metavar="S", help="seconds to wait for one judge reply (judge.timeout)")
    group.add_argument("--deadline", type=float, metavar="S",
                       help="seconds the whole run may take; calls unanswered by then end as errors (judge.deadline)")
    group.add_argument("--allow-code", action="store_true",
                       help="trust this rubric for this run: run its python/command checks and use its judge.base_url, "
                            "a judge.model naming another provider than yours, and a judge.prompt_path outside its "
                            "folder (without it, only what you trusted before is used)")
    group.add_argument("--cache-path", metavar="FILE", help="SQLite cache file (default: in the user cache folder)")


def add_extract_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--extract", choices=("last_assistant", "all_assistant", "transcript"), default="last_assistant",
                        help="which part of a chat transcript is graded (default: the last assistant message)")


def echo(text: object, stream=None) -> None:
    """Write one message (stdout by default) with its control characters made visible."""
    out = stream or sys.stdout
    try:
        out.write(terminal_safe(text, multiline=True) + "\n")
    except OSError as exc:
        if out is not sys.stdout:
            raise
        raise OutputFailed("to standard output", exc) from exc


def print_problems(problems: Iterable[Problem], stream=None) -> None:
    for problem in problems:
        echo(problem, stream or sys.stderr)


def say_warnings(grader) -> None:
    """The grader's warnings not said yet, one line each on stderr (each said once per run)."""
    for line in grader.take_warnings():
        echo(f"warning: {line}", sys.stderr)


def fail_usage(message: str) -> int:
    echo(f"rubric-studio: error: {message}", sys.stderr)
    return 2


def write_output(text: str, output: str | None) -> bool:
    """Write ``text`` to a file (atomically, the user's umask for a new file) or stdout.

    The user named the file, so an existing one is replaced; a path that is not a regular
    file (a FIFO, a device, a folder) or cannot be written is refused with a one-line
    message on stderr and False (the caller exits 2).
    """
    if output is None or output == "-":
        out = stdout()
        out.write(text if not text or text.endswith("\n") else text + "\n")
        out.flush()
        return True
    from rubric_studio.core.atomic import write_text_safely

    try:
        write_text_safely(Path(output), text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        echo(f"rubric-studio: error: cannot write {output}: {exc.strerror or exc}", sys.stderr)
        return False
    return True


def report_console(to_file: bool, width: int = 160):
    """(a recording rich console for a text report, whether it is coloured): terminal-wide and
    coloured on a terminal, plain and ``width`` wide otherwise. Emoji codes and highlighting are
    off: ``openai:a:`` in a judge name or a criterion id is text, not an emoji."""
    import io
    import shutil

    from rich.console import Console

    tty = sys.stdout.isatty() and not to_file
    columns = shutil.get_terminal_size((width, 40)).columns if tty else width
    return Console(record=True, width=columns, file=io.StringIO(), force_terminal=tty, emoji=False,
                   highlight=False), tty
