"""The studio's command palette and help: one place lists what the app can do.

:func:`palette` yields the app's :class:`~textual.app.SystemCommand` entries — saving,
grading, filters and sorts, views, then each flow's own commands (labelling, calibration,
interop, drafting, improving, comparing judges, probing for bias, the rubric card), trust when something
awaits it, and a new rubric.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand

from rubric_studio.session.results_model import FILTERS, SORTS
from rubric_studio.tui import card_actions, draft_screen, interop_actions, judges_screen, probe_screen
from rubric_studio.tui.calibration import _annotators as annotators
from rubric_studio.tui.calibration import _flow as calibration_flow
from rubric_studio.tui.calibration import _labeling as labeling
from rubric_studio.tui.improve import _screen as improve_screen
from rubric_studio.tui.results import ResultsMatrix

if TYPE_CHECKING:
    from rubric_studio.tui.host import StudioHost

#: Filters with a key of their own in Results (``f`` cycles through all of them).
FILTER_KEYS = {"people": "D"}

VIEWS = [
    ("Show editor", "Focus the rubric editor (F2)", "editor"),
    ("Show results", "The live samples × criteria matrix (F3)", "results"),
    ("Show inspector", "Details of the selected cell (F4)", "inspector"),
    ("Show agreement", "Judge vs human agreement (F6)", "agreement"),
]


def _results(app: Any) -> Iterable[SystemCommand]:
    yield SystemCommand("Save rubric", "Write the rubric (ctrl+s) and re-grade", app.action_save)
    yield SystemCommand("Re-grade now", "Grade again, retrying errored cells (F5)", app.action_regrade)
    for key, label in FILTERS.items():
        shortcut = f" ({FILTER_KEYS[key]})" if key in FILTER_KEYS else ""
        yield SystemCommand(f"Filter: {label}", f"Show {label} in Results{shortcut}",
                            lambda k=key: app.action_set_filter(k))
    for key, label in SORTS.items():
        yield SystemCommand(f"Sort by {label}", f"Order Results by {label}", lambda k=key: app.action_set_sort(k))
    yield SystemCommand("Reverse sort", "Reverse the order of Results (r)",
                        lambda: app.query_one(ResultsMatrix).action_reverse_sort())
    yield SystemCommand("Next flipped row", "Jump to the next cell that flipped since the last version (n)",
                        lambda: app.query_one(ResultsMatrix).action_next_flip(1))
    for title, help_text, where in VIEWS:
        yield SystemCommand(title, help_text, lambda w=where: app.action_show(w))
    yield SystemCommand("Toggle editor", "Hide or show the editor for a wide results table (F7)",
                        app.action_toggle_editor)


def palette(app: StudioHost) -> Iterable[SystemCommand]:
    """Every palette entry of the studio, in the order a user scans them."""
    yield from _results(app)
    yield from labeling.commands(app)
    yield from annotators.commands(app)
    yield from calibration_flow.commands(app)
    yield from interop_actions.commands(app)
    yield from draft_screen.commands(app)
    yield from improve_screen.commands(app)
    yield from judges_screen.commands(app)
    yield from probe_screen.commands(app)
    yield from card_actions.commands(app)
    yield SystemCommand("New rubric…", "Start a new rubric file beside this one (rubric-studio new)",
                        app.action_new_rubric)
    if app.trust_flow.pending():  # type: ignore[attr-defined]
        yield SystemCommand("Trust this rubric", "Use its code checks and judge settings (only for rubrics you trust)",
                            app.action_trust)
    yield SystemCommand("Help", "Keys, cell legend, judge setup (F1 / ?)", app.action_help)
