"""Human labels: the ``<rubric>.labels.yaml`` sidecar and ``label`` fields of samples, read and
edited in place with comments kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

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
    from rubric_studio.core.labels._labels import (
        Label,
        LabelChange,
        consensus,
        labels_from_samples,
        labels_path_for,
        load_labels,
        parse_label,
    )
    from rubric_studio.core.labels._store import (
        LabelConflict,
        apply_change,
        apply_changes,
        insert_key,
        round_trip_yaml,
        set_verdict,
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
    "insert_key": "_store",
    "Label": "_labels",
    "LabelChange": "_labels",
    "LabelConflict": "_store",
    "labels_from_samples": "_labels",
    "labels_of": "_annotators",
    "labels_path_for": "_labels",
    "load_labels": "_labels",
    "parse_label": "_labels",
    "round_trip_yaml": "_store",
    "set_verdict": "_store",
    "unclaim": "_claim",
    "UNNAMED": "_annotators",
}
__all__ = [
    "ADJUDICATED",
    "annotator_is_named",
    "annotator_names",
    "apply_change",
    "apply_changes",
    "check_name",
    "claim_unnamed",
    "consensus",
    "current_annotator",
    "insert_key",
    "Label",
    "LabelChange",
    "LabelConflict",
    "labels_from_samples",
    "labels_of",
    "labels_path_for",
    "load_labels",
    "parse_label",
    "round_trip_yaml",
    "set_verdict",
    "unclaim",
    "UNNAMED",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
