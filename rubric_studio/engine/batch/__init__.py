"""Grading through a provider's Batch API: planning, job files on disk, submitting or resuming,
waiting and collecting the replies into a normal grading run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.engine.batch._jobs import JobFileError, JobStore, endpoint_refusal
    from rubric_studio.engine.batch._replies import PrefetchedJudge
    from rubric_studio.engine.batch._run import BatchRun, Inputs, job_grader, plan_requests, resolved

#: Public name -> the private module that defines it.
_EXPORTS = {
    "BatchRun": "_run",
    "endpoint_refusal": "_jobs",
    "Inputs": "_run",
    "job_grader": "_run",
    "JobFileError": "_jobs",
    "JobStore": "_jobs",
    "plan_requests": "_run",
    "PrefetchedJudge": "_replies",
    "resolved": "_run",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
