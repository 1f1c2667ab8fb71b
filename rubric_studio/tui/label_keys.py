"""The labeling and calibration keys, as bindings of the widgets they act on.

Single letters are label keys only where the user looks: :func:`table_bindings` are the
bindings of the focused results table (every key), :func:`agreement_bindings` those of
the Agreement panel (the calibration keys that need no cell: ``]``, ``[``, ``R``, ``F``,
``V``, ``K``, ``I``). Nowhere else — not the editor, not a dialog, not an app with nothing
focused — does a letter label a sample. The actions are the app's (``app.`` namespace);
palette commands call the same methods directly.
"""

from __future__ import annotations

from textual.binding import Binding

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
    ("ctrl+z", "label_undo", "Undo the last label change"),
    ("ctrl+y", "label_undo(True)", "Redo the label change undone"),
    ("right_square_bracket", "disagreement(1)", "Next disagreement"),
    ("left_square_bracket", "disagreement(-1)", "Previous disagreement"),
    ("R", "recheck(1)", "Next label given under an older wording of its criterion: re-check it (m / u)"),
    ("F", "fit", "Fit threshold and weights (FitScreen)"),
    ("V", "versions", "Compare versions (VersionsScreen)"),
    ("K", "consistency_run", "Judge every cell K times (flip rates)"),
    ("I", "improve", "Improve the selected criterion: suggestions proven on your labels (ImproveScreen)"),
    ("e", "add_example", "Add the selected cell you labelled against the judge as an example of its criterion"),
    ("M", "toggle_own_labels", "Human column: my own labels / the consensus of every annotator"),
]

#: The keys the Agreement panel takes too (they need a sample list, not a cell).
AGREEMENT_ACTIONS = ("disagreement", "recheck", "fit", "versions", "consistency_run", "improve")

#: Shown in the footer while the results table has focus (short names; the help lists all).
FOOTER_KEYS = {"p": "Pass", "x": "Fail"}

KEY_DISPLAY = {"right_square_bracket": "]", "left_square_bracket": "["}


def _binding(key: str, action: str, description: str) -> Binding:
    return Binding(key, f"app.{action}", FOOTER_KEYS.get(key, description), show=key in FOOTER_KEYS,
                   key_display=KEY_DISPLAY.get(key))


def table_bindings() -> list[Binding]:
    """Every calibration key, for the results table."""
    return [_binding(key, action, description) for key, action, description in CALIBRATION_KEYS]


def agreement_bindings() -> list[Binding]:
    """The calibration keys that also act on the Agreement panel."""
    return [_binding(key, action, description) for key, action, description in CALIBRATION_KEYS
            if action.split("(")[0] in AGREEMENT_ACTIONS]
