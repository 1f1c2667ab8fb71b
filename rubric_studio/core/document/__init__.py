"""The round-trip rubric document the studio edits: field and criteria edits that keep comments,
key order and quoting; undo/redo; saving, and taking in edits made outside (three-way merge).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.core.document._disk import RevertsOutsideEdit
    from rubric_studio.core.document._document import ChangedOnDisk, RubricDocument
    from rubric_studio.core.document._history import UndoStop
    from rubric_studio.core.document._layout import find_layout
    from rubric_studio.core.document._merge import Merge, merge3
    from rubric_studio.core.document._schema import CHECK_FIELDS, CHECK_ORDER, EditError
    from rubric_studio.core.document._style import detect_style

#: Public name -> the private module that defines it.
_EXPORTS = {
    "ChangedOnDisk": "_document",
    "CHECK_FIELDS": "_schema",
    "CHECK_ORDER": "_schema",
    "detect_style": "_style",
    "EditError": "_schema",
    "find_layout": "_layout",
    "Merge": "_merge",
    "merge3": "_merge",
    "RevertsOutsideEdit": "_disk",
    "RubricDocument": "_document",
    "UndoStop": "_history",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
