"""Samples, the outputs a rubric is applied to: JSONL, JSON, YAML, CSV and folders of text files,
read in a stream with every broken record reported at its position.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.core.samples._coerce import as_samples
    from rubric_studio.core.samples._csv import MAX_RECOVERIES, iter_csv_records
    from rubric_studio.core.samples._samples import TEXT_SUFFIXES, Sample, iter_samples, load_samples

#: Public name -> the private module that defines it.
_EXPORTS = {
    "as_samples": "_coerce",
    "iter_csv_records": "_csv",
    "iter_samples": "_samples",
    "load_samples": "_samples",
    "MAX_RECOVERIES": "_csv",
    "Sample": "_samples",
    "TEXT_SUFFIXES": "_samples",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
