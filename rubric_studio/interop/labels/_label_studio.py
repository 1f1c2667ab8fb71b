"""Label Studio (https://labelstud.io): a labeling config and tasks out, its JSON export in.

Export writes a labeling config (XML): the sample's input and output as ``Text``; per judged
criterion a ``Choices`` (met / unmet) named ``criterion:<id>``, or for an analytic criterion a
``Number`` from 0 to 10; the sample's ``verdict`` (pass / fail), ``score`` (0-10) and a ``note``
(``TextArea``). The tasks file holds one task per sample; its ``data.sample_id`` finds the sample
again. Import reads the project's JSON export: each annotation is its author's whole label of
that sample (a control left empty clears that field). ``completed_by`` is a user id (Label Studio
1.23) mapped to an e-mail through ``users`` (else ``user-<id>``), or a user object with ``email``
(other versions). Cancelled annotations are skipped; a task or a control that cannot be mapped is
warned about with its id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import quoteattr

from rubric_studio.core.labels import LabelChange
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.interop.labels._common import ImportedLabels, annotator_name, cell_changes, number_in

CRITERION_PREFIX = "criterion:"


def _judged(rubric: Rubric) -> list[Criterion]:
    return [c for c in rubric.criteria if c.is_judged]


def labeling_config(rubric: Rubric, ground_truth: bool = False) -> str:
    """The project's labeling config (XML) for ``rubric``."""
    lines = ["<View>", f"  <Header value={quoteattr(rubric.name)}/>", '  <Header value="Input" size="5"/>',
             '  <Text name="input" value="$input"/>']
    if ground_truth:
        lines += ['  <Header value="Expected" size="5"/>', '  <Text name="ground_truth" value="$ground_truth"/>']
    lines += ['  <Header value="Output" size="5"/>', '  <Text name="output" value="$output"/>']
    for criterion in _judged(rubric):
        lines += _criterion_controls(criterion)
    lines += ['  <Header value="Verdict" size="5"/>',
              '  <Choices name="verdict" toName="output" choice="single-radio" showInline="true">',
              '    <Choice value="pass"/>', '    <Choice value="fail"/>', "  </Choices>",
              '  <Header value="Score (0-10, optional)" size="6"/>',
              '  <Number name="score" toName="output" min="0" max="10"/>',
              '  <Header value="Note" size="6"/>',
              '  <TextArea name="note" toName="output" rows="3" editable="true" maxSubmissions="1"/>',
              "</View>"]
    return "\n".join(lines) + "\n"


def _criterion_controls(criterion: Criterion) -> list[str]:
    name = quoteattr(CRITERION_PREFIX + criterion.key)
    title = f"{criterion.key}: {criterion.outcome or ''}"
    if criterion.is_penalty:
        title += " (a penalty: met means it is present)"
    if criterion.operator == "contradiction":
        title += " (met when the output does NOT contradict this)"
    lines = [f"  <Header value={quoteattr(title)} size=\"5\"/>"]
    if criterion.kind == "analytic":
        bands = "; ".join(f"{low}: {text}" for low, text in sorted((criterion.score_ranges or {}).items()))
        lines += [f"  <Header value={quoteattr('0-10 — ' + bands)} size=\"6\"/>",
                  f'  <Number name={name} toName="output" min="0" max="10"/>']
        return lines
    return lines + [f'  <Choices name={name} toName="output" choice="single-radio" showInline="true">',
                    '    <Choice value="met"/>', '    <Choice value="unmet"/>', "  </Choices>"]


def tasks(rubric: Rubric, samples: list) -> str:
    """The tasks file (JSON): one task per sample, ``data.sample_id`` its id."""
    found = []
    for sample in samples:
        data = {"sample_id": sample.id, "rubric": rubric.name, "input": sample.input or "", "output": sample.output}
        if any(s.ground_truth for s in samples):
            data["ground_truth"] = sample.ground_truth or ""
        found.append({"data": data})
    return json.dumps(found, ensure_ascii=False, indent=2) + "\n"


# -- import -----------------------------------------------------------------------------------
def read_export(text: str, path: str, rubric: Rubric, users: Mapping[str, str] | None = None) -> ImportedLabels:
    """The label changes in a Label Studio JSON export; RubricError when it is not one."""
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise RubricError([Problem(path, exc.lineno, exc.colno, f"not valid JSON: {exc.msg}")]) from None
    if not isinstance(data, list):
        raise RubricError([Problem(path, 1, 1, "expected Label Studio's JSON export: a list of tasks "
                                               "with data and annotations")])
    found = ImportedLabels()
    for task in data:
        _read_task(task, rubric, users or {}, found)
    return found


