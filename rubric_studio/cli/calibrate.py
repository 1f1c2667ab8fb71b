"""``rubric-studio calibrate``: judge-vs-human agreement, consistency and fitting, headless.

Labels are the samples' inline ``label`` fields overlaid by the sidecar (``--labels``
or ``<rubric>.labels.yaml``; the sidecar wins field by field: :mod:`rubric_studio.cli._labels_in`).
Output: a rich table or the JSON object (``overall``, ``criteria``, ``disagreements``, ``warnings``,
``fit`` with ``--fit``, ``consistency`` with ``--repeat K`` > 1). ``--judges A,B,...``
grades the labelled samples with each judge and adds ``judges``, ``recommended``,
``recommendation`` (the reason, one sentence), ``recommendation_basis`` (the rule that decided)
and ``indistinguishable`` (:mod:`rubric_studio.engine.judge_compare`); the sections above then
describe the first judge listed (``overall_judge``). ``--min-kappa X`` adds ``gate``.
Exit codes: 0 computed (and the gate passed); 1 kappa below ``--min-kappa`` or undefined
(with ``--judges``: the recommended judge's; no recommendation fails the gate); 2 bad
input (file:line:column), or judged criteria and no judge configured (a rubric of deterministic
checks only needs none); 3 some cells errored (the report is still printed; it wins
over 1 so a gate never passes or fails on partial data).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
from argparse import Namespace
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rubric_studio.cli.common import echo, fail_usage, print_problems, report_console, write_output
from rubric_studio.core.problems import Problem, RubricError

if TYPE_CHECKING:
    from rubric_studio.core.labels import Label
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.core.samples import Sample


def register(parser: argparse.ArgumentParser) -> None:
    from rubric_studio.cli.common import add_extract_option, add_judge_options

    parser.description = "Measure judge-vs-human agreement on labelled samples."
    parser.add_argument("rubric", metavar="RUBRIC")
    parser.add_argument("samples", metavar="SAMPLES", nargs="?")
    parser.add_argument("--labels", metavar="FILE")
    parser.add_argument("--fit", action="store_true", help="fit pass_threshold and weights to the labels")
    parser.add_argument("--apply", action="store_true",
                        help="with --fit: write the fitted values into the rubric; with --switch-to: write the "
                             "candidate as the rubric's judge (and refresh its card) when the verdict is switch")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("-o", "--output", metavar="FILE")
    parser.add_argument("--seed", type=int, default=0, help="seed of the holdout split")
    parser.add_argument("--judges", metavar="P:M,P:M,...",
                        help="grade the labelled samples with each judge and compare them; recommends only a judge "
                             "whose kappa CI lies above chance (the cheapest of those that cannot be told "
                             "apart); A+B+C is a judge panel")
    parser.add_argument("--judge-base-url", metavar="JUDGE=URL", action="append", default=[],
                        help="with --judges or --switch-to: the endpoint of one of them or of a panel member, named "
                             "as written there (repeat for each; the others use --base-url or the provider's "
                             "variable; none may fall back to a provider's own cloud endpoint)")
    parser.add_argument("--switch-to", metavar="P:M",
                        help="re-grade the labelled samples with this candidate judge (A+B: a panel) and say whether "
                             "to switch: kappa before -> after, an exact paired test, the corrected pass rate, cost "
                             "and time per 100 samples, one verdict (exit 0 only for switch)")
    parser.add_argument("--switch-margin", type=float, default=0.05, metavar="X",
                        help="with --switch-to: the largest drop in agreement with the labels (a share of cells) "
                             "the labels must rule out before a switch (default 0.05: 5 points)")
    parser.add_argument("--switch-all-samples", action="store_true",
                        help="with --switch-to: the candidate grades every sample given, not only the labelled ones "
                             "(its corrected pass rate then rests on the unlabelled ones too)")
    parser.add_argument("--annotator", metavar="NAME",
                        help="compare the judge with this annotator's labels (default: the consensus of all)")
    parser.add_argument("--min-kappa", type=float, metavar="X",
                        help="exit 1 when kappa is below X or undefined (with --judges: the recommended judge's)")
    add_extract_option(parser)
    add_judge_options(parser)


def _sample_problem(sample: Any, message: str) -> Problem:
    file, _, line = sample.source.rpartition(":")
    if line.isdigit():
        return Problem(file, int(line), 1, message)
    return Problem(sample.source or sample.id, None, None, message)


def load_all_labels(rubric_path: str, labels_arg: str | None, samples: list,
                    annotator: str | None = None) -> tuple[dict, list[Problem]]:
    """Sample ``label`` fields overlaid by the sidecar's consensus (or ``annotator``'s labels); (labels, problems).

    ValueError for an ``annotator`` who labelled nothing there."""
    merged, problems, _ = read_labels(rubric_path, labels_arg, samples, annotator)
    return merged, problems


def read_labels(rubric_path: str, labels_arg: str | None, samples: list,
                annotator: str | None = None) -> tuple[dict, list[Problem], Any]:
    """:func:`load_all_labels` and the sidecar's :class:`~rubric_studio.core.labels._labels.LabelSet`
    (every annotator's labels, read once for the ``humans`` section too). Each label is merged as
    every command merges them (:func:`rubric_studio.cli._labels_in.overlaid`)."""
    from rubric_studio.cli._labels_in import inline_label, overlaid
    from rubric_studio.core.labels import labels_path_for, load_labels

    problems: list[Problem] = []
    merged: dict[str, Label] = {}
    for sample in samples:
        try:
            label = inline_label(sample)
        except ValueError as exc:
            problems.append(_sample_problem(sample, str(exc)))
            continue
        if label is not None:
            merged[sample.id] = label
    sidecar = load_labels(labels_arg or labels_path_for(rubric_path), missing_ok=labels_arg is None)
    problems.extend(sidecar.problems)
    chosen = sidecar.labels
    if annotator is not None:
        from rubric_studio.cli.report import annotator_labels

        chosen = annotator_labels(sidecar, annotator)
    for sample_id, label in chosen.items():
        merged[sample_id] = overlaid(merged.get(sample_id), label)  # type: ignore[assignment]
    return merged, problems, sidecar


def consistency(flip_rates: dict[str, dict[str, Any]], repeat: int) -> dict[str, Any]:
    """The ``consistency`` section: flip rate per criterion; flipping criteria are ambiguous."""
    criteria = {
        cid: {"flip_rate": round(v["flip_rate"], 4), "cells": v["cells"], "flipped": v["flipped"],
              "flipping_samples": list(v["samples"]), "ambiguous": v["flip_rate"] > 0}
        for cid, v in flip_rates.items()
    }  # fmt: skip
    ambiguous = [cid for cid, v in criteria.items() if v["ambiguous"]]
    return {"repeat": repeat, "criteria": criteria, "ambiguous": ambiguous}


def _check_args(args: Namespace) -> list[str] | None:
    """The ``--judges`` list (None without it); ValueError for flags that do not go together.
    Sets ``args.judge_base_urls`` (judge -> URL) from ``--judge-base-url``."""
    args.judge_base_urls = {}
    if args.apply and not args.fit:
        raise ValueError("--apply needs --fit")
    if args.min_kappa is not None and not -1 <= args.min_kappa <= 1:
        raise ValueError("--min-kappa must be a kappa between -1 and 1")
    if args.judges is None:
        if args.judge_base_url:
            raise ValueError("--judge-base-url names one of the judges of --judges (with --judge, use --base-url)")
        return None
    if args.judge:
        raise ValueError("--judges and --judge: give one or the other")
    if args.fit:
        raise ValueError("--fit fits one judge's verdicts: run it with --judge")
    from rubric_studio.engine.judge_compare import parse_judge_base_urls, parse_judges

    judges = parse_judges(args.judges)
    args.judge_base_urls = parse_judge_base_urls(args.judge_base_url, judges)
    return judges


def run(args: Namespace) -> int:
    from rubric_studio.cli.grade import warn_untrusted

    if args.switch_to is not None:  # switching judges: its own flags, report and verdict
        from rubric_studio.cli.calibrate_switch import run as run_switch

        return run_switch(args, load_labelled)
    try:
        judges = _check_args(args)
    except ValueError as exc:
        return fail_usage(str(exc))
    inputs = load_labelled(args, annotator=args.annotator)
    if isinstance(inputs, int):
        return inputs
    rubric, samples, labels = inputs.rubric, inputs.samples, inputs.labels
    if judges:
        _warn_untrusted_judges(rubric, args, judges)
        return _compare(args, rubric, samples, labels, inputs.options, judges)
    warn_untrusted(rubric, args)
    report = asyncio.run(_grade(rubric, samples, inputs.options))
    if isinstance(report, str):  # no judge, or its settings can never work: nothing was sent
        return fail_usage(report)
    return _finish(args, rubric, report, labels, inputs.sidecar)


@dataclass
class LabelledInputs:
    """What a command that compares the judge with labels reads: the rubric, the grader options,
    the samples and their labels (``calibrate``, ``improve``, ``probe``)."""

    rubric: Rubric
    options: dict[str, Any]
    samples: list[Sample]
    labels: dict[str, Label]
    #: The sidecar as read (every annotator's labels), or None.
    sidecar: Any = None


def load_labelled(args: Namespace, *, annotator: str | None = None,
                  check: Callable[[Rubric], None] | None = None) -> LabelledInputs | int:
    """The rubric, samples and labels ``args`` name, or the exit code after saying what is wrong
    (2: a file's problems with their positions, or a usage error). ``check`` validates the command's
    own flags against the rubric (a ValueError is a usage error). Linked sample files are followed
    only with ``--allow-code``, as in ``grade``."""
    from rubric_studio.cli.grade import grader_options, resolve_inputs
    from rubric_studio.core.samples import load_samples

    try:
        rubric, samples_path = resolve_inputs(args)
        options = grader_options(args)
        if check is not None:
            check(rubric)
        sample_set = load_samples(samples_path, extractor=args.extract, follow_links=args.allow_code)
        labels, problems, sidecar = read_labels(args.rubric, args.labels, sample_set.samples, annotator)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    except ValueError as exc:
        return fail_usage(str(exc))
    problems = [*sample_set.problems, *problems]
    if problems:
        print_problems(problems)
        return 2
    return LabelledInputs(rubric, options, sample_set.samples, labels, sidecar)


async def _grade(rubric, samples, options):
    from rubric_studio.cli.common import say_warnings
    from rubric_studio.engine.api import make_grader, unusable_judge

    grader = make_grader(rubric, **options)
    try:
        if (unusable := unusable_judge(grader)) is not None:
            return unusable
        if (missing := _missing_judge(rubric, grader)) is not None:
            return missing
        return await grader.run(rubric, samples)
    finally:
        say_warnings(grader)
        await grader.aclose()


def _missing_judge(rubric, grader) -> str | None:
    """Why calibrating ``rubric`` cannot mean anything, or None: it has judged criteria (other than
    the starter's placeholder, which is never judged) and no judge is configured. Without one every
    judged cell stays unjudged and the agreement table would be all zeros; a rubric of deterministic
    checks only is measured against the labels without a judge."""
    from rubric_studio.engine.starter import awaits_outcome

    judged = [c.id for c in rubric.judge_criteria if not awaits_outcome(c)]
    if grader.judge is not None or not judged:
        return None
    shown = ", ".join(judged[:3]) + (f" and {len(judged) - 3} more" if len(judged) > 3 else "")
    where = rubric.path or rubric.name
    return f"cannot calibrate {where} without a judge (judged criteria: {shown}): {grader.no_judge_reason}"


def _finish(args: Namespace, rubric, report, labels, sidecar: Any = None) -> int:
    from rubric_studio.core.agreement import agreement

    result = agreement(report.samples, labels, rubric)
    data = result.to_dict()
    data["judge"] = report.judge
    data["usage"] = report.usage.to_dict()
    from rubric_studio.core.pass_rate import pass_rates

    data["pass_rate"] = pass_rates(report.samples, labels, rubric)  # raw and corrected by the labels
    if report.judge_note:
        data["warnings"].append(f"judge criteria not graded: {report.judge_note}")
    if report.errored_cells:
        data["warnings"].append(f"{report.errored_cells} cells ended in error; their samples are excluded")
    pooled = _pooled_without_members(report)
    if pooled:
        data["warnings"].append(f"{pooled} cells pooled without a panel member that errored "
                                f"({', '.join(report.usage.failed_members())})")
    fit_result = None
    if args.fit:
        from rubric_studio.engine.fit import apply_fit, fit

        fit_result = fit(rubric, report.samples, labels, seed=args.seed)
        data["fit"] = fit_result.to_dict()
        if args.apply:
            try:
                data["fit"]["applied"] = apply_fit(rubric.path, fit_result)
            except (ValueError, RubricError, OSError) as exc:  # OSError: changed on disk meanwhile, unwritable
                sys.stderr.write(f"rubric-studio: not applied to {rubric.path}: {exc}\n")
                return 2
            sys.stderr.write(f"applied to {rubric.path}: {'; '.join(data['fit']['applied']) or 'nothing to change'}\n")
    if args.repeat > 1:
        data["consistency"] = consistency(report.flip_rates(), args.repeat)
    if args.min_kappa is not None:
        data["gate"] = gate(args.min_kappa, data["overall"], None)
    from rubric_studio.cli.report import humans_section

    data["humans"] = humans_section(args, rubric, report.samples, sidecar)
    return _emit(args, data, functools.partial(render, agreement=result, usage_line=_usage_line(report)),
                 report.errored_cells + pooled)


def _pooled_without_members(report) -> int:
    """A judge panel's cells pooled without a member that errored: warned, each such member named
    on stderr, and counted as errored for the exit code (3), as ``grade`` does."""
    from rubric_studio.cli.report import say_member_failures
    from rubric_studio.engine.judge_compare import pooled_without_members

    pooled = pooled_without_members(report)
    say_member_failures(report.usage)
    return pooled


def _usage_line(report) -> str:
    from rubric_studio.cli.report import usage_text

    return usage_text(report.judge, report.usage)


def _emit(args: Namespace, data: dict[str, Any], renderer, errored: int) -> int:
    """Write the report; the exit code: 2 unwritable, 3 errored cells, 1 gate failed, else 0."""
    if args.format == "json":
        from rubric_studio.core.safe_text import json_safe

        text = json_safe(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        text = renderer(data, to_file=args.output is not None)
    if not write_output(text, args.output):
        return 2
    if "gate" in data:
        tail = f" (but {errored} cells ended in error: exit 3)" if errored else ""
        echo(data["gate"]["reason"] + tail, sys.stderr)
    if errored:
        return 3
    return 1 if "gate" in data and not data["gate"]["passed"] else 0


def gate(min_kappa: float, entry: dict[str, Any] | None, judge: str | None, why_none: str = "") -> dict[str, Any]:
    """The ``--min-kappa`` verdict on an agreement entry: passed only when kappa is defined,
    the human verdicts hold both classes, and kappa is at least ``min_kappa``."""
    whose = f" of judge {judge}" if judge else ""
    kappa = entry["kappa"] if entry else None
    passed = False
    if entry is None:
        reason = why_none
    elif not entry["n"]:
        reason = f"kappa{whose} is undefined: no labelled sample got a pass/fail verdict to compare"
    elif not (entry["both_pass"] + entry["rubric_fail_human_pass"]) * (entry["both_fail"] + entry["rubric_pass_human_fail"]):
        reason = f"kappa{whose} is undefined: the human verdicts compared are all one class; label passes and fails"
    elif kappa is None:
        reason = f"kappa{whose} is undefined: human and rubric gave every sample the same verdict"
    else:
        passed = kappa >= min_kappa
        reason = f"kappa{whose} {kappa:.4g} is {'at least' if passed else 'below'} --min-kappa {min_kappa:g}"
    prefix = "gate passed" if passed else "gate failed"
    return {"min_kappa": min_kappa, "judge": judge, "kappa": kappa, "passed": passed, "reason": f"{prefix}: {reason}"}


# -- several judges ---------------------------------------------------------------
def _warn_untrusted_judges(rubric, args: Namespace, judges: list[str]) -> None:
    """``warn_untrusted`` for each judge, each distinct line once."""
    from rubric_studio.core.trust import untrusted_settings, warning_line
    from rubric_studio.engine.judge_compare import member_base_urls

    seen: set[str] = set()
    for judge in judges:  # a URL the user gave (the entry's or a member's) is the user's own choice
        base_url = next(iter(member_base_urls(judge, args.judge_base_urls).values()), args.base_url)
        blocked = untrusted_settings(rubric, judge=judge, base_url=base_url, allow_code=args.allow_code)
        line = warning_line(blocked) if blocked else None
        if line and line not in seen:
            seen.add(line)
            echo(line, sys.stderr)


def _compare(args: Namespace, rubric, samples: list, labels: dict, options: dict, judges: list[str]) -> int:
    """Grade the labelled samples with every judge; the first judge's report plus the comparison."""
    from rubric_studio.engine.judge_compare import (
        CloudFallback,
        figures,
        grade_each,
        labelled,
        recommendation,
    )

    chosen, labels = labelled(samples, labels)
    try:
        runs = asyncio.run(grade_each(rubric, chosen, judges, options, base_urls=args.judge_base_urls))
    except CloudFallback as exc:  # before any call
        return fail_usage(str(exc))
    compared = [figures(run, labels, rubric) for run in runs]
    data: dict[str, Any] = {"overall_judge": judges[0], **compared[0][1].to_dict()}
    for fig, _ in compared:
        if fig.note:
            data["warnings"].append(f"{fig.judge}: judge criteria not graded: {fig.note}")
        if fig.errors:
            data["warnings"].append(f"{fig.judge}: {fig.errors} cells ended in error; their samples are excluded")
        if fig.member_errors:
            data["warnings"].append(f"{fig.judge}: {fig.member_errors} cells pooled without a panel member that "
                                    f"errored ({', '.join(fig.errored_members)}); not recommended on them")
    if args.repeat > 1:
        data["consistency"] = consistency(runs[0].report.flip_rates(), args.repeat)
    data["judges"] = [fig.to_dict() for fig, _ in compared]
    found = recommendation([fig for fig, _ in compared])
    data["recommended"], data["recommendation"] = found.judge, found.why
    data["recommendation_basis"], data["indistinguishable"] = found.basis, list(found.indistinguishable)
    if args.min_kappa is not None:
        full = next((fig.agreement.to_dict() for fig, _ in compared if fig.judge == data["recommended"]), None)
        data["gate"] = gate(args.min_kappa, full, data["recommended"],
                            f"no judge recommended, so no kappa to gate on ({data['recommendation']})")
    from rubric_studio.cli.report import say_member_failures

    for run in runs:  # a panel member that errored, named (the pooled verdicts alone would hide it)
        say_member_failures(run.report.usage)
    return _emit(args, data, render_judges, sum(fig.errors + fig.member_errors for fig, _ in compared))


# -- table ----------------------------------------------------------------------
def _f(value: Any, pct: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:.0%}" if pct else f"{value:.2f}"


def _ci(entry: dict[str, Any]) -> str:
    ci = entry.get("kappa_ci")
    return "" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _agreement_table(title: str, rows: dict[str, dict[str, Any]]):
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    currency = any("labels_current" in e for e in rows.values())  # per criterion: labels of the wording now
    for name in ("", "n", "accuracy", "kappa", "95% CI", *(("current",) if currency else ()), "false pass",
                 "false fail", "coverage", "FFR", "alignment", "✓✓", "✗✗", "r✓h✗", "r✗h✓"):
        table.add_column(name, justify="left" if not name else "right", no_wrap=True)
    for name, e in rows.items():
        table.add_row(
            name, str(e["n"]), _f(e["accuracy"], True), _f(e["kappa"]), _ci(e),
            *((_labels_current(e),) if currency else ()), _f(e["false_pass_rate"], True),
            _f(e["false_fail_rate"], True), _f(e["coverage"], True), _f(e["false_failure_rate"], True),
            _f(e["alignment"]), str(e["both_pass"]), str(e["both_fail"]), str(e["rubric_pass_human_fail"]),
            str(e["rubric_fail_human_pass"]),
        )
    return table


def _labels_current(entry: dict[str, Any]) -> str:
    """How many of a criterion's compared labels answered its wording now: ``10/12 ↺2`` (2 given under
    an older wording; the rest recorded no wording)."""
    from rubric_studio.core.labels import OLDER_MARK

    current, older = entry.get("labels_current", 0), entry.get("labels_older_wording", 0)
    if not current and not older:
        return "–"  # no label recorded the wording it answered
    return f"{current}/{entry['n']}" + (f" {OLDER_MARK}{older}" if older else "")


def _confusion(entry: dict[str, Any]):
    from rich.table import Table

    table = Table(title="confusion (overall)", title_justify="left", show_edge=False)
    table.add_column("")
    table.add_column("human pass", justify="right")
    table.add_column("human fail", justify="right")
    table.add_row("rubric pass", str(entry["both_pass"]), str(entry["rubric_pass_human_fail"]))
    table.add_row("rubric fail", str(entry["rubric_fail_human_pass"]), str(entry["both_fail"]))
    return table


def _fit_lines(fit: dict[str, Any]) -> list[str]:
    threshold = fit["pass_threshold"]
    lines = [f"pass_threshold {threshold['current']:g} → {threshold['fitted']:g}"
             f"  (threshold alone, current weights: {threshold['threshold_only']:g})"]
    changed = [f"{k} {v['current']:g} → {v['fitted']:g}" for k, v in fit["weights"].items() if v["current"] != v["fitted"]]
    lines.append("weights: " + (", ".join(changed) if changed else "unchanged"))
    split = fit["split"]
    lines.append(f"split: {split['train']} train / {split['holdout']} holdout (seed {split['seed']})")
    for part in ("train", "holdout", "all"):
        pair = fit.get(part)
        if pair:
            cur, new = pair["current"], pair["fitted"]
            lines.append(f"{part:8} accuracy {_f(cur['accuracy'], True)} → {_f(new['accuracy'], True)}"
                         f"   kappa {_f(cur['kappa'])} → {_f(new['kappa'])}   (n={cur['n']})")
    lines.extend(f"warning: {w}" for w in fit["warnings"])
    if "applied" in fit:
        lines.append("applied: " + ("; ".join(fit["applied"]) or "nothing to change"))
    elif fit["changed"]:
        lines.append("not applied: run again with --apply to write these values into the rubric")
    return lines


def render(data: dict[str, Any], agreement: Any, *, to_file: bool = False, usage_line: str | None = None) -> str:
    """The calibrate report as text (rich, coloured on a terminal); ``agreement`` (the
    AgreementReport ``data`` comes from) words each disagreement as the HTML report does."""
    from rubric_studio.core.safe_text import terminal_safe

    console, tty = report_console(to_file)
    console.print(_agreement_table("agreement", {"overall": data["overall"]}))
    if data["overall"]["n"]:
        console.print(_confusion(data["overall"]))
    if data["criteria"]:
        console.print(_agreement_table("per criterion (met = pass)", data["criteria"]))
    if "pass_rate" in data:
        from rubric_studio.core.pass_rate import pass_rate_lines

        console.print()
        for line in pass_rate_lines(data["pass_rate"]):
            console.print(terminal_safe(line), markup=False)
    if data["disagreements"]:
        console.print(f"\n[bold]disagreements[/] ({len(data['disagreements'])})")
        for d in data["disagreements"]:
            console.print(terminal_safe(f"  {d['id']}: {agreement.disagreement_words(d)}"), markup=False)
    if "consistency" in data:
        section = data["consistency"]
        console.print(f"\n[bold]consistency[/] (each judge cell judged {section['repeat']} times)")
        for cid, v in section["criteria"].items():
            flag = "  AMBIGUOUS: reword it; flips on " + ", ".join(v["flipping_samples"]) if v["ambiguous"] else ""
            console.print(terminal_safe(f"  {cid}: flip rate {v['flip_rate']:.0%} of {v['cells']} cells{flag}"),
                          markup=False)
    if data.get("humans"):
        from rubric_studio.cli.report import render_humans

        render_humans(console, data["humans"])
    if "fit" in data:
        console.print("\n[bold]fit[/]")
        for line in _fit_lines(data["fit"]):
            console.print("  " + terminal_safe(line), markup=False)
    if usage_line:
        console.print(terminal_safe(usage_line), markup=False)
    for warning in data["warnings"]:
        console.print(terminal_safe(f"warning: {warning}"), style="yellow", markup=False)
    console.print("✓✓ both pass · ✗✗ both fail · r✓h✗ rubric pass, human fail · FFR false failure rate", style="dim")
    if data["criteria"]:
        console.print("current: labels given under the criterion's wording now, of n · ↺ given under an older "
                      "wording (re-check them) · the rest recorded no wording (– none did)", style="dim")
    return console.export_text(styles=tty)


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _judges_table(judges: list[dict[str, Any]], recommended: str | None):
    from rich.table import Table

    table = Table(title="judges (labelled samples only)", title_justify="left", show_edge=False, pad_edge=False)
    for name in ("judge", "n", "kappa", "95% CI", "accuracy", "false pass", "false fail", "flip", "cost/100",
                 "wall s/100", "calls", "cache hits", "errors"):
        table.add_column(name, justify="left" if name == "judge" else "right", no_wrap=name != "judge")
    for e in judges:
        wall = "–" if e["latency_per_100_s"] is None else f"{e['latency_per_100_s']:.1f}"
        table.add_row(
            e["judge"] + (" *" if e["judge"] == recommended else ""), str(e["n"]), _f(e["kappa"]), _ci(e),
            _f(e["accuracy"], True), _f(e["false_pass_rate"], True), _f(e["false_fail_rate"], True),
            _f(e["flip_rate"], True), _money(e["cost_per_100"]), wall, str(e["judge_calls"]),
            str(e["cache_hits"]), str(e["errors"]),
        )
    return table


def render_judges(data: dict[str, Any], *, to_file: bool = False) -> str:
    """The ``--judges`` comparison as text: one row per judge, the recommendation, warnings."""
    from rubric_studio.core.safe_text import terminal_safe

    console, tty = report_console(to_file)
    console.print(_judges_table(data["judges"], data["recommended"]))
    console.print()
    console.print(terminal_safe(f"recommended: {data['recommended'] or 'none'}"), style="bold", markup=False)
    console.print(terminal_safe(f"  {data['recommendation']}"), markup=False)
    for warning in data["warnings"]:
        console.print(terminal_safe(f"warning: {warning}"), style="yellow", markup=False)
    console.print(f"* recommended · cost/100: USD per 100 samples (cached replies priced at their recorded tokens; "
                  "unknown: no price, see prices.yaml) · wall s/100: this run's wall time per 100 samples (cache hits "
                  "take none; --no-cache to time a judge) · per-criterion detail and disagreements: "
                  f"--format json (for {data['overall_judge']}) or --judge", style="dim", markup=False)
    return console.export_text(styles=tty)
