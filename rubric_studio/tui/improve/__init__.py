"""The studio's *Improve criterion…* screen and the edits it applies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.tui.improve._edits import document_rubric, finish_edit
    from rubric_studio.tui.improve._screen import ImproveScreen, selected_criterion

#: Public name -> the private module that defines it.
_EXPORTS = {
    "document_rubric": "_edits",
    "finish_edit": "_edits",
    "ImproveScreen": "_screen",
    "selected_criterion": "_screen",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
