"""Helpers shared by the subcommands: printing problems, finding samples and labels."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from rubric_studio.core.problems import Problem


def print_problems(problems: Iterable[Problem], stream=None) -> None:
    out = stream or sys.stderr
    for problem in problems:
        out.write(f"{problem}\n")


def fail_usage(message: str) -> int:
    sys.stderr.write(f"rubric-studio: error: {message}\n")
    return 2


def write_output(text: str, output: str | None) -> None:
    """Write ``text`` to a file (atomically) or stdout."""
    if output is None or output == "-":
        sys.stdout.write(text)
        if text and not text.endswith("\n"):
            sys.stdout.write("\n")
        return
    from rubric_studio.core.atomic import atomic_write_text

    atomic_write_text(Path(output), text if text.endswith("\n") else text + "\n")
