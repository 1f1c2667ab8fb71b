"""``rubric-studio RUBRIC [SAMPLES]``: open the studio (docs/getting-started/studio.md).

Checks the arguments before anything heavy is imported, then runs
:class:`~rubric_studio.tui.app.StudioApp`. A missing rubric is created from a
starter template; missing samples are looked up beside the rubric.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rubric_studio.cli.common import add_judge_options, fail_usage, print_problems


def register(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``rubric-studio RUBRIC [SAMPLES]``."""
    from rubric_studio import __version__

    parser.add_argument("rubric", metavar="RUBRIC", help="rubric .yaml file (created if missing)")
    parser.add_argument("samples", metavar="SAMPLES", nargs="?", help="samples: folder of .txt/.md, or .jsonl/.yaml/.csv")
    parser.add_argument("--version", action="version", version=f"rubric-studio {__version__}")
    add_studio_options(parser, "RUBRIC")


def add_studio_options(parser: argparse.ArgumentParser, rubric: str) -> None:
    """The options of every command that opens the studio (``rubric-studio RUBRIC``, ``new``):
    :func:`run` reads each of them, so a command that opens the studio must register them all."""
    parser.add_argument("--labels", metavar="FILE", help=f"labels sidecar (default: {rubric}'s <stem>.labels.yaml)")
    parser.add_argument("--annotator", metavar="NAME",
                        help="who labels (default: $RUBRIC_STUDIO_ANNOTATOR, else your user name)")
    add_judge_options(parser)


def run(args: argparse.Namespace) -> int:
    rubric = Path(args.rubric)
    if rubric.is_dir():
        return fail_usage(f"{rubric}: expected a rubric .yaml file, got a folder")
    if not rubric.exists() and rubric.suffix.lower() not in (".yaml", ".yml"):
        return fail_usage(f"{rubric}: no such file (to start a new rubric, name it with .yaml)")
    if args.samples is not None and not Path(args.samples).exists():
        return fail_usage(f"{args.samples}: samples not found: no such file or folder")
    if args.repeat is not None and args.repeat < 1:
        return fail_usage("--repeat must be at least 1")
    if args.concurrency is not None and args.concurrency < 1:
        return fail_usage("--concurrency must be at least 1")
    if args.annotator is not None:
        from rubric_studio.core.labels import current_annotator

        try:
            current_annotator(args.annotator)
        except ValueError as exc:
            return fail_usage(f"--annotator: {exc}")
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        return fail_usage("the studio needs a terminal; for scripts and CI use `rubric-studio grade RUBRIC SAMPLES`")

    from rubric_studio.core.problems import RubricError
    from rubric_studio.tui.app import StudioApp

    while True:  # "New rubric…" in the palette closes this rubric and opens the new one
        try:
            app = StudioApp(
                rubric,
                args.samples,
                args.labels,
                judge=args.judge,
                base_url=args.base_url,
                concurrency=args.concurrency,
                repeat=args.repeat or 1,
                use_cache=not args.no_cache,
                batch=args.batch,
                allow_code=args.allow_code,
                cache_path=args.cache_path,
                annotator=args.annotator,
            )
        except RubricError as exc:
            print_problems(exc.problems)
            return 2
        app.run()
        if app.next_rubric is None:
            return int(app.return_code or 0)
        # The new rubric grades the same samples (given or found beside this one); labels belong to a rubric.
        samples = app.session.samples_path
        rubric, args.labels = app.next_rubric, None
        args.samples = str(samples) if samples is not None else args.samples
