"""The judge requests of a run: what they answer, how they are sent together, what came back.

Every judge cell is answered by its own per-criterion request, whose cache key names the
cell's verdict in the memo and the persistent cache. In ``batch`` mode the requests of one
sample (and repeat) that are not cached are *sent* together as one batch call, and the
reply is split back into per-criterion verdicts, each cached under its own key: a later
per-criterion or batch run reuses them, and a batch that left one criterion out costs one
re-ask for that criterion only.

:class:`Sending` is the state one send task shares with whoever may cancel it: which keys
it answers, whether a request is on the wire (an aborted call still counts as a request),
and its usage, counted once by the first run that collects it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.usage import Usage

if TYPE_CHECKING:
    from rubric_studio.judges.breaker import Breaker
    from rubric_studio.judges.concurrency import Ticket

#: Errors that say the server is overloaded: the run's concurrency halves, and the call is
#: sent again at the lower concurrency when it was one of several in flight.
OVERLOAD_KINDS = ("timeout", "rate_limit")

CellKey = tuple[str, str]  # (sample id, criterion id)


@dataclass
class RequestResult:
    """The cells one request answered (one criterion, or several from a legacy batch entry)."""

    results: dict[str, CriterionResult]
    valid: bool = True
    failure: str | None = None
    #: Not sent (breaker, deadline): never memoised, so the next run tries again.
    stopped: bool = False

    def answer(self, criterion_id: str) -> CriterionResult | None:
        """The verdict this request gave for ``criterion_id``, or None.

        A request's cache key does not hold the criterion's id (the judge is not shown it), so a
        verdict remembered under an earlier id answers the renamed criterion too: a request that
        asked about one criterion answers whichever id that criterion has now.
        """
        found = self.results.get(criterion_id)
        if found is None and len(self.results) == 1:
            (earlier,) = self.results.values()
            found = replace(earlier, id=criterion_id)
        return found


@dataclass
class Work:
    """The judge requests one run needs, grouped by cell."""

    requests: dict[str, Any] = field(default_factory=dict)  # key -> JudgeRequest
    #: key -> every sample whose cells that request answers. Samples with identical text
    #: make identical requests: one request serves all of them (the first is sent).
    samples_of: dict[str, list[Sample]] = field(default_factory=dict)
    cell_keys: dict[CellKey, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, key: str, request: Any, sample: Sample) -> None:
        """Record that ``sample``'s cells for ``request.criterion_ids`` are answered by request ``key``."""
        self.requests[key] = request
        sharing = self.samples_of.setdefault(key, [])
        if not sharing or sharing[-1] is not sample:
            sharing.append(sample)
        for criterion_id in request.criterion_ids:
            self.cell_keys[(sample.id, criterion_id)].append(key)

    def sample_for(self, key: str) -> Sample:
        """The sample a request is built from (any of those sharing it has the same text)."""
        return self.samples_of[key][0]

    def groups(self, keys: list[str], batch: bool) -> list[list[str]]:
        """Keys sent together: each alone, or in batch mode those of one sample and repeat."""
        if not batch:
            return [[key] for key in keys]
        grouped: dict[tuple[int, int], list[str]] = {}
        for key in keys:
            request = self.requests[key]
            grouped.setdefault((id(self.sample_for(key)), request.repeat_index), []).append(key)
        return list(grouped.values())


@dataclass
class Sending:
    """One send task's shared state."""

    keys: tuple[str, ...]
    on_the_wire: bool = False
    #: (cells sent, requests, input tokens, output tokens, cost), counted once then cleared.
    usage: tuple[int, int, int, int, float | None, int, int] | None = None

    def take_usage(self) -> tuple[int, int, int, int, float | None, int, int] | None:
        usage, self.usage = self.usage, None
        return usage


def error_result(criterion_ids: list[str] | tuple[str, ...], message: str, *, stopped: bool = False) -> RequestResult:
    """A request that produced no verdict: an ``error`` cell per criterion with ``message``."""
    cells = {
        cid: CriterionResult(cid, Status.ERROR, source="judge", error=message,
                             detail={"error_kind": "stopped" if stopped else "request"})
        for cid in criterion_ids
    }
    return RequestResult(cells, valid=False, failure=message, stopped=stopped)


