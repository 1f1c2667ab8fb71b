"""Samples given in Python (a notebook, a test): :class:`Sample` objects, bare output strings and
mappings, turned into the samples a grader takes.

A string is one output; its id is its position counted from 1 (``"1"``, ``"2"``, ...). A mapping
has the keys of a samples file record (``id``, ``output`` or ``submission`` or ``messages``,
``input``, ``ground_truth``, ``metadata``, ``label`` ...); without ``id`` it too gets its
position. Anything wrong is one ValueError naming the item's index and the problem.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rubric_studio.core.samples._samples import Sample, record_to_sample

#: The ``source`` recorded on samples given in Python.
PYTHON_SOURCE = "<python>"


def as_sample(item: Any, index: int) -> Sample:
    """One sample from a :class:`Sample`, a string or a mapping at ``index`` (0-based) of the list."""
    if isinstance(item, Sample):
        return item
    if isinstance(item, str):
        return Sample(id=str(index + 1), output=item, source=PYTHON_SOURCE)
    if isinstance(item, Mapping):
        try:
            return record_to_sample(dict(item), default_id=str(index + 1), source=PYTHON_SOURCE)
        except ValueError as exc:
            raise ValueError(f"samples[{index}]: {exc}") from None
    raise ValueError(f"samples[{index}]: expected a Sample, a string (the output) or a mapping like a samples "
                     f"file record, got {type(item).__name__}")


def as_samples(items: Iterable[Any]) -> list[Sample]:
    """The samples of ``items``: :class:`Sample` objects, output strings (ids ``"1"``, ``"2"`` ... by
    position) or mappings with the keys of a samples file record.

    Returns:
        A list of :class:`Sample`.
    Raises:
        ValueError: naming the index of a malformed item, or when two share an id.
    """
    if isinstance(items, str | bytes | Mapping):
        raise ValueError(f"samples: expected a list of samples, got a single {type(items).__name__} "
                         "(wrap it in a list)")
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        sample = as_sample(item, index)
        if sample.id in seen:
            raise ValueError(f"samples[{index}]: id {sample.id!r} is already the id of samples[{seen[sample.id]}]")
        seen[sample.id] = index
        samples.append(sample)
    return samples
