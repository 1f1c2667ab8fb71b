"""Tell which tool a foreign file was written for (``import --from auto``).

JSON Lines / JSON with ``criterion`` + ``points`` items (or example rows with
``rubrics``) is HealthBench; a mapping with ``rubric_text`` is Docent; a suite
with ``graders`` (or a legacy ``grader`` / ``gate``) is Letta evals; a mapping
with ``name`` and ``criteria`` is already a rubric-studio rubric. AgentV and
promptfoo files look alike (AgentV follows promptfoo's layout), so each gets
points for the features only it has — AgentV: ``default_test``, plain-string
asserts, ``llm-rubric`` values that are lists of criteria, ``score_ranges``;
promptfoo: ``defaultTest``, ``assert-set``, ``not-*`` types, ``evaluateOptions``,
``derivedMetrics``, ``assertionTemplates``. The file name counts too: the tools
find their files by name (``promptfooconfig.yaml``; AgentV's ``*.eval.yaml`` and ``suite.yaml``
under an ``evals`` folder), so
a name settles what the content leaves open. A tie is an error asking for
``--from``.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from rubric_studio.core.files import parse_user_json
from rubric_studio.core.problems import Problem, RubricError


def _walk_asserts(data: dict[str, Any]) -> list[Any]:
    lists: list[Any] = []
    for holder in (data, data.get("default_test"), data.get("defaultTest")):
        if isinstance(holder, dict) and isinstance(holder.get("assert"), list):
            lists.append(holder["assert"])
    tests = data.get("tests") or data.get("eval_cases") or data.get("evalcases")
    if isinstance(tests, list):
        for test in tests:
            if isinstance(test, dict) and isinstance(test.get("assert"), list):
                lists.append(test["assert"])
    return [entry for entries in lists for entry in entries]


def _scores(data: dict[str, Any]) -> tuple[int, int]:
    agentv = promptfoo = 0
    if "default_test" in data:
        agentv += 3
    if "defaultTest" in data:
        promptfoo += 3
    if "eval_cases" in data or "evalcases" in data:
        agentv += 3
    if isinstance(data.get("assert"), list):
        agentv += 2
    for key in ("evaluateOptions", "assertionTemplates", "derivedMetrics", "outputPath", "sharing"):
        if key in data:
            promptfoo += 3
    for entry in _walk_asserts(data):
        if isinstance(entry, str):
            agentv += 3
            continue
        if not isinstance(entry, dict):
            continue
        kind = str(entry.get("type", ""))
        value = entry.get("value")
        if kind in ("llm-rubric", "agent-rubric") and isinstance(value, list):
            agentv += 3
        if "score_ranges" in entry or (isinstance(value, list) and any(
                isinstance(v, dict) and ("outcome" in v or "score_ranges" in v) for v in value)):
            agentv += 3
        if kind == "script" or "negate" in entry:
            agentv += 2
        if kind == "assert-set" or kind.startswith("not-"):
            promptfoo += 2
    tests = data.get("tests")
    if isinstance(tests, list) and any(isinstance(t, dict) and ("criteria" in t or "expected_output" in t)
                                       for t in tests):
        agentv += 2
    return agentv, promptfoo


#: File suffixes an importable file can have; anything else is refused before parsing.
IMPORTABLE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")


def _name_scores(file: str) -> tuple[int, int]:
    """Points the file name gives (AgentV, promptfoo): the tools' own naming conventions."""
    name = PurePath(file).name.lower()
    if name.startswith("promptfooconfig.") or ".promptfooconfig." in name:
        return 0, 5
    parts = PurePath(file.replace("\\", "/")).parts
    if name.endswith((".eval.yaml", ".eval.yml")) or ".agentv" in parts[:-1]:
        return 5, 0
    if name in ("suite.yaml", "suite.yml") and "evals" in (p.lower() for p in parts[:-1]):
        return 5, 0  # AgentV's default discovery: **/evals/**/suite.yaml
    return 0, 0


def refuse_unknown_suffix(file: str) -> None:
    """Refuse a file whose suffix no supported tool reads as a rubric (``.py``, ``.md``, ``.txt``...)
    with a message that says what import reads, instead of a YAML syntax error."""
    from rubric_studio.interop._formats import FORMATS

    suffix = PurePath(file).suffix.lower()
    registered = {PurePath(FORMATS[name].suffix).suffix.lower() for name in FORMATS.importers()}
    if suffix and suffix not in IMPORTABLE_SUFFIXES and suffix not in registered:
        raise RubricError([Problem(file, 1, 1, f"not a rubric file of a tool rubric-studio imports ({suffix}): "
                                               "expected .yaml/.yml (AgentV, promptfoo, Letta), .json (Docent, "
                                               "HealthBench) or .jsonl (HealthBench); pass --from FORMAT to read "
                                               "it as that format anyway")])


def is_healthbench(data: Any, file: str = "") -> bool:
    """HealthBench: a list of ``criterion`` items, one item, or an example row with ``rubrics``."""
    if isinstance(data, list):
        return bool(data) and all(isinstance(d, dict) and "criterion" in d for d in data)
    return isinstance(data, dict) and ("criterion" in data and "points" in data or isinstance(data.get("rubrics"), list))


def is_docent(data: Any, file: str = "") -> bool:
    """Docent: a mapping with ``rubric_text``."""
    return isinstance(data, dict) and "rubric_text" in data


def is_letta(data: Any, file: str = "") -> bool:
    """Letta evals: a suite with ``graders`` (or a legacy ``grader`` / ``gate`` with a ``dataset``)."""
    return isinstance(data, dict) and (isinstance(data.get("graders"), dict) or isinstance(data.get("grader"), dict)
                                       or "gate" in data and "dataset" in data)


def detect_data(data: Any, file: str) -> str:
    """The format of parsed YAML/JSON ``data``; RubricError when it cannot tell.

    A format whose content has a signature of its own (its registered detector) wins; then a
    native rubric; AgentV and promptfoo, which look alike, are told apart by points."""
    from rubric_studio.interop._formats import FORMATS

    for name, info in FORMATS.items():
        if info.detect(data, file):
            return name
    if isinstance(data, dict):
        if "name" in data and isinstance(data.get("criteria"), list) and "tests" not in data:
            return "native"
        agentv, promptfoo = _scores(data)
        by_name = _name_scores(file)
        agentv, promptfoo = agentv + by_name[0], promptfoo + by_name[1]
        if agentv > promptfoo:
            return "agentv"
        if promptfoo > agentv:
            return "promptfoo"
        if agentv or promptfoo or "tests" in data:
            raise RubricError([Problem(file, 1, 1, "this looks like an AgentV or a promptfoo eval file and nothing "
                                                   "tells them apart; pass --from agentv or --from promptfoo")])
    raise RubricError([Problem(file, 1, 1, "cannot tell which tool this file is for (expected an AgentV eval, a "
                                           "promptfoo config, a Letta suite, a Docent rubric or HealthBench JSONL); "
                                           "pass --from")])


def detect_text(text: str, file: str) -> str | None:
    """Formats recognisable before YAML parsing (JSON Lines); None to parse as YAML."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) > 1 and all(line.lstrip().startswith("{") for line in lines):
        try:
            first = parse_user_json(lines[0], file)
        except RubricError:
            return None
        if isinstance(first, dict) and ("criterion" in first or "rubrics" in first):
            return "healthbench"
    if file.endswith(".jsonl"):
        return "healthbench"
    return None
