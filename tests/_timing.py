"""One scale for every wall-clock limit in the tests.

The limits in the tests (a subprocess's ``timeout=``, a wait for the studio, pytest's
per-test timeout, the hostile corpus's watchdog) only catch a hang: a slow but correct run
must never hit them. On a busy machine everything is slower by about the load per core, so
every limit is ``scaled(seconds)``:

* ``RUBRIC_STUDIO_TEST_TIME_SCALE`` set: that factor (e.g. ``10`` on a machine known to be
  overloaded, ``1`` to see the bare limits);
* otherwise ``max(2, load average / cores)``, the load being the highest of the 1, 5 and
  15 minute averages when the test run starts.

The pytest process that starts the run computes it once and exports it, so the xdist
workers and every CLI child they start use the same factor.
"""

from __future__ import annotations

import os

ENV = "RUBRIC_STUDIO_TEST_TIME_SCALE"
MINIMUM = 2.0  # two workers on two cores halve the speed of each, idle or not


def measured_scale() -> float:
    """The factor for this machine now: its load per core, never below :data:`MINIMUM`."""
    try:
        load = max(os.getloadavg())
    except (AttributeError, OSError):  # no load average on this platform
        return MINIMUM
    return max(MINIMUM, round(load / (os.cpu_count() or 1), 1))


def time_scale() -> float:
    """The factor every wall-clock limit in the tests is multiplied by."""
    value = os.environ.get(ENV, "").strip()
    if value:
        try:
            factor = float(value)
        except ValueError:
            raise ValueError(f"{ENV} must be a number, got {value!r}") from None
        if factor > 0:
            return factor
    return measured_scale()


def scaled(seconds: float) -> float:
    """``seconds`` as a limit on this machine: :func:`time_scale` times longer."""
    return seconds * time_scale()
