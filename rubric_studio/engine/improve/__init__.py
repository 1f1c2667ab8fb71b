"""``improve``: suggested fixes for a criterion the judge and the person disagree on (rewordings,
examples, checks, scoring), each evaluated on held-out labels before it is shown, and written as one edit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.engine.improve._apply import apply_candidate, write_candidate, write_fit
    from rubric_studio.engine.improve._candidates import outcome_problem, read_rewordings
    from rubric_studio.engine.improve._evidence import Evidence, mcnemar_exact
    from rubric_studio.engine.improve._improve import Candidate, Delta, ImproveReport, stratified_split
    from rubric_studio.engine.improve._run import KINDS, improve
    from rubric_studio.engine.improve._verdicts import blame

#: Public name -> the private module that defines it.
_EXPORTS = {
    "apply_candidate": "_apply",
    "blame": "_verdicts",
    "Candidate": "_improve",
    "Delta": "_improve",
    "Evidence": "_evidence",
    "improve": "_run",
    "ImproveReport": "_improve",
    "KINDS": "_run",
    "mcnemar_exact": "_evidence",
    "outcome_problem": "_candidates",
    "read_rewordings": "_candidates",
    "stratified_split": "_improve",
    "write_candidate": "_apply",
    "write_fit": "_apply",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
