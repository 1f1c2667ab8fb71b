"""What a grading run reports while it works (the studio turns these into messages)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rubric_studio.core.results import SampleResult
    from rubric_studio.engine.plan import Plan
    from rubric_studio.engine.report import Report


@dataclass
class RunStarted:
    total_requests: int  # judge requests this run needs
    to_send: int  # of which not served by memo or cache
    stale_cells: int  # cells whose inputs changed since the previous run
    plan: Plan


@dataclass
class SamplesUpdated:
    """Samples whose cells changed; ``final`` when nothing is left pending."""

    samples: list[SampleResult]
    final: bool


@dataclass
class Progress:
    done: int
    total: int
    in_flight: int
    #: Judge calls allowed in flight now / at most, e.g. "2/6" (it adapts to the server), or None.
    concurrency: str | None = None


@dataclass
class RunFinished:
    report: Report


Event = RunStarted | SamplesUpdated | Progress | RunFinished
