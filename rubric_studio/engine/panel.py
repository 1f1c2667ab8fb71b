"""A grader for a judge panel: one :class:`~rubric_studio.engine.grader.Grader` per member, run
concurrently, their cells pooled (:mod:`rubric_studio.core.panel`).

Each member is a whole grader with its own judge, memo, concurrency limit and cache keys (the
keys include the judge's identity), so adding a member sends only that member's requests and
dropping one sends none. Members run at the same time, each at its own concurrency: a panel
takes about as long as its slowest member, not the sum. Code checks run in the first member
only; the others see the same check cells without running anyone's code again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from rubric_studio.core.panel import even_majority_warning, panel_label, pool_cell
from rubric_studio.core.results import CriterionResult, SampleResult, Status
from rubric_studio.core.rubric import DEFAULT_TIE_RULE, PanelAggregate, Rubric, TieRule
from rubric_studio.core.samples import Sample
from rubric_studio.core.scoring import score_sample
from rubric_studio.engine.events import Event, Progress, RunFinished, RunStarted, SamplesUpdated
from rubric_studio.engine.grader import EventSink, Grader
from rubric_studio.engine.report import Report
from rubric_studio.engine.usage import Usage


class PanelGrader:
    """Grades with every member and pools; the parts of :class:`Grader` the studio and CLI use."""

    def __init__(self, members: Sequence[tuple[str, Grader]], rules: PanelAggregate | None = None,
                 ties: TieRule = DEFAULT_TIE_RULE):
        self.members = list(members)
        self.labels = [label for label, _ in self.members]
        self.label = panel_label(self.labels)
        self.rules = rules
        self.ties = ties  # how a checklist tie counts (judge.ties)
        first = self.members[0][1]
        self.judge, self.config, self.cache = first.judge, first.config, first.cache
        self.no_judge_reason = first.no_judge_reason
        self.warnings: list[str] = []
        self._warned = 0
        self.session_usage = Usage()
        self.last_stopped: str | None = None

    # -- what a Grader offers ---------------------------------------------------
    @property
    def allow_code(self) -> bool:
        return self.members[0][1].allow_code

    @property
    def repeat(self) -> int:
        return self.members[0][1].repeat

    @repeat.setter
    def repeat(self, value: int) -> None:
        for _, grader in self.members:
            grader.repeat = max(1, value)

    @property
    def deadline(self) -> float | None:
        return self.members[0][1].deadline

    @property
    def dispatch(self) -> Any:
        return self.members[0][1].dispatch

    @property
    def in_flight(self) -> int:
        return sum(grader.in_flight for _, grader in self.members)

    @property
    def concurrency_text(self) -> str | None:
        """Each limit in use (members on one server share one, said once): ``2/6 1/12``."""
        shown = {id(grader.dispatch.concurrency): grader.concurrency_text for _, grader in self.members}
        return " ".join(t for t in shown.values() if t) or None

    def trust(self, allow: bool = True) -> None:
        self.members[0][1].trust(allow)

    def forget_errors(self) -> int:
        return sum(grader.forget_errors() for _, grader in self.members)

    def one_invocation(self) -> None:
        for _, grader in self.members:
            grader.one_invocation()

    def take_warnings(self) -> list[str]:
        for label, grader in self.members:
            self.warnings.extend(f"{label}: {w}" for w in grader.take_warnings())
        fresh = self.warnings[self._warned :]
        self._warned = len(self.warnings)
        return fresh

    def request_keys(self, rubric: Rubric, samples: Sequence[Sample]) -> list[str]:
        return [key for _, grader in self.members for key in grader.request_keys(rubric, samples)]

    def uncached(self, rubric: Rubric, samples: Sequence[Sample]) -> dict[str, Any]:
        return {k: v for _, grader in self.members for k, v in grader.uncached(rubric, samples).items()}

    def snapshot(self, rubric: Rubric, samples: Sequence[Sample]) -> Any:
        return self.members[0][1].snapshot(rubric, samples)

    def hand_over(self, successor: Any) -> None:
        """Each member gives its memo and calls in flight to the successor's member of the same
        judge (a member dropped from the panel keeps its calls; closing it cancels them)."""
        theirs = dict(successor.members) if isinstance(successor, PanelGrader) else {}
        if not theirs and getattr(successor, "config", None) is not None:
            theirs = {member_label(successor.config): successor}
        for label, grader in self.members:
            if label in theirs:
                grader.hand_over(theirs[label])

    async def aclose(self) -> None:
        await asyncio.gather(*(grader.aclose() for _, grader in self.members))

    # -- a run ---------------------------------------------------------------------
    async def run(
        self, rubric: Rubric, samples: Sequence[Sample], on_event: EventSink | None = None
    ) -> Report:
        """Every member grades ``samples`` at once; the panel's cells are pooled as members answer."""
        started = time.perf_counter()
        samples = list(samples)
        merge = _EventMerge(self, rubric, samples, on_event or (lambda event: None))
        reports = await asyncio.gather(
            *(
                grader.run(rubric, samples, merge.sink(index))
                for index, (_, grader) in enumerate(self.members)
            )
        )
        usage = _members_usage(rubric, self.labels, reports)
        usage.wall_seconds = time.perf_counter() - started
        self.session_usage.merge(usage)
        self.last_stopped = _panel_stopped(self.labels, reports)
        results = [self.pool(rubric, [r.samples[i] for r in reports]) for i in range(len(samples))]
        report = Report(
            rubric_name=rubric.name,
            rubric_path=rubric.path,
            rubric_hash=rubric.content_hash(),
            judge={
                "provider": "panel",
                "model": self.label,
                "members": [
                    dict(r.judge or {}, judge=label) for label, r in zip(self.labels, reports, strict=True)
                ],
            },
            samples=results,
            usage=usage,
            judge_note=reports[0].judge_note,
            judge_stopped=self.last_stopped,
            repeat=self.repeat,
        )
        merge.emit(RunFinished(report))
        return report

    def pool(self, rubric: Rubric, member_results: Sequence[SampleResult]) -> SampleResult:
        """One sample's result from each member's: check cells from the first, judge cells pooled."""
        first = member_results[0]
        cells: dict[str, CriterionResult] = {c.id: c for c in first.criteria}
        for criterion in rubric.judge_criteria:
            votes = []
            for label, result in zip(self.labels, member_results, strict=True):
                cell = result.cell(criterion.key)
                if cell is not None:
                    votes.append((label, cell))
            if votes:
                cells[criterion.key] = _with_errored(pool_cell(criterion, votes, self.rules, self.ties), votes)
        return SampleResult.from_outcome(first.id, score_sample(rubric, cells))


