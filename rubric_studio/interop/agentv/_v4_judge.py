"""The judge of an AgentV 4 eval, on import.

AgentV 4 has no ``providers`` list: the grader is a target in ``.agentv/targets.yaml`` (the
``grader_target`` of the target the eval runs, ``execution.target`` or ``default``), whose model
and key are ``${{ VARIABLE }}`` references that AgentV fills from the environment and from a
``.env`` file beside the eval. rubric-studio's AgentV 4 export prints that target and the ``.env``
line in its header instead (:mod:`._v4`). Import reads, in order: ``.agentv/targets.yaml`` and
``.env`` in the eval's own folder (never above it: an eval may come from anyone), then the
header an export of ours wrote. A judge it cannot find is warned, naming what it looked for,
rather than left to rubric-studio's default judge silently; a ``targets.yaml`` that cannot be read
(not YAML, nested or sized past the bounded reader's limits) is an error at its line and column.
"""

from __future__ import annotations

import re
from typing import Any

from rubric_studio.core.problems import RubricError
from rubric_studio.core.yamlpos import safe_load
from rubric_studio.interop._common import Source, Warnings
from rubric_studio.interop.agentv._judge import imported_judge

#: What rubric-studio's AgentV 4 export names the judge target.
JUDGE_TARGET = "rubric-judge"
_V4_REFERENCE = re.compile(r"^\s*\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$")
_DOTENV = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def is_v4(data: dict[str, Any]) -> bool:
    """An AgentV 4 layout: suite-level ``assertions`` or an ``execution`` block, and no ``providers``."""
    return "providers" not in data and ("assertions" in data or isinstance(data.get("execution"), dict))


def _dotenv(text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _DOTENV.match(line)
        if match and not line.lstrip().startswith("#"):
            values[match.group(1)] = match.group(2).strip("'\"")
    return values


def _header(source: Source) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """(the targets, the ``.env`` values) the header comment of an export of ours gives."""
    lines: list[str] = []
    for line in source.text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].removeprefix(" "))
    targets: list[dict[str, Any]] = []
    dotenv: dict[str, str] = {}
    in_targets = False
    for line in lines:
        if line.strip() == "targets:":
            in_targets = True
            continue
        if in_targets and line.startswith("  "):
            entry = _header_entry(line) if ":" in line else None
            if isinstance(entry, dict):
                if line.lstrip().startswith("- "):
                    targets.append({})
                if targets:
                    targets[-1].update(entry)
            continue
        in_targets = False
        match = _DOTENV.match(line)
        if match and " " not in match.group(2):
            dotenv[match.group(1)] = match.group(2)
    return targets, dotenv


def _header_entry(line: str) -> Any:
    """One ``key: value`` line of the header's targets (None when it is not YAML the bounded reader takes)."""
    try:
        return safe_load(line.strip().removeprefix("- ") + "\n", "<header>")
    except RubricError:
        return None


def _folder_files(source: Source) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """(the targets of ``.agentv/targets.yaml``, the ``.env`` values) from the eval's own folder.
    RubricError, with the position, when ``targets.yaml`` cannot be read."""
    if source.base_dir is None:
        return [], {}
    from rubric_studio.core.files import read_user_file

    targets: list[dict[str, Any]] = []
    dotenv: dict[str, str] = {}
    path = source.base_dir / ".agentv" / "targets.yaml"
    if path.is_file():
        data = Source.parse_yaml(read_user_file(path, "AgentV targets"), str(path)).data
        found = data.get("targets") if isinstance(data, dict) else data
        targets = [t for t in found if isinstance(t, dict)] if isinstance(found, list) else []
    env_path = source.base_dir / ".env"
    if env_path.is_file():
        try:
            dotenv = _dotenv(read_user_file(env_path, ".env"))
        except (RubricError, OSError):
            pass
    return targets, dotenv


def _grader_name(data: dict[str, Any], targets: list[dict[str, Any]]) -> str:
    """The grader target AgentV 4 would use: the run target's ``grader_target``, else ours."""
    execution = data.get("execution") if isinstance(data.get("execution"), dict) else {}
    run = execution.get("target") or "default"
    for target in targets:
        if target.get("name") == run and isinstance(target.get("grader_target"), str):
            return target["grader_target"]
    return JUDGE_TARGET


def _resolve(value: Any, dotenv: dict[str, str]) -> tuple[Any, str | None]:
    """A ``${{ VAR }}`` value from the ``.env`` values (None and the variable when it is not there)."""
    match = _V4_REFERENCE.match(value) if isinstance(value, str) else None
    if match is None:
        return value, None
    variable = match.group(1)
    return dotenv.get(variable), (None if variable in dotenv else variable)


def judge_v4(source: Source, data: dict[str, Any], warn: Warnings) -> dict[str, Any] | None:
    """The rubric's judge from an AgentV 4 eval's grader target (None, warned, when not found)."""
    targets, dotenv = _folder_files(source)
    header_targets, header_env = _header(source)
    where = ".agentv/targets.yaml beside the eval"
    name = _grader_name(data, targets)
    target = next((t for t in targets if t.get("name") == name), None)
    if target is None:
        name = _grader_name(data, header_targets)
        target = next((t for t in header_targets if t.get("name") == name), None)
        where = "the file's header"
    dotenv = {**header_env, **dotenv}
    if target is None:
        warn.add(f"AgentV 4 keeps the judge in .agentv/targets.yaml (the grader_target of the target it runs); "
                 f"no grader target {name!r} was found beside this file, so the judge was not imported: "
                 "rubric-studio's default judge applies; set judge.model to the judge you grade with")
        return None
    config: dict[str, Any] = {}
    unresolved: list[str] = []
    for key in ("model", "deployment", "base_url", "endpoint", "resource", "temperature"):
        if key in target:
            value, missing = _resolve(target[key], dotenv)
            if missing:
                unresolved.append(f"{key} from {missing}")
            elif value is not None:
                config[key] = value
    kind = str(target.get("provider") or "")
    found = imported_judge(kind, config, warn)
    if unresolved or found is None or "model" not in found:
        warn.add(f"AgentV 4 grader target {name!r} (from {where}) could not be read in full"
                 + (f": its {', '.join(unresolved)} is set in the environment, not in a .env beside the eval"
                    if unresolved else "")
                 + "; set judge.model to the judge you grade with")
        return found if found and "model" in found else None
    return found
