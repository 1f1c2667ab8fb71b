"""Label Studio (https://labelstud.io): a labeling config and tasks out, its JSON export in.

Export writes a labeling config (XML): the sample's input and output as ``Text``; per judged
criterion a ``Choices`` (met / unmet) named ``criterion:<id>``, or for an analytic criterion a
``Number`` from 0 to 10; the sample's ``verdict`` (pass / fail), ``score`` (0-10) and a ``note``
(``TextArea``). The tasks file holds one task per sample; its ``data.sample_id`` finds the sample
again. Import reads the project's JSON export: each annotation is its author's whole label of
that sample (a control left empty clears that field). ``completed_by`` is a user id (Label Studio
1.23) mapped to an e-mail through ``users`` (else ``user-<id>``), or a user object with ``email``
(other versions). Cancelled annotations are skipped; so is, with a warning, an annotation with no
value of the rubric's controls in its ``result`` (none, empty, malformed): it never clears a label.
A task or a control that cannot be mapped, or a value that cannot be read, is warned about with
its task and annotation id; a task of a sample not among the known samples refuses the import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rubric_studio.core.labels import LabelChange
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.interop.labels._common import (
    ImportedLabels,
    SampleIds,
    annotator_name,
    cell_changes,
    described,
    enough,
    json_kind,
    number_in,
    read_json,
    text_or_none,
)

CRITERION_PREFIX = "criterion:"


def _judged(rubric: Rubric) -> list[Criterion]:
    return [c for c in rubric.criteria if c.is_judged]


def labeling_config(rubric: Rubric, ground_truth: bool = False) -> str:
    """The project's labeling config (XML) for ``rubric``."""
    from xml.sax.saxutils import quoteattr  # it imports urllib.request (and ssl): export only

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
    from xml.sax.saxutils import quoteattr

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
def read_export(text: str, path: str, rubric: Rubric, users: Mapping[str, str] | None = None,
                known: SampleIds | None = None) -> ImportedLabels:
    """The label changes in a Label Studio JSON export; RubricError when it is not one, or when a task
    names a sample that is not among ``known`` (then nothing should be written)."""
    data = read_json(text.lstrip("\ufeff"), path)
    if not isinstance(data, list):
        raise RubricError([Problem(path, 1, 1, "expected Label Studio's JSON export: a list of tasks "
                                               "with data and annotations")])
    found, problems = ImportedLabels(), []
    for task in data:
        if enough(problems, path):
            break
        unknown = _read_task(task, rubric, users or {}, found, known)
        if unknown is not None:
            problems.append(Problem(path, None, None, unknown))
    if problems:
        raise RubricError(problems)
    return found


def _read_task(task: Any, rubric: Rubric, users: Mapping[str, str], found: ImportedLabels,
               known: SampleIds | None) -> str | None:
    """Read one task's annotations into ``found``; why it cannot be imported (its sample is unknown), or None."""
    if not isinstance(task, dict):
        found.warnings.append(f"an entry that is not a task ({json_kind(task)}) was skipped")
        return None
    task_id = task.get("id", "?")
    data = task.get("data") if isinstance(task.get("data"), dict) else {}
    sample_id = data.get("sample_id")
    if not isinstance(sample_id, str | int) or isinstance(sample_id, bool) or not str(sample_id).strip():
        found.warnings.append(f"task {task_id}: no data.sample_id (not a task rubric-studio wrote); skipped")
        return None
    unknown = known.unknown(str(sample_id)) if known is not None else None
    if unknown is not None:
        return f"task {task_id}: {unknown}"
    annotations = task.get("annotations") or []
    for annotation in annotations if isinstance(annotations, list) else []:
        if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
            continue
        where = f"task {task_id}: annotation {annotation.get('id', '?')}"
        try:
            annotator = _annotator(annotation.get("completed_by"), users)
        except ValueError as exc:
            found.warnings.append(f"{where}: {exc}; skipped")
            continue
        changes = _annotation_changes(annotation, rubric, where, found.warnings)
        if changes is not None:
            found.add(str(sample_id), annotator, changes)
    return None


def _annotator(completed_by: Any, users: Mapping[str, str]) -> str:
    """The annotator of an annotation: its user's e-mail (through ``users`` for a bare id), else ``user-<id>``."""
    if isinstance(completed_by, dict):
        email = completed_by.get("email")
        if isinstance(email, str) and email.strip():
            return annotator_name(email)
        completed_by = completed_by.get("id")
    if isinstance(completed_by, int | str) and not isinstance(completed_by, bool) and str(completed_by).strip():
        return annotator_name(users.get(str(completed_by).strip()) or f"user-{str(completed_by).strip()}")
    raise ValueError(f"completed_by is not a user ({described(completed_by)})")


