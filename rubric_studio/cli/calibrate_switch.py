"""``rubric-studio calibrate RUBRIC [SAMPLES] --switch-to P:M``: switch judges with proof.

The current judge (the rubric's, or ``--judge``) grades the samples as plain ``calibrate`` does
(through the cache); the candidate re-grades the labelled samples (every sample with
``--switch-all-samples``), its endpoint from ``--judge-base-url P:M=URL`` as for ``--judges``;
``A+B`` is a panel. Per criterion and overall it prints kappa before → after with 95% intervals,
the exact paired test on the cells whose agreement with the labels changed, the drop in agreement
with Tango's score interval, the corrected pass rate before → after, cost and wall time per 100
samples, and one verdict (:mod:`rubric_studio.engine.judge_switch`). JSON: calibrate's object for
the current judge plus ``switch``. ``--apply`` writes the candidate into the rubric (comments
kept) and refreshes the card, only when the verdict is "switch".

Exit codes: 0 the verdict is "switch" (and, with ``--apply``, it was written); 1 "do not switch" or
"can't tell" (nothing written); 2 bad input, or the switch could not be written; 3 some cells
errored (the report is still printed; never a switch on partial data).
"""

from __future__ import annotations

import asyncio
import json
import sys
from argparse import Namespace
from collections.abc import Callable
from typing import Any

from rubric_studio.cli.common import echo, fail_usage, report_console, write_output


def _check_args(args: Namespace) -> tuple[str, dict[str, str]]:
    """The candidate and its endpoints (``--judge-base-url``); ValueError for flags that do not go together."""
    from rubric_studio.core.panel import check_judge_spec
    from rubric_studio.engine.judge_compare import parse_judge_base_urls

    for other, why in (("judges", "--judges compares several judges; --switch-to one candidate with the current judge"),
                       ("fit", "--fit fits the current judge; run it apart from --switch-to"),
                       ("min_kappa", "--switch-to gives its own verdict; --min-kappa gates plain calibrate")):
        if getattr(args, other, None) not in (None, False):
            raise ValueError(f"--switch-to and --{other.replace('_', '-')}: {why}")
    text = args.switch_to.strip()
    if "," in text:
        raise ValueError("--switch-to takes one candidate (a judge panel is written A+B)")
    members = [part.strip() for part in text.split("+")]
    for member in members:
        check_judge_spec(member, "--switch-to")
    candidate = "+".join(members)
    if not 0 < args.switch_margin < 1:
        raise ValueError("--switch-margin is a share of labelled cells between 0 and 1, e.g. 0.05 (5 points)")
    return candidate, parse_judge_base_urls(args.judge_base_url, [candidate], flag="--switch-to")


def run(args: Namespace, load_labelled: Callable[..., Any]) -> int:
    """The switch: ``load_labelled`` reads the rubric, samples and labels as ``calibrate`` does."""
    try:
        candidate, base_urls = _check_args(args)
    except ValueError as exc:
        return fail_usage(str(exc))
    inputs = load_labelled(args, annotator=args.annotator)
    if isinstance(inputs, int):
        return inputs
    _warn_untrusted(inputs.rubric, args, candidate, base_urls)
    runs = _grade(args, inputs, candidate, base_urls)
    if isinstance(runs, int):
        return runs
    data, errored = _report(args, inputs, runs)
    verdict = data["switch"]["verdict"]
    code = _apply(args, inputs, runs, data) if args.apply else 0
    if not write_output(_text(args, data), args.output):
        return 2
    if args.apply and verdict != "switch":
        echo(f"not applied: {data['switch']['headline']}", sys.stderr)
    if code:
        return code
    if errored:
        return 3
    return 0 if verdict == "switch" else 1


def _warn_untrusted(rubric: Any, args: Namespace, candidate: str, base_urls: dict[str, str]) -> None:
    """``calibrate``'s warning for rubric settings not used untrusted, for each judge, each line once."""
    from rubric_studio.core.trust import untrusted_settings, warning_line
    from rubric_studio.engine.judge_compare import member_base_urls

    seen: set[str] = set()
    own = next(iter(member_base_urls(candidate, base_urls).values()), args.base_url)
    for judge, base_url in ((args.judge, args.base_url), (candidate, own)):
        blocked = untrusted_settings(rubric, judge=judge, base_url=base_url, allow_code=args.allow_code)
        line = warning_line(blocked) if blocked else None
        if line and line not in seen:
            seen.add(line)
            echo(line, sys.stderr)


