"""The graded samples as AgentV test cases, their outputs replayed as written.

AgentV runs a target to get each test's answer; to grade outputs that already exist it has a
``replay`` target (4.42 and 5.x alike): a JSONL file of ``agentv.replay_fixture.v1`` records,
one per test, looked up by suite (the eval's ``name``), ``test_id`` and ``source_target``, whose
``output`` messages become the answer the graders see. The fixtures path is resolved against
the eval file's folder, so the export writes the fixtures beside the eval and names them with a
relative path.

* AgentV 5 declares the replay target inline, first in the eval's ``providers`` (the judge stays
  the grader through ``default_test.options.provider``); run it with ``--provider rubric-samples``.
* AgentV 4 reads targets only from ``.agentv/targets.yaml``: the export picks the target with
  ``execution.target`` and prints the entry to add in its header. Each test also carries the pass
  mark in its own ``execution.threshold``: 4.42 applies the suite's threshold to its summary but
  marks each result (``execution_status``, JUnit) against its default 0.8 otherwise.
"""

from __future__ import annotations

from typing import Any

from rubric_studio.core.samples import Sample
from rubric_studio.interop._output import jsonl_line

#: The target (AgentV 4) / provider label (AgentV 5) that replays the samples' outputs.
SAMPLES_TARGET = "rubric-samples"
FIXTURE_SCHEMA = "agentv.replay_fixture.v1"
#: AgentV 4 needs an input on every test; a sample without one gets this.
NO_INPUT = "(no input recorded for this sample)"


def fixtures_name(stem: str) -> str:
    """The fixtures file written beside an eval whose file name (or rubric slug) is ``stem``."""
    for suffix in (".eval.yaml", ".eval.yml", ".yaml", ".yml"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return f"{stem or 'rubric'}.outputs.jsonl"


def fixtures(samples: list[Sample], suite: str) -> str:
    """The replay fixtures JSONL: one record per sample, its output as the assistant's answer."""
    lines = []
    for sample in samples:
        record = {"schema_version": FIXTURE_SCHEMA, "suite": suite, "test_id": sample.id,
                  "source_target": SAMPLES_TARGET, "output": [{"role": "assistant", "content": sample.output}]}
        lines.append(jsonl_line(record))
    return "\n".join(lines) + "\n"


def tests_v5(samples: list[Sample]) -> list[dict[str, Any]]:
    """AgentV 5 tests: the sample's input (and reference) as vars, its id as the test id."""
    tests = []
    for sample in samples:
        variables: dict[str, Any] = {"input": sample.input or ""}
        if sample.ground_truth:
            variables["expected_output"] = sample.ground_truth
        tests.append({"id": sample.id, "vars": variables})
    return tests


def tests_v4(samples: list[Sample], threshold: float, criteria: str) -> list[dict[str, Any]]:
    """AgentV 4 tests: every one with an input, the rubric as criteria and the pass mark."""
    tests = []
    for sample in samples:
        test: dict[str, Any] = {"id": sample.id, "input": sample.input or NO_INPUT, "criteria": criteria}
        if sample.ground_truth:
            test["expected_output"] = sample.ground_truth
        test["execution"] = {"threshold": threshold}
        tests.append(test)
    return tests


def replay_provider_v5(fixtures_file: str, suite: str) -> dict[str, Any]:
    """The inline AgentV 5 provider that answers each test with its sample's output."""
    return {"id": "replay", "label": SAMPLES_TARGET,
            "config": {"fixtures": f"./{fixtures_file}", "suite": suite, "source_target": SAMPLES_TARGET}}


def replay_target_v4(fixtures_file: str, suite: str, judge_label: str | None) -> dict[str, Any]:
    """The ``.agentv/targets.yaml`` entry (AgentV 4) that replays the samples' outputs."""
    target: dict[str, Any] = {"name": SAMPLES_TARGET, "provider": "replay", "fixtures": f"./{fixtures_file}",
                              "suite": suite, "source_target": SAMPLES_TARGET}
    if judge_label:
        target["grader_target"] = judge_label
    return target
