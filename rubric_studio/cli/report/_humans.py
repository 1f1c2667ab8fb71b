"""``calibrate``'s ``humans`` section: agreement among annotators and whether the judge is within it.

The figures are :func:`rubric_studio.core.human_agreement.human_agreement`'s; this module loads
the sidecar's per-annotator labels for them, and words them for the table report (the pairs,
alpha, the judge against each person and the consensus, the verdict, and the adjudication queue:
every verdict or cell two people labelled differently).
"""

from __future__ import annotations

import statistics
from argparse import Namespace
from collections import Counter
from typing import Any

from rubric_studio.core.human_agreement import MIN_OVERLAP, adjudication_words, annotators_text, open_count
from rubric_studio.core.safe_text import terminal_safe

#: How many entries of the adjudication queue the table lists (JSON has all).
QUEUE_SHOWN = 20
#: Annotators the judge is compared with one by one; beyond, a summary and the lowest.
JUDGE_LISTED = 10
#: The lowest judge-vs-annotator kappas named in that summary.
LOWEST_SHOWN = 5
#: Labels of one queue entry listed by name; beyond, counted by value.
LABELS_SHOWN = 6


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


def humans_section(args: Namespace, rubric: Any, samples: list, label_set: Any = None) -> dict[str, Any]:
    """The ``humans`` object for a graded run (the sidecar's annotators, read here unless
    ``label_set`` is the sidecar already read; an unreadable or missing sidecar has none)."""
    from rubric_studio.core.human_agreement import human_agreement
    from rubric_studio.core.labels import labels_path_for, load_labels
    from rubric_studio.core.problems import RubricError

    try:
        if label_set is None:
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


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _verdict(section: dict[str, Any]) -> str:
    verdict = {True: "yes", False: "NO", None: "not enough overlap"}[section["judge_within_humans"]]
    return f"judge within humans: {verdict} — {section['within_humans']['reason']}"


def _pair_lines(section: dict[str, Any], indent: str) -> list[str]:
    summary = section.get("pairs_summary")
    pairs = [f"{p['a']} vs {p['b']}: kappa {_k(p)}" for p in section["pairs"]]
    if not summary or summary["listed"] == "all":
        return [indent + line for line in pairs]
    head = (f"{indent}{summary['pairs']:,} pairs of annotators share an item; {summary['with_kappa']:,} have a kappa: "
            f"min {_f(summary['kappa_min'])} · median {_f(summary['kappa_median'])} · max {_f(summary['kappa_max'])}")
    return [head, f"{indent}lowest pairs (those sharing {MIN_OVERLAP}+ items first):", *(f"{indent}  {line}" for line in pairs)]


def _judge_lines(judge_vs: dict[str, dict[str, Any]], indent: str) -> list[str]:
    if len(judge_vs) <= JUDGE_LISTED:
        return [f"{indent}judge vs {name}: kappa {_k(e)}" for name, e in judge_vs.items()]
    defined = sorted(((e["kappa"], -e["n"], name) for name, e in judge_vs.items() if e["kappa"] is not None))
    kappas = [k for k, _, _ in defined]
    head = f"{indent}judge vs {len(judge_vs):,} annotators: {len(kappas):,} with a kappa"
    if not kappas:
        return [head]
    head += f": min {_f(kappas[0])} · median {_f(statistics.median(kappas))} · max {_f(kappas[-1])}"
    lowest = [f"{indent}  judge vs {name}: kappa {_k(judge_vs[name])}" for _, _, name in defined[:LOWEST_SHOWN]]
    return [head, f"{indent}lowest:", *lowest]


def section_lines(section: dict[str, Any], indent: str = "  ") -> list[str]:
    """One kind of item (verdicts, or one criterion's cells) as text lines."""
    lines = _pair_lines(section, indent)
    if section["alpha"] is not None:
        lines.append(f"{indent}Krippendorff's alpha (nominal): {_k(section['alpha'])}")
    lines.extend(_judge_lines(section["judge_vs"], indent))
    lines.append(f"{indent}judge vs consensus: kappa {_k(section['judge_vs_consensus'])}")
    lines.append(indent + _verdict(section))
    return lines


def _given(labels: dict[str, str]) -> str:
    """Who labelled what: each name, or counts of each value when many labelled."""
    if len(labels) <= LABELS_SHOWN:
        return " · ".join(f"{name} {value}" for name, value in labels.items())
    counts = Counter(labels.values()).most_common()
    return " · ".join(f"{count} {value}" for value, count in counts)


def queue_lines(queue: list[dict[str, Any]]) -> list[str]:
    """The adjudication queue: ``s3 verdict: alice pass · bob fail → adjudicated pass``."""
    lines = []
    for item in queue[:QUEUE_SHOWN]:
        what = "verdict" if item["criterion"] is None else item["criterion"]
        settled = f" → adjudicated {item['adjudicated']}" if item["adjudicated"] else " (not adjudicated)"
        lines.append(f"  {item['id']} {what}: {_given(item['labels'])}{settled}")
    if len(queue) > QUEUE_SHOWN:
        lines.append(f"  … {len(queue) - QUEUE_SHOWN} more (--format json lists all)")
    return lines


def render_humans(console: Any, humans: dict[str, Any]) -> None:
    """Print the ``humans`` section onto a rich console (nothing with fewer than two annotators)."""
    if len(humans["annotators"]) < 2:
        return
    adjudicated = f"; {humans['adjudicated']} samples adjudicated" if humans["adjudicated"] else ""
    console.print()
    console.print(
        terminal_safe(f"humans: {annotators_text(humans['annotators'])}{adjudicated}"), style="bold", markup=False
    )
    lines = ["verdicts:", *section_lines(humans)]
    if humans.get("score_alpha"):
        lines.append(f"  scores: Krippendorff's alpha (interval): {_k(humans['score_alpha'])}")
    for criterion, section in humans["per_criterion"].items():
        lines.extend([f"{criterion}:", *section_lines(section)])
    queue = humans["disagreements"]
    if queue:
        lines.append(f"{adjudication_words(queue)}; label them as annotator 'adjudicated' to settle them:")
        lines.extend(queue_lines(queue))
    for line in lines:
        console.print(terminal_safe(line), markup=False)
    console.print(terminal_safe(humans["ci_method"]), style="dim", markup=False)


def humans_html(humans: Any, esc: Any) -> list[str]:
    """The report page's section on agreement among annotators (nothing with fewer than two)."""
    if not humans or len(humans["annotators"]) < 2:
        return []
    out = ['<section id="humans"><h2>Agreement among annotators</h2>',
           f"<p>Annotators: {esc(annotators_text(humans['annotators']))}; judge-vs-human figures above use their "
           "consensus (majority; a tie is no consensus; an adjudicated label wins).</p>"]
    for title, section in [("Sample verdicts", humans), *humans["per_criterion"].items()]:
        out.append(f"<h3>{esc(title)}</h3><ul>")
        out.extend(f"<li>{esc(line.strip())}</li>" for line in section_lines(section))
        out.append("</ul>")
    queue = humans["disagreements"]
    if queue:
        out.append(f"<h3>To adjudicate ({open_count(queue)})</h3><p>{esc(adjudication_words(queue))}.</p><ul>")
        out.extend(f"<li>{esc(line.strip())}</li>" for line in queue_lines(queue))
        out.append("</ul>")
    out.append(f'<p class="note">{esc(humans["ci_method"])}</p>')
    return [*out, "</section>"]
