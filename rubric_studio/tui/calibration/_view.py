"""Calibration in the studio: the labeling keys, and where the calibration views live.

The views are :class:`~rubric_studio.tui.calibration._agreement.AgreementPanel` (the Agreement
tab) and the dialogs of :mod:`~rubric_studio.tui.calibration._dialogs` (label note and score,
fit, versions); this module names them all, so ``from rubric_studio.tui.calibration._view
import ...`` reaches every one. Attributes down, messages up: the app feeds data in through
methods and screen constructors and hears back through messages and dismiss values. Nothing
here touches files or the engine. Styles live in the studio's one stylesheet, ``studio.tcss``.

Labeling keys (:data:`CALIBRATION_KEYS`, as Textual bindings in :data:`CALIBRATION_BINDINGS`;
:mod:`~rubric_studio.tui.label_keys`) are bindings of the results table (and a few of the
Agreement panel): single letters act only while it has focus. They avoid the matrix's own keys
(f filter, s sort, r reverse, n/N next flip, g/G next unlabelled, h/j/k/l move). The app
implements the actions, e.g. ``p`` → ``labels_store.set_verdict(labels_path, sample_id, "pass")``.
"""

from __future__ import annotations

from rubric_studio.tui.calibration._agreement import AgreementPanel, step_through
from rubric_studio.tui.calibration._dialogs import (
    FitScreen,
    LabelNoteScreen,
    LabelScoreScreen,
    ScoreChoice,
    VersionsScreen,
    diff_text,
    fit_table,
)
from rubric_studio.tui.calibration._layout import COLUMNS, agreement_cells
from rubric_studio.tui.label_keys import CALIBRATION_KEYS, table_bindings

__all__ = [
    "CALIBRATION_BINDINGS", "CALIBRATION_KEYS", "COLUMNS", "AgreementPanel", "FitScreen", "LabelNoteScreen",
    "LabelScoreScreen", "ScoreChoice", "VersionsScreen", "agreement_cells", "diff_text", "fit_table", "step_through",
]  # fmt: skip

CALIBRATION_BINDINGS = table_bindings()
