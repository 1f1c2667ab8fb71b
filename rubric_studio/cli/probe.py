"""``rubric-studio probe``: bias probes, headless (:mod:`rubric_studio.engine.probes._probes`).

Re-judges controlled perturbations of the samples (the labelled ones when any are labelled,
else all) and a null perturbation (same meaning, other bytes: the judge's own noise). Each kind
gets one decision, pooled over the judge criteria (:mod:`rubric_studio.engine.probes._decision`):
``verbosity: beyond this judge's noise: 16 of 37 unmet → met, 0 of 37 under the noise (+43
points, exact one-sided p < 0.001)``, ``not beyond …``, or *can't tell* with the reason ("can't
tell with 14 cells: a shift below 35 points would not show"); then, as detail, one line per
criterion: the flip rate with its Wilson 95% interval, the direction over its own base, and the
paired 95% interval of the shift over the noise. ``--format json``: ``{"noise": {id: {…}},
"kinds": {kind: {"beyond_noise": true | false | {"cant_tell": why}, "reads", "pooled": {…},
"criteria": {id: {"n", "flips", "rate", "ci", "direction", "beyond_noise", "difference": {…}, …}}}},
"findings": […], "cant_tell": […], "constant", "unstable": […], …}``. Exit codes: 0 probed, 2 bad
input or no judge, 3 some cells ended in error (the report is still printed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from argparse import Namespace
from typing import Any

from rubric_studio.cli.common import echo, fail_usage, report_console, write_output


def register(parser: argparse.ArgumentParser) -> None:
    from rubric_studio.cli.common import add_extract_option, add_judge_options

    parser.description = (
        "Bias probes: re-judge perturbed samples (padding, confident or hedging phrasing, "
        "reworded outcomes, criteria in another order, content-free answers) and report how often "
        "verdicts move, against the judge's own noise (the same text with a blank line added): "
        "each kind is decided once over all criteria — beyond that noise, not, or can't tell "
        "(and what shift would go unseen)."
    )
    parser.add_argument("rubric", metavar="RUBRIC")
    parser.add_argument(
        "samples", metavar="SAMPLES", nargs="?", help="default: the samples beside the rubric"
    )
    parser.add_argument(
        "--kinds",
        metavar="K1,K2",
        default="verbosity,order,confidence,hedging,paraphrase,leniency",
        help="perturbations to probe: verbosity, order, confidence, hedging, paraphrase, leniency (default: all)",
    )
    parser.add_argument("--criterion", metavar="ID", help="probe this judge criterion only")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the perturbations (same seed, same texts)"
    )
    parser.add_argument("--labels", metavar="FILE", help="labels file (default: <rubric>.labels.yaml)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("-o", "--output", metavar="FILE")
    add_extract_option(parser)
    add_judge_options(parser)


def _probed(rubric: Any, criterion: str | None) -> None:
    """``--criterion`` names a judge criterion of the rubric (ValueError otherwise)."""
    from rubric_studio.engine.probes import probed_criteria

    probed_criteria(rubric, criterion)


def run(args: Namespace) -> int:
    from rubric_studio.cli.calibrate import load_labelled
    from rubric_studio.cli.grade import warn_untrusted
    from rubric_studio.engine.probes import parse_kinds

    try:
        kinds = parse_kinds(args.kinds)
    except ValueError as exc:
        return fail_usage(str(exc))
    inputs = load_labelled(args, check=lambda rubric: _probed(rubric, args.criterion))
    if isinstance(inputs, int):
        return inputs
    rubric, labels, options = inputs.rubric, inputs.labels, inputs.options
    warn_untrusted(rubric, args)
    report = asyncio.run(_probe(rubric, inputs.samples, kinds, options, labels, args))
    if report.note and not report.judge:
        return fail_usage(f"no judge to probe: {report.note}")
    data = report.to_dict()
    if args.format == "json":
        text = _json(data)
    else:
        from rubric_studio.cli.report import usage_text

        text = render(
            data, to_file=args.output is not None, usage_line=usage_text(report.judge, report.usage)
        )
    if not write_output(text, args.output):
        return 2
    if report.errors:
        echo(
            f"warning: {report.errors} cells ended in error; they are left out of the flip rates", sys.stderr
        )
        return 3
    return 0


async def _probe(rubric, samples, kinds, options, labels, args):
    from rubric_studio.engine.probes import run_probes

    return await run_probes(
        rubric, samples, kinds, options, labels=labels, seed=args.seed, criterion=args.criterion
    )


def _json(data: dict[str, Any]) -> str:
    from rubric_studio.core.safe_text import json_safe

    return json_safe(json.dumps(data, indent=2, ensure_ascii=False))


def _pct(value: float) -> str:
    return f"{value:.0%}"


def _figures(c: dict[str, Any], what: str = "flip rate") -> str:
    if c["rate"] is None:
        return ""
    return f" ({what} {_pct(c['rate'])}, 95% CI {_pct(c['ci'][0])}–{_pct(c['ci'][1])})"


def kind_lines(kind: str, entry: dict[str, Any], constant: str | None = None) -> list[str]:
    """The kind's decision, pooled over criteria (``verbosity: beyond this judge's noise: 16 of 37
    unmet → met, …``), then one detail line per criterion (``verbosity · tone: 4 of 7 unmet → met
    (flip rate 13%, 95% CI 5%–30%) — suggestive: probe more samples (noise 0%): …``), or the one
    line saying why the kind was skipped. ``constant``: the run's one-verdict remark, said once
    below rather than on every kind."""
    from rubric_studio.engine.probes import noise_verdict

    if entry.get("skipped"):
        return [f"{kind}: skipped — {entry['skipped']}"]
    reads = entry.get("reads")
    if reads and reads == constant:
        reads = "can't tell: the judge gave one verdict to every cell (below)"
    lines = [f"{kind}: {reads}"] if reads else []
    for cid, c in entry["criteria"].items():
        errors = f", {c['errors']} errored" if c["errors"] else ""
        unstable = sum(1 for f in c.get("flipped", []) if f.get("unstable"))
        unstable_text = f", {unstable} of them unstable (below)" if unstable else ""
        verdict = noise_verdict(bool(c.get("beyond_noise")), c.get("noise_rate"), c.get("difference"))
        what = "share met" if kind == "leniency" else "flip rate"
        lines.append(f"{kind} · {cid}: {c['direction']}{_figures(c, what)}{errors}{unstable_text}"
                     + (f" — {verdict}" if verdict else ""))  # fmt: skip
    return lines


def noise_lines(data: dict[str, Any]) -> list[str]:
    """``noise · tone: 6 of 20 flipped (flip rate 30%, 95% CI 15%–52%)`` per criterion."""
    return [f"noise · {cid}: {c['direction']}{_figures(c)}" + (f", {c['errors']} errored" if c["errors"] else "")
            for cid, c in data.get("noise", {}).items()]  # fmt: skip


def summary_lines(data: dict[str, Any]) -> list[str]:
    """The cells listed once as unstable, then the findings (kinds beyond noise), the kinds that
    can't tell, or that there is no finding — never that when a kind could not see."""
    lines = []
    by_criterion: dict[str, list[dict[str, Any]]] = {}
    for cell in data.get("unstable", []):
        by_criterion.setdefault(cell["criterion"], []).append(cell)
    for cid, cells in by_criterion.items():
        kinds = ", ".join(cells[0]["kinds"])
        lines.append(f"unstable · {cid}: {', '.join(c['sample'] for c in cells)} flipped under every kind probed "
                     f"({kinds}) — listed once here, not as a finding of any kind")  # fmt: skip
    findings = data.get("findings", [])
    unsure = [c["kind"] for c in data.get("cant_tell", [])]
    if findings:
        lines.append("findings beyond this judge's noise: " + ", ".join(f["kind"] for f in findings))
    if data.get("constant"):
        lines.append(data["constant"])
    elif unsure:
        lines.append(f"can't tell: {', '.join(unsure)} (above) — not the same as no bias")
    decided = [entry for entry in data.get("kinds", {}).values() if "beyond_noise" in entry]
    if not findings and not unsure and decided:
        lines.append("no finding: no kind moves verdicts beyond this judge's own noise")
    return lines


