"""Rubric versions: what each graded state was, what changed between two of them, and the run
history kept on disk across sessions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.engine.versions._causes import annotators_key_of, grader_key_of, judge_key_of
    from rubric_studio.engine.versions._diff import VersionDiff
    from rubric_studio.engine.versions._history import RunHistory, history_folder, history_path, open_history
    from rubric_studio.engine.versions._versions import (
        LABEL_KINDS,
        LABELS_CHANGE,
        Version,
        VersionHistory,
        labels_fingerprint_of,
        samples_fingerprint_of,
        text_hash,
    )

#: Public name -> the private module that defines it.
_EXPORTS = {
    "annotators_key_of": "_causes",
    "grader_key_of": "_causes",
    "history_folder": "_history",
    "history_path": "_history",
    "judge_key_of": "_causes",
    "LABEL_KINDS": "_versions",
    "LABELS_CHANGE": "_versions",
    "labels_fingerprint_of": "_versions",
    "open_history": "_history",
    "RunHistory": "_history",
    "samples_fingerprint_of": "_versions",
    "text_hash": "_versions",
    "Version": "_versions",
    "VersionDiff": "_diff",
    "VersionHistory": "_versions",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
