"""AgentV eval files (``*.eval.yaml``): ``assert`` strings and ``type: llm-rubric`` values.

How AgentV scores (EntityProcess/agentv, ``packages/core/src/evaluation``): each
assertion is an evaluator with a score in [0, 1] and a ``weight`` (default 1);
the test score is their weighted mean and passes at ``threshold`` (default 0.8).
An evaluator with ``required: true`` zeroes the test when its score is below its
``min_score``. Inside one ``llm-rubric`` the items are scored together:
checklist items by weight; as soon as one item has ``score_ranges`` the whole
assertion is scored 0–10 per item. Item ``required`` (default **true**) and an
analytic item's ``min_score`` only decide that assertion's own verdict.

Export keeps our verdicts in that model:

* criteria are grouped into assertions of one kind each (checklist, required
  checklist, analytic, each required analytic alone, penalties), each with
  ``weight`` = the sum of its items' weights, so the weighted mean of the
  assertions equals our weighted mean;
* required criteria also gate at assertion level (``required: true`` with
  ``min_score``), which is what fails the test in AgentV;
* penalties become an ``negate: true`` assertion of "does the bad thing" items
  (weight |w|); the test ``threshold`` is restated for that mean, so a sample
  passes in AgentV exactly when it passes here (scores differ, warned);
* checks become AgentV's deterministic assertions (see :mod:`._checks`).

Import gives AgentV's verdicts: only an assertion-level ``required`` (``min_score``,
default the threshold) becomes a required criterion — for a single-item assertion
exactly, for a checklist group each item whose miss alone fails the gate (the rest
warned); item-level ``required`` (AgentV's default) is reported and left out. It
reads the file as js-yaml does (YAML 1.2 scalars, merge keys), applies AgentV's
defaults (plain strings weigh 1 each; ids ``rubric-N``), merges suite-level
(``assert``, ``default_test.assert``), ``assert-set`` (each member's share of the set)
and test-level assertions, and undoes the penalty/threshold restatement and the
boundary nudge (:data:`._common.BOUNDARY_EPSILON`). ``--agentv-version 4`` writes the
4.x layout (:mod:`._agentv4`).
"""

from __future__ import annotations

from typing import Any

from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.interop import _checks
from rubric_studio.interop._common import (
    BOUNDARY_NOTE,
    Warnings,
    bands_to_ranges,
    boundary_safe,
    common_export_warnings,
    num,
    outcome_with_examples,
    refuse_unscored,
    slugify,
    threshold_with_negations,
)
from rubric_studio.interop._formats import ExportResult
from rubric_studio.interop._output import dump_yaml, flow, prepare
from rubric_studio.interop.agentv import _samples as _agentv_samples
from rubric_studio.interop.agentv import _v4 as _agentv4
from rubric_studio.interop.agentv._items import ANALYTIC_PASS_MARK
from rubric_studio.interop.agentv._judge import provider_entry
from rubric_studio.interop.agentv._panel import Panel, build_panel, panel_assertion, version_notes
from rubric_studio.interop.agentv._read import import_

__all__ = ["CATALOG_FILE", "CONFIG_FILE", "catalog_files", "catalog_keys", "export", "import_"]

JUDGE_LABEL = "rubric-judge"


# -- export ------------------------------------------------------------------
def _item(criterion: Criterion, warn: Warnings, *, negated: bool = False) -> dict[str, Any]:
    item: dict[str, Any] = {"id": criterion.key, "outcome": outcome_with_examples(criterion)}
    if criterion.operator:
        item["operator"] = criterion.operator
    item["weight"] = num(abs(criterion.weight))
    analytic = bool(criterion.score_ranges)
    item["required"] = bool(criterion.required and not negated)
    if analytic:
        if (criterion.required and not negated) or abs(criterion.effective_min_score - ANALYTIC_PASS_MARK) > 1e-9:
            # an item's min_score marks only its own assertion (the test gate is the assertion's)
            item["min_score"] = num(criterion.effective_min_score)
        item["score_ranges"] = [
            {"score_range": flow(prepare([low, high])), "outcome": text}
            for low, high, text in bands_to_ranges(criterion.score_ranges or {})
        ]
    elif criterion.min_score is not None:
        item["min_score"] = num(criterion.min_score)
    return item