class Dispatcher:
    """Sends a grader's judge requests: memo, persistent cache, in-flight tasks, usage.

    Tasks outlive the run that started them (a studio re-grade adopts the ones it still
    wants and cancels the rest); each is keyed by every request key it answers.
    """

    def __init__(self, judge: Any, cache: Any, limit: int, use_memo: bool = True, reuse_batch: bool = True):
        self.judge = judge
        #: Serve a per-criterion run verdicts that came from batch calls (False: judge those cells again).
        self.reuse_batch = reuse_batch
        self.config = judge.config if judge is not None else None
        self.cache = cache
        self.use_memo = use_memo
        self.memo: dict[str, RequestResult] = {}
        self.inflight: dict[str, asyncio.Task[dict[str, RequestResult]]] = {}
        self.sending: dict[asyncio.Task[dict[str, RequestResult]], Sending] = {}
        self.cancelled_requests = 0
        from rubric_studio.judges.concurrency import AdaptiveLimit

        #: Calls in flight at once: adapts between 1 and ``limit`` (see judges.concurrency).
        self.concurrency = AdaptiveLimit(limit)
        self._slots_asked: asyncio.Future[None] | None = None  # made in the running loop
        self._handed_off: set[asyncio.Task[Any]] = set()

    # -- lookup ----------------------------------------------------------------
    def lookup(
        self, key: str, request: Any, rubric: Rubric, sample: Sample, usage: Usage, *, remember: bool = True
    ) -> RequestResult | None:
        """The memoised or cached answer to ``request``, or None (it must be sent).
        ``remember=False`` only looks (planning what a run would send)."""
        if self.use_memo and key in self.memo and self._reusable(self.memo[key]):
            return self.memo[key]
        if self.cache is None:
            return None
        cached = self.cache.get(key)
        if cached is None or not self._reusable_origin(cached.origin):
            return None
        if not remember:
            return RequestResult({})
        from rubric_studio.judges import JudgeError, interpret

        try:
            results = interpret(request, cached.text, rubric, sample)
        except JudgeError:
            return None  # a reply the current parser rejects: ask again
        for result in results.values():
            self._as_cached(result, cached)
        usage.cache_hits += 1
        outcome = RequestResult(results)
        if self.use_memo:
            self.memo[key] = outcome
        return outcome

    def _per_criterion_only(self) -> bool:
        return not self.reuse_batch and self.config is not None and self.config.mode != "batch"

    def _reusable(self, result: RequestResult) -> bool:
        """False for a batch call's verdict when this per-criterion run must not reuse it."""
        return all(self._reusable_origin(cell.provenance) for cell in result.results.values())

    def _reusable_origin(self, origin: dict[str, Any] | None) -> bool:
        from rubric_studio.judges.run import judged_together

        return not self._per_criterion_only() or not judged_together(origin)

    def _as_cached(self, result: CriterionResult, cached: Any) -> None:
        """A cell served from the cache: its source, tokens, and the call that actually gave it."""
        result.source = "cache"
        result.detail.setdefault("reply", cached.text)
        result.detail["input_tokens"] = cached.input_tokens
        result.detail["output_tokens"] = cached.output_tokens
        from rubric_studio.judges.run import judged_together, provenance_from

        origin = cached.origin or {}
        result.provenance = provenance_from(origin)
        if judged_together(result.provenance):
            sent = self.cache.sent_request(origin["sent"]) if isinstance(origin.get("sent"), str) else None
            # The request shown is the batch call that was sent, not the per-criterion one it is filed under.
            result.detail.pop("request", None)
            url = f"{getattr(self.judge, 'base_url', '')}{getattr(self.judge, 'endpoint', '')}"
            result.detail["wire"] = {"url": url, "request": sent}

    # -- sending ---------------------------------------------------------------
    def start(self, keys: list[str], work: Work, rubric: Rubric, breaker: Breaker) -> dict[str, asyncio.Task[Any]]:
        """A task for every key: adopted when already in flight, else new (grouped in batch mode)."""
        tasks: dict[str, asyncio.Task[Any]] = {}
        fresh = []
        for key in keys:
            task = self.inflight.get(key)
            if task is not None and not task.cancelled():
                tasks[key] = task
            else:
                fresh.append(key)
        for group in work.groups(fresh, batch=self.config.mode == "batch"):
            state = Sending(tuple(group))
            requests = {key: work.requests[key] for key in group}
            task = asyncio.ensure_future(self._send(state, requests, rubric, work.sample_for(group[0]), breaker))
            self.sending[task] = state
            for key in group:
                self.inflight[key] = tasks[key] = task
        return tasks

    async def _send(
        self, state: Sending, requests: dict[str, Any], rubric: Rubric, sample: Sample, breaker: Breaker
    ) -> dict[str, RequestResult]:
        from rubric_studio.judges.prompts import batch_request

        by_id = {request.criterion_ids[0]: (key, request) for key, request in requests.items()}
        repeat = next(iter(requests.values())).repeat_index

        def ask(ids: Sequence[str]) -> Any:
            if len(ids) == 1:
                return by_id[ids[0]][1]
            return batch_request(sample, [rubric.criterion(cid) for cid in ids], self.config, repeat)

        await self.ask_server_slots()
        outcome = None
        budget = _SendBudget(self.concurrency.ceiling)
        while True:
            ticket = await self.concurrency.acquire()
            try:
                if breaker.tripped:
                    message = breaker.stopped().message
                    if outcome is None:
                        return {key: error_result(request.criterion_ids, message, stopped=True)
                                for key, request in requests.items()}  # fmt: skip
                    break  # the last attempt's error stands
                state.on_the_wire = True
                outcome = _add_spent(outcome, await self._judge_once(ticket, ask, list(by_id), rubric, sample))
                state.on_the_wire = False
                again = self._send_again(outcome, ticket, breaker) and budget.allows(outcome.error)
                if again:
                    breaker.queued(outcome.error)  # it may only have waited in the server's queue
                else:
                    breaker.record(outcome.error)
                if outcome.error is None:
                    self.concurrency.answered()
            finally:
                self.concurrency.release(ticket)
            if not again:
                break
        # judge_calls counts the cells sent (a batch of 3 criteria is 3; a re-ask adds none);
        # requests counts every HTTP request it took.
        state.usage = (len(by_id), outcome.requests, outcome.input_tokens, outcome.output_tokens, outcome.cost_usd,
                       outcome.cached_input_tokens, outcome.cache_write_tokens)
        self._store(outcome, by_id)
        return {key: RequestResult({cid: outcome.results[cid]}, valid=cid in outcome.texts) for cid, (key, _) in by_id.items()}

    async def _judge_once(self, ticket: Ticket, ask: Any, ids: list[str], rubric: Rubric, sample: Sample) -> Any:
        """One judge call; a timeout or 429 on any of its attempts lowers the run's concurrency."""
        from rubric_studio.judges.retry import ATTEMPT_FAILED
        from rubric_studio.judges.run import judge_cells

        def attempt_failed(error: Any) -> None:
            if error.kind in OVERLOAD_KINDS:
                self.concurrency.overloaded(ticket, error.kind)

        token = ATTEMPT_FAILED.set(attempt_failed)
        try:
            return await judge_cells(self.judge, ask, ids, rubric, sample)
        finally:
            ATTEMPT_FAILED.reset(token)

    def _send_again(self, outcome: Any, ticket: Ticket, breaker: Breaker) -> bool:
        """Whether a call that timed out or was rate limited goes again at the lowered
        concurrency: only when it shared the server with other calls (alone, a timeout is the
        server's own pace, and re-sending would start the same long generation again) and
        nothing of it was answered."""
        error = outcome.error
        return (error is not None and error.kind in OVERLOAD_KINDS and not error.stops_run and not outcome.texts
                and ticket.shared and not breaker.tripped)  # fmt: skip

    async def ask_server_slots(self) -> None:
        """Once per dispatcher: cap the concurrency at a local server's published slot count
        (a run asks before it shows its first progress, so the limit shown is the one used)."""
        if self.config is None:
            return
        if self._slots_asked is None:
            self._slots_asked = asyncio.get_running_loop().create_future()
            from rubric_studio.judges.server_slots import published_slots

            try:
                slots = await published_slots(self.config.base_url, self.config.timeout)
                if slots is not None:
                    self.concurrency.cap(slots)
            finally:
                self._slots_asked.set_result(None)
        elif not self._slots_asked.done():
            await asyncio.shield(self._slots_asked)

    def _store(self, outcome: Any, by_id: dict[str, tuple[str, Any]]) -> None:
        """Cache each criterion's valid verdict under its own request key."""
        if self.cache is None or not outcome.texts:
            return
        from rubric_studio.judges.run import provenance_of

        share = max(1, len(by_id))
        for cid, text in outcome.texts.items():
            cell = outcome.results.get(cid)
            origin = (cell.provenance if cell is not None else None) or provenance_of([cid])
            self.cache.put(by_id[cid][0], self.config.provider, self.config.model, text,
                           outcome.input_tokens // share, outcome.output_tokens // share,
                           origin=origin, sent=outcome.batch_bodies.get(cid))

    # -- collecting --------------------------------------------------------------
    def collect(self, task: asyncio.Task[Any], key: str, usage: Usage) -> RequestResult:
        """``key``'s result from its finished task; the task's usage is counted once."""
        self.inflight.pop(key, None)
        state = self.sending.get(task)
        request_ids = state.keys if state else (key,)
        try:
            result = task.result().get(key)
        except asyncio.CancelledError:
            result = error_result([], "cancelled: superseded by a newer edit", stopped=True)
        except Exception as exc:  # a bug in a provider must not take down the run
            result = RequestResult({}, valid=False, failure=f"internal error: {type(exc).__name__}: {exc}")
        if state is not None:
            counted = state.take_usage()
            if counted is not None:
                usage.add_call(*counted)
            if not any(k in self.inflight and self.inflight[k] is task for k in request_ids):
                self.sending.pop(task, None)
        if result is None:
            result = RequestResult({}, valid=False, failure="the judge gave no result")
        if self.use_memo and not result.stopped:
            self.memo[key] = result
        return result

    def abort(self, task: asyncio.Task[Any], usage: Usage) -> None:
        """Cancel ``task``; a request already on the wire still counts as sent."""
        state = self.sending.pop(task, None)
        if not task.done():
            task.cancel()
            self.cancelled_requests += 1
            if state is not None and state.on_the_wire:
                usage.requests += 1
        for key in state.keys if state else ():
            if self.inflight.get(key) is task:
                del self.inflight[key]

    def cancel_unwanted(self, wanted: set[str], usage: Usage) -> None:
        """Cancel in-flight tasks none of whose keys the current run wants (stale cells are not paid for)."""
        for task in {t for t in self.inflight.values()}:
            state = self.sending.get(task)
            keys = state.keys if state else [k for k, t in self.inflight.items() if t is task]
            if not task.done() and not any(key in wanted for key in keys):
                self.abort(task, usage)

    @property
    def in_flight(self) -> int:
        return len({task for task in self.inflight.values() if not task.done()})

    # -- hand-over and closing ---------------------------------------------------------
    def hand_over(self, successor: Dispatcher) -> None:
        """Give ``successor`` (a dispatcher for an edited judge setting) the memo and the calls in
        flight: keys include the judge's identity, so it adopts exactly the ones it would send again."""
        successor.memo.update(self.memo)
        running = {task for task in self.inflight.values() if not task.done()}
        successor.inflight.update({k: t for k, t in self.inflight.items() if t in running})
        successor.sending.update({t: s for t, s in self.sending.items() if t in running})
        self._handed_off |= running
        self.inflight.clear()
        self.sending.clear()

    async def aclose(self) -> None:
        """Cancel what is in flight, let handed-off calls finish, close the judge."""
        for task in set(self.inflight.values()):
            self.abort(task, Usage())
        if self._handed_off:
            await asyncio.wait(self._handed_off)
        if self.judge is not None:
            with contextlib.suppress(Exception):
                await self.judge.aclose()


