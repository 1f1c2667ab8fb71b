"""Label Studio (https://labelstud.io): a labeling config and tasks out, its JSON export in.

Export writes a labeling config (XML): the sample's input and output as ``Text``; per judged
criterion a ``Choices`` (met / unmet) named ``criterion:<id>``, or for an analytic criterion a
``Number`` from 0 to 10; the sample's ``verdict`` (pass / fail), ``score`` (0-10) and a ``note``
(``TextArea``). The tasks file holds one task per sample; its ``data.sample_id`` finds the sample
again. Each task carries the sidecar's labels of its sample as ``annotations``, one per annotator,
and, given a grading report, the judge's verdicts as ``predictions`` (pre-annotations).

Label Studio's import cannot say who annotated (every imported annotation is the importing
user's) and drops an annotation's own ``meta``, but keeps the ``meta`` of each result item, also
when someone edits the annotation in its labelling screen (measured on 1.23.2). So each result
item of an exported annotation carries ``meta: {"rubric_studio": {"annotator": NAME}}``, plus,
under ``criteria``, the labels no control of the config can show (a check's met / unmet, an
analytic criterion's met / unmet given without a 0-10 score). Names and notes only ever go into
the tasks JSON, never into the XML.

Import reads the project's JSON export: each annotation is its author's whole label of that
sample (a control left empty clears that field). Its author is the annotator its result items
carry, else ``completed_by``: a user id (Label Studio 1.23) mapped to an e-mail through ``users``
(else ``user-<id>``), or a user object with ``email`` (other versions). Cancelled annotations are
skipped; so is, with a warning, an annotation with no value of the rubric's controls in its
``result`` (none, empty, malformed): it never clears a label. A task or a control that cannot be
mapped, or a value that cannot be read, is warned about with its task and annotation id; a task
of a sample not among the known samples refuses the import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.labels import ADJUDICATED, Label, LabelChange
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
    plain_number,
    read_json,
    text_or_none,
)
from rubric_studio.interop.labels._grade_report import GradeReport

CRITERION_PREFIX = "criterion:"
#: The key, in a result item's ``meta``, of what rubric-studio carries through Label Studio.
CARRIED = "rubric_studio"
#: The object every control of the config labels.
TO_NAME = "output"
#: At most this many sample ids are named in one warning.
_NAMED = 5


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


@dataclass
class TasksFile:
    """The tasks file (JSON ``text``) and what went into it, for the summary and the warnings."""

    text: str
    annotations: int = 0
    annotators: list[str] = field(default_factory=list)
    predictions: int = 0
    warnings: list[str] = field(default_factory=list)


def tasks(rubric: Rubric, samples: list) -> str:
    """The tasks file (JSON): one task per sample, ``data.sample_id`` its id (no labels, no predictions)."""
    return tasks_file(rubric, samples).text


def tasks_file(rubric: Rubric, samples: list, labels: Mapping[str, Mapping[str, Label]] | None = None,
               report: GradeReport | None = None) -> TasksFile:
    """The tasks file: one task per sample, with ``labels`` (sample id -> annotator -> label) as its
    annotations and the verdicts of ``report`` as its predictions; what could not go in is warned about."""
    labels = labels or {}
    found, ids = TasksFile(""), [s.id for s in samples]
    exported = set(ids)
    predictions = _predictions(rubric, report, ids, found.warnings) if report is not None else {}
    annotators: set[str] = set()
    unshown: list[str] = []
    entries = []
    ground_truth = any(s.ground_truth for s in samples)
    for sample in samples:
        data = {"sample_id": sample.id, "rubric": rubric.name, "input": sample.input or "", "output": sample.output}
        if ground_truth:
            data["ground_truth"] = sample.ground_truth or ""
        task: dict[str, Any] = {"data": data}
        made = []
        for annotator, label in (labels.get(sample.id) or {}).items():
            made_one = annotation(rubric, annotator, label)
            if made_one is not None:
                made.append(made_one)
                annotators.add(annotator)
            elif not label.is_empty:
                unshown.append(f"{sample.id} by {annotator}")
        if made:
            task["annotations"] = made
        if sample.id in predictions:
            task["predictions"] = [predictions[sample.id]]
        entries.append(task)
    found.annotations = sum(len(t.get("annotations", ())) for t in entries)
    found.annotators = sorted(annotators)
    found.predictions = sum(1 for t in entries if "predictions" in t)
    if unshown:
        found.warnings.append(f"{_count(unshown, 'label holds', 'labels hold')} nothing a control of the labeling "
                              "config shows (only a check's met / unmet, or an analytic criterion's without a "
                              f"0-10 score), so no annotation carries {'them' if len(unshown) > 1 else 'it'}: "
                              f"{_named(unshown)}")
    elsewhere = [sample_id for sample_id, by in labels.items() if by and sample_id not in exported]
    if elsewhere:
        found.warnings.append(f"labels of {_count(elsewhere, 'sample', 'samples')} not among the samples are not in "
                              f"the tasks: {_named(elsewhere)}")
    found.text = json.dumps(entries, ensure_ascii=False, indent=2) + "\n"
    return found


def annotation(rubric: Rubric, annotator: str, label: Label) -> dict[str, Any] | None:
    """One annotator's label as a Label Studio annotation (None when no control shows any of it).

    Every result item carries the annotator's name (and the labels no control shows) in its
    ``meta``; the adjudicated label is marked ``ground_truth``."""
    result, carried = [], {}
    if label.verdict in ("pass", "fail"):
        result.append(_item("verdict", "choices", {"choices": [label.verdict]}))
    for criterion in rubric.criteria:
        key, state = criterion.key, label.criteria.get(criterion.key)
        if criterion.is_judged and criterion.kind == "analytic" and key in label.criterion_scores:
            result.append(_item(CRITERION_PREFIX + key, "number",
                                {"number": plain_number(label.criterion_scores[key])}))
        elif criterion.is_judged and criterion.kind != "analytic" and state in ("met", "unmet"):
            result.append(_item(CRITERION_PREFIX + key, "choices", {"choices": [state]}))
        elif state in ("met", "unmet"):
            carried[key] = state
    if label.score is not None:
        result.append(_item("score", "number", {"number": plain_number(label.score)}))
    if label.note:
        result.append(_item("note", "textarea", {"text": [label.note]}))
    if not result:
        return None
    meta = {CARRIED: {"annotator": annotator, **({"criteria": carried} if carried else {})}}
    return {"result": [{**item, "meta": meta} for item in result], "was_cancelled": False,
            "ground_truth": annotator == ADJUDICATED}


def _item(control: str, kind: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"from_name": control, "to_name": TO_NAME, "type": kind, "value": value}


def _predictions(rubric: Rubric, report: GradeReport, sample_ids: list[str], warnings: list[str]) -> dict[str, Any]:
    """The report's verdicts as one prediction per sample id (those among ``sample_ids`` with a verdict to show);
    a report of another version of the rubric, or of other samples, is said in ``warnings``."""
    now = rubric.content_hash()
    if report.rubric_hash != now:
        warnings.append(f"{report.path}: graded another version of the rubric (report's rubric hash "
                        f"{report.rubric_hash or 'missing'}, the rubric's now {now}); its verdicts are added as "
                        "predictions all the same")
    known = set(sample_ids)
    others = [sample_id for sample_id in report.samples if sample_id not in known]
    if others:
        warnings.append(f"{report.path}: {len(others)} of its {len(report.samples)} samples are not among the samples "
                        f"exported; their verdicts are left out: {_named(others)}")
    found = {}
    for sample_id in sample_ids:
        if sample_id in report.samples:
            made = prediction(rubric, report.samples[sample_id], report.model)
            if made is not None:
                found[sample_id] = made
    return found


def prediction(rubric: Rubric, sample: Mapping[str, Any], model: str | None) -> dict[str, Any] | None:
    """A report sample's verdicts as a Label Studio prediction (``model_version``: the judge's model): the
    verdict, each judged criterion's met / unmet (an analytic one's 0-10 score) and the score (0-10) when
    the sample has one; None when it has none of them (every cell errored or unjudged)."""
    result = []
    if sample.get("verdict") in ("pass", "fail"):
        result.append(_item("verdict", "choices", {"choices": [sample["verdict"]]}))
    cells = {str(c.get("id")): c for c in sample.get("criteria") or [] if isinstance(c, dict)}
    for criterion in _judged(rubric):
        cell = cells.get(criterion.key) or {}
        if cell.get("status") not in ("met", "unmet"):
            continue
        if criterion.kind != "analytic":
            result.append(_item(CRITERION_PREFIX + criterion.key, "choices", {"choices": [cell["status"]]}))
        elif (raw := _number(cell.get("raw_score"), 10)) is not None:
            result.append(_item(CRITERION_PREFIX + criterion.key, "number", {"number": raw}))
    if (score := _number(sample.get("score"), 1)) is not None:
        result.append(_item("score", "number", {"number": plain_number(round(score * 10, 3))}))
    return {"model_version": model or "rubric-studio", "result": result} if result else None


def _number(value: Any, top: float) -> int | float | None:
    """A JSON number from 0 to ``top`` as written (an int stays an int), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= top:
        return None
    return plain_number(value)


