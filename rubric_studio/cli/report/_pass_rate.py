"""The human labels ``grade`` corrects its pass rate with.

The sidecar is found as ``calibrate`` finds it: ``--labels``, else ``<rubric>.labels.yaml`` when it
exists. A sample's inline ``label`` field counts too, the sidecar winning field by field, merged as
``calibrate`` merges them (:func:`rubric_studio.cli._labels_in.overlaid`). A streamed grade keeps the
sidecar's labels and the inline ones it meets (few), and counts each graded chunk as it passes:
memory stays flat.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rubric_studio.cli._labels_in import inline_label, overlaid
from rubric_studio.core.labels import Label, labels_path_for, load_labels
from rubric_studio.core.pass_rate import PassRateTally, tally
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.results import SampleResult


def _sidecar(rubric_path: str, labels_arg: str | None) -> tuple[dict[str, Label], list[Problem]]:
    """The sidecar's labels and problems. One found beside the rubric that does not read at all
    only costs the correction (its problems are said); ``--labels`` was checked by ``grade``."""
    try:
        label_set = load_labels(labels_arg or labels_path_for(rubric_path), missing_ok=labels_arg is None)
    except RubricError as exc:
        if labels_arg:
            raise
        return {}, list(exc.problems)
    return dict(label_set.labels), list(label_set.problems)


def _inline(sample: Any) -> Label | None:
    """A sample's own ``label`` field, or None (also when it does not read: ``calibrate`` says why)."""
    try:
        return inline_label(sample)
    except ValueError:
        return None


class RateLabels:
    """The labels of one ``grade`` run of the rubric at ``rubric_path`` (``labels_arg``: ``--labels``):
    :meth:`saw` each sample as it is read (its inline label), then :meth:`label` gives a graded
    sample's merged label; :attr:`problems` are the sidecar's."""

    def __init__(self, rubric_path: str, labels_arg: str | None) -> None:
        self.sidecar, self.problems = _sidecar(rubric_path, labels_arg)
        self.inline: dict[str, Label] = {}
        self._saw_inline = False

    def saw(self, sample: Any) -> None:
        label = _inline(sample)
        if label is not None:
            self.inline[sample.id] = label
            self._saw_inline = True

    def label(self, sample_id: str) -> Label | None:
        return overlaid(self.inline.get(sample_id), self.sidecar.get(sample_id))

    @property
    def any(self) -> bool:
        """Some label was given: in the sidecar, or inline in a sample read so far."""
        return bool(self.sidecar) or self._saw_inline

    def by_id(self, sample_ids: Iterable[str]) -> dict[str, Label]:
        found = ((sid, self.label(sid)) for sid in sample_ids)
        return {sid: label for sid, label in found if label is not None}


def rate_labels(rubric_path: str, labels_arg: str | None, samples: list) -> dict[str, Label]:
    """The labels a whole run's corrected pass rate rests on (``grade``, ``jobs wait``): those of
    ``samples``, inline overlaid by ``labels_arg`` (``--labels``) or the rubric's ``.labels.yaml``.
    The sidecar's problems are said on stderr (those of ``--labels`` the command said already)
    and do not stop the run."""
    from rubric_studio.cli.common import print_problems

    labels = RateLabels(rubric_path, labels_arg)
    if not labels_arg:
        print_problems(labels.problems)
    for sample in samples:
        labels.saw(sample)
    return labels.by_id(s.id for s in samples)


def whole_run_tally(samples: Iterable[SampleResult], labels: Mapping[str, Label], rubric) -> PassRateTally | None:
    """The pass-rate counts of a finished run; None without any label (nothing to correct with)."""
    return tally(samples, labels, (c.key for c in rubric.criteria)) if labels else None


class StreamedRateLabels(RateLabels):
    """Pass-rate counts for a grade written chunk by chunk: :meth:`saw` each sample as it is read,
    :meth:`add` each graded chunk, :meth:`finish` once."""

    def __init__(self, rubric_path: str, labels_arg: str | None, rubric) -> None:
        super().__init__(rubric_path, labels_arg)
        self.counts = PassRateTally(order=tuple(c.key for c in rubric.criteria))

    def add(self, results: Iterable[SampleResult]) -> None:
        for result in results:
            self.counts.count(result, self.label(result.id))
            self.inline.pop(result.id, None)  # graded: its inline label is counted, not needed again

    def finish(self) -> PassRateTally | None:
        """The run's counts; None without any label."""
        return self.counts if self.any else None
