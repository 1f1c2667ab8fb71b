"""The studio: a Textual app over the core and the engine (docs/getting-started/studio.md,
docs/development.md#the-studios-code).

Modules: ``app`` (StudioApp: layout, workers, message handlers), ``messages``
(engine events and file changes as Textual messages), ``model`` (pure state:
flips, filters, sorting; no Textual), ``matrix`` (the virtualised results
table), ``inspector``, ``statusbar``, ``help``, ``conflict`` (the external-change
prompt), ``watch`` (watchfiles on the folders of the files in use).
"""

from __future__ import annotations

from rubric_studio._lazy import lazy_submodules

#: The public modules of this package, each imported on first use (``rubric_studio.tui.<name>``).
__all__ = [
    "app",
    "app_commands",
    "calibration",
    "conflict",
    "dialogs",
    "draft_screen",
    "editor",
    "help",
    "host",
    "improve",
    "interop_actions",
    "judges_screen",
    "key_order",
    "messages",
    "new_rubric",
    "probe_screen",
    "results",
    "save_flow",
    "statusbar",
    "trust_prompt",
    "watch",
]
__getattr__, __dir__ = lazy_submodules(__name__, __all__)
