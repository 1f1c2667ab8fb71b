"""Adaptive concurrency (AIMD): how many judge calls a run keeps in flight.

A server with fewer generation slots than the calls sent to it queues the rest, and a
queued call's timeout runs while it waits: at ``--concurrency 6`` a llama.cpp server with 2
slots answers the first two and lets the others time out. The run's limit therefore adapts:

* a timeout or a 429 halves the limit in use (never below 1) — once per window: calls that
  were sent before the last decrease saw the same congestion and do not halve it again;
* a timeout of a call that shared the server with ``peak`` calls also lowers the ceiling to
  ``peak - 1``: a server that could not answer that many at once within the timeout (its
  slots queue or share one compute, and it may publish no slot count) is not sent that many
  again, so the limit does not climb back into the same timeouts; the limit in use never
  stays above the ceiling. Each timeout of a call in company thus brings the ceiling below the
  number of calls it shared the server with: a call that keeps timing out in company goes
  alone, at a limit of 1, after at most ``ceiling - 1`` such timeouts (the
  :class:`~rubric_studio.engine.dispatch.Dispatcher` sends it again until then);
* every ``current`` answers in a row add one, back up to the ceiling (the user's
  ``--concurrency``, or a local server's slot count when it publishes one).

The limit in use is reported against the user's setting (``2/6``) so progress lines can show it.

Waiting calls queue in order and a freed slot wakes one of them, as :class:`asyncio.Semaphore`
does: a run of 5,000 samples starts 40,000 calls at once, and waking every waiter on every
release (each one checking and queueing again) cost O(waiters) per answer — 30 s of CPU in
one such studio run, the event loop busy the whole time (BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(eq=False)
class Ticket:
    """One call's hold on a slot: the window it was sent in, and the most calls that were in
    flight at once while it held its slot (``peak``, itself included: the first call of a wave
    is sent alone, but shares the server with the calls sent after it)."""

    window: int
    peak: int = 0

    @property
    def shared(self) -> bool:
        """Another call was in flight at some moment of this one."""
        return self.peak > 1


class AdaptiveLimit:
    """A semaphore whose size halves on overload and grows by one per window of answers."""

    def __init__(self, ceiling: int):
        #: What the user asked for (``--concurrency``), shown beside the limit in use.
        self.requested = max(1, ceiling)
        self.ceiling = max(1, ceiling)
        self.current = self.ceiling
        self.window = 0  # increases with every decrease
        self.lowest = self.ceiling
        self._answers = 0
        self._waiters: deque[asyncio.Future[None]] = deque()  # in order; a cancelled one is skipped
        self._queued = 0  # waiters not woken (nor cancelled) yet
        self._woken = 0  # waiters woken that have not taken their slot yet
        self._held: set[Ticket] = set()  # the tickets of the calls in flight
        #: Called with no argument whenever the limit in use falls (a progress line shows it).
        self.listeners: list[Callable[[], None]] = []

    def cap(self, ceiling: int) -> None:
        """Lower the ceiling (a server's slot count); the limit in use follows."""
        self.ceiling = max(1, min(self.ceiling, ceiling))
        self.current = min(self.current, self.ceiling)
        self.lowest = min(self.lowest, self.current)

    @property
    def in_use(self) -> int:
        """Calls in flight."""
        return len(self._held)

    def _room(self) -> bool:
        return self.in_use + self._woken < self.current

    async def acquire(self) -> Ticket:
        """Wait until fewer than ``current`` calls are in flight (after the calls that were
        waiting already); a ticket for :meth:`release`."""
        waited = False
        while not self._room() or (self._queued and not waited):
            waiter = asyncio.get_running_loop().create_future()
            # a call woken when the limit has just fallen waits again, first in line
            (self._waiters.appendleft if waited else self._waiters.append)(waiter)
            self._queued += 1
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.cancelled():  # cancelled while waiting: _wake skips it
                    self._queued -= 1
                else:  # woken, then cancelled before it ran: the slot goes to the next in line
                    self._woken -= 1
                    self._wake()
                raise
            self._woken -= 1
            waited = True
        ticket = Ticket(self.window)
        self._held.add(ticket)
        for held in self._held:
            held.peak = max(held.peak, self.in_use)
        return ticket

    def _wake(self) -> None:
        """Wake waiting calls in order, as many as there is room for."""
        while self._waiters and self._room():
            waiter = self._waiters.popleft()
            if waiter.done():  # cancelled
                continue
            waiter.set_result(None)
            self._queued -= 1
            self._woken += 1

    def release(self, ticket: Ticket) -> None:
        """A call ended (also when it was cancelled): the next waiting call may go."""
        self._held.discard(ticket)
        self._wake()

    def overloaded(self, ticket: Ticket, kind: str = "rate_limit") -> bool:
        """A call sent with ``ticket`` timed out (``kind`` ``"timeout"``) or was rate limited:
        halve the limit, once per window. True when this call lowered it."""
        if kind == "timeout" and ticket.shared:
            self.ceiling = max(1, min(self.ceiling, ticket.peak - 1))
        if ticket.window != self.window or self.current == 1:
            if self.current > self.ceiling:  # the ceiling came down below the limit in use
                self._lower_to(self.ceiling)
                return True
            return False
        self._lower_to(min(self.ceiling, max(1, self.current // 2)))
        return True

    def _lower_to(self, current: int) -> None:
        """The limit in use falls to ``current``: a new window begins, the listeners hear of it."""
        self.current = current
        self.lowest = min(self.lowest, self.current)
        self.window += 1
        self._answers = 0
        for listener in list(self.listeners):
            listener()

    def answered(self) -> None:
        """A call was answered: after ``current`` answers in a row, one more call may fly."""
        if self.current >= self.ceiling:
            return
        self._answers += 1
        if self._answers >= self.current:
            self.current += 1
            self._answers = 0
            self._wake()

    @property
    def text(self) -> str:
        """``current/requested``, e.g. ``2/6`` (a 2-slot server, ``--concurrency 6``)."""
        return f"{self.current}/{self.requested}"
