"""Several annotators in the studio: who labels, agreement among people, and adjudication.

The label keys write the current annotator's labels (``--annotator``, else
``RUBRIC_STUDIO_ANNOTATOR``, else the OS user), named in the Agreement tab's title. The
Agreement panel's humans row shows how far the annotators agree with each other and whether
the judge is within that (:mod:`rubric_studio.core.human_agreement`). The palette's
*Adjudicate disagreements* switches the label keys to the ``adjudicated`` annotator (whose label
wins for consensus) and back; *Next disagreement between annotators* walks the samples where
people disagree (the adjudication queue); ``D`` in Results shows only them. ``M`` (*Human column:
my labels / consensus*) shows the current annotator's own labels in Results' human column instead
of the consensus, to label without being swayed and to see what one has labelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import SystemCommand

from rubric_studio.core.human_agreement import (
    annotators_text,
    human_agreement,
    human_disagreements,
    open_count,
)
from rubric_studio.core.labels import ADJUDICATED, UNNAMED, annotator_names
from rubric_studio.core.safe_text import terminal_safe

#: Pairs of annotators the humans row lists one by one; beyond, their spread and the lowest.
PAIRS_INLINE = 6
LOWEST_INLINE = 3

if TYPE_CHECKING:
    from rubric_studio.tui.host import StudioHost


def agreement_title(session: Any) -> str:
    """The Agreement tab's title: ``Agreement · alice`` (who the label keys label as) when the
    annotator was named or the labels already hold several people's; plain ``Agreement`` for one
    person labelling as themselves."""
    who = session.label_writer.annotator
    several = len(annotator_names(session.by_annotator)) > 1
    return f"Agreement · {who}" if who and (session.annotator_chosen or several) else "Agreement"


def humans_of(session: Any) -> dict[str, Any] | None:
    """The ``humans`` figures of the session's graded results (None before a grade)."""
    if session.report is None or session.rubric is None:
        return None
    return human_agreement(
        session.by_annotator, session.report.samples, [c.key for c in session.rubric.criteria]
    )


def humans_later(session: Any) -> Callable[[], dict[str, Any]] | None:
    """:func:`humans_of` as work for a thread: the labels and results are copied now (the studio
    goes on changing them), the arithmetic runs when called. None before a grade."""
    if session.report is None or session.rubric is None:
        return None
    labels = {sample_id: dict(by_name) for sample_id, by_name in session.by_annotator.items()}
    samples = list(session.report.samples)
    criteria = [c.key for c in session.rubric.criteria]
    return lambda: human_agreement(labels, samples, criteria)


def _kappa(entry: dict[str, Any] | None) -> str:
    value = None if entry is None else entry.get("kappa", entry.get("value"))
    return "–" if value is None else f"{value:.2f}"


def _with_ci(entry: dict[str, Any]) -> str:
    """``0.57 [0.21, 0.93]`` (a kappa or alpha with its interval), ``–`` when undefined."""
    ci = entry.get("ci")
    return _kappa(entry) + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "") + (f" n={entry['n']}" if "n" in entry else "")


def _pairs_text(humans: dict[str, Any]) -> str:
    """Each pair's kappa with its interval; beyond :data:`PAIRS_INLINE` pairs, how many there are,
    their kappas' spread and the lowest."""
    pairs, summary = humans["pairs"], humans.get("pairs_summary")
    if not pairs:
        return "no two annotators labelled the same sample"
    shown = [f"{p['a']}–{p['b']} κ {_with_ci(p)}" for p in pairs]
    if len(pairs) <= PAIRS_INLINE and (summary is None or summary["listed"] == "all"):
        return " · ".join(shown)
    count = summary["pairs"] if summary else len(pairs)
    lowest = pairs if summary and summary["listed"] == "lowest" else sorted(
        pairs, key=lambda p: (p["kappa"] is None, p["kappa"] if p["kappa"] is not None else 0.0))
    spread = (f"κ min {_kappa({'kappa': summary['kappa_min']})} · median {_kappa({'kappa': summary['kappa_median']})}"
              f" · max {_kappa({'kappa': summary['kappa_max']})}" if summary else "")
    lows = " · ".join(f"{p['a']}–{p['b']} κ {_with_ci(p)}" for p in lowest[:LOWEST_INLINE])
    return f"{count:,} pairs: {spread}; lowest {lows}"


