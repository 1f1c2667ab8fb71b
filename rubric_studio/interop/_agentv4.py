"""The AgentV 4.x layout of an exported eval (``export --agentv-version 4``).

AgentV 4 (the 4.42 line on npm) reads the same scoring model as 5 under other names:
suite-level ``assertions`` (not ``assert``), ``type: rubrics`` with ``criteria`` (not
``llm-rubric`` with ``value``), an assertion's ``name`` (not ``metric``), the pass mark
at ``execution.threshold`` (not ``default_test.threshold``), and every test needs an
``input``. It has no inline ``javascript`` assertion and no ``providers`` list: the judge
is a target in ``.agentv/targets.yaml`` whose key comes from the environment
(``api_key: ${{ OPENAI_API_KEY }}``), so the export prints that file's entry in its header.
"""

from __future__ import annotations

from typing import Any

from rubric_studio.interop._common import Warnings

EXAMPLE_INPUT = "Replace with a real input for your target"


def _entry(entry: Any) -> Any:
    """One 5.x assertion in 4.x names (the exporter already left out what 4.x cannot run)."""
    if not isinstance(entry, dict):
        return entry
    out = dict(entry)
    if "metric" in out:
        out["name"] = out.pop("metric")
    if out.get("type") == "llm-rubric":
        out["type"] = "rubrics"
        out["criteria"] = out.pop("value")
    return out


def layout(data: dict[str, Any], judge: dict[str, Any] | None, warn: Warnings) -> tuple[dict[str, Any], str]:
    """(4.x eval data, header lines) from the 5.x ``data`` the exporter built."""
    out: dict[str, Any] = {"name": data["name"]}
    if "description" in data:
        out["description"] = data["description"]
    out["execution"] = {"threshold": data["default_test"]["threshold"]}
    out["assertions"] = [_entry(e) for e in data["assert"]]
    out["tests"] = [{"id": "example", "input": EXAMPLE_INPUT, "criteria": "Meets the rubric in `assertions`."}]
    header = ""
    if judge is not None:
        target = {"name": judge["label"], "provider": judge["id"], **judge["config"]}
        lines = [f"  - {k}: {v}" if i == 0 else f"    {k}: {v}" for i, (k, v) in enumerate(target.items())]
        header = ("AgentV 4 reads the judge from .agentv/targets.yaml, not from this file; add:\n"
                  "targets:\n" + "\n".join(lines) + "\n"
                  f"and give your target `grader_target: {judge['label']}`.")
        warn.add(f"AgentV 4 has no providers list: the judge ({judge['config'].get('model')}) is printed in the "
                 "file's header as a .agentv/targets.yaml entry to add")
    return out, header
