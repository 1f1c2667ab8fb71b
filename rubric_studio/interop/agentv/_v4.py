"""The AgentV 4.x layout of an exported eval (``export --agentv-version 4``).

AgentV 4 (the 4.42 line on npm) reads the same scoring model as 5 under other names:
suite-level ``assertions`` (not ``assert``), ``type: rubrics`` with ``criteria`` (not
``llm-rubric`` with ``value``), an assertion's ``name`` (not ``metric``), the pass mark
at ``execution.threshold`` (not ``default_test.threshold``), and every test needs an
``input``. It has no inline ``javascript`` assertion and no ``providers`` list: the judge
is a target in ``.agentv/targets.yaml`` whose key *and model* come from the environment
(``${{ OPENAI_API_KEY }}``, ``${{ RUBRIC_JUDGE_MODEL }}``; AgentV 4 loads a ``.env`` beside the
eval), so the export prints that file's entry and the ``.env`` line in its header.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rubric_studio.core.samples import Sample
from rubric_studio.interop._common import Warnings
from rubric_studio.interop._providers import key_var
from rubric_studio.interop.agentv import _samples as _agentv_samples
from rubric_studio.interop.agentv._judge import JUDGE_MODEL_VARIABLE, parse_reference, reference, v4_reference

if TYPE_CHECKING:
    from rubric_studio.interop.agentv._panel import Panel

EXAMPLE_INPUT = "Replace with a real input for your target"
#: What every test states as its criteria (AgentV 4 needs criteria, an expected output or assertions).
CASE_CRITERIA = "Meets the rubric in `assertions`."


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


def layout(data: dict[str, Any], judge: dict[str, Any] | None, warn: Warnings, *,
           samples: list[Sample] | None = None, fixtures_file: str = "",
           panel: Panel | None = None) -> tuple[dict[str, Any], str]:
    """(4.x eval data, header lines) from the 5.x ``data`` the exporter built; ``samples`` become
    the tests, answered by a replay target (:mod:`._agentv_samples`) the header sets up. A judge
    ``panel``'s members are header targets, one each."""
    out: dict[str, Any] = {"name": data["name"]}
    if "description" in data:
        out["description"] = data["description"]
    threshold = data["default_test"]["threshold"]
    out["execution"] = {"threshold": threshold}
    if samples:
        out["execution"]["target"] = _agentv_samples.SAMPLES_TARGET
    out["assertions"] = [_entry(e) for e in data["assert"]]
    if samples:
        out["tests"] = _agentv_samples.tests_v4(samples, threshold, CASE_CRITERIA)
    else:
        out["tests"] = [{"id": "example", "input": EXAMPLE_INPUT, "criteria": CASE_CRITERIA}]
    if samples:
        header = samples_target_lines(data["name"], fixtures_file, judge, warn, panel)
    elif panel is not None:
        header = panel_target_lines(panel, warn)
    else:
        header = judge_target_lines(judge, warn) if judge is not None else ""
    return out, header


def _entry_lines(target: dict[str, Any]) -> list[str]:
    """One ``targets:`` list entry as header lines."""
    return [f"  - {k}: {v}" if i == 0 else f"    {k}: {v}" for i, (k, v) in enumerate(target.items())]


def key_variable(provider: str) -> str:
    """The environment variable AgentV (4 and 5) reads the judge's key from: the registry's."""
    return key_var(provider)


def _judge_target(judge: dict[str, Any], warn: Warnings | None,
                  variable: str = JUDGE_MODEL_VARIABLE) -> tuple[dict[str, Any], list[str], list[str]]:
    """(the judge's ``.agentv/targets.yaml`` entry, its ``.env`` lines, the variables to export).
    AgentV 4 accepts the key and the model of an openai or anthropic target (and an azure target's
    endpoint and deployment) only as ``${{ VARIABLE }}`` references (a literal model fails when the
    eval runs), and it loads a ``.env`` beside the eval itself, so the shell needs nothing but the
    key (and an endpoint the rubric does not name). ``variable`` holds the model (each panel member
    has its own); without ``warn`` the caller says where the judge went."""
    config = dict(judge["config"])
    parsed = parse_reference(config["model"])  # an Azure deployment is already a reference
    model = parsed[1] if parsed is not None and parsed[1] is not None else config["model"]
    config["model"] = reference(variable, model)
    dotenv: list[str] = []
    exports: list[str] = []
    for name, value in config.items():
        parsed = parse_reference(value)
        config[name], line = v4_reference(value)
        if line:
            dotenv.append(line)
        elif parsed is not None:
            exports.append(parsed[0])
    target = {"name": judge["label"], "provider": judge["id"], "model": config.pop("model"), **config}
    if warn is not None:
        warn.add(f"AgentV 4 has no providers list: the judge ({model}) is printed in the file's header as a "
                 f".agentv/targets.yaml entry to add, with its model in .env ({variable}={model})")
    return target, dotenv, exports


