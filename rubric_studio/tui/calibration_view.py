"""Calibration in the studio: the labeling keys, and where the calibration views live.

The views are :class:`~rubric_studio.tui.calibration_agreement.AgreementPanel` (the Agreement
tab) and the dialogs of :mod:`~rubric_studio.tui.calibration_dialogs` (label note and score,
fit, versions); this module names them all, so ``from rubric_studio.tui.calibration_view
import ...`` reaches every one. Attributes down, messages up: the app feeds data in through
methods and screen constructors and hears back through messages and dismiss values. Nothing
here touches files or the engine. Styles live in the studio's one stylesheet, ``studio.tcss``.

Labeling keys (:data:`CALIBRATION_KEYS`, also as Textual bindings in
:data:`CALIBRATION_BINDINGS`) are meant for the results matrix, single letters only
while it has focus. They avoid the matrix's own keys (f filter, s sort, r reverse,
n/N next flip, g/G next unlabelled, h/j/k/l move). The app implements the actions, e.g. ``p`` →
``labels_store.set_verdict(labels_path, sample_id, "pass")``.
"""

from __future__ import annotations

from textual.binding import Binding

from rubric_studio.tui.calibration_agreement import AgreementPanel, step_through
from rubric_studio.tui.calibration_dialogs import (
    FitScreen,
    LabelNoteScreen,
    LabelScoreScreen,
    ScoreChoice,
    VersionsScreen,
    diff_text,
    fit_table,
)
from rubric_studio.tui.calibration_layout import COLUMNS, agreement_cells

__all__ = [
    "CALIBRATION_BINDINGS", "CALIBRATION_KEYS", "COLUMNS", "AgreementPanel", "FitScreen", "LabelNoteScreen",
    "LabelScoreScreen", "ScoreChoice", "VersionsScreen", "agreement_cells", "diff_text", "fit_table", "step_through",
]  # fmt: skip

#: key → (action, description). Actions are the app's to implement.
CALIBRATION_KEYS: list[tuple[str, str, str]] = [
    ("p", "label_verdict('pass')", "Label: sample passes"),
    ("x", "label_verdict('fail')", "Label: sample fails"),
    ("S", "label_score", "Label: score 0–10 (LabelScoreScreen)"),
    ("m", "label_cell('met')", "Label: selected criterion met"),
    ("u", "label_cell('unmet')", "Label: selected criterion unmet"),
    ("a", "label_note", "Label: note (LabelNoteScreen)"),
    ("c", "label_clear", "Clear the selected cell's label (on the sample column: the verdict)"),
    ("C", "label_clear_all", "Clear the sample's whole label"),
    ("right_square_bracket", "disagreement(1)", "Next disagreement"),
    ("left_square_bracket", "disagreement(-1)", "Previous disagreement"),
    ("F", "fit", "Fit threshold and weights (FitScreen)"),
    ("V", "versions", "Compare versions (VersionsScreen)"),
    ("K", "consistency_run", "Judge every cell K times (flip rates)"),
    ("I", "improve", "Improve the selected criterion: suggestions proven on your labels (ImproveScreen)"),
    ("e", "add_example", "Add the selected cell you labelled against the judge as an example of its criterion"),
]
CALIBRATION_BINDINGS = [
    Binding(key, action, description, show=False, key_display={"right_square_bracket": "]", "left_square_bracket": "["}.get(key))
    for key, action, description in CALIBRATION_KEYS
]
