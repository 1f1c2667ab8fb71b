"""The ``rubric-studio`` command line (docs/reference/command-line.md).

Each subcommand's module (``validate.py``, ``history.py`` ...) defines its parser in a
``register(parser)`` function and its work in ``run(args)``; only the module of the command
given is imported, and it imports nothing heavy until ``run``, so ``--help`` is fast.
``grade`` and ``jobs`` are registered here (:func:`_register_grade`, :func:`_register_jobs`).

Exit codes: 0 all samples pass; 1 some sample fails (or is not graded); 2 invalid
input or usage; 3 some cells ended in error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from rubric_studio._lazy import public_dir
from rubric_studio.cli.output import OutputFailed

__all__ = ["DESCRIPTION", "EPILOG", "EXIT_ERROR", "EXIT_FAIL", "EXIT_OK", "EXIT_USAGE", "GRADE_FORMATS", "SUBCOMMANDS",
           "OutputFailed", "build_parser", "main"]

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3

SUBCOMMANDS = ("grade", "validate", "calibrate", "export", "import", "cache", "jobs", "improve", "draft", "new",
               "history", "probe", "labels", "card", "serve")  # fmt: skip
GRADE_FORMATS = ("table", "json", "jsonl", "markdown", "junit", "html")
_MODULES = {"import": "import_", None: "studio"}  # command -> module name, where they differ

DESCRIPTION = "Write, test and calibrate rubrics for LLM judges."
EPILOG = """\
commands:
  rubric-studio RUBRIC [SAMPLES]        open the studio
  rubric-studio new RUBRIC [SAMPLES]    start a rubric from a template and open it
  rubric-studio grade RUBRIC SAMPLES    grade samples headless (CI)
  rubric-studio validate RUBRIC...      check rubric files
  rubric-studio calibrate RUBRIC SAMPLES  judge-vs-human agreement
  rubric-studio improve RUBRIC SAMPLES  suggested fixes, proven on held-out labels
  rubric-studio probe RUBRIC [SAMPLES]  bias probes: verdict flips under padding, tone, wording, order
  rubric-studio card RUBRIC [SAMPLES]   the rubric's card: its evidence, written beside it
  rubric-studio history RUBRIC          the rubric's versions graded in the studio
  rubric-studio export RUBRIC --to T    write the rubric for another eval tool
  rubric-studio import FILE             read a rubric from another eval tool
  rubric-studio labels import|export    human labels in and out of CSV, JSON Lines, Label Studio
  rubric-studio serve RUBRIC --annotators A,B  label in the browser, several people at once
  rubric-studio draft --task T [SAMPLES]  LLM-proposed criteria for a new rubric
  rubric-studio cache stats|clear       the judge reply cache
  rubric-studio jobs status|wait|cancel  provider Batch API jobs (grade --batch-api)

exit codes: 0 all pass, 1 some fail, 2 invalid input or usage, 3 cells errored
"""


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a one-line message (no usage dump on stderr noise)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _register_grade(parser: argparse.ArgumentParser) -> None:
    from rubric_studio.cli.common import add_extract_option, add_judge_options

    parser.description = "Grade samples with a rubric, headless."
    parser.add_argument("rubric", metavar="RUBRIC")
    parser.add_argument("samples", metavar="SAMPLES", nargs="?", help="default: the samples beside the rubric")
    parser.add_argument("--labels", metavar="FILE", help="show human labels beside verdicts")
    parser.add_argument("--format", choices=GRADE_FORMATS, default="table",
                        help="report format (html: one self-contained page to share a run)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--batch-api", action="store_true",
                        help="send the cells the cache lacks through the provider's Batch API (half price, "
                             "within 24 h); waits for the results unless --no-wait")
    parser.add_argument("--no-wait", action="store_true", help="with --batch-api: submit, print the job id, exit")
    add_extract_option(parser)
    add_judge_options(parser)


def _register_jobs(parser: argparse.ArgumentParser) -> None:
    parser.description = "Provider Batch API jobs submitted by grade --batch-api."
    parser.add_argument("action", choices=("status", "wait", "cancel"))
    parser.add_argument("job", metavar="JOB", nargs="?", help="job id (default: status lists all, wait takes the latest pending, cancel the only pending)")
    parser.add_argument("--cache-path", metavar="FILE", help="the cache the jobs belong to (default: the user cache)")
    parser.add_argument("--format", choices=GRADE_FORMATS, default="table",
                        help="jobs wait: the report's format, as grade")
    parser.add_argument("-o", "--output", metavar="FILE", help="jobs wait: write the report to FILE")
    parser.add_argument("--allow-code", action="store_true",
                        help="jobs wait: run the rubric's python/command checks (trust it for this run)")
    parser.add_argument("--base-url", metavar="URL",
                        help="use this endpoint for a job someone else made (your API key is sent there)")


_REGISTERED_HERE: dict[str, Callable[[argparse.ArgumentParser], None]] = {"grade": _register_grade, "jobs": _register_jobs}


def _module(command: str | None):
    return importlib.import_module(f"rubric_studio.cli.{_MODULES.get(command, command)}")


def build_parser(command: str | None) -> argparse.ArgumentParser:
    """The parser for one subcommand, or the studio parser when ``command`` is None.

    Returns:
        An :class:`argparse.ArgumentParser` whose ``error`` exits 2 with a one-line message.
    Raises:
        ModuleNotFoundError: ``command`` is not one of :data:`SUBCOMMANDS`.
    """
    if command is None:
        parser = _Parser(prog="rubric-studio", description=DESCRIPTION, epilog=EPILOG,
                         formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    else:
        parser = _Parser(prog=f"rubric-studio {command}", formatter_class=argparse.RawDescriptionHelpFormatter)
    register = _REGISTERED_HERE.get(command) if command else None
    (register or _module(command).register)(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rubric-studio`` console script: run the command ``argv`` names.

    Returns:
        The exit code: 0 all samples pass, 1 some fail, 2 invalid input or usage, 3 cells errored
        (130 when interrupted).
    Raises:
        Nothing for a usage error or a failed write of the report (both are exit 2); an unexpected
        error of a command propagates.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = args_list[0] if args_list and args_list[0] in SUBCOMMANDS else None
    parser = build_parser(command)
    try:
        args = parser.parse_args(args_list[1:] if command else args_list)
    except SystemExit as exc:
        return int(exc.code or 0)
    except KeyboardInterrupt:  # a format name is checked while parsing, which reads the format plugins
        sys.stderr.write("interrupted\n")
        return 130
    try:
        code = int(_module(command).run(args))
        _flush_stdout()
        return code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except OutputFailed as exc:
        return _output_failed(exc)


def _flush_stdout() -> None:
    """Push what is buffered for stdout now, so a full disk or a closed pipe is reported
    here rather than as an ignored exception when the interpreter exits."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        raise OutputFailed("the report to standard output", exc) from exc


def _output_failed(exc: OutputFailed) -> int:
    """One line on stderr (none for a closed pipe), stdout pointed at /dev/null so the
    interpreter's last flush has nothing left to fail on, exit 2."""
    import os

    if not exc.quiet:
        sys.stderr.write(f"rubric-studio: error: {exc}\n")
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout replaced (tests) or already closed
        pass
    return 2


__dir__ = public_dir(__name__)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
