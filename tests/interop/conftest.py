"""Shared fixtures for the interop tests: sample rubrics, fixture files, comparisons."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.core.loading import load_rubric
from rubric_studio.core.rubric import Rubric
from tests._timing import scaled

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAMPLE_RUBRICS = sorted(
    p for p in (ROOT / "sample_rubrics").glob("*/*.yaml") if not p.name.endswith((".labels.yaml", ".samples.yaml"))
)


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(params=SAMPLE_RUBRICS, ids=[p.stem for p in SAMPLE_RUBRICS])
def sample_rubric(request):
    return load_rubric(request.param)


@pytest.fixture
def support_reply():
    return load_rubric(ROOT / "sample_rubrics" / "support_reply" / "support_reply.yaml")


@pytest.fixture
def compare():
    """compare(original, imported, fields, ids=None) -> list of differences (empty when equal)."""

    def run(original, imported, fields, ids=None):
        before = {c.key: c for c in original.criteria}
        after = {c.key: c for c in imported.criteria}
        wanted = ids if ids is not None else list(before)
        diffs = []
        for cid in wanted:
            if cid not in after:
                diffs.append(f"{cid}: missing after import")
                continue
            for name in fields:
                a = getattr(before[cid], name)
                b = getattr(after[cid], name)
                if name == "check" and a is not None:
                    a, b = a.model_dump(), b.model_dump() if b is not None else None
                if a != b:
                    diffs.append(f"{cid}.{name}: {a!r} != {b!r}")
        return diffs

    return run


# -- running exported deterministic assertions on real text ---------------------------
_NODE_RUNNER = r"""
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = input.map(({ body, output }) => {
  const result = new Function('output', 'context', body)(output, {});
  return typeof result === 'object' ? result : { pass: !!result, score: Number(result) };
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="session")
def run_js():
    """run_js([(body, text), ...]) -> [{pass, score, reason}] evaluated by node (skips without node)."""
    import json
    import shutil
    import subprocess

    node = shutil.which("node")

    def run(pairs):
        if not pairs:
            return []
        if node is None:
            pytest.skip("node is not installed")
        payload = json.dumps([{"body": body, "output": text} for body, text in pairs])
        done = subprocess.run([node, "-e", _NODE_RUNNER], input=payload, capture_output=True, text=True, timeout=scaled(30))
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    return run


@pytest.fixture(scope="session")
def deterministic():
    """deterministic(kind, negated, entry, text) -> (passed, score) for non-JS promptfoo/AgentV assertions."""
    import json

    import regex

    def run(kind, negated, entry, text):
        value = entry.get("value")
        if kind == "contains":
            hit = str(value) in text
        elif kind == "icontains":
            hit = str(value).lower() in text.lower()
        elif kind == "regex":
            flags = 0
            for letter in entry.get("flags", ""):
                flags |= {"i": regex.I, "m": regex.M, "s": regex.S}[letter]
            hit = regex.search(value, text, flags) is not None
        elif kind == "is-json":
            try:
                json.loads(text)
                hit = True
            except ValueError:
                hit = False
        else:  # pragma: no cover - the exports use only the kinds above
            raise AssertionError(f"unexpected assertion kind {kind}")
        passed = hit != negated
        return passed, 1.0 if passed else 0.0

    return run


#: Features the bundled rubrics lack: penalty checks, graded required checks and analytic
#: criteria, a penalty with score bands, whole-word keywords.
EDGE_RUBRIC = Rubric.model_validate({
    "name": "edge-cases",
    "pass_threshold": 0.7,
    "criteria": [
        {"id": "answers", "outcome": "Answers the question", "weight": 2, "required": True},
        {"id": "depth", "outcome": "Explains why", "weight": 2, "required": True, "min_score": 0.6,
         "score_ranges": {0: "No reasons", 5: "Some reasons", 10: "Full reasoning"}},
        {"id": "rambles", "outcome": "Rambles", "weight": -1, "score_ranges": {0: "Focused", 6: "Wanders"}},
        {"id": "brief", "check": {"type": "length", "max_words": 12}, "required": True, "min_score": 0.5},
        {"id": "shouting", "check": {"type": "regex", "pattern": "[A-Z]{4,}"}, "weight": -2},
        {"id": "no-sorry", "check": {"type": "keywords", "forbidden": ["sorry", "oops"], "whole_words": True}},
        {"id": "plain", "outcome": "Uses plain words", "weight": 1.5},
    ],
})
EDGE_TEXTS = [
    "Short answer.", "Sorry, oops: THIS is LOUD and far too long for the limit of twelve words here",
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen",
    "sorrynot a whole word", "OK fine", "A calm reply with sorry in it",
]


@pytest.fixture
def edge_rubric():
    return EDGE_RUBRIC


@pytest.fixture(scope="session")
def graded_samples():
    """[(rubric, sample, judge_results)] for every bundled rubric and sample, judges random but seeded."""
    import random

    from rubric_studio.core.check_runner import CheckRunner
    from rubric_studio.core.results import CriterionResult, Status
    from rubric_studio.core.samples import Sample, load_samples
    from rubric_studio.core.scoring import cell_status

    out = []
    rng = random.Random(7)
    cases = []
    for path in SAMPLE_RUBRICS:
        rubric = load_rubric(path)
        folder = path.parent
        source = next((p for p in [folder / "samples", *folder.glob("*.samples.*")] if p.exists()), None)
        cases.append((rubric, list(load_samples(source)) if source else []))
    cases.append((EDGE_RUBRIC, [Sample(id=str(n), output=text) for n, text in enumerate(EDGE_TEXTS)]))
    for rubric, samples in cases:
        runner = CheckRunner(rubric)
        for sample in samples:
            for _ in range(4):
                results = runner.run_sample(sample)
                for criterion in rubric.judge_criteria:
                    if criterion.score_ranges:
                        raw = rng.randint(0, 10)
                        results[criterion.key] = CriterionResult(criterion.key, cell_status(criterion, raw / 10),
                                                                 score=raw / 10, raw_score=raw, source="judge")
                    else:
                        met = rng.random() < 0.75
                        results[criterion.key] = CriterionResult(criterion.key, Status.MET if met else Status.UNMET,
                                                                 score=1.0 if met else 0.0, source="judge")
                out.append((rubric, sample, results))
    return out
