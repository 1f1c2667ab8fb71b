"""promptfoo configs (``promptfooconfig.yaml``): ``llm-rubric`` and deterministic asserts.

How promptfoo scores (promptfoo/promptfoo ``src/assertions/assertionsResult.ts``):
a test's score is the weighted mean of its assertions' scores. Without a
``threshold`` the test passes only if *every* assertion passes; with one, it
passes when that mean reaches it (individual failures no longer count). An
``assert-set`` does the same for its members. ``not-llm-rubric`` inverts pass
and scores 1 − score.

Export writes a runnable config that grades ready-made outputs (``echo``
provider, prompt ``{{output}}``) with ``defaultTest`` holding the rubric:

* each required criterion is a top-level assertion (so it must pass);
* everything else sits in one ``assert-set`` whose ``threshold`` is our
  pass_threshold restated for that set's mean: required criteria are known to
  score 1 when the test can pass, and penalties are ``not-llm-rubric`` items of
  weight |w| — so a sample passes in promptfoo exactly when it passes here;
* a required criterion whose met score is not always 1 (0–10 criteria, checks
  with min_score < 1) appears twice: as the gate and inside the set (promptfoo's
  cache answers the second judge call);
* analytic criteria carry their bands on promptfoo's 0.0–1.0 scale and
  ``threshold: min_score``; operators are spelled out in the rubric text;
* a rubric whose criteria are all gates has no assert-set, so no threshold holds its
  pass_threshold (which decides no verdict then): it is kept in
  ``defaultTest.metadata.rubric_studio_pass_threshold`` for import to give back.

Import (:mod:`._promptfoo_read`) reads that structure back, and foreign configs by
the same rules: with a test threshold every assertion is scored, without one every
top-level assertion is a required criterion.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.checks import definition_of
from rubric_studio.core.rubric import DEFAULT_TIE_RULE, Criterion, PanelAggregate, Rubric, TieRule
from rubric_studio.core.samples import Sample
from rubric_studio.interop import _checks
from rubric_studio.interop._common import (
    BOUNDARY_NOTE,
    Warnings,
    band_label,
    bands_to_ranges,
    boundary_safe,
    common_export_warnings,
    floor6,
    num,
    outcome_with_examples,
    refuse_unscored,
    slugify,
)
from rubric_studio.interop._formats import ExportResult
from rubric_studio.interop._output import dump_yaml
from rubric_studio.interop._panel import (
    lossy,
    member_setting_warnings,
    panel_members,
    panel_rules,
    verdict_share,
)
from rubric_studio.interop.promptfoo._build import (
    BANDS_INTRO,
    CONTRADICTION,
    CORRECTNESS,
    GRADING_PROMPT,
    PASS_THRESHOLD_KEY,
)
from rubric_studio.interop.promptfoo._judge import grader_provider
from rubric_studio.interop.promptfoo._read import import_

__all__ = ["export", "import_"]

def _nunjucks_safe(text: str) -> str:
    """promptfoo renders assertion values as Nunjucks templates; keep ours literal."""
    if any(token in text for token in ("{{", "{%", "{#")):
        return "{% raw %}" + text + "{% endraw %}"
    return text


def _is_binary(criterion: Criterion) -> bool:
    """True when a met criterion always scores 1 (so a passing test knows its score)."""
    if criterion.check is None:
        return criterion.kind == "checklist"
    if definition_of(criterion.check).binary:
        return True
    return criterion.effective_min_score >= 1.0


def rubric_value(criterion: Criterion) -> str:
    """The llm-rubric text of a judge criterion (operator spelled out, bands on 0.0–1.0)."""
    text = outcome_with_examples(criterion)
    if criterion.operator == "contradiction":
        text = CONTRADICTION + text
    elif criterion.operator == "correctness":
        text = CORRECTNESS + text
    if criterion.score_ranges:
        lines = [text, BANDS_INTRO]
        for low, high, band in bands_to_ranges(criterion.score_ranges):
            lines.append(f"- {band_label(low, high, 0.1)}: {' '.join(band.split())}")
        text = "\n".join(lines)
    return _nunjucks_safe(text)


def _judge_assertion(criterion: Criterion, *, negated: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "not-llm-rubric" if negated else "llm-rubric", "metric": criterion.key,
                             "value": rubric_value(criterion), "weight": num(abs(criterion.weight))}
    if criterion.score_ranges or criterion.min_score is not None:
        entry["threshold"] = num(boundary_safe(criterion.effective_min_score))
    return entry


def _check_assertions(criterion: Criterion, warn: Warnings) -> list[dict[str, Any]]:
    out = []
    for part in _checks.export_check(criterion, "promptfoo", warn):
        entry = {"type": part.pop("type"), "metric": criterion.key, **part}
        if isinstance(entry.get("value"), str):
            entry["value"] = _nunjucks_safe(entry["value"])
        out.append(entry)
    return out


@dataclass
class _Placement:
    """Where each criterion's assertions go: top-level gates (must pass) or the scored assert-set,
    with the weight sums the set's restated threshold needs."""

    #: The judge panel's members as promptfoo providers (none: one judge for every criterion).
    members: list[Any] = field(default_factory=list)
    rules: PanelAggregate = field(default_factory=PanelAggregate)
    ties: TieRule = DEFAULT_TIE_RULE
    gates: list[dict[str, Any]] = field(default_factory=list)
    scored: list[dict[str, Any]] = field(default_factory=list)
    total_positive: float = 0.0  # of the criteria that made it into the config
    gate_weight: float = 0.0  # required criteria that score 1 whenever the test can pass
    set_weight: float = 0.0
    penalties: float = 0.0

    def add_penalty(self, criterion: Criterion, warn: Warnings) -> None:
        if criterion.required:
            warn.criterion(criterion.key, "a required penalty cannot gate in promptfoo; exported as a penalty")
        parts = self._judged(criterion, warn, negated=True, gate=False) if criterion.is_judged \
            else _check_assertions(criterion, warn)
        self.scored += parts
        if parts:
            self.penalties += -criterion.weight
            self.set_weight += -criterion.weight

    def add_positive(self, criterion: Criterion, warn: Warnings) -> None:
        gate_only = criterion.required and _is_binary(criterion)
        parts = self._judged(criterion, warn, negated=False, gate=gate_only) if criterion.is_judged \
            else _check_assertions(criterion, warn)
        if not parts:
            return
        self.total_positive += criterion.weight
        if criterion.required:
            self.gates += self._gate(criterion, parts)
            if _is_binary(criterion):
                self.gate_weight += criterion.weight
                return
            why = ("promptfoo's cache answers the second judge call" if criterion.is_judged
                   else "the check is deterministic, so both copies agree")
            warn.criterion(criterion.key, "required criterion with a graded score appears twice in promptfoo "
                                          f"(a gate, and a scored copy in the assert-set); {why}")
            self.scored += [dict(part) for part in parts]
        else:
            self.scored += parts
        self.set_weight += criterion.weight


    def _judged(self, criterion: Criterion, warn: Warnings, *, negated: bool, gate: bool) -> list[dict[str, Any]]:
        """The llm-rubric assertion of a judged criterion: one, or one per panel member (each with its
        provider and an equal share of the weight, so the set's mean counts the members' mean)."""
        one = _judge_assertion(criterion, negated=negated)
        if not self.members:
            return [one]
        note = lossy(criterion, self.rules, "promptfoo", gate=gate)
        if note:
            warn.criterion(criterion.key, note)
        share = num(abs(criterion.weight) / len(self.members))
        return [{**one, "weight": share, "provider": provider} for provider in self.members]

    def _gate(self, criterion: Criterion, parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A required criterion's gate: its assertions, or for a panel an assert-set of the members
        that passes as the panel's rule does (see :mod:`.._panel`)."""
        if not (self.members and criterion.is_judged):
            return parts
        share = verdict_share(criterion, self.rules, self.ties)
        threshold = share if share is not None else boundary_safe(criterion.effective_min_score)
        members = [{key: value for key, value in part.items() if key != "weight"} for part in parts]
        return [{"type": "assert-set", "metric": criterion.key, "threshold": num(threshold), "assert": members}]


def _place_criteria(rubric: Rubric, warn: Warnings) -> _Placement:
    placement = _Placement()
    if rubric.judge is not None and rubric.judge.panel:
        placement.members = [grader_provider(member, warn) for member in panel_members(rubric.judge)]
        placement.rules = panel_rules(rubric.judge)
        placement.ties = rubric.judge.ties
    for criterion in rubric.criteria:
        if criterion.weight < 0:
            placement.add_penalty(criterion, warn)
        else:
            placement.add_positive(criterion, warn)
    if placement.penalties:
        warn.add(f"penalties ({', '.join(c.key for c in rubric.criteria if c.weight < 0)}) become "
                 "not-llm-rubric assertions with positive weight (promptfoo weights are positive); the "
                 "assert-set threshold is restated so verdicts match, but promptfoo reports different scores")
    return placement


def _assertions(rubric: Rubric, placement: _Placement, warn: Warnings) -> list[dict[str, Any]]:
    """The gates, then the assert-set of scored criteria with the threshold restated for its mean."""
    assertions = list(placement.gates)
    if placement.scored:
        threshold = 0.0
        if rubric.pass_threshold > 0:
            raw = (rubric.pass_threshold * placement.total_positive - placement.gate_weight
                   + placement.penalties) / placement.set_weight
            threshold = min(1.0, max(0.0, boundary_safe(floor6(raw))))
            warn.add(BOUNDARY_NOTE)
        assertions.append({"type": "assert-set", "metric": slugify(rubric.name), "threshold": num(threshold),
                           "weight": num(placement.set_weight), "assert": placement.scored})
    return assertions


def _default_test(rubric: Rubric, assertions: list[dict[str, Any]], warn: Warnings) -> dict[str, Any]:
    default_test: dict[str, Any] = {"options": {}}
    provider = grader_provider(rubric.judge, warn)
    if provider is not None:
        default_test["options"]["provider"] = provider
    if any(c.is_judged for c in rubric.criteria):
        default_test["options"]["rubricPrompt"] = GRADING_PROMPT
    else:
        del default_test["options"]
    default_test["assert"] = assertions
    return default_test


def _tests(samples: list[Sample] | None) -> list[dict[str, Any]]:
    """The samples as promptfoo tests (the echo provider answers each with its ``vars.output``),
    or one example test to replace when there are none."""
    if not samples:
        return [{"description": "example - replace with the outputs you want graded",
                 "vars": {"output": "Paste a model output here"}}]
    tests = []
    for sample in samples:
        variables = {"output": sample.output}
        if sample.input:
            variables["input"] = sample.input
        tests.append({"description": sample.id, "vars": variables})
    return tests


def export(rubric: Rubric, *, samples: list[Sample] | None = None) -> ExportResult:
    """The promptfoo config; ``samples`` become its tests (their outputs graded as written)."""
    warn = Warnings()
    fields = ("base_url", "temperature", "concurrency")
    common_export_warnings(rubric, warn, "promptfoo", judge_fields=fields, panel=True)
    if rubric.judge is not None and rubric.judge.panel:
        for note in member_setting_warnings(rubric.judge, "promptfoo", fields):
            warn.add(note)
    if any(c.tags for c in rubric.criteria):
        warn.add("criterion tags have no promptfoo equivalent; not exported ("
                 + ", ".join(c.key for c in rubric.criteria if c.tags) + ")")
    placement = _place_criteria(rubric, warn)
    if placement.total_positive <= 0:
        refuse_unscored(rubric, "promptfoo", warn, [c.key for c in rubric.criteria if c.weight < 0])
    default_test = _default_test(rubric, _assertions(rubric, placement, warn), warn)
    if not placement.scored:  # every criterion is a gate: no assert-set threshold holds the pass_threshold
        default_test["metadata"] = {PASS_THRESHOLD_KEY: num(rubric.pass_threshold)}
    data: dict[str, Any] = {
        "description": f"{rubric.name}: {rubric.description.strip()}" if rubric.description.strip() else rubric.name,
        "prompts": ["{{output}}"],
        "providers": ["echo"],
        "defaultTest": default_test,
        "tests": _tests(samples),
    }
    if rubric.judge is not None and "concurrency" in rubric.judge.model_fields_set:
        data["evaluateOptions"] = {"maxConcurrency": rubric.judge.concurrency}
    header = ("yaml-language-server: $schema=https://promptfoo.dev/config-schema.json\n"
              f"promptfoo config exported by rubric-studio from rubric {rubric.name!r}.\n"
              "The echo provider grades the text in vars.output; swap in your own providers and prompts\n"
              "to grade live outputs. Run: npx promptfoo@latest eval -c <this file>")
    return ExportResult(dump_yaml(data, header), warn.items)
