"""Loading third-party plugins (entry points) so that none can take a command down.

Check types, judge providers and import/export formats come from the entry-point groups
``rubric_studio.checks``, ``rubric_studio.providers`` and ``rubric_studio.formats``. Each
registry loads its plugins through :func:`load_contained`, which

* catches everything a plugin's import or registration can raise — ``SystemExit`` and
  ``KeyboardInterrupt`` included, which would otherwise end the command with no output — and
  turns it into one ``warning:`` line naming the plugin (its distribution) and the entry
  point, the same form for the three kinds;
* re-raises a real ctrl-c (a SIGINT that arrived while the plugin was importing) after
  saying which plugin was importing, so the user learns what was slow;
* names a plugin that took longer than :data:`SLOW_IMPORT` seconds to import, once, with
  its time (every command that reads that group pays it).

The lines go to the ``rubric_studio.plugins`` logger: with no logging set up (the command
line) Python writes them to stderr as they are.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

#: Seconds of import after which a plugin is named with its time.
SLOW_IMPORT = 1.0

LOG = logging.getLogger("rubric_studio.plugins")


def describe(kind: str, point: Any) -> str:
    """``provider plugin house-gateway (entry point house = house_gateway:PROVIDER)``."""
    dist = getattr(getattr(point, "dist", None), "name", None)
    owner = dist or point.value.partition(":")[0]
    return f"{kind} plugin {owner} (entry point {point.name} = {point.value})"


def warn(kind: str, point: Any, what: str) -> None:
    """One ``warning:`` line about a plugin."""
    LOG.warning("warning: %s %s", describe(kind, point), what)


def load_contained(kind: str, point: Any, register: Callable[[Any], str | None]) -> bool:
    """Load ``point`` and hand what it names to ``register`` (which returns why it cannot be
    used, or None). False, after one warning line, when anything failed."""
    started = time.monotonic()
    try:
        with _sigint_noted() as interrupted:
            try:
                problem = register(point.load())
            except KeyboardInterrupt:
                if interrupted:  # the user's ctrl-c: say what was importing, then stop
                    warn(kind, point, f"was importing when interrupted ({time.monotonic() - started:.1f} s)")
                    raise
                problem = "it failed to load (KeyboardInterrupt raised by the plugin)"
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:
        problem = f"it failed to load (it called sys.exit({exc.code!r}))"
    except BaseException as exc:  # noqa: BLE001 — any failure of third-party code: skip it, say why
        problem = f"it failed to load ({type(exc).__name__}: {exc})"
    took = time.monotonic() - started
    if problem is not None:
        warn(kind, point, f"skipped: {problem}")
        return False
    if took > SLOW_IMPORT:
        warn(kind, point, f"took {took:.1f} s to import (every command that reads {kind} plugins waits for it)")
    return True


class _sigint_noted:  # noqa: N801 — used as a context manager
    """While inside, a SIGINT is noted (the list is non-empty) before it raises KeyboardInterrupt:
    a real ctrl-c is told apart from a plugin raising KeyboardInterrupt itself. Only the main
    thread receives signals; elsewhere nothing is installed."""

    def __init__(self) -> None:
        self.noted: list[bool] = []
        self.previous: Any = None

    def __enter__(self) -> list[bool]:
        if threading.current_thread() is threading.main_thread():
            try:
                if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                    self.previous = signal.signal(signal.SIGINT, self._on_sigint)
            except ValueError:  # not the main interpreter
                self.previous = None
        return self.noted

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self.noted.append(True)
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
