"""The ``rubric-studio`` command line (BRIEF §5).

Parsers are defined here with nothing heavy imported, so ``--help`` is fast; each
subcommand's work lives in its own module (``grade.py``, ``validate.py`` ...) and is
imported only when that subcommand runs.

Exit codes: 0 all samples pass; 1 some sample fails (or is not graded); 2 invalid
input or usage; 3 some cells ended in error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3

SUBCOMMANDS = ("grade", "validate", "calibrate", "export", "import", "cache", "jobs", "improve", "draft")
EXPORT_TARGETS = ("agentv", "promptfoo", "letta", "docent", "healthbench", "markdown")
IMPORT_SOURCES = ("auto", "agentv", "promptfoo", "letta", "docent", "healthbench")
GRADE_FORMATS = ("table", "json", "jsonl", "markdown", "junit", "html")

DESCRIPTION = "Write, test and calibrate rubrics for LLM judges."
EPILOG = """\
commands:
  rubric-studio RUBRIC [SAMPLES]        open the studio
  rubric-studio grade RUBRIC SAMPLES    grade samples headless (CI)
  rubric-studio validate RUBRIC...      check rubric files
  rubric-studio calibrate RUBRIC SAMPLES  judge-vs-human agreement
  rubric-studio improve RUBRIC SAMPLES  suggested fixes, proven on held-out labels
  rubric-studio export RUBRIC --to T    write the rubric for another eval tool
  rubric-studio import FILE             read a rubric from another eval tool
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


def _judge_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("judge")
    group.add_argument("--judge", metavar="P:M", help="judge model as provider:model (openai, anthropic, ollama, openai-compatible)")
    group.add_argument("--base-url", metavar="URL", help="endpoint of an OpenAI- or Anthropic-compatible server")
    group.add_argument("--concurrency", type=int, metavar="N", help="judge calls in flight at once")
    group.add_argument("--repeat", type=int, default=1, metavar="K", help="judge each cell K times (majority / median)")
    group.add_argument("--no-cache", action="store_true", help="do not read or write the judge reply cache")
    group.add_argument("--batch", action="store_true", help="grade all judge criteria of a sample in one call")
    group.add_argument("--timeout", type=float, metavar="S", help="seconds to wait for one judge reply (judge.timeout)")
    group.add_argument("--deadline", type=float, metavar="S",
                       help="seconds the whole run may take; calls unanswered by then end as errors (judge.deadline)")
    group.add_argument("--allow-code", action="store_true",
                       help="trust this rubric for this run: run its python/command checks and use its judge.base_url, "
                            "a judge.model naming another provider than yours, and a judge.prompt_path outside its "
                            "folder (without it, only what you trusted before is used)")
    group.add_argument("--cache-path", metavar="FILE", help="SQLite cache file (default: in the user cache folder)")


def _extract_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--extract", choices=("last_assistant", "all_assistant", "transcript"), default="last_assistant",
                        help="which part of a chat transcript is graded (default: the last assistant message)")


def _improve_parser(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Suggest fixes for the criterion judge and human disagree on most (or --criterion), each "
                          "evaluated on held-out labels before it is shown.")
    parser.add_argument("rubric", metavar="RUBRIC")
    parser.add_argument("samples", metavar="SAMPLES", nargs="?")
    parser.add_argument("--labels", metavar="FILE")
    parser.add_argument("--criterion", metavar="ID", help="the criterion to improve (default: most disagreements)")
    parser.add_argument("--model", metavar="P:M", help="the model that writes rewordings (default: the judge's)")
    parser.add_argument("--kinds", metavar="K,K", default="reword,examples,check,scoring",
                        help="candidate kinds to make (reword, examples, check, scoring)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fitting/holdout split")
    parser.add_argument("--holdout", type=float, default=0.3, metavar="F", help="share of labels held out (0.3)")
    parser.add_argument("--apply", type=int, metavar="N", help="write candidate N (1 = the first listed) into RUBRIC")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("-o", "--output", metavar="FILE")
    _extract_option(parser)
    _judge_options(parser)


