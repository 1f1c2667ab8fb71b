"""The studio's rubric editor: the criteria list, the criterion and rubric forms, the raw YAML tab,
and how typed edits and outside edits reach the document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

if TYPE_CHECKING:
    from rubric_studio.tui.editor._apply import EditBursts, apply_field
    from rubric_studio.tui.editor._editor import ConfirmDelete, CriteriaList, EditorPane, FieldEdited
    from rubric_studio.tui.editor._specs import CRITERION_SPECS
    from rubric_studio.tui.editor._text_fields import TextInput
    from rubric_studio.tui.editor._widgets import FieldArea, FieldInput

#: Public name -> the private module that defines it.
_EXPORTS = {
    "apply_field": "_apply",
    "ConfirmDelete": "_editor",
    "CriteriaList": "_editor",
    "CRITERION_SPECS": "_specs",
    "EditBursts": "_apply",
    "EditorPane": "_editor",
    "FieldArea": "_widgets",
    "FieldEdited": "_editor",
    "FieldInput": "_widgets",
    "TextInput": "_text_fields",
}
__all__ = [
    "apply_field",
    "ConfirmDelete",
    "CriteriaList",
    "CRITERION_SPECS",
    "EditBursts",
    "EditorPane",
    "FieldArea",
    "FieldEdited",
    "FieldInput",
    "TextInput",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