def _grade(args: Namespace, inputs: Any, candidate: str, base_urls: dict[str, str]) -> Any:
    """Both judges' runs, or the exit code after saying why a judge cannot grade (2)."""
    from rubric_studio.core.card import card_path_for
    from rubric_studio.engine.judge_compare import labelled
    from rubric_studio.engine.judge_switch import CannotGrade, grade_both

    chosen, _ = labelled(inputs.samples, inputs.labels)
    if not chosen:
        return fail_usage("--switch-to compares the judges on labelled samples, and none of these samples is "
                          "labelled: label some (p / f in the studio) or give --labels FILE")
    # a card is refreshed from the candidate's run: it grades what `card` would, every sample given
    every = args.switch_all_samples or (args.apply and card_path_for(inputs.rubric.path).exists())
    try:
        runs = asyncio.run(grade_both(inputs.rubric, inputs.samples, chosen, candidate, inputs.options,
                                      base_urls, all_samples=every))
    except CannotGrade as exc:
        return fail_usage(str(exc))
    for line in runs.warnings:
        echo(f"warning: {line}", sys.stderr)
    for run, who in ((runs.current, "the current judge"), (runs.candidate, f"--switch-to {candidate}")):
        if run.report.judge is None or run.report.judge_note:
            return fail_usage(f"{who} graded nothing: {run.report.judge_note or 'no judge'}")
    return runs


def _report(args: Namespace, inputs: Any, runs: Any) -> tuple[dict[str, Any], int]:
    """``calibrate``'s object for the current judge plus ``switch``; and the errored cells of both runs."""
    from rubric_studio.cli.report import say_member_failures
    from rubric_studio.core.agreement import agreement
    from rubric_studio.engine.judge_compare import figures, labelled, pooled_without_members
    from rubric_studio.engine.judge_switch import SwitchComparison, pair_up

    rubric, (_, labels) = inputs.rubric, labelled(inputs.samples, inputs.labels)
    current, candidate = runs.current, runs.candidate
    data: dict[str, Any] = {"judge": current.report.judge, **agreement(current.report.samples, labels, rubric).to_dict(),
                            "usage": current.report.usage.to_dict()}
    comparison = SwitchComparison(current.judge, candidate.judge,
                                  *pair_up(rubric, labels, current.report.samples, candidate.report.samples),
                                  margin=args.switch_margin)
    decision = comparison.decision()
    switch: dict[str, Any] = {"verdict": decision.verdict, "headline": decision.headline, "reason": decision.reason,
                              "worse_on": list(decision.worse_on)}
    for key, run in (("current", current), ("candidate", candidate)):
        switch[key] = _judge_entry(figures(run, labels, rubric)[0], run, labels, rubric)
    switch["candidate"]["graded"] = runs.candidate_graded
    switch.update(comparison.to_dict())
    _add_pass_rates(switch)
    data["switch"] = switch
    data["warnings"].extend(_warnings(switch, runs))
    errored = 0
    for run in (current, candidate):
        say_member_failures(run.report.usage)
        errored += run.report.errored_cells + pooled_without_members(run.report)
    return data, errored


def _judge_entry(fig: Any, run: Any, labels: dict, rubric: Any) -> dict[str, Any]:
    """One judge's side: name, what it graded, cost and time per 100 samples, calls, its pass rates."""
    from rubric_studio.core.pass_rate import pass_rates

    full = fig.to_dict()
    keep = ("cost_per_100", "cost_usd", "latency_per_100_s", "wall_seconds", "judge_calls", "cache_hits",
            "errors", "member_errors")
    return {"judge": run.judge, "samples": fig.samples, **{key: full[key] for key in keep},
            "pass_rate": pass_rates(run.report.samples, labels, rubric)}


