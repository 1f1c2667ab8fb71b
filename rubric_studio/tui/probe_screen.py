"""The "Probe criterion for bias…" screen: does the judge's verdict on one criterion move when
something it should ignore changes?

A worker runs :func:`~rubric_studio.engine.probes._probes.run_probes` for the selected judge criterion —
every kind (verbosity, order, confidence, hedging, paraphrase, leniency), on the rubric as the editor
holds it, with the studio's judge options and trust, through the reply cache (a probe run again costs
nothing) — and posts :class:`ProbesDone` or :class:`ProbesFailed`. The screen shows the judge's own
noise first (a null perturbation: same meaning, other bytes), then one row per kind (cells
compared, flips, flip rate with its Wilson 95% interval, direction over its own base, and the kind's
decision against the noise: "beyond noise", "not beyond noise", "suggestive: probe more", or "can't
tell" with the shift that would go unseen — or why the kind was skipped), then the flipped samples (a
cell that flipped under every kind once, as *unstable*; a content-free answer judged met under
leniency); the highlighted one's perturbed text — the padded or rephrased output, the reworded
outcome, the other order, the content-free answer — is shown in full below, so the user reads
exactly what the judge saw. The flips are also handed to the window's inspector
(:class:`~rubric_studio.tui.results.ProbeFindings`): selecting a flipped cell in Results shows them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Static

from rubric_studio.core.problems import RubricError
from rubric_studio.core.safe_text import terminal_safe

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.probes import CriterionProbe, Flip, KindProbe, ProbeReport
    from rubric_studio.tui.host import StudioHost

COLUMNS = ("kind", "n", "flips", "rate", "95% CI", "direction", "against noise")
NOISE_ROW = "noise"
TITLE = "Probe criterion for bias"


class ProbesDone(Message):
    """Every kind was probed (or skipped, with its reason)."""

    def __init__(self, report: ProbeReport) -> None:
        super().__init__()
        self.report = report


class ProbesFailed(Message):
    """The probes could not run: why, in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


def _row(name: str, entry: CriterionProbe, against: str) -> list[str]:
    ci = entry.ci
    direction = f"{entry.unmet_to_met} of {entry.n} met" if entry.content_free and entry.n else entry.direction
    return [
        name, str(entry.n), str(entry.flips), "–" if entry.rate is None else f"{entry.rate:.0%}",
        "–" if ci is None else f"{ci[0]:.0%}…{ci[1]:.0%}",
        direction + (f" · {entry.errors} errored" if entry.errors else ""), against,
    ]  # fmt: skip


def kind_row(probe: KindProbe, criterion_id: str) -> list[str]:
    """One row of the kinds table: the figures of ``criterion_id`` under ``probe``'s perturbation
    and the kind's decision against the noise (on this screen the kind probes this criterion only,
    so its pooled decision is this criterion's)."""
    if probe.skipped:
        return [probe.kind, "–", "–", "–", "–", "skipped", probe.skipped]
    entry = probe.criteria[criterion_id]
    verdict = probe.decision.reads(compact=True) if probe.decision is not None else ""
    return _row(probe.kind, entry, verdict or "–")


def noise_row(entry: CriterionProbe) -> list[str]:
    """The first row: the null perturbation's figures, the judge's own noise."""
    return _row(NOISE_ROW, entry, "the judge's own noise")


def summary(report: ProbeReport, criterion_id: str) -> str:
    """The findings (kinds beyond the judge's noise), the kinds that can't tell, and those that are
    not beyond the noise, in words; a judge that gave one verdict to every cell is named."""
    noise = report.noise.get(criterion_id)
    if noise is None or noise.rate is None:
        return "No noise measured: no kind can be told apart from it."
    decided = {kind: probe.beyond_noise for kind, probe in report.kinds.items()
               if probe.decision is not None and criterion_id in probe.criteria}  # fmt: skip
    found = [kind for kind, verdict in decided.items() if verdict is True]
    unsure = [kind for kind, verdict in decided.items() if verdict is None]
    others = [kind for kind, verdict in decided.items() if verdict is False]
    rate = f"(noise {noise.rate:.0%})"
    lines = []
    if found:
        lines.append(f"Finding: {', '.join(found)} {'moves' if len(found) == 1 else 'move'} verdicts beyond this "
                     f"judge's noise {rate}.")  # fmt: skip
    if report.constant:
        lines.append(report.constant[0].upper() + report.constant[1:] + ".")
    elif unsure:
        lines.append(f"Can't tell: {', '.join(unsure)} (see the rows: too few cells or a shift that needs more "
                     "samples) — not the same as no bias.")  # fmt: skip
    if others:
        lead = "No finding: " if not found and not unsure and not report.constant else ""
        lines.append(f"{lead}{', '.join(others)}: not beyond this judge's own noise {rate}.")
    return " ".join(lines)


