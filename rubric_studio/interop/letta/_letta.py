"""Letta evals suites: a ``model_judge`` grader whose prompt is the rubric.

Letta's model judge (letta-ai/letta-evals ``letta_evals/graders/rubric.py``)
sends one prompt — with ``{input}``, ``{submission}`` and ``{ground_truth}``
filled in by ``str.format`` rules, so literal braces are doubled — and reads back
``{score, rationale}`` with score in 0.0–1.0. A suite names its graders under
``graders:`` and, today, a ``reward`` (``kind: metric, metric_key``); older suites
used ``kind: rubric`` and a ``gate`` with a per-sample pass value.

Export writes the whole rubric as that prompt (criteria, bands, scoring rule),
asks for the total as ``score`` — 0.0 when a required criterion is unmet, which
keeps our pass/fail for any positive threshold — and maps the judge settings
(model, provider, temperature, max_retries, timeout; concurrency →
``max_concurrent``). Letta has no per-sample pass threshold or deterministic
checks; both are warned about (the threshold is stated in the prompt).

Import reads prompts written that way back into criteria; any other prompt
becomes one 0–10 criterion per grader (Letta scores the whole prompt at once).
Other ``{name}`` placeholders are per-sample ``rubric_vars`` from the suite's
dataset: filled when every sample agrees, otherwise kept and warned about
(:mod:`._letta_vars`).
"""

from __future__ import annotations

import re
from typing import Any

from rubric_studio.core.files import read_prompt_file
from rubric_studio.core.problems import RubricError
from rubric_studio.core.rubric import JudgeSettings, Rubric
from rubric_studio.core.trust import Gate, resolve_prompt_path
from rubric_studio.interop._common import (
    GENERIC_BANDS,
    IdAllocator,
    Source,
    Warnings,
    build_rubric,
    common_export_warnings,
    expect_mapping,
    num,
    refuse_without_judged,
    slugify,
)
from rubric_studio.interop._formats import ExportResult
from rubric_studio.interop._output import dump_yaml
from rubric_studio.interop._providers import base_url_var, cannot_carry, judge_provider
from rubric_studio.interop._text import parse_criteria_text, render_criteria_text
from rubric_studio.interop.letta._vars import RubricVars

#: Our judge provider -> Letta's model_judge provider (letta-evals ``LLMProvider``: openai, anthropic;
#: no Azure). OpenAI-compatible servers are Letta's openai provider at ``OPENAI_BASE_URL``.
LETTA_PROVIDERS = {"openai": "openai", "openai-compatible": "openai", "ollama": "openai", "anthropic": "anthropic"}
#: Letta's provider -> ours, on import.
IMPORTED = {"openai": "openai", "anthropic": "anthropic"}
LETTA_DEFAULTS = {"model": "gpt-4o-mini", "provider": "openai", "temperature": 0.0, "max_retries": 5, "timeout": 120.0}
_PLACEHOLDER_LINE = re.compile(r"\{(input|submission|ground_truth)\}")


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _unescape(text: str) -> str:
    return text.replace("{{", "{").replace("}}", "}")


def prompt_for(rubric: Rubric, warn: Warnings) -> str:
    judged = [c for c in rubric.criteria if c.is_judged]
    for criterion in rubric.criteria:
        if criterion.check is not None:
            warn.criterion(criterion.key, f"deterministic {criterion.check.type} check has no Letta model-judge "
                                          "form (use a Letta tool grader); not exported")
    text = _escape(render_criteria_text(rubric, judged))
    required = any(c.required for c in judged)
    reply = ('Reply with a JSON object {{"score": <number from 0.0 to 1.0>, "rationale": "<short explanation>"}}.\n'
             "The score is the total defined under Scoring"
             + ("; if any required criterion is not met, the score is 0.0." if required else "."))
    return (f"{text}\n\nInput:\n{{input}}\n\nExpected answer (may be empty):\n{{ground_truth}}\n\n"
            f"Response to grade:\n{{submission}}\n\n{reply}\n")


