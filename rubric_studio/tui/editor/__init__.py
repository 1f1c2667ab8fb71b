"""The studio's rubric editor: the criteria list, the criterion and rubric forms, the raw YAML tab,
and how typed edits and outside edits reach the document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.tui.editor._apply import EditBursts, apply_field
    from rubric_studio.tui.editor._editor import EditorPane
    from rubric_studio.tui.editor._fields import display_value, parse_field
    from rubric_studio.tui.editor._list import ConfirmDelete, CriteriaList
    from rubric_studio.tui.editor._specs import CHECK_SPECS, CRITERION_SPECS, check_field_rows
    from rubric_studio.tui.editor._text_fields import TextInput
    from rubric_studio.tui.editor._widgets import FieldArea, FieldEdited, FieldInput

#: Public name -> the private module that defines it.
_EXPORTS = {
    "apply_field": "_apply",
    "check_field_rows": "_specs",
    "CHECK_SPECS": "_specs",
    "ConfirmDelete": "_list",
    "CriteriaList": "_list",
    "CRITERION_SPECS": "_specs",
    "display_value": "_fields",
    "EditBursts": "_apply",
    "EditorPane": "_editor",
    "FieldArea": "_widgets",
    "FieldEdited": "_widgets",
    "FieldInput": "_widgets",
    "parse_field": "_fields",
    "TextInput": "_text_fields",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