def _with_errored(cell: CriterionResult, votes: list[tuple[str, CriterionResult]]) -> CriterionResult:
    """``cell`` with ``panel.errored``: the members that errored on it, left out of the pool (beside
    ``panel.errors``, how many), once every member has answered."""
    if cell.panel is not None and "errors" in cell.panel:
        cell.panel["errored"] = [label for label, vote in votes if vote.status is Status.ERROR]
    return cell


def _members_usage(rubric: Rubric, labels: list[str], reports: Sequence[Report]) -> Usage:
    """The panel's usage: the members' totals, and each member's own (its cells judged and errored,
    and why its judging stopped, when it did)."""
    usage = Usage()
    for label, report in zip(labels, reports, strict=True):
        member = Usage()
        member.merge(report.usage)
        member.members = {}
        _count_cells(member, rubric, report)
        usage.merge(member)
        member.stopped = report.judge_stopped  # the member's own, not the panel's
        usage.members[label] = member
    return usage


def _panel_stopped(labels: list[str], reports: Sequence[Report]) -> str | None:
    """Why the panel stopped judging: only when every member stopped (a deadline, every server
    gone); a member that stopped while the others went on is said of that member
    (``usage.members[label].stopped`` and :meth:`Usage.member_failures`)."""
    if not reports or not all(report.judge_stopped for report in reports):
        return None
    reasons = list(dict.fromkeys(report.judge_stopped for report in reports))
    if len(reasons) == 1:
        return reasons[0]
    return "; ".join(f"{label}: {report.judge_stopped}" for label, report in zip(labels, reports, strict=True))


def _count_cells(usage: Usage, rubric: Rubric, report: Report) -> None:
    """A member's judged and errored cells (and the first error's reason) into its usage."""
    keys = {criterion.key for criterion in rubric.judge_criteria}
    for sample in report.samples:
        for cell in sample.criteria:
            if cell.id not in keys or cell.status not in (Status.MET, Status.UNMET, Status.ERROR):
                continue
            usage.judged += 1
            if cell.status is Status.ERROR:
                usage.errors += 1
                usage.error_reason = usage.error_reason or cell.error


def member_label(config: Any) -> str:
    """A member's name: ``provider:model`` as the user writes it."""
    return f"{config.alias or config.provider}:{config.model}"


