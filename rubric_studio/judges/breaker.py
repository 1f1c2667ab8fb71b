"""A run-level circuit breaker: stop sending when every further call would fail the same way.

A rejected key answers 401 to every call, a missing model 404, a server that is not
running refuses every connection, a rate limit of a day will not lift within the run.
Sending the other 39 calls of a 10×4 run only to fail them one by one costs time (and,
with retries, minutes). The breaker watches each call's final outcome:

* an error with ``stops_run`` (see :class:`~rubric_studio.judges.base.JudgeError`) trips it
  at once;
* timeouts trip it when ``timeouts_to_trip`` calls timed out and none had answered yet
  (a judge that never answers), not when a slow judge answers some calls in time. A call
  that timed out while it shared the server with others may only have waited in the
  server's queue: it is :meth:`Breaker.queued` (the run lowers its concurrency and sends it
  again) and counts toward the trip only once a call sent alone has timed out too — the
  breaker stops a server that does not answer even one call at a time, never a first wave
  that merely queued.

Once tripped, :meth:`Breaker.stopped` gives the error for every call not yet sent: kind
``stopped`` and one message naming the first cause, so a report can say it once.
"""

from __future__ import annotations

from rubric_studio.judges.base import JudgeError

TIMEOUTS_TO_TRIP = 3


class Breaker:
    """Trips on the first run-stopping error, or on repeated timeouts before any reply."""

    def __init__(self, timeouts_to_trip: int = TIMEOUTS_TO_TRIP):
        self.timeouts_to_trip = timeouts_to_trip
        self.cause: JudgeError | None = None
        self.reason: str | None = None
        self.answered = 0
        self.timeouts = 0
        self.queued_timeouts = 0  # timed out while sharing the server, then sent again
        self.not_sent = 0

    @property
    def tripped(self) -> bool:
        return self.reason is not None

    def record(self, error: JudgeError | None) -> None:
        """Note one call's final outcome (``None``: the judge answered)."""
        if self.tripped:
            return
        if error is None or error.kind not in ("timeout", "stopped"):
            if error is None or error.kind in ("malformed", "omitted", "refusal"):
                self.answered += 1  # the judge is there and replying
            if error is not None and error.stops_run:
                self.trip(error, error.message)
            return
        if error.kind == "timeout":
            self.timeouts += 1
            timed_out = self.timeouts + self.queued_timeouts
            if self.answered == 0 and timed_out >= self.timeouts_to_trip:
                self.trip(error, f"{error.message}, for {timed_out} calls and none answered")

    def queued(self, error: JudgeError) -> None:
        """A call timed out while other calls were in flight and goes again at a lower
        concurrency: remembered, but it cannot trip the breaker by itself."""
        if not self.tripped and error.kind == "timeout":
            self.queued_timeouts += 1

    def trip(self, cause: JudgeError | None, reason: str) -> None:
        """Stop the run's remaining calls with ``reason`` (the first reason wins)."""
        if not self.tripped:
            self.cause, self.reason = cause, reason

    def stopped(self) -> JudgeError:
        """The error for a call the breaker kept from being sent."""
        self.not_sent += 1
        error = JudgeError("stopped", f"not sent: judging stopped: {self.reason}")
        error.requests = 0
        return error