def _named(items: Iterable[str]) -> str:
    listed = list(items)
    return ", ".join(listed[:_NAMED]) + (f" and {len(listed) - _NAMED} more" if len(listed) > _NAMED else "")


def _count(items: list, one: str, many: str) -> str:
    return f"{len(items)} {one if len(items) == 1 else many}"


# -- import -----------------------------------------------------------------------------------
def read_export(text: str, path: str, rubric: Rubric, users: Mapping[str, str] | None = None,
                known: SampleIds | None = None) -> ImportedLabels:
    """The label changes in a Label Studio JSON export; RubricError when it is not one, or when a task
    names a sample that is not among ``known`` (then nothing should be written)."""
    data = read_json(text.lstrip("\ufeff"), path)
    if not isinstance(data, list):
        raise RubricError([Problem(path, 1, 1, "expected Label Studio's JSON export: a list of tasks "
                                               "with data and annotations")])
    found, problems, carried = ImportedLabels(), [], []
    for task in data:
        if enough(problems, path):
            break
        unknown = _read_task(task, rubric, users or {}, found, known, carried)
        if unknown is not None:
            problems.append(Problem(path, None, None, unknown))
    if problems:
        raise RubricError(problems)
    if carried:
        found.remarks.append(f"{_count(carried, 'annotation', 'annotations')} kept the annotator rubric-studio "
                             "exported it with (not Label Studio's completed_by)")
    return found