class _SendBudget:
    """How many times one call may be sent again after an overload, per kind.

    A timeout shared with ``peak`` calls lowers the limit's ceiling below ``peak`` (and the limit
    in use with it), so a call that keeps timing out in company is sent again at most
    ``ceiling - 1`` times before it is sent alone at a limit of 1: its budget is the ceiling, so
    it is never given up while the limit could still come down. A 429 does not lower the ceiling;
    it is sent again at most ``ceiling.bit_length() + 1`` times (the halvings from the ceiling down
    to 1, and two more)."""

    def __init__(self, ceiling: int):
        self.left = {"timeout": ceiling, "rate_limit": ceiling.bit_length() + 1}

    def allows(self, error: Any) -> bool:
        """One more send after ``error`` (a timeout or a 429 the caller would send again)."""
        kind = getattr(error, "kind", None)
        if self.left.get(kind, 0) <= 0:
            return False
        self.left[kind] -= 1
        return True


def _add_spent(earlier: Any, outcome: Any) -> Any:
    """``outcome`` of a call sent again, with what the earlier sends of it cost added."""
    if earlier is None:
        return outcome
    outcome.calls += earlier.calls
    outcome.requests += earlier.requests
    outcome.input_tokens += earlier.input_tokens
    outcome.output_tokens += earlier.output_tokens
    outcome.cached_input_tokens += earlier.cached_input_tokens
    outcome.cache_write_tokens += earlier.cache_write_tokens
    # None: tokens of a model without a known price, in either send
    both = (outcome.cost_usd, earlier.cost_usd)
    outcome.cost_usd = None if None in both else both[0] + both[1]
    return outcome