class _Grouping:
    """The criteria in export order: kind-groups (one assertion each, placed where their first
    member is) and criteria that get an assertion of their own (checks, required 0-10 criteria)."""

    def __init__(self) -> None:
        self.groups: dict[str, list[Criterion]] = {}
        self.order: list[tuple[str, Criterion | None]] = []  # (group key, None) or (kind, the criterion)

    def place(self, key: str, criterion: Criterion) -> None:
        if key not in self.groups:
            self.groups[key] = []
            self.order.append((key, None))
        self.groups[key].append(criterion)

    def alone(self, kind: str, criterion: Criterion) -> None:
        self.order.append((kind, criterion))


def _group_criteria(rubric: Rubric, warn: Warnings, *, panel: bool = False) -> _Grouping:
    """The criteria placed in groups; with a judge ``panel`` each judged criterion stands alone."""
    grouping = _Grouping()
    for criterion in rubric.criteria:
        if criterion.check is not None:
            grouping.alone("check", criterion)
            continue
        analytic = bool(criterion.score_ranges)
        if criterion.required and analytic and criterion.effective_min_score <= 0:
            # met whatever the score: the gate can never fire (and AgentV needs min_score > 0)
            criterion = criterion.model_copy(update={"required": False})
        if panel:
            if criterion.weight < 0 and criterion.required:
                warn.criterion(criterion.key, "a required penalty cannot gate in AgentV; exported as a plain penalty")
            grouping.alone("panel", criterion)
            continue
        if criterion.weight < 0:
            if criterion.required:
                warn.criterion(criterion.key, "a required penalty cannot gate in AgentV; exported as a plain penalty")
            grouping.place("penalties-scored" if analytic else "penalties", criterion)
        elif criterion.required and analytic:
            grouping.alone("required-scored", criterion)
        elif criterion.required:
            grouping.place("required", criterion)
        else:
            grouping.place("rubric-scored" if analytic else "rubric", criterion)
    if any(c.tags for c in rubric.criteria):
        warn.add("criterion tags are not part of AgentV rubric items; not exported ("
                 + ", ".join(c.key for c in rubric.criteria if c.tags) + ")")
    return grouping


def _check_entries(criterion: Criterion, agentv_version: int, warn: Warnings) -> list[dict[str, Any]]:
    """The deterministic assertions of a check criterion (none when this AgentV version cannot run it)."""
    parts = _checks.export_check(criterion, "agentv", warn, javascript=agentv_version != 4)
    if agentv_version == 4 and any(part.get("type") == "javascript" for part in parts):
        warn.criterion(criterion.key, "AgentV 4 has no inline javascript assertion (only a code-grader script "
                                      "file); not exported, and left out of weights and threshold - use "
                                      "--agentv-version 5 to keep it" + _dropped_gate_note(criterion))
        return []
    entries = []
    for part in parts:
        entry = {"metric": criterion.key, **part}
        if criterion.required and criterion.weight > 0 and criterion.effective_min_score > 0:
            entry["required"] = True
            entry["min_score"] = 1 if len(parts) > 1 else num(boundary_safe(criterion.effective_min_score))
        entries.append(entry)
    return entries


def _dropped_gate_note(criterion: Criterion) -> str:
    """What dropping a required check does to verdicts (empty when the check only added to the score)."""
    if not (criterion.required and criterion.weight > 0 and criterion.effective_min_score > 0):
        return ""
    check = criterion.check
    failing = "replies that fail it"
    if check is not None and check.type == "length":
        too_short = any(getattr(check, k, None) is not None for k in ("min_chars", "min_words"))
        too_long = any(getattr(check, k, None) is not None for k in ("max_chars", "max_words"))
        failing = " or ".join(w for w, on in (("too-short", too_short), ("too-long", too_long)) if on) + " replies"
    return f"; it was a required gate, so verdicts change: {failing} will now pass"


def _group_entry(key: str, members: list[Criterion], warn: Warnings) -> dict[str, Any]:
    """One llm-rubric assertion for a kind-group (its weight the sum of its items' weights)."""
    entry: dict[str, Any] = {"metric": key, "type": "llm-rubric", "weight": num(sum(abs(c.weight) for c in members))}
    if key == "required":
        entry["required"] = True
        entry["min_score"] = 1
    if key.startswith("penalties"):
        entry["negate"] = True
    entry["value"] = [_item(c, warn, negated=key.startswith("penalties")) for c in members]
    return entry


