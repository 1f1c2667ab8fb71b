"""Fitting a rubric to human labels (pass_threshold and weights) and writing the fit into the file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.engine.fit._fit import (
        MIN_FOR_HOLDOUT,
        FitResult,
        cases_from,
        fit,
        fit_threshold,
        split,
    )
    from rubric_studio.engine.fit._write import apply_fit

#: Public name -> the private module that defines it.
_EXPORTS = {
    "apply_fit": "_write",
    "cases_from": "_fit",
    "fit": "_fit",
    "fit_threshold": "_fit",
    "FitResult": "_fit",
    "MIN_FOR_HOLDOUT": "_fit",
    "split": "_fit",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