def _grader_provider(judge: JudgeSettings | None, key: str, warn: Warnings) -> tuple[str | None, str | None]:
    """(Letta provider, model) of the judge; (None, None) when there is none or Letta cannot
    express its provider (warned: Letta's default grader model runs). Letta reads base URLs
    only from the environment, so a judge at one is warned with the variable to set."""
    found = judge_provider(judge.model if judge is not None else None)
    if judge is None or found is None:
        return None, None
    provider = LETTA_PROVIDERS.get(found.name)
    if provider is None:
        cannot_carry(warn, found, "Letta evals", sorted(set(LETTA_PROVIDERS.values())),
                     left_out=f"the grader is written with Letta's default model ({LETTA_DEFAULTS['provider']} "
                              f"{LETTA_DEFAULTS['model']})",
                     set_by_hand=f"graders.{key}.provider and model")  # fmt: skip
        return None, None
    if found.provider is not None and found.provider.alias(found.name) is not None:  # OpenAI-compatible
        url = judge.base_url or "http://localhost:11434/v1"
        warn.add(f"judge {judge.model}: Letta calls OpenAI-compatible servers through the "
                 f"{base_url_var(provider)} environment variable; set {base_url_var(provider)}={url} when running "
                 "the suite")
    elif judge.base_url:
        env = base_url_var(provider)
        warn.add(f"judge.base_url: set {env}={judge.base_url} when running the suite (Letta reads it from the "
                 "environment)")
    return provider, found.model


def export(rubric: Rubric) -> ExportResult:
    """Returns the Letta evals suite of ``rubric`` with its grader files and warnings for what
    Letta cannot express. Raises :class:`~rubric_studio.interop.ExportRefused` when it cannot hold the rubric."""
    warn = Warnings()
    common_export_warnings(rubric, warn, "Letta evals",
                           judge_fields=("temperature", "timeout", "max_retries", "concurrency"))
    refuse_without_judged(rubric, "a Letta model_judge grader", " (a Letta tool grader can run them)")
    key = slugify(rubric.name).replace("-", "_")
    grader: dict[str, Any] = {"kind": "model_judge", "display_name": rubric.name, "prompt": prompt_for(rubric, warn)}
    judge = rubric.judge
    provider, model = _grader_provider(judge, key, warn)
    grader["model"] = model or LETTA_DEFAULTS["model"]
    grader["provider"] = provider or LETTA_DEFAULTS["provider"]
    grader["temperature"] = float(judge.temperature) if judge else 0.0
    grader["max_retries"] = judge.max_retries if judge else 3
    grader["timeout"] = float(judge.timeout) if judge else 60.0
    grader["extractor"] = "last_assistant"
    warn.add(f"Letta has no per-sample pass/fail: pass_threshold {num(rubric.pass_threshold)} and the required "
             "criteria are stated in the judge prompt, and required failures score 0.0")
    data: dict[str, Any] = {"name": rubric.name}
    if rubric.description.strip():
        data["description"] = rubric.description.strip()
    data["dataset"] = "dataset.jsonl"
    data["target"] = {"kind": "letta_code"}
    data["graders"] = {key: grader}
    data["reward"] = {"kind": "metric", "metric_key": key}
    if judge is not None and "concurrency" in judge.model_fields_set:
        data["max_concurrent"] = judge.concurrency
    header = (f"Letta evals suite exported by rubric-studio from rubric {rubric.name!r}.\n"
              "Point `dataset` at your JSONL/CSV (input, ground_truth) and configure `target`.\n"
              "Run: letta-evals run <this file>")
    return ExportResult(dump_yaml(data, header), warn.items)


# -- import ------------------------------------------------------------------
def _prompt_text(source: Source, name: str, grader: dict[str, Any], path: tuple[Any, ...]) -> str:
    if isinstance(grader.get("prompt"), str):
        return grader["prompt"]
    prompt_path = grader.get("prompt_path")
    if not isinstance(prompt_path, str):
        raise source.error(path, f"grader {name!r}: a model judge needs 'prompt' or 'prompt_path'")
    if source.base_dir is None:
        raise source.error((*path, "prompt_path"), f"grader {name!r}: prompt_path {prompt_path!r} cannot be "
                                                   "read when the suite is given as text; import the file instead")
    target, inside = resolve_prompt_path(prompt_path, source.base_dir)
    gate = Gate("judge.prompt_path", str(target), (*path, "prompt_path"), why="is outside the suite's folder")
    if not inside and not source.trust.covers(gate):
        # the suite came from someone else: its prompt becomes the rubric's, sent to the judge
        raise source.error((*path, "prompt_path"), f"grader {name!r}: prompt_path {prompt_path!r} reads {target}, "
                                                   "which is outside the suite's folder and not trusted; pass "
                                                   "--allow-code to trust this suite, or copy the prompt file "
                                                   "next to the suite")
    try:
        return read_prompt_file(target)
    except RubricError as exc:
        reason = exc.problems[0] if exc.problems else "cannot read"
        raise source.error((*path, "prompt_path"), f"grader {name!r}: prompt_path: {reason}") from None


