"""What a compiled check is: a function of one sample's text view to a score, a reason and
evidence, which raises :class:`CheckFailure` (or :class:`CheckTimeout`) instead of scoring.

Shared by the text checks (:mod:`~rubric_studio.core.checks._checks`) and the checks that run the
author's code (:mod:`~rubric_studio.core.checks._code`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

from rubric_studio.core.results import Evidence
from rubric_studio.core.samples import Sample

__all__ = ["CheckFailure", "CheckTimeout", "Evaluator", "TextView"]


class CheckFailure(Exception):
    """A check could not produce a score; the message is the cell's error."""


class CheckTimeout(CheckFailure):
    """A check ran out of time on one sample.

    :class:`~rubric_studio.core.check_runner.CheckRunner` then skips that check for the rest of its samples (each cell an
    ``error`` naming the sample it timed out on): a catastrophic pattern or a hanging code
    check costs one timeout per run, not one per sample.
    """


class TextView:
    """One sample's text with derived values computed at most once."""

    __slots__ = ("__dict__", "sample", "text")

    def __init__(self, sample: Sample):
        self.sample = sample
        self.text = sample.output

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def word_count(self) -> int:
        return len(self.text.split())


Evaluator = Callable[[TextView], tuple[float, str, list[Evidence]]]
