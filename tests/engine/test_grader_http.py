"""The incremental contract end to end: real SDKs, real HTTP to a local fake server.

Counts are taken at the server, so they are the calls a user would pay for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.loading import load_rubric, parse_rubric
from rubric_studio.core.results import Status, Verdict
from rubric_studio.core.samples import load_samples
from rubric_studio.engine.api import make_grader
from tests.fakellm import FakeLLM, server_error

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "sample_rubrics/support_reply"


@pytest.fixture
def server():
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(params=["openai", "anthropic"])
def provider(request, server):
    """(judge flag, base url, env) for each provider."""
    if request.param == "openai":
        return "openai:gpt-4o-mini", server.base_url_openai, {"OPENAI_API_KEY": "test-key"}
    return "anthropic:claude-haiku-4-5", server.base_url_anthropic, {"ANTHROPIC_API_KEY": "test-key"}


def grader_for(rubric, provider, tmp_path: Path, **options):
    judge, base_url, env = provider
    return make_grader(rubric, judge=judge, base_url=base_url, env=env, cache_path=tmp_path / "cache.sqlite", **options)


async def test_incremental_regrade_counts_calls_at_the_server(server, provider, tmp_path: Path):
    rubric = load_rubric(SUPPORT / "support_reply.yaml")
    samples = load_samples(SUPPORT / "support_reply.samples.jsonl").samples
    n_samples, n_judged = len(samples), len(rubric.judge_criteria)

    grader = grader_for(rubric, provider, tmp_path)
    report = await grader.run(rubric, samples)
    assert server.calls() == n_samples * n_judged
    assert report.usage.judge_calls == n_samples * n_judged
    assert report.usage.input_tokens > 0 and report.summary.errors == 0
    assert {s.verdict for s in report.samples} <= {Verdict.PASS, Verdict.FAIL}

    # unchanged re-save and a comment-only edit: no calls
    text = (SUPPORT / "support_reply.yaml").read_text()
    await grader.run(parse_rubric(text, "r.yaml"), samples)
    await grader.run(parse_rubric("# reviewed\n" + text.replace("\n", "  # note\n", 1), "r.yaml"), samples)
    assert server.calls() == n_samples * n_judged

    # one criterion's outcome: exactly one call per sample
    edited = rubric.model_copy(deep=True)
    edited.judge_criteria[0].outcome += " (in the first reply)"
    await grader.run(edited, samples)
    assert server.calls() == n_samples * n_judged + n_samples

    # one more sample: exactly one call per judge criterion
    extra = samples[0].__class__(id="new-one", output="Thanks! Your refund is on its way.")
    await grader.run(edited, [*samples, extra])
    assert server.calls() == n_samples * n_judged + n_samples + n_judged

    # a fresh session on the same cache file: served from SQLite
    again = grader_for(edited, provider, tmp_path)
    warm = await again.run(edited, [*samples, extra])
    assert server.calls() == n_samples * n_judged + n_samples + n_judged
    assert warm.usage.cache_hits == (n_samples + 1) * n_judged
    await grader.aclose()
    await again.aclose()


def test_server_errors_become_error_cells_and_exit_code_3(server, tmp_path: Path, capsys, monkeypatch):
    server.always(server_error(500))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    rubric = tmp_path / "support_reply.yaml"
    rubric.write_text((SUPPORT / "support_reply.yaml").read_text().replace("max_retries: 3", "max_retries: 1"))
    code = main([
        "grade", str(rubric), str(SUPPORT / "support_reply.samples.jsonl"),
        "--judge", "openai:gpt-4o-mini", "--base-url", server.base_url_openai, "--format", "json",
        "--cache-path", str(tmp_path / "c.sqlite"),
    ])
    out = json.loads(capsys.readouterr().out)
    assert code == 3
    cells = [c for s in out["samples"] for c in s["criteria"] if c["source"] != "check"]
    assert {c["status"] for c in cells} == {"error"}
    assert all(c["score"] is None and "500" in c["error"] for c in cells)
    assert out["summary"]["failed"] == 0 and out["summary"]["errors"] == out["summary"]["samples"]
    assert out["summary"]["mean_score"] is None
    assert server.calls() == 2 * len(cells)  # one try and one retry each, then an error cell


async def test_batch_mode_one_call_per_sample(server, tmp_path: Path):
    rubric = load_rubric(SUPPORT / "support_reply.yaml")
    samples = load_samples(SUPPORT / "support_reply.samples.jsonl").samples[:5]
    grader = grader_for(rubric, ("openai:gpt-4o-mini", server.base_url_openai, {"OPENAI_API_KEY": "k"}), tmp_path, batch=True)
    report = await grader.run(rubric, samples)
    assert server.calls() == 5
    assert all(c.status in (Status.MET, Status.UNMET) for s in report.samples for c in s.criteria)
    await grader.aclose()


@pytest.mark.parametrize("batch", [False, True], ids=["per-criterion", "batch"])
async def test_samples_with_identical_text_are_both_judged_on_the_first_run(server, tmp_path: Path, batch: bool):
    from rubric_studio.core.samples import Sample

    rubric = load_rubric(SUPPORT / "support_reply.yaml")
    text = "Thanks for reaching out! Your refund of $40 is on its way and should arrive within 5-7 business days."
    samples = [Sample(id="first", output=text), Sample(id="second", output=text), Sample(id="other", output="No.")]
    openai = ("openai:gpt-4o-mini", server.base_url_openai, {"OPENAI_API_KEY": "k"})
    updates = []
    grader = grader_for(rubric, openai, tmp_path, batch=batch)
    report = await grader.run(rubric, samples, updates.append)
    by_id = report.by_id()
    for sample_id in ("first", "second"):
        assert {c.status for c in by_id[sample_id].criteria} <= {Status.MET, Status.UNMET}
        assert by_id[sample_id].verdict in (Verdict.PASS, Verdict.FAIL) and by_id[sample_id].score is not None
    assert [c.to_dict() for c in by_id["first"].criteria] == [c.to_dict() for c in by_id["second"].criteria]
    # One request answers both identical samples: the same request is never paid for twice.
    per_sample = 1 if batch else len(rubric.judge_criteria)
    assert server.calls() == 2 * per_sample
    # The studio hears about both as they resolve, not only the sample the request was built from.
    streamed = {r.id for event in updates for r in getattr(event, "samples", []) if r.verdict in (Verdict.PASS, Verdict.FAIL)}
    assert {"first", "second"} <= streamed
    await grader.aclose()


IGNORING = """\
name: ignoring
pass_threshold: 0.5
on_error: ignore
judge: {{model: "openai:gpt-4o-mini", max_retries: 1}}
criteria:
  - id: resolves
    outcome: Resolves the customer's issue
    required: {required}
  - id: polite
    check: {{type: keywords, required: [thanks]}}
    weight: {check_weight}
"""


@pytest.mark.parametrize(
    ("required", "check_weight", "output", "note"),
    [("true", 1, "thanks, all done", "required criteria errored"),
     ("false", -1, "all done", "no positive-weight criterion has a result")],
    ids=["required criterion errored, the rest met", "only an unmet penalty has a result"],
)
def test_on_error_ignore_never_scores_what_was_not_judged(server, tmp_path: Path, capsys, monkeypatch,
                                                          required, check_weight, output, note):
    server.always(server_error(500))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    rubric = tmp_path / "ignoring.yaml"
    rubric.write_text(IGNORING.format(required=required, check_weight=check_weight))
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"id": "a", "output": output}) + "\n")
    code = main(["grade", str(rubric), str(samples), "--base-url", server.base_url_openai, "--format", "json",
                 "--cache-path", str(tmp_path / "c.sqlite")])
    out = json.loads(capsys.readouterr().out)
    (sample,) = out["samples"]
    assert sample["verdict"] == "error" and sample["score"] is None
    assert any(note in n for n in sample["notes"])
    assert out["summary"]["passed"] == 0 and out["summary"]["mean_score"] is None
    assert code == 3
