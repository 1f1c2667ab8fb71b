"""The "Compare judges…" screen: which judge to grade with, measured on your labels.

The user lists judges as ``provider:model,provider:model`` (pre-filled with the studio's
judge). A worker grades the labelled samples with each in turn through
:func:`~rubric_studio.engine.judge_compare.grade_each` — with the studio's judge options and
trust, through the reply cache, so a judge already run costs nothing — and posts
:class:`JudgesScreen.Compared` (each judge's figures and the recommendation) or
:class:`JudgesScreen.CompareFailed`.

Per judge the table shows what ``calibrate --judges`` prints: kappa with its 95% CI, accuracy,
false-pass and false-fail rates, flip rate (with a session ``--repeat`` above 1), cost and wall
time per 100 samples, calls, cache hits and errored cells. Below it the recommended judge —
only one whose kappa CI lies above chance; the cheapest of those whose CIs overlap (they are
indistinguishable on these labels); never one with errored cells; none when no CI lies above
chance — and the sentence saying why, worded exactly as ``calibrate --judges`` words it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Static

from rubric_studio.core.problems import RubricError
from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.tui.editor import TextInput

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.judge_compare import JudgeFigures
    from rubric_studio.tui.host import StudioHost

#: Short headers so the table fits a 120-column terminal; the footnote under it spells them out.
COLUMNS = ("judge", "n", "κ", "95% CI", "acc", "f-pass", "f-fail", "flip", "$/100", "s/100", "calls", "hits", "err")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def figures_row(f: JudgeFigures, recommended: str | None) -> list[str]:
    """One table row, as ``calibrate --judges`` prints it (``★`` marks the recommended judge)."""
    a = f.agreement
    ci = f.kappa_ci
    return [
        terminal_safe(f.judge) + (" ★" if f.judge == recommended else ""), str(a.n),
        "–" if f.kappa is None else f"{f.kappa:.2f}", "–" if ci is None else f"{ci[0]:.2f}…{ci[1]:.2f}",
        _pct(a.accuracy), _pct(a.false_pass_rate), _pct(a.false_fail_rate), _pct(f.flip_rate),
        "unknown" if f.cost_per_100 is None else f"${f.cost_per_100:.4f}",
        "–" if f.latency_per_100_s is None else f"{f.latency_per_100_s:.1f}",
        str(f.judge_calls), str(f.cache_hits), str(f.errors),
    ]  # fmt: skip


class JudgesScreen(ModalScreen[None]):
    """Compare judges on the labelled samples (see the module docstring)."""

    BINDINGS = [Binding("escape", "close", "Close")]
    AUTO_FOCUS = "#judges-input"

    @dataclass
    class Compared(Message):
        """Every judge graded the labelled samples: their figures, the recommended judge and why."""

        figures: list[JudgeFigures]
        recommended: str | None
        why: str

    @dataclass
    class CompareFailed(Message):
        """The comparison could not run: why, in one line."""

        reason: str

    def __init__(self, rubric: Rubric, samples: Sequence[Any], labels: Mapping[str, Any], options: Mapping[str, Any],
                 current: str) -> None:
        from rubric_studio.engine.judge_compare import labelled

        super().__init__()
        self.rubric, self.options, self.current = rubric, dict(options), current
        self.samples, self.labels = labelled(samples, labels)
        self.figures: list[JudgeFigures] = []
        self.recommended: str | None = None
        self.why = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="judges-dialog", classes="calibration-dialog"):
            yield Static(Text("Compare judges", style="bold"), classes="calibration-title")
            yield Static(Text(f"Grades your {len(self.samples)} labelled samples with each judge (through the cache: "
                              "a judge already run costs nothing) and recommends only a judge whose kappa CI lies "
                              "above chance; judges whose CIs overlap are indistinguishable, and the cheapest of them "
                              "is the default.", style="dim"), id="judges-intro")
            with Horizontal(id="judges-row"):
                yield TextInput(self.current, placeholder="provider:model,provider:model", id="judges-input")
                yield Button("Compare", id="judges-run", variant="primary")
            yield Static("", id="judges-status")
            table: DataTable[str] = DataTable(id="judges-table", cursor_type="row", zebra_stripes=True)
            table.add_columns(*COLUMNS)
            yield table
            yield Static("", id="judges-recommendation")
            with Horizontal(classes="calibration-buttons"):
                yield Button("Close", id="judges-close")

    @on(Button.Pressed, "#judges-run")
    @on(Input.Submitted, "#judges-input")
    def start(self) -> None:
        """Check the list, then grade with each judge in a worker."""
        from rubric_studio.engine.judge_compare import parse_judges

        try:
            specs = parse_judges(self.query_one("#judges-input", Input).value)
        except ValueError as exc:
            self._status(str(exc).removeprefix("--judges: "))
            return
        self.query_one("#judges-run", Button).disabled = True
        self._status(f"Grading {len(self.samples)} labelled samples with {', '.join(specs)}, one judge after another…")
        self.run_compare(specs)

    @work(group="judges", exclusive=True, exit_on_error=False)
    async def run_compare(self, specs: list[str]) -> None:
        """Call the engine; post Compared or CompareFailed."""
        from rubric_studio.engine.judge_compare import figures, grade_each, recommend

        try:
            runs = await grade_each(self.rubric, self.samples, specs, self.options)
            compared = [figures(run, self.labels, self.rubric)[0] for run in runs]
            recommended, why = recommend(compared)
        except Exception as exc:  # a bug or an unusable configuration: a line on the screen, not a traceback
            self.post_message(self.CompareFailed(f"{type(exc).__name__}: {exc}"))
        else:
            self.post_message(self.Compared(compared, recommended, why))

    def on_judges_screen_compared(self, message: Compared) -> None:
        self.figures, self.recommended, self.why = message.figures, message.recommended, message.why
        self.query_one("#judges-run", Button).disabled = False
        table = self.query_one("#judges-table", DataTable)
        table.clear()
        for f in message.figures:
            table.add_row(*figures_row(f, message.recommended), key=f.judge)
        text = Text.assemble(("Recommended: ", "bold"), (terminal_safe(message.recommended or "none"),
                                                         "bold green" if message.recommended else "bold yellow"))
        text.append("\n" + terminal_safe(message.why))
        for f in message.figures:
            if f.note:
                text.append(f"\n⚠ {terminal_safe(f.judge)}: judge criteria not graded: {terminal_safe(f.note)}",
                            style="yellow")
        text.append("\n★ recommended · κ: Cohen's kappa with its 95% CI · acc: accuracy · f-pass / f-fail: false-pass / "
                    "false-fail rate · flip: flip rate (--repeat) · $/100: USD per 100 samples (cached replies priced "
                    "at their recorded tokens; unknown: no price in prices.yaml) · s/100: this run's wall time per 100 "
                    "samples (cache hits take none) · hits: cache hits · err: errored cells", style="dim")
        self.query_one("#judges-recommendation", Static).update(text)
        self._status(f"Compared {len(message.figures)} judges on {len(self.samples)} labelled samples.")

    def on_judges_screen_compare_failed(self, message: CompareFailed) -> None:
        self.query_one("#judges-run", Button).disabled = False
        self._status(f"Comparison failed: {message.reason}")

    @on(Button.Pressed, "#judges-close")
    def action_close(self) -> None:
        self.dismiss(None)

    def _status(self, text: str) -> None:
        self.query_one("#judges-status", Static).update(Text(terminal_safe(text, multiline=True)))


def current_judge(app: StudioHost, rubric: Rubric) -> str:
    """The studio's judge as ``provider:model`` (what the input starts with)."""
    config = getattr(app.session.grader, "config", None)
    if config is not None and getattr(app.session.grader, "judge", None) is not None:
        return f"{config.alias or config.provider}:{config.model}"
    return app.session.grader_options.get("judge") or (rubric.judge.model if rubric.judge and rubric.judge.model else "") or ""


def open_judges(app: StudioHost) -> None:
    """Open the screen, or say why not (no labelled samples, a rubric that does not load)."""
    from rubric_studio.tui.improve import document_rubric

    if isinstance(app.screen, JudgesScreen):
        return
    try:
        rubric = document_rubric(app)
    except RubricError as exc:
        app.notify(f"The rubric does not load: {exc.problems[0].message}. Fix it first.", title="Compare judges",
                   severity="warning")
        return
    if not any(label.verdict or label.criteria for sid, label in app.session.labels.items() if sid in app.session.samples_by_id):
        app.notify("No labelled samples: judges are compared on your labels. Label a few samples pass / fail (p / x) "
                   "first.", title="Compare judges", severity="warning", timeout=10)
        return
    options = {**app.session.grader_options, "env": os.environ if app.session.env is None else app.session.env}
    app.push_screen(JudgesScreen(rubric, app.session.samples, app.session.labels, options, current_judge(app, rubric)))


def commands(app: StudioHost) -> Iterable[SystemCommand]:
    yield SystemCommand("Compare judges…", "Grade your labelled samples with several judges; pick the cheapest that "
                        "agrees with you as well as the best", lambda: open_judges(app))