class ProbeScreen(ModalScreen[None]):
    """Bias probes of one judge criterion (see the module docstring)."""

    BINDINGS = [Binding("escape", "close", "Close")]
    AUTO_FOCUS = "#probe-flips"

    def __init__(self, rubric: Rubric, criterion_id: str, samples: Sequence[Any], labels: Mapping[str, Any],
                 options: Mapping[str, Any], note: str = "", seed: int = 0) -> None:  # fmt: skip
        super().__init__()
        self.rubric, self.criterion_id, self.samples = rubric, criterion_id, list(samples)
        self.labels, self.options, self.note, self.seed = dict(labels), dict(options), note, seed
        self.report: ProbeReport | None = None
        self.flips: dict[str, Flip] = {}
        self._unstable: dict[str, list[str]] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="probe-dialog", classes="calibration-dialog"):
            yield Static(
                Text.assemble((f"{TITLE}: ", "bold"), (terminal_safe(self.criterion_id), "bold")),
                id="probe-title",
            )
            yield Static(
                Text(
                    (self.note + " " if self.note else "") + "Judges the samples again with padding, "
                    "confident or hedging phrasing added, the outcome reworded, the criteria in another "
                    "order and content-free answers, and counts the verdicts that move — against the "
                    "judge's own noise (the same text with a blank line added): only a kind beyond that "
                    "noise is a finding; too few cells read \"can't tell\", with the shift that would go "
                    "unseen. Through the cache: a probe run again costs nothing.",
                    style="dim",
                ),
                id="probe-intro",
            )
            yield Static("", id="probe-status")
            kinds: DataTable[str] = DataTable(id="probe-kinds", cursor_type="row", zebra_stripes=True)
            kinds.add_columns(*COLUMNS)
            yield kinds
            flips: DataTable[str] = DataTable(id="probe-flips", cursor_type="row", zebra_stripes=True)
            flips.add_columns("kind", "sample", "verdict")
            yield flips
            with VerticalScroll(id="probe-text-scroll"):
                yield Static("", id="probe-text")
            with Horizontal(classes="calibration-buttons"):
                yield Button("Close", id="probe-close")

    def on_mount(self) -> None:
        which = (
            "labelled samples" if any(x.verdict or x.criteria for x in self.labels.values()) else "samples"
        )
        self._status(f"Probing {self.criterion_id} on the {which} ({len(self.samples)} loaded)…")
        self.run_probes()

    @work(group="probes", exclusive=True, exit_on_error=False)
    async def run_probes(self) -> None:
        """Call the engine; post ProbesDone or ProbesFailed."""
        from rubric_studio.engine.probes import KINDS, run_probes

        try:
            report = await run_probes(self.rubric, self.samples, KINDS, self.options, labels=self.labels,
                                      seed=self.seed, criterion=self.criterion_id)  # fmt: skip
        except Exception as exc:  # a bug or an unusable configuration: a line on the screen, not a traceback
            self.post_message(ProbesFailed(f"{type(exc).__name__}: {exc}"))
        else:
            self.post_message(ProbesDone(report))

    def on_probes_done(self, message: ProbesDone) -> None:
        self.report = report = message.report
        if report.note and not report.judge:
            self._status(f"Not probed: {report.note}")
            return
        kinds = self.query_one("#probe-kinds", DataTable)
        kinds.clear()
        noise = report.noise.get(self.criterion_id)
        if noise is not None:
            kinds.add_row(*(terminal_safe(cell) for cell in noise_row(noise)), key=NOISE_ROW)
        for probe in report.kinds.values():
            kinds.add_row(
                *(terminal_safe(cell) for cell in kind_row(probe, self.criterion_id)), key=probe.kind
            )
        self._list_flips(report)
        self._remember(report)
        which = "labelled samples" if report.source == "labelled" else "samples (none is labelled)"
        errors = f"; {report.errors} cells errored (left out)" if report.errors else ""
        self._status(
            f"Probed {self.criterion_id} on {report.samples} {which}. {summary(report, self.criterion_id)} "
            f"{len(self.flips)} flipped cells; "
            f"{report.usage.judge_calls} judge calls, {report.usage.cache_hits} cache hits{errors}."
            + (" Select a flipped cell in Results to see it in the inspector." if self.flips else "")
        )
        if self.flips:
            self._show(next(iter(self.flips)))
        else:
            self.query_one("#probe-text", Static).update(Text("No verdict flipped.", style="dim"))

    def _list_flips(self, report: ProbeReport) -> None:
        """The flipped cells, one row each; a cell that flipped under every kind once, as unstable."""
        flips = self.query_one("#probe-flips", DataTable)
        flips.clear()
        self.flips = {}
        unstable = {sid: kinds for sid, cid, kinds in report.unstable() if cid == self.criterion_id}
        for probe in report.kinds.values():
            entry = probe.criteria.get(self.criterion_id)
            for flip in entry.flipped if entry is not None else []:
                kind = "unstable" if flip.sample_id in unstable else probe.kind
                key = f"{kind}\x1f{flip.sample_id}"
                if key in self.flips:
                    continue
                self.flips[key] = flip
                flips.add_row(kind, terminal_safe(flip.sample_id), f"{flip.before} → {flip.after}", key=key)
        self._unstable = unstable

    def _remember(self, report: ProbeReport) -> None:
        """Hand the flips to the window's inspector: a flipped cell selected in Results shows them."""
        findings = getattr(self.app, "probe_findings", None)
        if findings is None:
            return
        findings.take(self.criterion_id, report, {sample.id: sample for sample in self.samples})
        refresh = getattr(self.app, "refresh_inspector", None)
        if refresh is not None:
            refresh()

    def on_probes_failed(self, message: ProbesFailed) -> None:
        self._status(f"Probing failed: {message.reason}")

    @on(DataTable.RowHighlighted, "#probe-flips")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._show(str(event.row_key.value))

    def _show(self, key: str) -> None:
        """The perturbed text the judge saw for one flipped cell."""
        flip = self.flips.get(key)
        if flip is None:
            return
        kind = key.split("\x1f", 1)[0]
        if kind == "unstable":
            kinds = ", ".join(self._unstable.get(flip.sample_id, []))
            self.query_one("#probe-text", Static).update(Text(terminal_safe(
                f"{flip.sample_id} flipped under every kind probed ({kinds}): the judge is unsure of this "
                "cell. Listed once, not as a finding of any kind."), style="yellow"))  # fmt: skip
            return
        what = {"paraphrase": "the reworded outcome", "order": "the order the criteria were judged in",
                "leniency": "the content-free answer, judged met"}.get(kind, "the perturbed output")  # fmt: skip
        text = Text.assemble(
            (f"{kind} · {terminal_safe(flip.sample_id)} · {flip.before} → {flip.after} — {what}:\n", "bold")
        )
        if kind == "leniency" and not flip.text:
            text.append("(an empty answer)", style="dim")
        else:
            text.append(terminal_safe(flip.text, multiline=True))
        self.query_one("#probe-text", Static).update(text)

    @on(Button.Pressed, "#probe-close")
    def action_close(self) -> None:
        self.dismiss(None)

    def _status(self, text: str) -> None:
        self.query_one("#probe-status", Static).update(Text(terminal_safe(text, multiline=True)))