def _add_pass_rates(switch: dict[str, Any]) -> None:
    """Each comparison's pass rate before → after (overall: the verdict's; a criterion: met)."""
    before, after = switch["current"]["pass_rate"], switch["candidate"]["pass_rate"]
    switch["overall"]["pass_rate"] = {"before": _rate(before), "after": _rate(after)}
    for cid, entry in switch["criteria"].items():
        entry["pass_rate"] = {"before": _rate(before["criteria"].get(cid)), "after": _rate(after["criteria"].get(cid))}


def _rate(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if entry is None else {"raw": entry["raw"], "corrected": entry["corrected"]}


def _warnings(switch: dict[str, Any], runs: Any) -> list[str]:
    """What the reader must know to read the figures right."""
    out = []
    candidate = switch["candidate"]
    if runs.candidate_graded == "labelled":
        out.append(f"{candidate['judge']} graded only the {candidate['samples']} labelled samples: its corrected "
                   "pass rate has no unlabelled part (--switch-all-samples grades every sample given)")
    for key in ("current", "candidate"):
        entry = switch[key]
        if entry["errors"]:
            out.append(f"{entry['judge']}: {entry['errors']} cells ended in error; they are left out of the "
                       "comparison, never counted as worse")
    return out


def _apply(args: Namespace, inputs: Any, runs: Any, data: dict[str, Any]) -> int:
    """With ``--apply`` and the verdict "switch": the candidate written into the rubric, the card
    refreshed; 0, or 2 after saying what could not be written."""
    from rubric_studio.core.problems import RubricError
    from rubric_studio.engine.judge_switch import apply_switch, refresh_card

    switch, path = data["switch"], inputs.rubric.path
    if switch["verdict"] != "switch":
        return 0
    candidate = runs.candidate
    try:
        switch["applied"] = apply_switch(path, candidate.judge, inputs.rubric.content_hash())
    except (ValueError, RubricError, OSError) as exc:  # OSError: changed on disk meanwhile, unwritable
        echo(f"rubric-studio: not applied to {path}: {exc}", sys.stderr)
        return 2
    echo(f"applied to {path}: {'; '.join(switch['applied']) or 'nothing to change'}", sys.stderr)
    by_annotator = inputs.sidecar.by_annotator if inputs.sidecar is not None else None
    try:  # as `card` writes it: every sample given (the candidate graded them all), every label
        card = refresh_card(path, candidate.report, inputs.labels, by_annotator=by_annotator,
                            cached=candidate.cached_cost, samples=inputs.samples, sources=_sources(args),
                            judge_options={key: inputs.options.get(key) for key in ("batch", "reuse_batch")})
    except (RubricError, OSError) as exc:
        echo(f"rubric-studio: the card was not refreshed: {exc}", sys.stderr)
        return 2
    switch["card"] = None if card is None else str(card)
    if card is not None:
        echo(f"refreshed {card}", sys.stderr)
    return 0


def _sources(args: Namespace) -> dict[str, Any]:
    """Where the samples and labels were read, for the card's ``rests_on``."""
    from rubric_studio.core.discovery import find_samples_for
    from rubric_studio.core.labels import labels_path_for

    return {"samples_path": args.samples or find_samples_for(args.rubric),
            "labels_path": args.labels or labels_path_for(args.rubric), "extract": args.extract}


def _text(args: Namespace, data: dict[str, Any]) -> str:
    if args.format == "json":
        from rubric_studio.core.safe_text import json_safe

        return json_safe(json.dumps(data, indent=2, ensure_ascii=False))
    return render(data, to_file=args.output is not None)


# -- table ----------------------------------------------------------------------
def _kappa(entry: dict[str, Any]) -> str:
    if entry["kappa"] is None:
        return "–"
    ci = entry["kappa_ci"]
    return f"{entry['kappa']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _drop(entry: dict[str, Any]) -> str:
    if entry["drop"] is None:
        return "–"
    lo, hi = entry["drop_ci"]
    return f"{entry['drop'] * 100:+.1f} [{lo * 100:+.1f}, {hi * 100:+.1f}]"


def _rows(switch: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    rows = [("overall", switch["overall"])] if switch["overall"]["n"] else []
    rows += list(switch["criteria"].items())
    if switch["all_criteria"] is not None and len(switch["criteria"]) > 1:
        rows.append(("all criteria", switch["all_criteria"]))
    return rows


def _comparison_table(switch: dict[str, Any]):
    from rich.table import Table

    table = Table(title=f"{switch['current']['judge']} → {switch['candidate']['judge']} (labelled, both judged)",
                  title_justify="left", show_edge=False, pad_edge=False)
    for name in ("", "n", "kappa before", "kappa after", "better", "worse", "p worse", "drop, points [95%]",
                 "left out"):
        table.add_column(name, justify="left" if not name else "right", no_wrap=True)
    for name, e in _rows(switch):
        left = e["excluded"]
        out = sum(left.values())
        table.add_row(name + (" ✗" if e["worse_significant"] else ""), str(e["n"]), _kappa(e["before"]),
                      _kappa(e["after"]), str(e["better"]), str(e["worse"]), f"{e['p_worse']:.4g}", _drop(e),
                      f"{out} ({left['current_errors'] + left['candidate_errors']} errored)" if out else "0")
    return table


def _corrected(rate: dict[str, Any] | None) -> str:
    if rate is None:
        return "–"
    raw, corrected = rate["raw"], rate["corrected"]
    raw_text = "–" if raw is None else f"{raw:.0%}"
    if "cant_tell" in corrected:
        return f"raw {raw_text}, corrected: can't tell ({corrected['cant_tell']})"
    lo, hi = corrected["ci"]
    return (f"raw {raw_text}, corrected {corrected['value']:.0%} [{lo:.0%}, {hi:.0%}] "
            f"({corrected['n_labelled']} labelled, {corrected['n_unlabelled']} unlabelled)")


def _judge_line(entry: dict[str, Any]) -> str:
    cost = "unknown" if entry["cost_per_100"] is None else f"${entry['cost_per_100']:.4f}"
    wall = "–" if entry["latency_per_100_s"] is None else f"{entry['latency_per_100_s']:.1f} s"
    return (f"{entry['judge']}: {cost} and {wall} per 100 samples ({entry['samples']} graded, "
            f"{entry['judge_calls']} calls, {entry['cache_hits']} cache hits)")


def render(data: dict[str, Any], *, to_file: bool = False) -> str:
    """The switch report as text: the comparison table, pass rates, cost and time, the verdict."""
    from rubric_studio.core.safe_text import terminal_safe

    console, tty = report_console(to_file)
    switch = data["switch"]
    console.print(_comparison_table(switch))
    console.print("\n[bold]pass rate[/] before → after")
    for name, entry in [("overall", switch["overall"]), *switch["criteria"].items()]:
        rates = entry.get("pass_rate") or {}
        line = f"  {name}: {_corrected(rates.get('before'))} → {_corrected(rates.get('after'))}"
        console.print(terminal_safe(line), markup=False)
    console.print("\n[bold]cost and time[/]")
    for key in ("current", "candidate"):
        console.print(terminal_safe("  " + _judge_line(switch[key])), markup=False)
    test = switch["test"]
    console.print()
    console.print(terminal_safe(
        f"exact paired test (McNemar) on the cells whose agreement changed; worse when p worse < "
        f"{test['alpha']:g}/{max(1, test['comparisons'])} = {test['threshold']:.4g} (Bonferroni over "
        f"{test['comparisons']} comparisons); margin {switch['margin'] * 100:g} points of agreement"),
        markup=False, style="dim")
    console.print()
    style = {"switch": "bold green", "do not switch": "bold red"}.get(switch["verdict"], "bold yellow")
    console.print(terminal_safe(f"verdict: {switch['headline']}"), style=style, markup=False)
    console.print(terminal_safe(f"  {switch['reason']}"), markup=False)
    if switch.get("applied") is not None:
        console.print(terminal_safe("applied: " + ("; ".join(switch["applied"]) or "nothing to change")), markup=False)
    for warning in data["warnings"]:
        console.print(terminal_safe(f"warning: {warning}"), style="yellow", markup=False)
    console.print("drop: current minus candidate agreement with the labels (positive: the candidate agrees less) · "
                  "✗ significantly worse · per-criterion detail: --format json", style="dim")
    return console.export_text(styles=tty)
