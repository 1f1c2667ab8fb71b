"""Letta evals suites: export with a ``model_judge`` grader, and import."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.interop.letta._letta import export, import_

#: Public name -> the private module that defines it.
_EXPORTS = {
    "export": "_letta",
    "import_": "_letta",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
