"""Several annotators in the studio: who labels, agreement among people, and adjudication.

The label keys write the current annotator's labels (``--annotator``, else
``RUBRIC_STUDIO_ANNOTATOR``, else the OS user), named in the Agreement tab's title. The
Agreement panel's humans row shows how far the annotators agree with each other and whether
the judge is within that (:mod:`rubric_studio.core.human_agreement`). The palette's
*Adjudicate disagreements* switches the label keys to the ``adjudicated`` annotator (whose label
wins for consensus) and back; *Next disagreement between annotators* walks the samples where
people disagree (the adjudication queue).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import SystemCommand

from rubric_studio.core.human_agreement import human_agreement, human_disagreements
from rubric_studio.core.labels import ADJUDICATED, annotator_names
from rubric_studio.core.safe_text import terminal_safe

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


def _kappa(entry: dict[str, Any] | None) -> str:
    value = None if entry is None else entry.get("kappa", entry.get("value"))
    return "–" if value is None else f"{value:.2f}"


def humans_row(humans: dict[str, Any] | None) -> Text:
    """One line: the annotators, their pairwise kappas (or alpha), the judge against the consensus
    and the within-humans verdict."""
    if not humans or len(humans["annotators"]) < 2:
        who = ", ".join(humans["annotators"]) if humans and humans["annotators"] else "none yet"
        return Text(
            f"humans: one annotator ({terminal_safe(who)}); a second one's labels show their agreement",
            style="dim",
        )
    text = Text("humans ", style="bold")
    text.append(terminal_safe(", ".join(humans["annotators"])) + ": ")
    pairs = humans["pairs"]
    kappas = [p["kappa"] for p in pairs if p["kappa"] is not None]
    text.append("kappa " + (f"{min(kappas):.2f}–{max(kappas):.2f}" if kappas else "–"))
    if humans["alpha"] is not None:
        text.append(f" · alpha {_kappa(humans['alpha'])}")
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
    open_ = sum(1 for item in queue if item["adjudicated"] is None)
    if queue:
        text.append(f" · {open_} of {len(queue)} to adjudicate", style="magenta" if open_ else "dim")
    return text


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
        "Next disagreement between annotators",
        "Jump to the next sample where annotators labelled differently (the adjudication queue)",
        lambda: next_human_disagreement(app),
    )