class _EventMerge:
    """Turns the members' events into the panel's: one RunStarted, pooled SamplesUpdated, summed Progress."""

    def __init__(self, panel: PanelGrader, rubric: Rubric, samples: list[Sample], emit: EventSink):
        self.panel, self.rubric, self.emit = panel, rubric, emit
        count = len(panel.members)
        self.latest: list[dict[str, SampleResult]] = [{} for _ in range(count)]
        self.final = [False] * count
        self.started: list[RunStarted | None] = [None] * count
        self.progress: list[Progress | None] = [None] * count
        self.position = {s.id: n for n, s in enumerate(samples)}

    def sink(self, index: int) -> EventSink:
        return lambda event: self.on_event(index, event)

    def on_event(self, index: int, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.started[index] = event
            if all(s is not None for s in self.started):
                starts = [s for s in self.started if s is not None]
                self.emit(
                    RunStarted(
                        total_requests=sum(s.total_requests for s in starts),
                        to_send=sum(s.to_send for s in starts),
                        stale_cells=max(s.stale_cells for s in starts),
                        plan=starts[0].plan,
                    )
                )
        elif isinstance(event, SamplesUpdated):
            self.latest[index].update({s.id: s for s in event.samples})
            self.final[index] = event.final
            self._pooled({s.id for s in event.samples})
        elif isinstance(event, Progress):
            self.progress[index] = event
            known = [p for p in self.progress if p is not None]
            self.emit(
                Progress(
                    done=sum(p.done for p in known),
                    total=sum(p.total for p in known),
                    in_flight=sum(p.in_flight for p in known),
                    concurrency=self.panel.concurrency_text,
                )
            )

    def _pooled(self, touched: set[str]) -> None:
        ready = sorted(
            (i for i in touched if all(i in latest for latest in self.latest)), key=self.position.get
        )
        if ready:
            pooled = [self.panel.pool(self.rubric, [latest[i] for latest in self.latest]) for i in ready]
            self.emit(SamplesUpdated(pooled, final=all(self.final)))


def member_settings(settings: Any, member: Any) -> Any:
    """A member's judge settings: the ``judge:`` block's, with what the member sets itself (no panel)."""
    from rubric_studio.core.rubric import JudgeSettings

    base = (
        settings.model_dump(exclude={"panel", "aggregate", "model"}, exclude_unset=True) if settings else {}
    )
    own = (
        {}
        if isinstance(member, str)
        else member.model_dump(exclude={"panel", "aggregate"}, exclude_unset=True)
    )
    return JudgeSettings.model_validate({**base, **own})


def make_panel_grader(
    rubric: Rubric, members: Sequence[Any], make_grader: Any, *, judge: str | None, **options: Any
) -> Any:
    """A :class:`PanelGrader` (one grader per member, one shared reply cache), or a judge-less
    grader whose reason names the member that cannot be set up."""
    graders: list[tuple[str, Grader]] = []
    for index, member in enumerate(members):
        named = member if isinstance(member, str) else None  # from --judge: the user's own choice
        settings = member_settings(rubric.judge, member)
        member_rubric = rubric.model_copy(update={"judge": settings})
        shared = {"use_cache": False} if graders else {}  # one cache file, opened once
        grader = make_grader(member_rubric, judge=named, **{**options, **shared})
        if grader.judge is None:
            which = named or settings.model
            reason = f"judge panel member {index + 1} ({which}): {grader.no_judge_reason}"
            judgeless = Grader(
                judge=None,
                no_judge_reason=reason,
                allow_code=grader.allow_code,
                repeat=options.get("repeat") or 1,
            )
            judgeless.unusable = reason if grader.unusable else None
            return judgeless
        if graders:
            grader.trust(False)  # the first member runs the code checks; the others need not
            grader.cache = grader.dispatch.cache = graders[0][1].cache
        graders.append((_unique(member_label(grader.config), {label for label, _ in graders}), grader))
    share_server_limits([grader for _, grader in graders])
    panel = PanelGrader(graders, rubric.judge.aggregate if rubric.judge else None,
                        rubric.judge.ties if rubric.judge else DEFAULT_TIE_RULE)
    for _, grader in graders:
        panel.warnings.extend(grader.take_warnings())
    named = all(isinstance(member, str) for member in members)  # validate says it of the rubric's own panel
    if named and any(c.kind == "checklist" for c in rubric.judge_criteria):
        penalties = any(c.kind == "checklist" and c.is_penalty for c in rubric.judge_criteria)
        note = even_majority_warning(len(graders), panel.rules, panel.ties, penalties=penalties)
        if note:
            panel.warnings.append(f"judge panel {panel.label}: {note}")
    return panel


def share_server_limits(graders: Sequence[Grader]) -> None:
    """Members whose judges are at the same endpoint the user named (a local server, a gateway)
    share one adaptive limit, of the sum of their concurrencies: that server sees the calls of all
    of them, so its limit must be able to come down to 1 call in all before a call timed out there
    is given up — two members at 1 each would still send it 2 at once, and on a server where only
    one call at a time fits every cell would be lost. Members at a provider's own host (its rate
    limits are per model) keep their own limits."""
    from rubric_studio.judges.concurrency import AdaptiveLimit

    by_server: dict[str, list[Grader]] = {}
    for grader in graders:
        server = _named_server(grader.config)
        if server is not None:
            by_server.setdefault(server, []).append(grader)
    for sharing in by_server.values():
        if len(sharing) > 1:
            limit = AdaptiveLimit(sum(grader.dispatch.concurrency.requested for grader in sharing))
            for grader in sharing:
                grader.dispatch.concurrency = limit


def _named_server(config: Any) -> str | None:
    """The endpoint a judge's calls go to when it is a server of the user's (None: the provider's own host)."""
    url = (config.base_url or "").rstrip("/").lower() if config is not None else ""
    if not url:
        return None
    from rubric_studio.core.providers import get

    provider = get(config.provider)
    official = (provider.official_url or "").rstrip("/").lower() if provider is not None else ""
    return None if url == official else url


def _unique(label: str, taken: set[str]) -> str:
    """``label``, or ``label#2`` ... when the panel already has a member of that name."""
    number, unique = 1, label
    while unique in taken:
        number += 1
        unique = f"{label}#{number}"
    return unique