def _read_task(task: Any, rubric: Rubric, users: Mapping[str, str], found: ImportedLabels,
               known: SampleIds | None, carried: list[str]) -> str | None:
    """Read one task's annotations into ``found`` (those whose annotator they carry also into ``carried``);
    why it cannot be imported (its sample is unknown), or None."""
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
            name, kept = _carried(annotation)
            annotator = name or _annotator(annotation.get("completed_by"), users)
        except ValueError as exc:
            found.warnings.append(f"{where}: {exc}; skipped")
            continue
        changes = _annotation_changes(annotation, rubric, where, found.warnings, kept)
        if changes is not None:
            found.add(str(sample_id), annotator, changes)
            if name:
                carried.append(where)
    return None


def _carried(annotation: dict) -> tuple[str | None, dict[str, Any]]:
    """What rubric-studio's export carried in the ``meta`` of an annotation's result items: the annotator
    (None when no item carries one) and labels of criteria no control shows; ValueError when it cannot
    be read or its items disagree (someone combined two annotations by hand)."""
    names: set[str] = set()
    criteria: dict[str, Any] = {}
    result = annotation.get("result")
    for item in result if isinstance(result, list) else []:
        meta = item.get("meta") if isinstance(item, dict) else None
        carried = meta.get(CARRIED) if isinstance(meta, dict) else None
        if carried is None:
            continue
        if not isinstance(carried, dict) or not isinstance(carried.get("criteria", {}), dict):
            raise ValueError(f"meta.{CARRIED} of a result item is not what rubric-studio exports "
                             '({"annotator": NAME, "criteria": {...}})')
        if "annotator" in carried:
            if not isinstance(carried["annotator"], str):
                raise ValueError(f"meta.{CARRIED}.annotator is {json_kind(carried['annotator'])}, not a name")
            names.add(carried["annotator"])
        for key, value in carried.get("criteria", {}).items():
            if criteria.setdefault(key, value) != value:
                raise ValueError(f"its result items carry different labels of {key!r}")
    if len(names) > 1:
        raise ValueError(f"its result items carry different annotators ({', '.join(map(described, sorted(names)))})")
    return (annotator_name(names.pop()) if names else None), criteria


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


def _annotation_changes(annotation: dict, rubric: Rubric, where: str, warnings: list[str],
                        carried: Mapping[str, Any]) -> list[LabelChange] | None:
    """One annotation as its author's whole label: every field of the config, empty ones cleared, and
    the ``carried`` labels no control shows (an analytic criterion's only while its Number is empty).
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
        value = values.get(name)
        if name not in values and criterion.kind == "analytic" and criterion.key in carried:
            value = carried[criterion.key]  # met / unmet without a score: no Number can show it
        try:
            changes += cell_changes(criterion, value)
        except ValueError as exc:
            warnings.append(f"{where}: control {name!r}: {exc}; left empty")
            changes += cell_changes(criterion, None)
    return changes + _carried_changes(rubric, carried, where, warnings)


def _carried_changes(rubric: Rubric, carried: Mapping[str, Any], where: str, warnings: list[str]) -> list[LabelChange]:
    """The carried labels of criteria that have no control (checks); a criterion the rubric does not
    have, or a value that is not met / unmet, is warned about and changes nothing."""
    criteria = {c.key: c for c in rubric.criteria}
    changes: list[LabelChange] = []
    for key, value in carried.items():
        criterion = criteria.get(key)
        if criterion is None:
            warnings.append(f"{where}: carried label of {described(key)}: not a criterion of the rubric; skipped")
        elif not criterion.is_judged:
            try:
                changes += cell_changes(criterion, value)
            except ValueError as exc:
                warnings.append(f"{where}: carried label of {key!r}: {exc}; left as it was")
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
