"""``calibrate``'s ``humans`` section: agreement among annotators and whether the judge is within it.

The figures are :func:`rubric_studio.core.human_agreement.human_agreement`'s; this module loads
the sidecar's per-annotator labels for them, and words them for the table report (the pairs,
alpha, the judge against each person and the consensus, the verdict, and the adjudication queue:
every verdict or cell two people labelled differently).
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from rubric_studio.core.safe_text import terminal_safe

#: How many entries of the adjudication queue the table lists (JSON has all).
QUEUE_SHOWN = 20


def annotator_labels(label_set: Any, annotator: str) -> dict:
    """One annotator's labels of a :class:`~rubric_studio.core.labels._labels.LabelSet`; ValueError when
    they labelled nothing there (naming who did)."""
    from rubric_studio.core.labels import annotator_names, check_name, labels_of

    name = check_name(annotator)
    found = labels_of(label_set.by_annotator, name)
    if not found:
        names = ", ".join(annotator_names(label_set.by_annotator)) or "none"
        raise ValueError(f"--annotator {name}: no labels by {name} in {label_set.path} (annotators: {names})")
    return found


def humans_section(args: Namespace, rubric: Any, samples: list) -> dict[str, Any]:
    """The ``humans`` object for a graded run (the sidecar's annotators; an unreadable or missing
    sidecar has none)."""
    from rubric_studio.core.human_agreement import human_agreement
    from rubric_studio.core.labels import labels_path_for, load_labels
    from rubric_studio.core.problems import RubricError

    try:
        label_set = load_labels(args.labels or labels_path_for(args.rubric), missing_ok=True)
    except (RubricError, OSError, UnicodeDecodeError):
        return human_agreement({}, samples, [])
    return human_agreement(label_set.by_annotator, samples, [c.key for c in rubric.criteria])


def _k(entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("kappa", entry.get("value")) is None:
        return "–" + (f" (n={entry['n']})" if entry else "")
    value = entry.get("kappa", entry.get("value"))
    ci = entry.get("ci")
    return f"{value:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "") + f" (n={entry['n']})"


def _verdict(section: dict[str, Any]) -> str:
    verdict = {True: "yes", False: "NO", None: "not enough overlap"}[section["judge_within_humans"]]
    return f"judge within humans: {verdict} — {section['within_humans']['reason']}"


def section_lines(section: dict[str, Any], indent: str = "  ") -> list[str]:
    """One kind of item (verdicts, or one criterion's cells) as text lines."""
    lines = [f"{indent}{p['a']} vs {p['b']}: kappa {_k(p)}" for p in section["pairs"]]
    if section["alpha"] is not None:
        lines.append(f"{indent}Krippendorff's alpha (nominal): {_k(section['alpha'])}")
    lines.extend(f"{indent}judge vs {name}: kappa {_k(e)}" for name, e in section["judge_vs"].items())
    lines.append(f"{indent}judge vs consensus: kappa {_k(section['judge_vs_consensus'])}")
    lines.append(indent + _verdict(section))
    return lines


def queue_lines(queue: list[dict[str, Any]]) -> list[str]:
    """The adjudication queue: ``s3 verdict: alice pass · bob fail → adjudicated pass``."""
    lines = []
    for item in queue[:QUEUE_SHOWN]:
        what = "verdict" if item["criterion"] is None else item["criterion"]
        given = " · ".join(f"{name} {value}" for name, value in item["labels"].items())
        settled = f" → adjudicated {item['adjudicated']}" if item["adjudicated"] else " (not adjudicated)"
        lines.append(f"  {item['id']} {what}: {given}{settled}")
    if len(queue) > QUEUE_SHOWN:
        lines.append(f"  … {len(queue) - QUEUE_SHOWN} more (--format json lists all)")
    return lines


def render_humans(console: Any, humans: dict[str, Any]) -> None:
    """Print the ``humans`` section onto a rich console (nothing with fewer than two annotators)."""
    if len(humans["annotators"]) < 2:
        return
    adjudicated = f"; {humans['adjudicated']} samples adjudicated" if humans["adjudicated"] else ""
    console.print(
        terminal_safe(f"\nhumans: {', '.join(humans['annotators'])}{adjudicated}"), style="bold", markup=False
    )
    lines = ["verdicts:", *section_lines(humans)]
    if humans.get("score_alpha"):
        lines.append(f"  scores: Krippendorff's alpha (interval): {_k(humans['score_alpha'])}")
    for criterion, section in humans["per_criterion"].items():
        lines.extend([f"{criterion}:", *section_lines(section)])
    queue = humans["disagreements"]
    if queue:
        open_ = sum(1 for item in queue if item["adjudicated"] is None)
        lines.append(
            f"to adjudicate: {open_} of {len(queue)} disagreements between annotators open "
            "(label them as annotator 'adjudicated' to settle them)"
        )
        lines.extend(queue_lines(queue))
    for line in lines:
        console.print(terminal_safe(line), markup=False)
    console.print(terminal_safe(humans["ci_method"]), style="dim", markup=False)


def humans_html(humans: Any, esc: Any) -> list[str]:
    """The report page's section on agreement among annotators (nothing with fewer than two)."""
    if not humans or len(humans["annotators"]) < 2:
        return []
    out = ['<section id="humans"><h2>Agreement among annotators</h2>',
           f"<p>Annotators: {esc(', '.join(humans['annotators']))}; judge-vs-human figures above use their "
           "consensus (majority; a tie is no consensus; an adjudicated label wins).</p>"]
    for title, section in [("Sample verdicts", humans), *humans["per_criterion"].items()]:
        out.append(f"<h3>{esc(title)}</h3><ul>")
        out.extend(f"<li>{esc(line.strip())}</li>" for line in section_lines(section))
        out.append("</ul>")
    if humans["disagreements"]:
        out.append(f"<h3>To adjudicate ({len(humans['disagreements'])})</h3><ul>")
        out.extend(f"<li>{esc(line.strip())}</li>" for line in queue_lines(humans["disagreements"]))
        out.append("</ul>")
    out.append(f'<p class="note">{esc(humans["ci_method"])}</p>')
    return [*out, "</section>"]