def open_probes(app: StudioHost) -> None:
    """Open the screen for the selected judge criterion (else the first), or say why not."""
    from rubric_studio.engine.probes import probed_criteria
    from rubric_studio.tui.improve import document_rubric, selected_criterion

    if isinstance(app.screen, ProbeScreen):
        return
    try:
        rubric = document_rubric(app)
        judged = probed_criteria(rubric)
    except RubricError as exc:
        app.notify(
            f"The rubric does not load: {exc.problems[0].message}. Fix it first.",
            title=TITLE,
            severity="warning",
        )
        return
    except ValueError as exc:
        app.notify(f"Nothing to probe: {exc}.", title=TITLE, severity="warning")
        return
    grader = app.session.grader
    if grader is None or grader.judge is None:
        reason = "the judge is still loading" if grader is None else grader.no_judge_reason
        app.notify(f"Probes need a judge: {reason}.", title=TITLE, severity="warning", timeout=10)
        return
    chosen, note = selected_criterion(app), ""
    if chosen not in judged:
        note = f"{chosen} is not a judge criterion; probing {judged[0]}." if chosen else ""
        chosen = judged[0]
    options = {
        **app.session.grader_options,
        "env": os.environ if app.session.env is None else app.session.env,
    }
    app.push_screen(ProbeScreen(rubric, chosen, app.session.samples, app.session.labels, options, note))


def commands(app: StudioHost) -> Iterable[SystemCommand]:
    yield SystemCommand(
        "Probe criterion for bias…",
        "Judge perturbed samples (padding, confident or hedging tone, "
        "reworded outcome, criteria order, content-free answers) and see how often the verdict moves",
        lambda: open_probes(app),
    )
