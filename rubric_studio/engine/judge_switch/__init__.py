"""Switching judges with proof: the current judge and a candidate re-graded on the same labelled
samples, compared cell by cell (an exact paired test, Tango's interval of the drop), one
verdict — switch, do not switch, can't tell — and the switch written into the rubric."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.engine.judge_switch._apply import apply_switch, refresh_card
    from rubric_studio.engine.judge_switch._compare import (
        ALPHA,
        MARGIN,
        Decision,
        SwitchComparison,
        pair_up,
    )
    from rubric_studio.engine.judge_switch._grade import CannotGrade, SwitchRuns, grade_both, judge_name
    from rubric_studio.engine.judge_switch._stats import Paired, binomial_tail, paired_difference_interval

#: Public name -> the private module that defines it.
_EXPORTS = {
    "ALPHA": "_compare",
    "apply_switch": "_apply",
    "binomial_tail": "_stats",
    "CannotGrade": "_grade",
    "Decision": "_compare",
    "grade_both": "_grade",
    "judge_name": "_grade",
    "MARGIN": "_compare",
    "pair_up": "_compare",
    "Paired": "_stats",
    "paired_difference_interval": "_stats",
    "refresh_card": "_apply",
    "SwitchComparison": "_compare",
    "SwitchRuns": "_grade",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
