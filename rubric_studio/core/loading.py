"""Load a rubric file into a :class:`Rubric`, or report every problem with its position.

Each problem names the file, line and column of the offending YAML node and what
was expected; unknown keys come with a "did you mean". :func:`lint_rubric` adds
warnings for things that are valid but probably not what the author meant.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rubric_studio.core.checks import CHECK_TYPES, check_type
from rubric_studio.core.files import read_prompt_file, read_user_file
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import (
    PROMPT_PLACEHOLDERS,
    Criterion,
    JudgeSettings,
    Rubric,
    score_range_key,
    unknown_placeholders,
)
from rubric_studio.core.trust import Gate, resolve_prompt_path
from rubric_studio.core.yamlpos import Positions, load_with_positions

_FIELDS_BY_CONTEXT: dict[str, list[str]] = {
    "rubric": list(Rubric.model_fields),
    "judge": list(JudgeSettings.model_fields),
    "criterion": list(Criterion.model_fields),
}


def _fields_at(loc: tuple[Any, ...]) -> list[str]:
    """Names allowed at the mapping that contains ``loc[-1]``."""
    parent = loc[:-1]
    if not parent:
        return _FIELDS_BY_CONTEXT["rubric"]
    if parent == ("judge",):
        return _FIELDS_BY_CONTEXT["judge"]
    if len(parent) == 2 and parent[0] == "criteria":
        return _FIELDS_BY_CONTEXT["criterion"]
    if len(parent) >= 3 and parent[0] == "criteria" and parent[2] == "check":
        tag = parent[3] if len(parent) > 3 else None
        definition = check_type(tag) if isinstance(tag, str) else None
        if definition is not None:
            return ["type", *definition.params, "timeout"]
    return []


def _describe(loc: tuple[Any, ...]) -> str:
    """``criteria[0].check.command`` for pydantic's ``('criteria', 0, 'check', 'command', 'command')``:
    the check-type tag right after ``check`` is pydantic's, not a key of the file."""
    out = ""
    for index, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in CHECK_TYPES and index >= 1 and loc[index - 1] == "check":
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "(rubric)"


#: pydantic's names of union branches, as they appear in an error's location, and what they accept.
_BRANCHES = {"str": "a string", "list[str]": "a list of strings", "int": "an integer", "float": "a number",
             "bool": "true or false", "dict[str,str]": "a mapping of names to strings", "none": "nothing (null)"}


def _branch_at(loc: tuple[Any, ...]) -> int | None:
    """Index of the first union-branch label in ``loc`` (``'str'``, ``'list[str]'`` ...), if any."""
    for index, part in enumerate(loc):
        if isinstance(part, str) and (part in _BRANCHES or "[" in part):
            return index
    return None