def humans_row(humans: dict[str, Any] | None) -> Text:
    """The annotators, each pair's kappa with its interval (or their spread and the lowest, when
    many), alpha, the judge against the consensus, the within-humans verdict and what is left to
    adjudicate."""
    if humans is None:
        return Text("humans: agreement among the annotators is being computed …", style="dim")
    if len(humans["annotators"]) < 2:
        who = ", ".join(humans["annotators"]) if humans["annotators"] else "none yet"
        return Text(
            f"humans: one annotator ({terminal_safe(who)}); a second one's labels show their agreement",
            style="dim",
        )
    text = Text("humans ", style="bold")
    text.append(terminal_safe(annotators_text(humans["annotators"])) + ": ")
    text.append(terminal_safe(_pairs_text(humans)))
    if humans["alpha"] is not None:
        text.append(f" · alpha {_with_ci(humans['alpha'])}")
    text.append(f" · judge vs consensus {_kappa(humans['judge_vs_consensus'])}")
    verdict = humans["judge_within_humans"]
    words = {
        True: ("judge within humans", "green"),
        False: ("judge NOT within humans", "red"),
        None: ("not enough overlap", "yellow"),
    }[verdict]
    text.append(" · ")
    text.append(words[0], style=words[1])
    queue = humans["disagreements"]
    if queue:
        open_ = open_count(queue)
        text.append(f" · {open_} to adjudicate", style="magenta" if open_ else "dim")
    return text


def toggle_own_labels(app: StudioHost) -> None:
    """``M``: the human column (its ≠ marks and the label filters) shows the current annotator's own
    labels, or the consensus of everyone's again."""
    from rubric_studio.tui.results import ResultsMatrix

    session = app.session
    model = session.model
    model.set_own_labels(session.own_labels())
    model.show_own_labels(not model.show_own)
    app.query_one(ResultsMatrix).reset()
    who = session.label_writer.annotator or UNNAMED
    app.notify(
        terminal_safe(f"Human column: {who}'s own labels ({len(model.own_labels)})." if model.show_own else
                      "Human column: the consensus of every annotator's labels."),
        title="Labels", timeout=4, markup=False,
    )


def toggle_adjudication(app: StudioHost) -> None:
    """Switch the label keys between the annotator the studio started with and ``adjudicated``."""
    writer = app.session.label_writer
    started = getattr(app, "_annotator_before_adjudication", None)
    if writer.annotator == ADJUDICATED and started is not None:
        writer.annotator = started
        app.notify(f"Labelling as {started} again.", title="Labels", timeout=4)
    else:
        app._annotator_before_adjudication = writer.annotator  # type: ignore[attr-defined]
        writer.annotator = ADJUDICATED
        app.notify(
            "Labelling as adjudicated: your labels now settle the annotators' disagreements "
            "(run the command again to stop).",
            title="Adjudication",
            timeout=6,
        )
    app.session.model.set_own_labels(app.session.own_labels())  # "my labels" are the new annotator's
    if app.session.model.show_own:
        from rubric_studio.tui.results import ResultsMatrix

        app.query_one(ResultsMatrix).reset()
    app.query_one("#tabs").get_tab("agreement").label = agreement_title(app.session)  # type: ignore[attr-defined]


def next_human_disagreement(app: StudioHost) -> None:
    """Move the results cursor to the next sample where annotators disagree (after the selected one)."""
    session = app.session
    criteria = [c.key for c in session.rubric.criteria] if session.rubric else []
    queue = human_disagreements(session.by_annotator, criteria)
    if not queue:
        app.notify("No disagreements between annotators.", timeout=3)
        return
    current = app.selection[0]
    ids = [item["id"] for item in queue]
    after = ids.index(current) + 1 if current in ids else 0
    while after < len(ids) and ids[after] == current:
        after += 1
    item = queue[after % len(queue)]
    app.select_sample(item["id"], item["criterion"])
    given = " · ".join(f"{name} {value}" for name, value in item["labels"].items())
    app.notify(
        terminal_safe(f"{item['id']} {item['criterion'] or 'verdict'}: {given}"),
        title="Annotators disagree",
        timeout=5,
        markup=False,
    )


def commands(app: StudioHost) -> Iterable[SystemCommand]:
    """Palette entries for annotators."""
    yield SystemCommand(
        "Adjudicate disagreements",
        "Label as 'adjudicated' (settles the annotators' disagreements), or back to yourself",
        lambda: toggle_adjudication(app),
    )
    yield SystemCommand(
        "Human column: my labels / consensus",
        "Show your own labels in Results' human column (and its ≠ marks), or everyone's consensus (M)",
        lambda: toggle_own_labels(app),
    )
    yield SystemCommand(
        "Next disagreement between annotators",
        "Jump to the next sample where annotators labelled differently (the adjudication queue)",
        lambda: next_human_disagreement(app),
    )
