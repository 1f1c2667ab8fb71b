"""``rubric-studio card RUBRIC [SAMPLES]``: grade the labelled samples and write the rubric's card.

The card (:mod:`rubric_studio.core.card`) is written beside the rubric as ``<stem>.card.yaml``;
``--format markdown`` (or ``json``) also prints it, for a README or a pull request. Its figures are
``calibrate``'s, computed the same way on the same inputs (labels: the samples' inline labels
overlaid by the sidecar's consensus). ``--probe-kinds`` runs the bias probes and lists the kinds
beyond the judge's noise; ``--repeat K`` adds the flip rate, whose repeat calls are counted apart
from the cost per 100 samples (the cost of grading them once). The card records the samples,
labels and judge settings it rests on, for ``validate``. Exit codes: 0 written; 2 bad input,
no judge, or the card could not be written; 3 some cells ended in error (the card is still
written, and says so).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from argparse import Namespace
from typing import Any

from rubric_studio.cli.common import echo, fail_usage, write_output


def register(parser: argparse.ArgumentParser) -> None:
    from rubric_studio.cli.common import add_extract_option, add_judge_options

    parser.description = ("Write the rubric's card beside it (<stem>.card.yaml): its hash, judge, date, labels, "
                          "kappa with its interval, per-criterion kappa, the pass rate raw and corrected by the "
                          "labels, probe findings beyond noise, flip rate and the cost per 100 samples of grading "
                          "them once — each figure with its n and 95% interval — and the samples, labels and judge "
                          "settings it rests on (validate says when they change).")
    parser.add_argument("rubric", metavar="RUBRIC")
    parser.add_argument("samples", metavar="SAMPLES", nargs="?", help="default: the samples beside the rubric")
    parser.add_argument("--labels", metavar="FILE", help="labels file (default: <rubric>.labels.yaml)")
    parser.add_argument("--format", choices=("yaml", "markdown", "json"), default="yaml",
                        help="yaml: write the card only; markdown or json: write it and print it in that form")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="yaml: write the card here instead of beside the rubric; markdown/json: print to FILE")
    parser.add_argument("--probe-kinds", metavar="K1,K2",
                        help="also run these bias probes (verbosity, order, confidence, hedging, paraphrase, leniency) "
                             "and list each kind's decision against the judge's noise")
    parser.add_argument("--seed", type=int, default=0, help="seed of the probes' perturbations")
    add_extract_option(parser)
    add_judge_options(parser)


def run(args: Namespace) -> int:
    from rubric_studio.cli.calibrate import load_labelled
    from rubric_studio.cli.grade import warn_untrusted

    kinds: list[str] = []
    if args.probe_kinds:
        from rubric_studio.engine.probes import parse_kinds

        try:
            kinds = list(parse_kinds(args.probe_kinds))
        except ValueError as exc:
            return fail_usage(str(exc))
    inputs = load_labelled(args)
    if isinstance(inputs, int):
        return inputs
    warn_untrusted(inputs.rubric, args)
    outcome = asyncio.run(make_card(inputs.rubric, inputs.samples, inputs.labels, inputs.options,
                                    sidecar=inputs.sidecar, repeat=args.repeat, probe_kinds=kinds, seed=args.seed,
                                    sources=_sources(args)))
    if isinstance(outcome, str):
        return fail_usage(outcome)
    card, errored = outcome
    return _write(args, inputs.rubric, card, errored)


def _sources(args: Namespace) -> dict[str, Any]:
    """Where the samples and labels were read (as ``load_labelled`` found them), for ``rests_on``."""
    from rubric_studio.core.discovery import find_samples_for
    from rubric_studio.core.labels import labels_path_for

    return {"samples_path": args.samples or find_samples_for(args.rubric),
            "labels_path": args.labels or labels_path_for(args.rubric), "extract": args.extract}


def _write(args: Namespace, rubric, card: dict[str, Any], errored: int) -> int:
    from rubric_studio.core.card import card_markdown, card_path_for, card_yaml, repeat_calls_text

    target = args.output if args.format == "yaml" and args.output else str(card_path_for(rubric.path))
    if not write_output(card_yaml(card), target):
        return 2
    echo(f"wrote {target}", sys.stderr)
    if (extra := repeat_calls_text(card["consistency"])) is not None:
        cost = card["cost_per_100"]
        once = "no known price" if cost.get("value") is None else f"${cost['value']:.4f}"
        echo(f"cost per 100 samples, grading once: {once}; {extra}", sys.stderr)
    if args.format == "markdown":
        if not write_output(card_markdown(card), args.output):
            return 2
    elif args.format == "json":
        from rubric_studio.core.safe_text import json_safe

        if not write_output(json_safe(json.dumps(card, indent=2, ensure_ascii=False)), args.output):
            return 2
    if errored:
        echo(f"warning: {errored} cells ended in error; the card says so", sys.stderr)
        return 3
    return 0


async def make_card(rubric, samples: list, labels: dict, options: dict[str, Any], *, sidecar: Any = None,
                    repeat: int = 1, probe_kinds: list[str] | None = None, seed: int = 0,
                    date: str | None = None,
                    sources: dict[str, Any] | None = None) -> tuple[dict[str, Any], int] | str:
    """Grade ``samples`` and build the card: (card, errored cells), or why the judge cannot be used.
    ``sources``: where the samples and labels were read (``samples_path``, ``labels_path``, ``extract``)."""
    from rubric_studio.cli.common import say_warnings
    from rubric_studio.engine.api import make_grader, unusable_judge
    from rubric_studio.engine.card import card_from_report
    from rubric_studio.engine.judge_compare import cached_cost

    grader = make_grader(rubric, **options)
    try:
        if (unusable := unusable_judge(grader)) is not None:
            return unusable
        already = cached_cost(grader, rubric, samples)
        report = await grader.run(rubric, samples)
    finally:
        say_warnings(grader)
        await grader.aclose()
    probes = None
    if probe_kinds:
        from rubric_studio.engine.probes import run_probes

        probed = await run_probes(rubric, samples, probe_kinds, options, labels=labels, seed=seed)
        probes = probed.to_dict()
    return card_from_report(rubric, report, labels,
                            by_annotator=sidecar.by_annotator if sidecar is not None else None, cached=already, probes=probes,
                            date=date, samples=samples, sources=sources,
                            judge={key: options.get(key) for key in ("judge", "batch", "reuse_batch")}), report.errored_cells