def _assertions(rubric: Rubric, agentv_version: int, warn: Warnings,
                panel: Panel | None = None) -> tuple[list[dict[str, Any]], list[Criterion]]:
    """(the suite-level assertions, the criteria they hold - what weights and threshold count); with
    a judge ``panel`` each judged criterion is a group of one grader per member."""
    grouping = _group_criteria(rubric, warn, panel=panel is not None)
    asserts: list[dict[str, Any]] = []
    exported: list[Criterion] = [c for c in rubric.criteria if c.is_judged]
    for key, single in grouping.order:
        if key == "check":
            assert single is not None
            entries = _check_entries(single, agentv_version, warn)
            if entries:
                exported.append(single)
            asserts += entries
        elif key == "panel":
            assert single is not None and panel is not None
            item = _item(single, warn, negated=single.weight < 0)
            asserts.append(panel_assertion(single, item, panel, agentv_version, warn))
        elif key == "required-scored":
            assert single is not None
            asserts.append({"metric": single.key, "type": "llm-rubric", "weight": num(single.weight),
                            "required": True, "min_score": num(boundary_safe(single.effective_min_score)),
                            "value": [_item(single, warn)]})
        else:
            asserts.append(_group_entry(key, grouping.groups[key], warn))
    return asserts, exported


def _refuse_without_scoring(rubric: Rubric, exported: list[Criterion], version: int, warn: Warnings) -> None:
    """Refuse an export in which no criterion with a positive weight has an AgentV ``version`` form."""
    if not any(c.weight > 0 for c in exported):
        refuse_unscored(rubric, f"AgentV {version}", warn, [c.key for c in exported])


def _threshold(rubric: Rubric, exported: list[Criterion], warn: Warnings) -> int | float:
    """The test threshold, restated for the negated penalty assertions and nudged below the boundary."""
    positive = sum(c.weight for c in exported if c.weight > 0)
    negated = sum(-c.weight for c in exported if c.weight < 0)
    threshold = num(boundary_safe(threshold_with_negations(rubric.pass_threshold, positive, negated)))
    if rubric.pass_threshold > 0:
        warn.add(BOUNDARY_NOTE)
    if negated:
        warn.add(f"penalties ({', '.join(c.key for c in exported if c.weight < 0)}) become negated "
                 f"assertions (AgentV weights are positive); the threshold is restated as {threshold} so "
                 "verdicts match, but AgentV reports different scores")
    return threshold