def _read_task(task: Any, rubric: Rubric, users: Mapping[str, str], found: ImportedLabels) -> None:
    if not isinstance(task, dict):
        found.warnings.append(f"an entry that is not a task ({type(task).__name__}) was skipped")
        return
    task_id = task.get("id", "?")
    data = task.get("data") if isinstance(task.get("data"), dict) else {}
    sample_id = data.get("sample_id")
    if not isinstance(sample_id, str | int) or isinstance(sample_id, bool) or not str(sample_id).strip():
        found.warnings.append(f"task {task_id}: no data.sample_id (not a task rubric-studio wrote); skipped")
        return
    for annotation in task.get("annotations") or []:
        if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
            continue
        try:
            annotator = _annotator(annotation.get("completed_by"), users)
        except ValueError as exc:
            found.warnings.append(f"task {task_id}: annotation {annotation.get('id', '?')}: {exc}; skipped")
            continue
        changes = _annotation_changes(annotation, rubric, f"task {task_id}", found.warnings)
        found.add(str(sample_id), annotator, changes)


def _annotator(completed_by: Any, users: Mapping[str, str]) -> str:
    """The annotator of an annotation: its user's e-mail (through ``users`` for a bare id), else ``user-<id>``."""
    if isinstance(completed_by, dict):
        email = completed_by.get("email")
        if isinstance(email, str) and email.strip():
            return annotator_name(email)
        completed_by = completed_by.get("id")
    if isinstance(completed_by, int | str) and not isinstance(completed_by, bool) and str(completed_by).strip():
        return annotator_name(users.get(str(completed_by).strip()) or f"user-{str(completed_by).strip()}")
    raise ValueError(f"completed_by is not a user ({completed_by!r})")


def _annotation_changes(annotation: dict, rubric: Rubric, where: str, warnings: list[str]) -> list[LabelChange]:
    """One annotation as its author's whole label: every field of the config, empty ones cleared."""
    values: dict[str, Any] = {}
    for item in annotation.get("result") or []:
        if not isinstance(item, dict) or not isinstance(item.get("value"), dict):
            continue
        name, value = str(item.get("from_name", "")), item["value"]
        values[name] = _result_value(value)
    judged = {CRITERION_PREFIX + c.key: c for c in _judged(rubric)}
    for name in values:
        if name not in judged and name not in ("verdict", "score", "note"):
            warnings.append(f"{where}: control {name!r} is not one of the rubric's; skipped")
    changes = [LabelChange("verdict", _choice(values.get("verdict"), ("pass", "fail"), where, warnings)),
               LabelChange("score", number_in(values.get("score"))),
               LabelChange("note", values.get("note") if isinstance(values.get("note"), str) else None)]
    for name, criterion in judged.items():
        value = values.get(name)
        try:
            changes += cell_changes(criterion, value)
        except ValueError as exc:
            warnings.append(f"{where}: control {name!r}: {exc}; left empty")
            changes += cell_changes(criterion, None)
    return changes


def _result_value(value: dict) -> Any:
    if "choices" in value:
        choices = value["choices"]
        return choices[0] if isinstance(choices, list) and choices else None
    if "number" in value:
        return value["number"]
    if "rating" in value:
        return value["rating"]
    if "text" in value:
        text = value["text"]
        return "\n".join(str(t) for t in text) if isinstance(text, list) else str(text)
    return None


def _choice(value: Any, allowed: tuple[str, ...], where: str, warnings: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in allowed:
        return value.strip().lower()
    warnings.append(f"{where}: verdict {value!r} is not {' or '.join(allowed)}; left empty")
    return None


def read_users(text: str, path: str) -> dict[str, str]:
    """A user id -> e-mail mapping: ``{"1": "a@x.org"}``, or Label Studio's ``/api/users`` reply (a list of
    users with ``id`` and ``email``, or a page of them under ``results``); RubricError when it is neither."""
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise RubricError([Problem(path, exc.lineno, exc.colno, f"not valid JSON: {exc.msg}")]) from None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]
    if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()):
        return {str(k).strip(): v for k, v in data.items()}
    if isinstance(data, list) and all(isinstance(u, dict) and "id" in u for u in data):
        return {str(u["id"]): str(u.get("email") or u.get("username") or f"user-{u['id']}") for u in data}
    raise RubricError([Problem(path, 1, 1, 'expected {"<user id>": "<e-mail>", ...} or a list of users '
                                           "with id and email (Label Studio's /api/users)")])
