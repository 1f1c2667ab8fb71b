"""One-line bars: the run header above the results and the status bar at the bottom.

Both are plain Statics the app feeds with data (attributes down); neither reads
app state itself. Both build ``rich.text.Text`` (never markup) and pass every name
from a file through :func:`~rubric_studio.core.safe_text.terminal_safe`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.widgets import Static

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.engine.usage import Usage
from rubric_studio.session.results_model import FILTERS, SORTS, Counts
from rubric_studio.session.versions import FlipTally

BAR_WIDTH = 6


def progress_bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    if total <= 0:
        return "━" * width
    filled = round(width * min(done, total) / total)
    return "━" * filled + "╌" * (width - filled)


def tokens_text(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.0f}k"
    if count >= 1000:
        return f"{count / 1000:.1f}k"
    return str(count)


@dataclass
class RunState:
    """What the run header shows."""

    rubric: str = ""
    counts: Counts | None = None
    running: bool = False
    done: int = 0
    total: int = 0
    in_flight: int = 0
    #: Flips of the results shown against the version they are compared with (the same tally the
    #: table marks and the new-version notification describes).
    flips: FlipTally = field(default_factory=FlipTally)
    has_baseline: bool = False
    compared_with: int | None = None  # the version the flips are counted against
    stale: bool = False
    filter_kind: str = "all"
    filter_label: str = ""  # the filter as the table names it ("unmet: tone")
    search: str = ""
    sort_by: str = "file"
    reverse: bool = False
    #: K of a consistency run whose results are shown (every judged cell judged K times).
    consistency: int | None = None
    #: The latest version diff ("v3 → v4: fixed 3 disagreements, broke 1 ..."), shown when it fits.
    version_line: str | None = None


def pass_rate_text(counts: Counts) -> Text:
    """``  pass 62% · corrected 55% [41%–68%] by 24 labels`` once some graded samples are labelled
    (``corrected: can't tell, 7 labels`` below what the labels can carry); empty without labels."""
    rates = counts.pass_rate.overall if counts.pass_rate is not None else None
    if rates is None or rates.raw is None or not rates.labelled.n:
        return Text()
    out = Text(f"  pass {rates.raw:.0%}", style="bold")
    corrected = rates.corrected()
    n = corrected.n_labelled
    if corrected.value is None or corrected.ci is None:
        out.append(f" · corrected: can't tell, {n} label{'s' if n != 1 else ''}", style="dim")
        return out
    low, high = corrected.ci
    out.append(f" · corrected {corrected.value:.0%} [{low:.0%}–{high:.0%}]", style="bold cyan")
    out.append(f" by {n} labels", style="dim")
    return out


class RunHeader(Static):
    """Rubric name, verdict counts, judge progress and the flips since the last version."""

    def show(self, state: RunState) -> None:
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append(terminal_safe(state.rubric or "rubric"), style="bold")
        if state.consistency:
            out.append("  ")
            out.append(f"×{state.consistency} consistency run", style="bold magenta")
        counts = state.counts
        if counts is not None:
            out.append("  ")
            out.append(f"✓{counts.passed}", style="green")
            out.append(" ")
            out.append(f"✗{counts.failed}", style="red")
            if counts.errors:
                out.append(f" ⚠{counts.errors}", style="yellow")
            if counts.unjudged:
                out.append(f" {counts.unjudged} unjudged", style="dim")
            if counts.labelled:
                out.append(f" ≠{counts.disagree}/{counts.labelled}", style="magenta" if counts.disagree else "dim")
            out.append_text(pass_rate_text(counts))
        if state.stale:
            out.append("  ■ stale", style="bold yellow")
        elif state.running and state.total:
            out.append(f"  ⟳ {state.done}/{state.total} ", style="cyan")
            out.append(progress_bar(state.done, state.total), style="cyan")
        elif state.running:
            out.append("  ⟳ grading…", style="cyan")
        if state.has_baseline:
            flips = state.flips
            out.append("  ")
            out.append(flips.describe(), style=("bold red" if flips.to_fail or flips.cells_down else "bold green")
                       if flips.any else "dim")
            out.append(f" since v{state.compared_with}" if state.compared_with else " since the last version",
                       style="dim")
        view = []
        if state.filter_kind != "all":
            view.append(f"filter: {terminal_safe(state.filter_label or FILTERS[state.filter_kind])}")
        if state.search.strip():
            view.append(f"search: {terminal_safe(state.search.strip())}")
        if state.sort_by != "file" or state.reverse:
            view.append(f"sort: {SORTS[state.sort_by]}{' ↓' if state.reverse else ''}")
        if view:
            out.append("  " + " · ".join(view), style="italic")
        if state.version_line:
            width = self.content_region.width or self.size.width
            line = terminal_safe(state.version_line)
            if out.cell_len + 2 + len(line) <= width:
                out.append("  ")
                out.append(line, style="dim")
        self.update(out)


@dataclass
class StatusState:
    judge: str = "none"  # the judge the rubric (or --judge) names, "(not set up)" when it could not be
    judge_ready: bool = False  # a judge answers: False while resolving it, and without one
    in_flight: int = 0  # judge requests not answered yet (sent or waiting for a slot)
    concurrency: int | None = None  # calls allowed in flight now (it adapts to the server)
    #: "now/asked" (e.g. "2/6"): shown while calls are in flight or the server made it drop.
    concurrency_text: str | None = None
    run_calls: int = 0  # requests answered so far in the current run (not in ``usage`` yet)
    usage: Usage | None = None
    dirty: bool = False
    file: str = ""
    #: The rubric card's state (``fresh`` | ``stale`` | ``unreadable``; ``none``: not shown) and its text.
    card_state: str = "none"
    card: str = ""


#: The status bar's items, most important first. Where the line does not fit the terminal, a judge
#: panel is told shorter first (its name, then its members: :func:`member_usage_text`), then whole
#: items are left out from the end of this list: an item is never cut.
STATUS_PRIORITY = ("judge", "unsaved", "in flight", "concurrency", "cost", "card", "calls", "tokens",
                   "cache hits", "panel")
#: The forms a judge panel goes through before any item is left out: (the judge's name, the members).
_PANEL_FORMS = (("full", "full"), ("short", "full"), ("short", "calls"), ("short", "count"))


class StatusBar(Static):
    """Judge model, calls in flight, cache hits, tokens and cost of the session, fitted to the
    bar's width again whenever the state or the width changes."""

    state: StatusState | None = None

    def show(self, state: StatusState) -> None:
        self.state = state
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        if self.state is not None:
            self.update(status_text(self.state, self.content_region.width or self.size.width or None))


def status_text(state: StatusState, width: int | None = None) -> Text:
    """The status bar's line: judge, in flight, calls, cache hits, tokens (prompt-cached ones in
    brackets), cost, panel members, the rubric card's state (once there is a card), unsaved edits.

    Within ``width`` a judge panel's members are told in full (calls, cache hits, cost each), else
    by their calls alone, else by their count; then items are left out whole, in the reverse
    order of :data:`STATUS_PRIORITY` (the unsaved-edits mark and the judge go last)."""
    for judge, members in _PANEL_FORMS:
        items = status_items(state, judge=judge, members=members)
        line = _joined(items.values())
        if width is None or line.cell_len <= width:
            return line
    for name in reversed(STATUS_PRIORITY[1:]):
        items.pop(name, None)
        line = _joined(items.values())
        if line.cell_len <= width:
            break
    return line  # the judge alone, cut only when even it does not fit


def _joined(items) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    for item in items:
        out.append_text(item)
    return out


def status_items(state: StatusState, *, judge: str = "full", members: str = "full") -> dict[str, Text]:
    """The status bar's items in the order shown, each with the space before it, by their names in
    :data:`STATUS_PRIORITY` (only the items there is something to show for). ``judge``: ``full``
    or ``short`` (``panel of 3``, the members told after); ``members``: see :func:`member_usage_text`."""
    usage = state.usage or Usage()
    name = f"panel of {len(usage.members)}" if judge == "short" and usage.members else state.judge
    items: dict[str, Text] = {}
    items["judge"] = Text.assemble((" judge ", "dim"), (terminal_safe(name), "bold" if state.judge_ready else "bold yellow"))
    sent = min(state.in_flight, state.concurrency) if state.concurrency else state.in_flight
    items["in flight"] = Text(f"  {sent} in flight", style="cyan" if sent else "dim")
    if state.in_flight > sent:
        items["in flight"].append(f" +{state.in_flight - sent} queued", style="dim")
    if state.concurrency_text and (state.in_flight or _lowered(state.concurrency_text)):
        lowered = _lowered(state.concurrency_text)
        items["concurrency"] = Text(f"  concurrency {state.concurrency_text}", style="yellow" if lowered else "dim")
    items["calls"] = Text(f"  {usage.judge_calls + state.run_calls} calls", style="dim")
    items["cache hits"] = Text(f"  {usage.cache_hits} cache hits", style="dim")
    items["tokens"] = Text(f"  {tokens_text(usage.input_tokens + usage.output_tokens)} tokens", style="dim")
    if usage.cached_input_tokens:
        items["tokens"].append(f" ({tokens_text(usage.cached_input_tokens)} cached)", style="dim")
    items["cost"] = Text(f"  {usage.cost_text()}", style="dim")
    if usage.members:
        items["panel"] = Text("  │ " + member_usage_text(usage, members), style="dim")
    if state.card and state.card_state != "none":
        items["card"] = Text.assemble(("  │ ", "dim"), (terminal_safe(state.card),
                                                        "green" if state.card_state == "fresh" else "yellow"))
    if state.dirty:
        items["unsaved"] = Text.assemble(("  │ ", "dim"),
                                         (f"● {terminal_safe(state.file or 'rubric')} has unsaved edits", "yellow"))
    return items


def member_usage_text(usage: Usage, detail: str = "full") -> str:
    """A judge panel's calls, cache hits and cost per member (its model name), for the status bar:
    the totals alone hide which member costs what. ``detail``: ``full``, ``calls`` (each member's
    calls only) or ``count`` (how many members; the CLI summary and HTML report have the rest)."""
    if detail == "count":
        return f"{len(usage.members)} panel members"
    parts = []
    for label, member in usage.members.items():
        name = terminal_safe(label.split(":", 1)[-1])
        if detail == "calls":
            parts.append(f"{name} {member.judge_calls}")
        else:
            parts.append(f"{name} {member.judge_calls} calls {member.cache_hits} cached {member.cost_text()}")
    return " · ".join(parts) + (" calls" if detail == "calls" else "")


def _lowered(concurrency_text: str) -> bool:
    """The concurrency in use is below what was asked for ("2/6")."""
    now, _, asked = concurrency_text.partition("/")
    return now != asked