def export(rubric: Rubric, *, agentv_version: int = 5, samples: list[Sample] | None = None,
           samples_file: str | None = None) -> ExportResult:
    """The eval file for AgentV ``agentv_version`` (5, the newest, or 4: see :mod:`._agentv4`), its
    warnings and companion files by name. ``samples`` become its tests, their outputs replayed as
    written from a fixtures file (``samples_file``, beside the eval; see :mod:`._agentv_samples`)."""
    if agentv_version not in (4, 5):
        raise ValueError(f"agentv_version must be 4 or 5, not {agentv_version!r}")
    warn = Warnings()
    common_export_warnings(rubric, warn, "AgentV", judge_fields=("base_url", "temperature"), panel=True)
    panel = build_panel(rubric, JUDGE_LABEL, warn)
    if panel is not None:
        version_notes(panel, agentv_version, warn)
    asserts, exported = _assertions(rubric, agentv_version, warn, panel)
    _refuse_without_scoring(rubric, exported, agentv_version, warn)
    suite = slugify(rubric.name)
    data: dict[str, Any] = {"name": suite}
    if rubric.description.strip():
        data["description"] = rubric.description.strip()
    judge_provider = _judge_provider(rubric, warn) if panel is None else None
    fixtures_file = samples_file or _agentv_samples.fixtures_name(suite)
    files = {fixtures_file: _agentv_samples.fixtures(samples, suite)} if samples else {}
    providers = [_agentv_samples.replay_provider_v5(fixtures_file, suite)] if samples else []
    if judge_provider:
        providers.append(judge_provider)
    providers += panel.providers if panel is not None else []
    if providers:
        data["providers"] = providers
    default_test: dict[str, Any] = {"threshold": _threshold(rubric, exported, warn)}
    if judge_provider:
        default_test["options"] = {"provider": JUDGE_LABEL}
    data["default_test"] = default_test
    data["prompts"] = ["{{ input }}"]
    data["assert"] = asserts
    data["tests"] = (_agentv_samples.tests_v5(samples) if samples
                     else [{"id": "example", "vars": {"input": _agentv4.EXAMPLE_INPUT}}])
    if agentv_version == 4:
        data, judge_lines = _agentv4.layout(data, judge_provider, warn, samples=samples, fixtures_file=fixtures_file,
                                            panel=panel)
        header = (f"AgentV 4 eval exported by rubric-studio from rubric {rubric.name!r}.\n"
                  "The suite-level `assertions` list below is the rubric; it applies to every test.\n"
                  + (judge_lines + "\n" if judge_lines else "")
                  + ("" if samples else "Add your cases to `tests`."))
        return ExportResult(dump_yaml(data, header.rstrip("\n")), warn.items, files=files)
    if providers:
        files.update(catalog_files(providers))
    if samples:
        run = (f"The tests are the graded samples; provider {_agentv_samples.SAMPLES_TARGET} answers each with\n"
               f"its output as written, from {fixtures_file} (keep it beside this file).\n"
               + _catalog_lines(providers) + "\n"
               f"  agentv eval run <this file> --provider {_agentv_samples.SAMPLES_TARGET}")
    else:
        run = "Add your target to `providers` and your cases to `tests`."
        if providers:
            run += "\n" + _catalog_lines(providers, then="and add your target there too.")
    header = (f"AgentV eval exported by rubric-studio from rubric {rubric.name!r}.\n"
              "The suite-level `assert` list below is the rubric; it applies to every test.\n" + run)
    return ExportResult(dump_yaml(data, header), warn.items, files=files)


#: Where AgentV 5 finds its provider catalog: ``.agentv/config.yaml`` (searched from the eval's
#: folder up to the repository root) names it with ``providers: file://providers.yaml``, a path
#: relative to itself; the catalog is a bare YAML list of provider entries. Without one, 5.x
#: refuses to run ("No provider catalog configured"), whatever the eval's own ``providers`` say.
CATALOG_FILE = ".agentv/providers.yaml"
CONFIG_FILE = ".agentv/config.yaml"
CONFIG_TEXT = "providers: file://providers.yaml\n"


def catalog_files(providers: list[dict[str, Any]]) -> dict[str, str]:
    """The provider catalog AgentV 5 needs to run an eval whose ``providers`` are these, and the
    project config naming it (companion files, by path relative to the eval)."""
    header = ("AgentV provider catalog written by rubric-studio beside the eval it exported\n"
              "(.agentv/config.yaml names it: providers: file://providers.yaml).")
    return {CATALOG_FILE: dump_yaml(providers, header), CONFIG_FILE: CONFIG_TEXT}


def catalog_keys(providers: list[dict[str, Any]]) -> list[str]:
    """The environment variables the catalog reads with no fallback (the keys to set)."""
    from rubric_studio.interop.agentv._judge import parse_reference

    found: list[str] = []
    for entry in providers:
        for value in (entry.get("config") or {}).values():
            parsed = parse_reference(value)
            if parsed is not None and parsed[1] is None and parsed[0] not in found:
                found.append(parsed[0])
    return found


def _catalog_lines(providers: list[dict[str, Any]], then: str = "") -> str:
    """What the header says about the catalog; ``then`` ends it (default: how to run)."""
    keys = catalog_keys(providers)
    need = f"with only {' and '.join(keys)} set" if keys else "with nothing else to set"
    return ("AgentV 5 runs only with a provider catalog: export with -o FILE to have these providers written\n"
            f"to {CATALOG_FILE} and named in {CONFIG_FILE} beside FILE; " + (then or f"then, {need}, run:"))


def _judge_provider(rubric: Rubric, warn: Warnings) -> dict[str, Any] | None:
    """The judge as an AgentV provider entry (selected with ``default_test.options.provider``)."""
    return provider_entry(rubric.judge, JUDGE_LABEL, warn)