def _these(lines: list[str]) -> str:
    return "this line" if len(lines) == 1 else "these lines"


def _dotenv_lines(dotenv: list[str], exports: list[str]) -> str:
    return ("AgentV 4 takes the judge's model only from the environment; put " + _these(dotenv) + " in a .env file\n"
            "beside this eval (AgentV loads it):\n" + "\n".join(dotenv) + "\n"
            f"and export {' and '.join(exports)} before running.")


def judge_target_lines(judge: dict[str, Any], warn: Warnings) -> str:
    """The header lines that set the judge up in AgentV 4: a ``.agentv/targets.yaml`` entry and the
    ``.env`` line naming its model."""
    target, dotenv, exports = _judge_target(judge, warn)
    return ("AgentV 4 reads the judge from .agentv/targets.yaml, not from this file; add:\n"
            "targets:\n" + "\n".join(_entry_lines(target)) + "\n"
            f"and give your target `grader_target: {judge['label']}`. AgentV 4 takes the judge's model only\n"
            f"from the environment; put {_these(dotenv)} in a .env file beside this eval (AgentV loads it):\n"
            + "\n".join(dotenv) + "\n"
            f"and export {' and '.join(exports)} before running.")


def _panel_targets(panel: Panel, warn: Warnings) -> tuple[list[str], list[str], list[str]]:
    """(the members' ``.agentv/targets.yaml`` entries as header lines, their ``.env`` lines, the
    variables to export): one target per member, each with its own model variable."""
    lines: list[str] = []
    dotenv: list[str] = []
    exports: list[str] = []
    for entry, variable in zip(panel.providers, panel.variables, strict=True):
        target, member_dotenv, member_exports = _judge_target(entry, None, variable)
        lines += _entry_lines(target)
        dotenv += member_dotenv
        exports += [name for name in member_exports if name not in exports]
    warn.add("AgentV 4 has no providers list: the judge panel's members are printed in the file's header as "
             ".agentv/targets.yaml entries to add (" + ", ".join(e["label"] for e in panel.providers)
             + "), each with its model in .env (" + ", ".join(dotenv) + ")")
    return lines, dotenv, exports


def panel_target_lines(panel: Panel, warn: Warnings) -> str:
    """The header lines that set a judge panel up in AgentV 4: a target per member, each judged
    assertion's graders naming theirs, and the ``.env`` lines naming their models."""
    lines, dotenv, exports = _panel_targets(panel, warn)
    return ("AgentV 4 reads the judges from .agentv/targets.yaml, not from this file; add:\n"
            "targets:\n" + "\n".join(lines) + "\n"
            "Each judged criterion below is a composite of one grader per panel member (its `target:`).\n"
            + _dotenv_lines(dotenv, exports))


def samples_target_lines(suite: str, fixtures_file: str, judge: dict[str, Any] | None, warn: Warnings,
                         panel: Panel | None = None) -> str:
    """The header lines of an export whose tests are the samples: the replay target that answers
    them (grading with the judge's target, when there is one), the judge's (or each panel member's)
    target and how to run."""
    replay = _agentv_samples.replay_target_v4(fixtures_file, suite, judge["label"] if judge else None)
    lines = ["The tests are the graded samples; target rubric-samples answers each with its output as",
             f"written, from {fixtures_file} (keep it beside this file). AgentV 4 reads targets only",
             "from .agentv/targets.yaml; add:", "targets:", *_entry_lines(replay)]
    if panel is not None:
        member_lines, dotenv, exports = _panel_targets(panel, warn)
        lines += member_lines
        lines.append("Each judged criterion is a composite of one grader per panel member (its `target:`).")
        lines.append(_dotenv_lines(dotenv, exports))
    elif judge is not None:
        target, dotenv, exports = _judge_target(judge, warn)
        lines += _entry_lines(target)
        lines.append(_dotenv_lines(dotenv, exports))
    lines.append("Then run: agentv eval run <this file>   (inside a git repository)")
    return "\n".join(lines)
