"""Run blocking work in a daemon thread and await it from the event loop.

Deterministic checks are CPU work bounded per sample, but a rubric's checks over
thousands of samples (or a check that times out) can take seconds. Run on the event
loop they would freeze the studio — no redraw, no ctrl+q. :func:`in_daemon_thread`
moves them off the loop; the thread is a daemon so quitting never waits for it, and a
cancelled await sets the ``stop`` event the work polls between samples.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def in_daemon_thread(work: Callable[[threading.Event], T], name: str = "rubric-studio-work") -> T:
    """``work(stop)`` in a new daemon thread; cancelling the await sets ``stop``."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    stop = threading.Event()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def target() -> None:
        try:
            value = work(stop)
        except BaseException as exc:  # handed to the awaiting task, raised there
            error = exc
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody is waiting
                loop.call_soon_threadsafe(settle, lambda: future.set_exception(error))
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, lambda: future.set_result(value))

    threading.Thread(target=target, daemon=True, name=name).start()
    try:
        return await future
    finally:
        stop.set()  # finished: a no-op; cancelled: the work stops at its next sample
