"""A ``rubric-studio grade --format json`` report read back, for the judge's verdicts as Label Studio
predictions (:func:`rubric_studio.interop.labels._label_studio.predictions_from`).

Only what a prediction needs is kept: the rubric's hash (to say when the rubric changed since),
the judge's model name, and each sample's verdict, score and cells. A file that is not such a
report is a RubricError naming it (line and column for JSON that does not parse), read with the
bounds every labels file is read with (:func:`rubric_studio.interop.labels._common.read_json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.interop.labels._common import json_kind, read_json

#: A report grows with samples × criteria × rationale: larger than the other labels files may be.
REPORT_MAX_BYTES = 200 * 1024 * 1024
_EXPECTED = "expected the JSON report of rubric-studio grade --format json ({rubric, judge, samples: [{id, verdict, " \
            "criteria}]})"


@dataclass(frozen=True)
class GradeReport:
    """The verdicts of one grading run: sample id -> the report's sample (``verdict``, ``score``, ``criteria``)."""

    path: str
    rubric_hash: str | None
    model: str | None  # the judge's model name (a panel's name for a judge panel); None without a judge
    samples: Mapping[str, Mapping[str, Any]]


def read_grade_report(text: str, path: str) -> GradeReport:
    """The report in ``text`` (read from ``path``); RubricError saying what is wrong when it is not one."""
    data = read_json(text.lstrip("\ufeff"), path)
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        raise RubricError([Problem(path, 1, 1, f"{_EXPECTED}; got {json_kind(data)}"
                                   + ("" if not isinstance(data, dict) else " without a samples list"))])
    samples: dict[str, Mapping[str, Any]] = {}
    for index, sample in enumerate(data["samples"]):
        where = f"samples[{index}]"
        if not isinstance(sample, dict) or not _plain_id(sample.get("id")):
            raise RubricError([Problem(path, None, None, f"{where}: expected a sample with an id; {_EXPECTED}")])
        if not isinstance(sample.get("criteria", []), list):
            raise RubricError([Problem(path, None, None, f"{where}: criteria is {json_kind(sample['criteria'])}, "
                                                         f"expected a list of cells; {_EXPECTED}")])
        sample_id = str(sample["id"])
        if sample_id in samples:
            raise RubricError([Problem(path, None, None, f"{where}: sample {sample_id!r} is in the report twice; "
                                                         "a report of one grading run has each sample once")])
        samples[sample_id] = sample
    rubric = data.get("rubric") if isinstance(data.get("rubric"), dict) else {}
    judge = data.get("judge") if isinstance(data.get("judge"), dict) else {}
    digest = rubric.get("hash")
    model = judge.get("model")
    return GradeReport(path, digest if isinstance(digest, str) else None,
                       model if isinstance(model, str) and model.strip() else None, samples)


def _plain_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and bool(str(value).strip())
