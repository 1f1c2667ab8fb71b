"""The studio's calibration: the Agreement tab, labelling keys and the labelling queue, fit,
consistency and versions dialogs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

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
    "AgreementPanel": "_view",
    "CALIBRATION_BINDINGS": "_view",
    "CALIBRATION_KEYS": "_view",
    "CalibrationFlow": "_flow",
    "diff_text": "_dialogs",
    "fit_table": "_view",
    "FitScreen": "_view",
    "ID_READABLE": "_layout",
    "Labeler": "_labeling",
    "LabelNoteScreen": "_view",
    "LabelScoreScreen": "_view",
    "plan_agreement": "_layout",
    "step_through": "_view",
    "toggle_adjudication": "_annotators",
    "VersionsScreen": "_view",
    "wrap_id": "_layout",
}
__all__ = [
    "agreement_cells",
    "agreement_title",
    "AgreementPanel",
    "CALIBRATION_BINDINGS",
    "CALIBRATION_KEYS",
    "CalibrationFlow",
    "diff_text",
    "fit_table",
    "FitScreen",
    "ID_READABLE",
    "Labeler",
    "LabelNoteScreen",
    "LabelScoreScreen",
    "plan_agreement",
    "step_through",
    "toggle_adjudication",
    "VersionsScreen",
    "wrap_id",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
