"""Human labels: the ``<rubric>.labels.yaml`` sidecar and ``label`` fields of samples, read and
edited in place with comments kept; :class:`LabelStore` writes a label in O(1) through the
sidecar's journal (:mod:`rubric_studio.core.labels._journal`). Each criterion label records the
wording it answered (:mod:`rubric_studio.core.labels._wording`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.core.labels._annotators import (
        ADJUDICATED,
        UNNAMED,
        annotator_is_named,
        annotator_names,
        check_name,
        current_annotator,
        labels_of,
    )
    from rubric_studio.core.labels._claim import claim_unnamed, unclaim
    from rubric_studio.core.labels._journal import journal_path
    from rubric_studio.core.labels._labels import (
        TIE_MARK,
        TIE_TEXT,
        Label,
        LabelChange,
        consensus,
        human_verdict,
        labels_from_samples,
        labels_path_for,
        parse_label,
    )
    from rubric_studio.core.labels._live import LabelStore
    from rubric_studio.core.labels._overlay import load_labels
    from rubric_studio.core.labels._store import (
        LabelConflict,
        apply_change,
        apply_changes,
        fold_journal,
        fold_journal_counts,
        insert_key,
        round_trip_yaml,
        set_verdict,
    )
    from rubric_studio.core.labels._wording import (
        CURRENT_WORDING,
        OLDER_MARK,
        OLDER_TEXT,
        OLDER_WORDING,
        UNRECORDED_WORDING,
        check_fingerprint,
        older_cells,
        rubric_fingerprints,
        wording_fingerprint,
        wording_state,
    )

#: Public name -> the private module that defines it.
_EXPORTS = {
    "ADJUDICATED": "_annotators",
    "annotator_is_named": "_annotators",
    "annotator_names": "_annotators",
    "apply_change": "_store",
    "apply_changes": "_store",
    "check_name": "_annotators",
    "claim_unnamed": "_claim",
    "consensus": "_labels",
    "current_annotator": "_annotators",
    "human_verdict": "_labels",
    "insert_key": "_store",
    "Label": "_labels",
    "LabelChange": "_labels",
    "LabelConflict": "_store",
    "labels_from_samples": "_labels",
    "LabelStore": "_live",
    "journal_path": "_journal",
    "fold_journal": "_store",
    "fold_journal_counts": "_store",
    "labels_of": "_annotators",
    "labels_path_for": "_labels",
    "load_labels": "_overlay",
    "parse_label": "_labels",
    "round_trip_yaml": "_store",
    "set_verdict": "_store",
    "TIE_MARK": "_labels",
    "TIE_TEXT": "_labels",
    "unclaim": "_claim",
    "UNNAMED": "_annotators",
    "CURRENT_WORDING": "_wording",
    "check_fingerprint": "_wording",
    "OLDER_MARK": "_wording",
    "OLDER_TEXT": "_wording",
    "OLDER_WORDING": "_wording",
    "UNRECORDED_WORDING": "_wording",
    "older_cells": "_wording",
    "rubric_fingerprints": "_wording",
    "wording_fingerprint": "_wording",
    "wording_state": "_wording",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