def _outcome_from_prompt(prompt: str) -> str:
    lines = [line for line in _unescape(prompt).split("\n") if not _PLACEHOLDER_LINE.search(line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _threshold_from_gate(source: Source, gate: Any, warn: Warnings) -> tuple[float | None, dict[str, float]]:
    """Per-sample pass value and per-grader weights from a legacy ``gate``."""
    if not isinstance(gate, dict):
        return None, {}
    kind = gate.get("kind", "simple")
    weights: dict[str, float] = {}
    if kind == "weighted_average" and isinstance(gate.get("weights"), dict):
        weights = {str(k): float(v) for k, v in gate["weights"].items() if isinstance(v, int | float)}
    elif kind == "logical":
        warn.add(f"{source.at(('gate',))}: logical gate (and/or of conditions) has no rubric-studio form; ignored")
        return None, {}
    op = gate.get("pass_op") or gate.get("op")
    value = gate.get("pass_value", gate.get("pass_threshold", gate.get("value")))
    if not isinstance(value, int | float):
        return None, weights
    if op not in ("gte", "gt"):
        warn.add(f"{source.at(('gate',))}: gate op {op!r} has no rubric-studio form; pass_threshold left at default")
        return None, weights
    if op == "gt":
        warn.add(f"{source.at(('gate',))}: gate op gt (strictly above {value}) imported as score >= {value}")
    aggregation = gate.get("aggregation", gate.get("metric"))
    if "pass_value" not in gate and "pass_threshold" not in gate and aggregation not in (None, "avg_score", "accuracy"):
        warn.add(f"{source.at(('gate',))}: gate on {aggregation} of the scores read as a per-sample threshold")
    return float(value), weights


def _graders(source: Source, data: dict[str, Any], warn: Warnings) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """The suite's graders and their path (a legacy single ``grader:`` counts as one named ``grader``)."""
    graders = data.get("graders")
    if graders is None and isinstance(data.get("grader"), dict):
        warn.add("legacy single `grader:` read as graders.grader")
        graders, graders_path = {"grader": data["grader"]}, ("grader",)
    else:
        graders_path = ("graders",)
    return expect_mapping(source, graders, graders_path, "graders"), graders_path


def _reward_metric(data: dict[str, Any]) -> str | None:
    """The grader the suite's ``reward`` (or legacy ``gate``) scores by."""
    for section in ("reward", "gate"):
        if isinstance(data.get(section), dict) and isinstance(data[section].get("metric_key"), str):
            return data[section]["metric_key"]
    return None


def _model_judges(source: Source, graders: dict[str, Any], graders_path: tuple[Any, ...],
                  warn: Warnings) -> list[tuple[str, dict[str, Any], tuple[Any, ...]]]:
    """(name, grader, path) of each model-judge grader; other kinds are warned about. Raises if none."""
    judges: list[tuple[str, dict[str, Any], tuple[Any, ...]]] = []
    for name, grader in graders.items():
        path = (*graders_path, name) if graders_path == ("graders",) else graders_path
        grader = expect_mapping(source, grader, path, f"grader {name!r}")
        kind = grader.get("kind")
        if kind not in ("model_judge", "rubric"):
            warn.add(f"grader {name!r}: kind {kind!r} (Letta {kind} grader) has no rubric-studio form; not imported")
            continue
        if kind == "rubric":
            warn.add(f"{source.at((*path, 'kind'))}: legacy kind: rubric read as model_judge")
        if "agent_file" in grader:
            warn.add(f"grader {name!r}: agent-as-judge (agent_file) is imported as a plain model judge")
        judges.append((str(name), grader, path))
        extractor = grader.get("extractor", "last_assistant")
        if extractor != "last_assistant":
            warn.add(f"grader {name!r}: extractor {extractor!r} is not part of a rubric; grade with "
                     "--extract (last_assistant, all_assistant, transcript) to choose what is graded")
    if not judges:
        raise source.error(graders_path, "no model_judge graders found; nothing to import as a rubric")
    return judges


class _PromptCriteria:
    """The criteria read from the graders' prompts, where each came from, and the pass threshold
    and description a prompt written by :func:`export` states."""

    def __init__(self) -> None:
        self.ids = IdAllocator()
        self.criteria: list[dict[str, Any]] = []
        self.origins: dict[int, tuple[Any, ...]] = {}
        self.pass_threshold: float | None = None  # the last prompt's that states one
        self.description: str | None = None  # the first prompt's that states one

    def add(self, criterion: dict[str, Any], path: tuple[Any, ...]) -> None:
        self.origins[len(self.criteria)] = (*path, "prompt")
        self.criteria.append(criterion)


def _criteria_from_prompts(source: Source, judges: list[tuple[str, dict[str, Any], tuple[Any, ...]]],
                           rubric_vars: RubricVars, gate_weights: dict[str, float], warn: Warnings) -> _PromptCriteria:
    """Each grader's prompt as criteria: read back when :func:`export` wrote it, else one 0-10 criterion."""
    found = _PromptCriteria()
    for grader_name, grader, path in judges:
        prompt = rubric_vars.fill(grader_name, _prompt_text(source, grader_name, grader, path))
        parsed = parse_criteria_text(_unescape(prompt))
        if parsed is not None:
            for criterion in parsed.criteria:
                criterion["id"] = found.ids.take(criterion.get("id"), f"c{len(found.criteria) + 1}")
                found.add(criterion, path)
            if parsed.pass_threshold is not None:
                found.pass_threshold = parsed.pass_threshold
            if parsed.description and not found.description:
                found.description = parsed.description
            continue
        outcome = _outcome_from_prompt(prompt)
        if not outcome:
            raise source.error(path, f"grader {grader_name!r}: the prompt has no rubric text")
        warn.add(f"grader {grader_name!r}: its prompt became one 0-10 criterion (Letta's judge scores the whole "
                 "prompt 0.0-1.0); lines with {input}/{submission}/{ground_truth} were dropped because "
                 "rubric-studio's judge always sees them; generic score bands were added")
        found.add({"id": found.ids.take(grader_name, "quality"), "outcome": outcome,
                   "score_ranges": dict(GENERIC_BANDS), "min_score": 0.7,
                   "weight": gate_weights.get(grader_name, 1.0)}, path)
    return found


def import_(source: Source, warn: Warnings) -> Rubric:
    """Returns the rubric of a Letta evals suite (what it cannot carry over goes to ``warn``).
    Raises :class:`~rubric_studio.core.problems.RubricError` with positions for a malformed suite."""
    data = expect_mapping(source, source.data, (), "Letta suite")
    graders, graders_path = _graders(source, data, warn)
    threshold, gate_weights = _threshold_from_gate(source, data.get("gate"), warn)
    if "gate" in data:
        warn.add("legacy `gate` read (current Letta suites use `reward`)")
    metric_key = _reward_metric(data)
    judges = _model_judges(source, graders, graders_path, warn)
    if metric_key and len(judges) > 1:
        extra = [n for n, _, _ in judges if n != metric_key]
        if extra:
            warn.add(f"graders {', '.join(extra)} are extra metrics in Letta (the reward is {metric_key!r}); "
                     "imported as criteria, so they now count toward the score")
    description = data.get("description") if isinstance(data.get("description"), str) else None
    name = str(data.get("name") or "letta-suite")
    found = _criteria_from_prompts(source, judges, RubricVars(source, data, warn), gate_weights, warn)
    if found.pass_threshold is not None:
        threshold = found.pass_threshold
    description = description or found.description
    rubric_data: dict[str, Any] = {"name": name, "criteria": found.criteria}
    if description and description.strip():
        rubric_data["description"] = description.strip()
    if threshold is not None:
        rubric_data["pass_threshold"] = threshold
    judge = _judge(judges[0][1], data, warn)
    if judge:
        rubric_data["judge"] = judge
    return build_rubric(rubric_data, source, found.origins)


def _judge(grader: dict[str, Any], data: dict[str, Any], warn: Warnings) -> dict[str, Any] | None:
    if "agent_file" in grader:
        return None
    provider = str(grader.get("provider") or LETTA_DEFAULTS["provider"])
    model = str(grader.get("model") or LETTA_DEFAULTS["model"])
    judge: dict[str, Any] = {}
    if provider in IMPORTED:
        judge["model"] = f"{IMPORTED[provider]}:{model}"
    else:
        warn.add(f"Letta provider {provider!r} has no rubric-studio judge; judge.model not set")
    for key in ("temperature", "max_retries", "timeout"):
        value = grader.get(key, LETTA_DEFAULTS[key])
        if isinstance(value, int | float) and not isinstance(value, bool):
            judge[key] = value
    if isinstance(data.get("max_concurrent"), int):
        judge["concurrency"] = data["max_concurrent"]
    return judge