def render(data: dict[str, Any], *, to_file: bool = False, usage_line: str | None = None) -> str:
    """The probe report as text: a heading, one line per kind and criterion, what was perturbed, usage."""
    from rubric_studio.core.safe_text import terminal_safe

    console, tty = report_console(to_file)
    samples = data["samples"]
    which = "labelled samples" if samples["source"] == "labelled" else "graded samples (none is labelled)"
    console.print(
        terminal_safe(f"bias probes on {samples['n']} {which}, seed {data['seed']}"),
        style="bold",
        markup=False,
    )
    if data.get("noise"):
        console.print(terminal_safe(f"  {data['noise_description']} (the judge's own noise):"), style="dim",
                      markup=False)  # fmt: skip
        for line in noise_lines(data):
            console.print(terminal_safe(line), markup=False)
    for kind, entry in data["kinds"].items():
        console.print(terminal_safe(f"  {entry['description']}:"), style="dim", markup=False)
        for line in kind_lines(kind, entry, data.get("constant")):
            console.print(terminal_safe(line), markup=False)
        if entry.get("note"):
            console.print(terminal_safe(f"    {entry['note']}"), style="dim", markup=False)
        if entry.get("order"):
            console.print(
                terminal_safe(f"    judged in the order {' → '.join(entry['order'])}"),
                style="dim",
                markup=False,
            )
        for cid, outcome in entry.get("paraphrases", {}).items():
            console.print(terminal_safe(f"    {cid} reworded: {outcome}"), style="dim", markup=False)
    for line in summary_lines(data):
        console.print(terminal_safe(line), style="bold", markup=False)
    if usage_line:
        console.print(terminal_safe(usage_line), markup=False)
    if data["note"]:
        console.print(terminal_safe(f"warning: {data['note']}"), style="yellow", markup=False)
    console.print(
        "a flip: the verdict on the perturbed text differs from the verdict on the original; a kind is a "
        "finding only when, over all its criteria, it moves more cells its way than the noise does (exact "
        "one-sided paired test, 5%, each kind on its own); the lines per criterion are detail; "
        "--format json lists the flipped samples and the text the judge saw",
        style="dim",
        markup=False,
    )
    return console.export_text(styles=tty)
