"""``rubric-studio improve RUBRIC [SAMPLES]``: suggested fixes for a disagreeing criterion, proven first.

Prints the candidates best first — kind, change, ``fixes N, breaks M`` and kappa before →
after on the fitting part and on the holdout, judge calls each cost — as a table or as
``{"criterion", "candidates": [...], "split", "calls", "warnings"}`` (``--format json``).
``--apply N`` writes candidate N into the rubric (comments and layout kept); a candidate whose
gain on the holdout is not shown (inconclusive, worse, unconfirmed) is written only after a
yes at the terminal or with ``--force``.
Exit codes: 0 done; 2 bad input or no judge configured (the judge's errors are reported in
the candidates and warnings).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from argparse import Namespace
from collections.abc import Callable
from typing import TYPE_CHECKING

from rubric_studio.cli.common import (
    add_extract_option,
    add_judge_options,
    echo,
    fail_usage,
    write_output,
)
from rubric_studio.core.problems import RubricError

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric

KINDS = ("reword", "examples", "check", "required", "scoring", "panel")


def _kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(f"--kinds: unknown kind {', '.join(unknown) or '(none)'}; expected some of {', '.join(KINDS)}")
    return kinds


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Suggest fixes for the criterion judge and human disagree on most (or --criterion), each "
                          "evaluated on held-out labels before it is shown.")
    parser.add_argument("rubric", metavar="RUBRIC")
    parser.add_argument("samples", metavar="SAMPLES", nargs="?")
    parser.add_argument("--labels", metavar="FILE")
    parser.add_argument("--criterion", metavar="ID", help="the criterion to improve (default: most disagreements)")
    parser.add_argument("--model", metavar="P:M", help="the model that writes rewordings (default: the judge the rubric is graded with; "
                             "a panel's first member)")
    parser.add_argument("--kinds", metavar="K,K", default="reword,examples,check,required,scoring,panel",
                        help="candidate kinds to make (reword, examples, check, required, scoring, panel)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fitting/holdout split")
    parser.add_argument("--holdout", type=float, default=0.3, metavar="F", help="share of labels held out (0.3)")
    parser.add_argument("--apply", type=int, metavar="N", help="write candidate N (1 = the first listed) into RUBRIC")
    parser.add_argument("--force", action="store_true",
                        help="with --apply: write the candidate even when its gain on the holdout is not shown "
                             "(inconclusive, worse or unconfirmed) without asking")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("-o", "--output", metavar="FILE")
    add_extract_option(parser)
    add_judge_options(parser)


def _criterion_check(args: Namespace) -> Callable[[Rubric], None]:
    """``--criterion`` must name a criterion of the rubric (a usage error otherwise)."""

    def check(rubric: Rubric) -> None:
        if args.criterion is not None:
            try:
                rubric.criterion(args.criterion)
            except KeyError:
                raise ValueError(f"--criterion {args.criterion}: no such criterion in {args.rubric}") from None

    return check


def run(args: Namespace) -> int:
    from rubric_studio.cli.calibrate import load_labelled
    from rubric_studio.cli.grade import warn_untrusted

    try:
        kinds = _kinds(args.kinds)
        if not 0 <= args.holdout < 1:
            raise ValueError("--holdout must be a share from 0 to below 1")
    except ValueError as exc:
        return fail_usage(str(exc))
    inputs = load_labelled(args, check=_criterion_check(args))
    if isinstance(inputs, int):
        return inputs
    rubric, samples, labels, options = inputs.rubric, inputs.samples, inputs.labels, inputs.options
    if not labels:
        return fail_usage(f"no labels for {args.rubric}: label some samples (studio, or <rubric>.labels.yaml) first")
    warn_untrusted(rubric, args)
    try:
        report = asyncio.run(_improve(rubric, samples, labels, options, args, kinds))
    except _NoModel as exc:
        return fail_usage(f"cannot improve {args.rubric} without a judge: {exc}")
    text = json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n" if args.format == "json" \
        else _table(report)
    if not write_output(text, args.output):
        return 2
    return _apply(args, rubric, report) if args.apply is not None else 0


class _NoModel(Exception):
    """Neither the judge nor the assistant could be made."""


async def _improve(rubric, samples, labels, options, args: Namespace, kinds: list[str]):
    from rubric_studio.engine.api import make_grader
    from rubric_studio.engine.assistant import make_assistant
    from rubric_studio.engine.improve import improve
    from rubric_studio.judges.base import JudgeError

    grader = make_grader(rubric, **options)
    if grader.judge is None and rubric.judge_criteria:  # nothing to disagree with the labels: say why
        await grader.aclose()
        raise _NoModel(grader.no_judge_reason or "no judge")
    assistant = None
    if "reword" in kinds:
        try:
            from rubric_studio.engine.improve._meaning import reworder_of

            judge_model, judge_url = reworder_of(grader)  # the rubric's judge (a panel's first member)
            model = args.model or judge_model
            assistant = make_assistant(rubric, model=model, base_url=args.base_url or (None if args.model else judge_url),
                                       cache_path=args.cache_path, use_cache=not args.no_cache,
                                       allow_code=args.allow_code, timeout=args.timeout)
        except JudgeError as exc:
            echo(f"warning: no rewordings: {exc.message}", sys.stderr)
    try:
        return await improve(rubric, samples, labels, grader=grader, assistant=assistant, criterion_id=args.criterion,
                             seed=args.seed, holdout=args.holdout, kinds=kinds)
    finally:
        await grader.aclose()
        if assistant is not None:
            await assistant.aclose()


def _delta(delta) -> str:
    if delta is None or delta.n == 0:
        return "–"

    def k(value):
        return "–" if value is None else f"{value:.2f}"

    return f"fixes {delta.fixed}, breaks {delta.broke}; kappa {k(delta.kappa_before)} → {k(delta.kappa_after)}"


def _table(report) -> str:
    from rubric_studio.core.safe_text import terminal_safe

    lines = [f"criterion: {report.criterion or '(none disagrees)'}  ·  split (seed {report.seed}): "
             f"{len(report.fit_ids)} fitting, {len(report.holdout_ids)} holdout labelled cells"]
    for number, candidate in enumerate(report.candidates, 1):
        lines.append(f"{number}. [{candidate.kind}] {terminal_safe(candidate.description)}")
        lines.append(f"   {candidate.status}  ·  fit: {_delta(candidate.fit)}  ·  holdout: {_delta(candidate.holdout)}"
                     f"  ·  {candidate.calls} judge calls")
        if candidate.evidence is not None:
            lines.append(f"   evidence: {candidate.evidence.text()}")
        if candidate.error:
            lines.append(f"   error: {terminal_safe(candidate.error)}")
    if not report.candidates:
        lines.append("no candidates")
    for item in report.blame[:5]:
        lines.append(f"sample verdicts: {item['criterion']} explains {len(item['explains'])} disagreeing sample(s) "
                     f"({', '.join(item['explains'][:5])}); it sides with the person on {item['sides_with_person']} "
                     f"of {item['n']}")
    lines += [f"warning: {terminal_safe(w)}" for w in report.warnings]
    lines.append(f"judge and assistant calls: {report.calls}")
    return "\n".join(lines) + "\n"


def _apply(args: Namespace, rubric, report) -> int:
    from rubric_studio.engine.improve import apply_candidate

    if not 1 <= args.apply <= len(report.candidates):
        return fail_usage(f"--apply {args.apply}: there are {len(report.candidates)} candidates")
    candidate = report.candidates[args.apply - 1]
    if not candidate.confirmed and not args.force and not _confirm_unshown(args.apply, candidate):
        return 2
    try:  # EditError is a ValueError; ChangedOnDisk and an unsafe target are OSErrors
        changes = apply_candidate(args.rubric, report.rubric_hash, report.criterion, candidate)
    except (ValueError, OSError, RubricError) as exc:
        echo(f"error: {args.rubric}: not applied: {exc}", sys.stderr)
        return 2
    for change in changes:
        echo(f"applied: {change}", sys.stderr)
    return 0


def _confirm_unshown(number: int, candidate) -> bool:
    """Whether to write a candidate whose gain is not shown: a yes at the terminal; refused otherwise."""
    why = f"candidate {number} is {candidate.status!r}"
    if candidate.evidence is not None:
        why += f" ({candidate.evidence.text()})"
    if not sys.stdin.isatty():
        fail_usage(f"not applied: {why}; its gain on the held-out labels is not shown. "
                   "Pass --force to write it anyway, or label more samples and run improve again.")
        return False
    sys.stderr.write(f"{why}; its gain on the held-out labels is not shown. Write it anyway? [y/N] ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() in ("y", "yes"):
        return True
    echo("not applied", sys.stderr)
    return False
