"""What an AgentV eval file points to elsewhere: a separate tests file (``tests: ./cases.yaml``)
and the grader provider its ``default_test`` names.

A tests file is read only when it lies inside the eval's folder (an eval may come from
anyone, and what is read ends up in judge requests) and through the bounded readers:
YAML holding a list of tests (or ``tests:``), or JSONL with one test a line, as AgentV reads
them. Anything else is not read, and the caller says so; a tests file that is there but cannot be
read is an error at its line and column.
"""

from __future__ import annotations

import os
from typing import Any

from rubric_studio.core.files import parse_user_json, read_user_file
from rubric_studio.core.trust import resolve_prompt_path
from rubric_studio.interop._common import Source, Warnings
from rubric_studio.interop.agentv._judge import OLLAMA_URL, imported_judge

__all__ = ["OLLAMA_URL", "TestsFile", "judge", "load_tests"]


class TestsFile:
    """A separate tests file: its tests and the path prefix of each within it, or why it was not read."""

    def __init__(self, ref: str, label: str):
        self.ref, self.label = ref, label
        self.source: Source | None = None
        self.tests: list[Any] = []
        self.prefix: tuple[Any, ...] = ()
        self.error: str | None = None


def load_tests(source: Source, ref: str) -> TestsFile:
    """The tests of ``tests: <ref>`` (``file://`` or a plain relative path), read if it is beside the eval.
    RubricError, with the tests file's line and column, when it is there but cannot be read (not UTF-8,
    not YAML / JSON, nested or sized past the bounded readers' limits)."""
    path = ref.strip().removeprefix("file://")
    folder = os.path.dirname(source.file) if not source.file.startswith("<") else ""
    found = TestsFile(ref, os.path.normpath(os.path.join(folder, path)) if path else ref)
    if source.base_dir is None:
        found.error = "it cannot be read when the eval is given as text (import the file instead)"
        return found
    target, inside = resolve_prompt_path(path, source.base_dir)
    suffix = target.suffix.lower()
    if not inside:
        found.error = "it is outside the eval's folder and is not read (copy it next to the eval)"
    elif target.is_dir():
        found.error = "it is a folder of test files, which is not read (import each file)"
    elif suffix not in (".yaml", ".yml", ".jsonl"):
        found.error = "only .yaml, .yml and .jsonl test files are read"
    if found.error:
        return found
    text = read_user_file(target, "AgentV tests")
    if suffix == ".jsonl":
        found.source = Source(text, found.label)
        found.tests = [parse_user_json(line, found.label, line=number)
                       for number, line in enumerate(text.split("\n"), 1) if line.strip()]
        return found
    found.source = Source.parse_yaml(text, found.label, target.parent)
    data = found.source.data
    if isinstance(data, dict) and isinstance(data.get("tests"), list):
        found.tests, found.prefix = data["tests"], ("tests",)
    elif isinstance(data, list):
        found.tests = data
    else:
        found.error = "it holds no list of tests"
    return found


def judge(data: dict[str, Any], warn: Warnings) -> dict[str, Any] | None:
    """The rubric's judge from the provider ``default_test.options.provider`` names in ``providers``."""
    label = None
    default_test = data.get("default_test")
    if isinstance(default_test, dict) and isinstance(default_test.get("options"), dict):
        label = default_test["options"].get("provider")
    if not isinstance(label, str):
        return None
    providers = data.get("providers")
    entries = providers if isinstance(providers, list) else [providers]
    for entry in entries:
        if isinstance(entry, dict) and label in (entry.get("label"), entry.get("id")):
            config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
            return imported_judge(str(entry.get("id")), config, warn)
    warn.add(f"grader provider {label!r} is not defined in this file's providers; judge not imported")
    return None