def _draft_parser(parser: argparse.ArgumentParser) -> None:
    parser.description = "Draft criteria with an LLM from a task description and sample outputs; keep the ones you pick."
    parser.add_argument("samples", metavar="SAMPLES", nargs="?", help="sample outputs to learn from (at most 8 are shown)")
    parser.add_argument("--task", required=True, help="what the outputs are for (becomes the rubric's description)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the rubric to FILE (default: print the YAML)")
    parser.add_argument("--force", action="store_true", help="replace FILE when it exists")
    parser.add_argument("--name", help="rubric name (default: FILE's stem)")
    parser.add_argument("--model", metavar="P:M", help="the model that drafts (default: your judge)")
    parser.add_argument("--base-url", metavar="URL", help="endpoint of an OpenAI- or Anthropic-compatible server")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("-y", "--yes", action="store_true", help="keep every valid proposal without asking")
    choice.add_argument("--pick", metavar="N,N", help="keep these proposals by number (1,3,4 or 2-5)")
    parser.add_argument("--format", choices=("yaml", "json"), default="yaml",
                        help="json: print the proposals, what was dropped and kept, and the rubric as one object")
    parser.add_argument("--labels", metavar="FILE", help="labels to show the model (default: FILE's <stem>.labels.yaml)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the reply cache")
    parser.add_argument("--cache-path", metavar="FILE", help="SQLite cache file (default: in the user cache folder)")
    _extract_option(parser)


def build_parser(command: str | None) -> argparse.ArgumentParser:
    """The parser for one subcommand, or the studio parser when ``command`` is None."""
    if command is None:
        parser = _Parser(
            prog="rubric-studio",
            description=DESCRIPTION,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        parser.add_argument("rubric", metavar="RUBRIC", help="rubric .yaml file (created if missing)")
        parser.add_argument("samples", metavar="SAMPLES", nargs="?", help="samples: folder of .txt/.md, or .jsonl/.yaml/.csv")
        parser.add_argument("--labels", metavar="FILE", help="labels sidecar (default: RUBRIC's <stem>.labels.yaml)")
        parser.add_argument("--version", action="version", version=f"rubric-studio {_version()}")
        _judge_options(parser)
        return parser
    parser = _Parser(prog=f"rubric-studio {command}", formatter_class=argparse.RawDescriptionHelpFormatter)
    if command == "grade":
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
        _extract_option(parser)
        _judge_options(parser)
    elif command == "jobs":
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
    elif command == "validate":
        parser.description = "Check rubric files; print every problem with file:line:column."
        parser.add_argument("rubrics", metavar="RUBRIC", nargs="+")
        parser.add_argument("--format", choices=("text", "json"), default="text")
    elif command == "calibrate":
        parser.description = "Measure judge-vs-human agreement on labelled samples."
        parser.add_argument("rubric", metavar="RUBRIC")
        parser.add_argument("samples", metavar="SAMPLES", nargs="?")
        parser.add_argument("--labels", metavar="FILE")
        parser.add_argument("--fit", action="store_true", help="fit pass_threshold and weights to the labels")
        parser.add_argument("--apply", action="store_true", help="with --fit: write the fitted values into the rubric")
        parser.add_argument("--format", choices=("table", "json"), default="table")
        parser.add_argument("-o", "--output", metavar="FILE")
        parser.add_argument("--seed", type=int, default=0, help="seed of the holdout split")
        parser.add_argument("--judges", metavar="P:M,P:M,...",
                            help="grade the labelled samples with each judge and compare them; recommends the "
                                 "cheapest judge whose kappa CI overlaps the best judge's")
        parser.add_argument("--min-kappa", type=float, metavar="X",
                            help="exit 1 when kappa is below X or undefined (with --judges: the recommended judge's)")
        _extract_option(parser)
        _judge_options(parser)
    elif command == "improve":
        _improve_parser(parser)
    elif command == "export":
        parser.description = "Write a rubric in another eval tool's format."
        parser.add_argument("rubric", metavar="RUBRIC")
        parser.add_argument("--to", required=True, choices=EXPORT_TARGETS)
        parser.add_argument("--agentv-version", choices=("4", "5"), default="5",
                            help="AgentV layout: 5 (default, the newest) or 4 (the 4.x line on npm)")
        parser.add_argument("-o", "--output", metavar="FILE")
    elif command == "import":
        parser.description = "Read a rubric written for another eval tool."
        parser.add_argument("file", metavar="FILE")
        parser.add_argument("--from", dest="source", default="auto", choices=IMPORT_SOURCES)
        parser.add_argument("-o", "--output", metavar="FILE")
    elif command == "draft":
        _draft_parser(parser)
    elif command == "cache":
        parser.description = "Inspect or clear the judge reply cache."
        parser.add_argument("action", choices=("stats", "clear"))
        parser.add_argument("--cache-path", metavar="FILE")
    return parser


def _version() -> str:
    from rubric_studio import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rubric-studio`` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = args_list[0] if args_list and args_list[0] in SUBCOMMANDS else None
    parser = build_parser(command)
    try:
        args = parser.parse_args(args_list[1:] if command else args_list)
    except SystemExit as exc:
        return int(exc.code or 0)
    module_name = {"import": "import_", None: "studio"}.get(command, command)
    module = importlib.import_module(f"rubric_studio.cli.{module_name}")
    try:
        return int(module.run(args))
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