def _merged_union_errors(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One error per value that matched no branch of a union (``str | list[str]``), saying what
    each branch expects instead of naming pydantic's branches (``check.str``, ``check.list[str]``)."""
    merged: list[dict[str, Any]] = []
    by_loc: dict[tuple[Any, ...], dict[str, Any]] = {}
    for error in errors:
        loc = tuple(error["loc"])
        cut = _branch_at(loc)
        if cut is None:
            merged.append(error)
            continue
        branch = loc[cut]
        expects = _BRANCHES.get(branch, branch)
        entry = by_loc.get(loc[:cut])
        if entry is None:
            entry = {"type": "union_mismatch", "loc": loc[:cut], "expects": [], "input": None, "msg": ""}
            by_loc[loc[:cut]] = entry
            merged.append(entry)
        if expects not in entry["expects"]:
            entry["expects"].append(expects)
        if len(loc) == cut + 1:
            entry["input"] = error.get("input")
    return merged


def _shown(value: Any) -> str:
    shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _message(error: dict[str, Any], loc: tuple[Any, ...]) -> str:
    kind = error["type"]
    where = _describe(loc)
    if kind == "extra_forbidden":
        name = str(loc[-1])
        allowed = [f for f in _fields_at(loc) if f != "id" or loc[:1] == ("criteria",)]
        guess = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
        hint = f" — did you mean {guess[0]!r}?" if guess else ""
        expected = f" (expected one of: {', '.join(allowed)})" if allowed else ""
        return f"unknown key {name!r} in {_describe(loc[:-1])}{hint}{expected}"
    if kind == "missing":
        return f"{_describe(loc[:-1])}: required key {str(loc[-1])!r} is missing"
    if kind == "union_mismatch":
        return f"{where}: expected {' or '.join(error['expects'])} (got {_shown(error['input'])})"
    if kind == "invalid_key":
        return f"{_describe(loc[:-1])}: a key is null (~ or nothing before the colon); keys are names such as 'outcome'"
    if kind == "union_tag_invalid":
        got = error.get("ctx", {}).get("tag")
        guess = difflib.get_close_matches(str(got), CHECK_TYPES, n=1, cutoff=0.6)
        hint = f" — did you mean {guess[0]!r}?" if guess else ""
        return f"{where}: unknown check type {got!r}{hint}; expected one of: {', '.join(CHECK_TYPES)}"
    if kind == "union_tag_not_found":
        return f"{where}: a check needs a 'type' (one of: {', '.join(CHECK_TYPES)})"
    text = error["msg"]
    if text.startswith("Value error, "):
        text = text[len("Value error, ") :]
    if kind in {"string_type", "int_type", "float_type", "bool_type", "list_type", "dict_type", "int_parsing", "float_parsing", "bool_parsing", "literal_error", "model_type"}:
        return f"{where}: {text.rstrip('.')} (got {_shown(error.get('input'))})"
    return f"{where}: {text}"


def _duplicate_id_problems(data: dict[str, Any], positions: Positions) -> list[Problem]:
    """Duplicate criterion ids, found on the raw data so they show beside other errors."""
    criteria = data.get("criteria")
    if not isinstance(criteria, list):
        return []
    first_seen: dict[str, int] = {}
    problems = []
    for index, item in enumerate(criteria):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        criterion_id = item["id"]
        if criterion_id in first_seen:
            line = positions.locate(("criteria", first_seen[criterion_id], "id"))[0]
            problems.append(
                positions.problem(
                    ("criteria", index, "id"),
                    f"criteria[{index}].id: duplicate criterion id {criterion_id!r} (already used on line {line}); ids must be unique",
                )
            )
        else:
            first_seen[criterion_id] = index
    return problems


def _duplicate_band_problems(data: dict[str, Any], positions: Positions) -> list[Problem]:
    """score_ranges keys that name the same band (``5`` and ``'5'``), with the positions of both."""
    criteria = data.get("criteria")
    problems: list[Problem] = []
    for index, item in enumerate(criteria if isinstance(criteria, list) else []):
        ranges = item.get("score_ranges") if isinstance(item, dict) else None
        if not isinstance(ranges, dict):
            continue
        first_key: dict[Any, Any] = {}
        for raw in ranges:
            band = score_range_key(raw)
            if isinstance(band, bool) or band not in first_key:
                first_key.setdefault(band, raw)
                continue
            earlier = first_key[band]
            line, column = positions.locate(("criteria", index, "score_ranges", earlier), key=True)
            problems.append(positions.problem(
                ("criteria", index, "score_ranges", raw),
                f"criteria[{index}].score_ranges: key {raw!r} is the same band as key {earlier!r} "
                f"(line {line}, column {column}); keep one", key=True))
    return problems


_REPORTED_FROM_RAW_DATA = frozenset({"duplicate_id", "score_range_duplicate"})


#: Plain words YAML 1.1 reads as booleans or null (``outcome: no`` is ``False``).
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
_WORD = re.compile(r"~|[A-Za-z]+")


def _yaml_word(text: str, line: int | None, column: int | None) -> str | None:
    """The unquoted word at ``line:column`` of ``text`` when YAML reads it as a boolean or null."""
    if line is None or column is None:
        return None
    lines = text.splitlines()
    if not 0 < line <= len(lines):
        return None
    found = _WORD.match(lines[line - 1], column - 1)
    word = found.group() if found else None
    return word if word is not None and word.lower() in _YAML_WORDS else None


def _string_expected(error: dict[str, Any], loc: tuple[Any, ...], positions: Positions, text: str) -> str | None:
    """For a string written as a bare YAML word (``no``, ``on``, ``~``): what YAML made of it and
    how to quote it. None for any other error."""
    if error["type"] != "string_type" or not (error.get("input") is None or isinstance(error.get("input"), bool)):
        return None
    word = _yaml_word(text, *positions.locate(loc))
    if word is None:
        return f"{_describe(loc)}: no value; expected a string" if error.get("input") is None else None
    read_as = "null (no value)" if error.get("input") is None else str(error["input"]).lower()
    return f"{_describe(loc)}: YAML reads {word} as {read_as}; quote it: '{word}'"


def _empty_outcome_or_check(error: dict[str, Any], loc: tuple[Any, ...], positions: Positions,
                            text: str) -> tuple[tuple[Any, ...], str] | None:
    """For a criterion with neither outcome nor check because one is written with no value
    (``outcome:``, ``outcome: ~``, ``check:``): that key and what is wrong with it. None otherwise."""
    given = error.get("input")
    if error["type"] != "outcome_or_check" or not isinstance(given, dict):
        return None
    for name in ("outcome", "check"):
        if name in given and given[name] is None:
            at = (*loc, name)
            word = _yaml_word(text, *positions.locate(at))
            if name == "check":
                return at, f"{_describe(at)}: check is empty; give it a type (one of: {', '.join(CHECK_TYPES)})"
            said = f"YAML reads {word} as null (no value)" if word else "outcome is empty"
            return at, f"{_describe(at)}: {said}; write what a good output does"
    return None


def _validation_problems(exc: ValidationError, positions: Positions, text: str = "") -> list[Problem]:
    problems = []
    for error in _merged_union_errors(exc.errors(include_url=False)):
        loc = tuple(error["loc"])
        if error["type"] in _REPORTED_FROM_RAW_DATA:
            continue  # reported from the raw data, with both positions
        if error["type"] == "invalid_key" and loc[-1:] == ("None",):
            loc = (*loc[:-1], None)  # the ``~:`` key itself, not its mapping
        key = error["type"] in ("extra_forbidden", "invalid_key")
        empty = _empty_outcome_or_check(error, loc, positions, text)
        if empty is not None:
            problems.append(positions.problem(empty[0], empty[1], key=True))
            continue
        message = _string_expected(error, loc, positions, text) or _message(error, loc)
        problems.append(positions.problem(loc, message, key=key))
    return problems


def _prompt_path_problems(
    data: dict[str, Any], positions: Positions, base_dir: Path, *, outside_ok: bool = False
) -> list[Problem]:
    """Problems of the file ``judge.prompt_path`` names. A file outside the rubric's folder is
    never opened unless ``outside_ok`` (the user trusts it): see :mod:`rubric_studio.core.trust`."""
    judge = data.get("judge")
    if not isinstance(judge, dict) or not isinstance(judge.get("prompt_path"), str):
        return []
    target, inside = resolve_prompt_path(judge["prompt_path"], base_dir)
    if not inside and not outside_ok:
        return []  # a trust-gated setting: listed by validate, judged only once trusted
    loc = ("judge", "prompt_path")
    if not target.is_file():
        return [positions.problem(loc, f"judge.prompt_path: no such file {str(target)!r}")]
    try:
        text = read_prompt_file(target)
    except RubricError as exc:
        return [positions.problem(loc, f"judge.prompt_path: {exc.problems[0]}")]
    unknown = unknown_placeholders(text)
    if unknown:
        names = ", ".join("{" + n + "}" for n in unknown)
        allowed = ", ".join("{" + n + "}" for n in PROMPT_PLACEHOLDERS)
        return [positions.problem(loc, f"unknown placeholder {names} in {target.name}; expected only {allowed}")]
    return []


def trust_problems(rubric: Rubric, gates: Sequence[Gate], trusted: Sequence[Gate] = ()) -> list[Problem]:
    """Warnings at the key of each untrusted setting (``gates``), and the problems of a prompt
    file outside the folder that the user trusts (it is checked only then)."""
    text = rubric._source_text
    file = rubric.path or "<rubric>"
    if text is None:
        return [Problem(file, None, None, f"not trusted: {gate.reason()}", "warning") for gate in gates]
    data, positions, _ = load_with_positions(text, file)
    problems = [positions.problem(gate.loc, f"not trusted: {gate.reason()}", key=True, severity="warning")
                for gate in gates]
    if any(gate.setting == "judge.prompt_path" for gate in trusted) and isinstance(data, dict) and rubric.path:
        problems += _prompt_path_problems(data, positions, Path(rubric.path).resolve().parent, outside_ok=True)
    return problems


def lint_rubric(rubric: Rubric, positions: Positions | None = None) -> list[Problem]:
    """Warnings: valid, but probably not what the author meant."""
    file = rubric.path or "<rubric>"
    warnings: list[Problem] = []

    def warn(loc: tuple[Any, ...], message: str) -> None:
        if positions is not None:
            warnings.append(positions.problem(loc, message, severity="warning"))
        else:
            warnings.append(Problem(file, None, None, message, "warning"))

    for index, criterion in enumerate(rubric.criteria):
        if criterion.kind == "checklist" and criterion.min_score is not None:
            warn(("criteria", index, "min_score"), f"criteria[{index}] ({criterion.id}): min_score has no effect on a checklist criterion (met is 1, unmet 0)")
        if criterion.required and criterion.is_penalty:
            warn(("criteria", index, "required"), f"criteria[{index}] ({criterion.id}): a required penalty fails every sample that does NOT show the penalised behaviour")
        if criterion.is_penalty and criterion.operator == "contradiction":
            warn(("criteria", index, "operator"), f"criteria[{index}] ({criterion.id}): a penalty with operator: "
                 "contradiction is applied to every answer that does NOT contradict its outcome, also answers that "
                 "never mention it; to penalise a contradiction, drop the operator and state the wrong claim as the "
                 "outcome, or give the criterion a positive weight")
        if criterion.score_ranges and max(criterion.score_ranges) == 10 and len(criterion.score_ranges) == 1:
            warn(("criteria", index, "score_ranges"), f"criteria[{index}] ({criterion.id}): score_ranges has a single band")
    judge = rubric.judge
    if judge is not None and judge.panel and any(c.kind == "checklist" for c in rubric.judge_criteria):
        from rubric_studio.core.panel import even_majority_warning

        penalties = any(c.kind == "checklist" and c.is_penalty for c in rubric.judge_criteria)
        note = even_majority_warning(len(judge.panel), judge.aggregate, judge.ties, penalties=penalties)
        if note:
            warn(("judge", "panel"), f"judge.panel: {note}")
    return warnings


def parse_rubric(text: str, file: str = "<rubric>", *, base_dir: Path | None = None) -> Rubric:
    """Parse rubric YAML text (``file`` names it in messages; ``base_dir`` resolves relative paths).

    Returns:
        The validated :class:`~rubric_studio.core.rubric.Rubric`.
    Raises:
        RubricError: listing every problem found, with positions.
    """
    data, positions, problems = load_with_positions(text, file)
    unreadable = {(p.line, p.column) for p in problems}  # values the loader could not read (left None)
    if data is None:
        raise RubricError([Problem(file, 1, 1, "the rubric is empty; expected a mapping with 'name' and 'criteria'")])
    if not isinstance(data, dict):
        line, column = positions.locate(())
        raise RubricError([Problem(file, line, column, f"expected a mapping with 'name' and 'criteria', got a {type(data).__name__}")])
    problems.extend(_duplicate_id_problems(data, positions))
    problems.extend(_duplicate_band_problems(data, positions))
    if base_dir is not None:
        problems.extend(_prompt_path_problems(data, positions, base_dir))
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        problems.extend(p for p in _validation_problems(exc, positions, text) if (p.line, p.column) not in unreadable)
        rubric = None
    if problems:
        problems.sort(key=lambda p: (p.line or 0, p.column or 0))
        raise RubricError(problems)
    assert rubric is not None
    rubric._path = file
    rubric._source_text = text
    return rubric


def load_rubric(path: str | Path) -> Rubric:
    """Load and validate a rubric file.

    Returns:
        The validated :class:`~rubric_studio.core.rubric.Rubric`.
    Raises:
        RubricError: the file is missing or unreadable, or the rubric is invalid; each
            :class:`~rubric_studio.core.problems.Problem` carries file, line and column.
    """
    source = Path(path)
    text = read_user_file(source, "rubric")
    return parse_rubric(text, str(source), base_dir=source.resolve().parent)


def check_rubric_file(path: str | Path) -> tuple[Rubric | None, list[Problem]]:
    """Errors and warnings of one file, for ``validate`` and the studio."""
    source = Path(path)
    try:
        rubric = load_rubric(source)
    except RubricError as exc:
        return None, exc.problems
    text = rubric._source_text or ""
    _, positions, _ = load_with_positions(text, str(source))
    return rubric, lint_rubric(rubric, positions)
