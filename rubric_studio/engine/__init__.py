"""The engine: grading runs over checks and judges, the reply cache, incremental plans.

Imports no Textual (a test enforces it). The studio and the CLI both drive
:class:`~rubric_studio.engine.grader.Grader`; :mod:`rubric_studio.engine.api`
wraps it for one-shot use.
"""

from __future__ import annotations

from rubric_studio._lazy import lazy_submodules

#: The public modules of this package, each imported on first use (``rubric_studio.engine.<name>``).
__all__ = [
    "api",
    "assistant",
    "batch",
    "cache",
    "dispatch",
    "draft",
    "events",
    "fit",
    "grader",
    "improve",
    "judge_compare",
    "offloop",
    "panel",
    "plan",
    "probes",
    "report",
    "starter",
    "usage",
    "versions",
    "votes",
]
__getattr__, __dir__ = lazy_submodules(__name__, __all__)
