"""The studio's calibration: the Agreement tab, labelling keys and the labelling queue, fit,
consistency and versions dialogs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.tui.calibration._agreement import AgreementPanel, step_through
    from rubric_studio.tui.calibration._annotators import agreement_title, toggle_adjudication
    from rubric_studio.tui.calibration._dialogs import (
        FitScreen,
        LabelNoteScreen,
        LabelScoreScreen,
        VersionsScreen,
        diff_text,
        fit_table,
    )
    from rubric_studio.tui.calibration._flow import CalibrationFlow
    from rubric_studio.tui.calibration._labeling import Labeler
    from rubric_studio.tui.calibration._layout import ID_READABLE, agreement_cells, plan_agreement, wrap_id
    from rubric_studio.tui.calibration._view import CALIBRATION_BINDINGS, CALIBRATION_KEYS

#: Public name -> the private module that defines it.
_EXPORTS = {
    "agreement_cells": "_layout",
    "agreement_title": "_annotators",
    "AgreementPanel": "_agreement",
    "CALIBRATION_BINDINGS": "_view",
    "CALIBRATION_KEYS": "_view",
    "CalibrationFlow": "_flow",
    "diff_text": "_dialogs",
    "fit_table": "_dialogs",
    "FitScreen": "_dialogs",
    "ID_READABLE": "_layout",
    "Labeler": "_labeling",
    "LabelNoteScreen": "_dialogs",
    "LabelScoreScreen": "_dialogs",
    "plan_agreement": "_layout",
    "step_through": "_agreement",
    "toggle_adjudication": "_annotators",
    "VersionsScreen": "_dialogs",
    "wrap_id": "_layout",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
