"""Helpers shared by the subcommands: printing problems and messages, writing output.

Every line a subcommand prints that holds text from a user file (ids, names, paths,
messages quoting a file) goes through :func:`echo` or :func:`print_problems`, which show
control characters as visible stand-ins: a file cannot send escape sequences to the
terminal. Whole reports are made safe by their renderer (see ``formats``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from rubric_studio.core.problems import Problem
from rubric_studio.core.safe_text import terminal_safe


def echo(text: object, stream=None) -> None:
    """Write one message (stdout by default) with its control characters made visible."""
    (stream or sys.stdout).write(terminal_safe(text, multiline=True) + "\n")


def print_problems(problems: Iterable[Problem], stream=None) -> None:
    for problem in problems:
        echo(problem, stream or sys.stderr)


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
        sys.stdout.write(text)
        if text and not text.endswith("\n"):
            sys.stdout.write("\n")
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