def _annotation_changes(annotation: dict, rubric: Rubric, where: str, warnings: list[str]) -> list[LabelChange] | None:
    """One annotation as its author's whole label: every field of the config, empty ones cleared.
    None (said in ``warnings``) when it holds no value of the rubric's controls: an annotation without
    a result, or with nothing chosen, never clears a label."""
    judged = {CRITERION_PREFIX + c.key: c for c in _judged(rubric)}
    values = _result_values(annotation, where, warnings)
    for name in [n for n in values if n not in judged and n not in ("verdict", "score", "note")]:
        warnings.append(f"{where}: control {name!r} is not one of the rubric's; skipped")
        del values[name]
    if not values:
        warnings.append(f"{where} has no result with a value of the rubric's controls (nothing chosen); "
                        "skipped, no label changed")
        return None
    changes = [LabelChange("verdict", _choice(values.get("verdict"), ("pass", "fail"), where, warnings)),
               LabelChange("score", _score(values.get("score"), where, warnings)),
               LabelChange("note", _note(values.get("note"), where, warnings))]
    for name, criterion in judged.items():
        try:
            changes += cell_changes(criterion, values.get(name))
        except ValueError as exc:
            warnings.append(f"{where}: control {name!r}: {exc}; left empty")
            changes += cell_changes(criterion, None)
    return changes


def _result_values(annotation: dict, where: str, warnings: list[str]) -> dict[str, Any]:
    """Control name -> value of an annotation's ``result`` (the items that are not a control's value are
    said in ``warnings`` and left out)."""
    result = annotation.get("result")
    if not isinstance(result, list):
        return {}
    values: dict[str, Any] = {}
    for index, item in enumerate(result):
        if not isinstance(item, dict) or not isinstance(item.get("from_name"), str) or not isinstance(item.get("value"), dict):
            warnings.append(f"{where}: result item {index + 1} is not a control's value "
                            "(expected from_name and value); skipped")
            continue
        try:
            values[item["from_name"]] = _result_value(item["value"])
        except ValueError as exc:
            warnings.append(f"{where}: control {item['from_name']!r}: {exc}; left empty")
            values[item["from_name"]] = None
    return values


def _result_value(value: dict) -> Any:
    """The value of one result item: a choice, a number, a rating or a text; ValueError when malformed."""
    if "choices" in value:
        choices = value["choices"]
        if not isinstance(choices, list) or len(choices) > 1 or not all(isinstance(c, str) for c in choices):
            raise ValueError(f"expected one choice, got {described(choices)}")
        return choices[0] if choices else None
    for kind in ("number", "rating"):
        if kind in value:
            return value[kind]
    if "text" in value:
        text = value["text"]
        if isinstance(text, list) and all(isinstance(t, str) for t in text):
            return "\n".join(text)
        if not isinstance(text, str):
            raise ValueError(f"expected text, got {json_kind(text)}")
        return text
    raise ValueError(f"expected choices, number, rating or text, got {', '.join(map(str, value)) or 'nothing'}")


def _choice(value: Any, allowed: tuple[str, ...], where: str, warnings: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in allowed:
        return value.strip().lower()
    warnings.append(f"{where}: control 'verdict': {described(value)} is not {' or '.join(allowed)}; left empty")
    return None


def _score(value: Any, where: str, warnings: list[str]) -> float | None:
    number = number_in(value)
    if number is None and value is not None:
        warnings.append(f"{where}: control 'score': expected a number from 0 to 10, got {described(value)}; left empty")
    return number


def _note(value: Any, where: str, warnings: list[str]) -> str | None:
    try:
        return text_or_none(value)
    except ValueError as exc:
        warnings.append(f"{where}: control 'note': {exc}; left empty")
        return None


def read_users(text: str, path: str) -> dict[str, str]:
    """A user id -> e-mail mapping: ``{"1": "a@x.org"}``, or Label Studio's ``/api/users`` reply (a list of
    users with ``id`` and ``email``, or a page of them under ``results``); RubricError when it is neither."""
    return users_from(read_json(text.lstrip("\ufeff"), path), path)


def users_from(data: Any, path: str) -> dict[str, str]:
    """The user id -> e-mail mapping in JSON ``data`` read from ``path`` (see :func:`read_users`)."""
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]
    if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()):
        return {str(k).strip(): v for k, v in data.items()}
    if isinstance(data, list) and all(isinstance(u, dict) and _plain_id(u.get("id")) for u in data):
        return {str(u["id"]): _user_name(u) for u in data}
    raise RubricError([Problem(path, 1, 1, 'expected {"<user id>": "<e-mail>", ...} or a list of users '
                                           "with id and email (Label Studio's /api/users)")])


def _plain_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _user_name(user: dict) -> str:
    """A user's e-mail, else user name, else ``user-<id>`` (whatever is text)."""
    return next((user[k] for k in ("email", "username") if isinstance(user.get(k), str) and user[k].strip()),
                f"user-{user['id']}")
