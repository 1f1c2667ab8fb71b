"""grade --batch-api and jobs wait|status|cancel against a fake of both Batch APIs (real SDKs, real HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.judges.batch_api import split
from tests.fakebatch import FakeBatches

pytestmark = pytest.mark.timeout(120)
RUBRIC = """\
name: b
judge: {{model: '{model}'}}
criteria:
  - {{id: hello, outcome: Says hello}}
  - {{id: thanks, outcome: Says thanks}}
"""


@pytest.fixture(params=["openai", "anthropic"])
def provider(request):
    return request.param


@pytest.fixture
def project(tmp_path: Path, monkeypatch, provider):
    model = "openai:gpt-4o-mini" if provider == "openai" else "anthropic:claude-haiku-4-5"
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(tmp_path / "home"))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):  # the user's own provider is the rubric's
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("RUBRIC_STUDIO_BATCH_POLL", "0.01")
    (tmp_path / "r.yaml").write_text(RUBRIC.format(model=model))
    (tmp_path / "r.samples.jsonl").write_text(
        "".join(json.dumps({"id": f"s{i}", "output": f"hello {i}" + (" thanks" if i % 2 else "")}) + "\n"
                for i in range(6))  # fmt: skip
    )
    return tmp_path


def grade(project: Path, base_url: str, *extra: str, cache: str = "c.sqlite") -> tuple[int, dict | None]:
    out = project / "report.json"
    out.unlink(missing_ok=True)
    code = main(["grade", str(project / "r.yaml"), "--base-url", base_url, "--cache-path", str(project / cache),
                 "--format", "json", "-o", str(out), *extra])  # fmt: skip
    return code, json.loads(out.read_text()) if out.exists() else None


def url_of(server, provider: str) -> str:
    return server.base_url_openai if provider == "openai" else server.base_url_anthropic


def test_batch_api_grades_caches_and_never_pays_twice(project, provider):
    with FakeBatches(polls=2) as fake:
        code, report = grade(project, url_of(fake, provider), "--batch-api")
        assert code == 1 and fake.created() == 1 and fake.lines_submitted == 12
        verdicts = {s["id"]: [c["status"] for c in s["criteria"]] for s in report["samples"]}
        assert verdicts["s1"] == ["met", "met"] and verdicts["s0"] == ["met", "unmet"]
        assert report["usage"]["judge_calls"] == 12 and report["usage"]["input_tokens"] > 0
        code, again = grade(project, url_of(fake, provider), "--batch-api")
        assert fake.created() == 1 and again["usage"]["cache_hits"] == 12  # nothing submitted again
        code, live = grade(project, url_of(fake, provider))  # a later live run is served from the cache too
        assert fake.live_calls == 0 and live["usage"]["cache_hits"] == 12


def test_batch_cost_is_half_the_live_price(project, provider):
    with FakeBatches() as fake:
        _, batch = grade(project, url_of(fake, provider), "--batch-api", cache="batch.sqlite")
        _, direct = grade(project, url_of(fake, provider), cache="live.sqlite")
        assert fake.live_calls == 12
    assert batch["usage"]["cost_usd"] == pytest.approx(direct["usage"]["cost_usd"] / 2, abs=2e-6)  # JSON rounds to 1e-6


def test_failed_and_expired_lines_are_error_cells_and_valid_ones_are_cached(project, provider):
    with FakeBatches(failing={0}) as fake:
        code, report = grade(project, url_of(fake, provider), "--batch-api")
        cells = [c for s in report["samples"] for c in s["criteria"]]
        errors = [c for c in cells if c["status"] == "error"]
        assert code == 3 and len(errors) == 1 and "max_tokens too large" in errors[0]["error"]
        fake.failing, fake.expire = set(), True
        code, report = grade(project, url_of(fake, provider), "--batch-api")  # a new job for the one cell left
        assert fake.lines_submitted == 13 and fake.created() == 2  # it expires unanswered
    cells = [c for s in report["samples"] for c in s["criteria"]]
    assert code == 3 and sum(c["status"] == "error" for c in cells) == 1
    assert any("expired" in (c.get("error") or "") for c in cells) and report["usage"]["cache_hits"] == 11


def test_no_wait_then_jobs_wait_resumes_without_submitting_again(project, provider, capsys):
    with FakeBatches(polls=3) as fake:
        code, report = grade(project, url_of(fake, provider), "--batch-api", "--no-wait")
        out = capsys.readouterr().out
        assert code == 0 and report is None and "rubric-studio jobs wait job-" in out
        job_id = out.split("jobs wait ")[1].split()[0]
        assert main(["jobs", "status", "--cache-path", str(project / "c.sqlite")]) == 0
        assert job_id in capsys.readouterr().out
        # a new process would find the job file: running grade --batch-api again resumes it
        code, report = grade(project, url_of(fake, provider), "--batch-api")
        assert fake.created() == 1 and report["usage"]["judge_calls"] == 12
        assert main(["jobs", "wait", job_id, "--cache-path", str(project / "c.sqlite")]) == 2  # already collected
        assert "collected" in capsys.readouterr().err


def test_jobs_wait_collects_a_job_and_cancel_cancels_one(project, provider, capsys):
    with FakeBatches(polls=50) as fake:
        grade(project, url_of(fake, provider), "--batch-api", "--no-wait")
        job_id = capsys.readouterr().out.split("jobs wait ")[1].split()[0]
        assert main(["jobs", "cancel", job_id, "--cache-path", str(project / "c.sqlite")]) == 0
        assert "cancelled batch job" in capsys.readouterr().out
    with FakeBatches() as fake:
        grade(project, url_of(fake, provider), "--batch-api", "--no-wait")
        capsys.readouterr()
        assert main(["jobs", "wait", "--cache-path", str(project / "c.sqlite"), "--format", "json"]) == 1
        report = json.loads(capsys.readouterr().out)
        assert report["summary"]["samples"] == 6 and report["usage"]["judge_calls"] == 12
    assert main(["jobs", "wait", "job-nope", "--cache-path", str(project / "c.sqlite")]) == 2


def test_batch_api_with_jsonl_prints_the_streaming_shape(project, provider, capsys):
    with FakeBatches() as fake:
        code = main(["grade", str(project / "r.yaml"), "--base-url", url_of(fake, provider), "--cache-path",
                     str(project / "c.sqlite"), "--format", "jsonl", "--batch-api"])  # fmt: skip
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and [line["id"] for line in lines[:-1]] == [f"s{i}" for i in range(6)]
    assert lines[-1]["summary"]["samples"] == 6 and lines[-1]["usage"]["judge_calls"] == 12


def test_requests_are_split_at_the_providers_limits():
    lines = [(f"r{i}", {"text": "x" * 100}) for i in range(10)]
    assert [len(c) for c in split(lines, "openai", (4, 10**9))] == [4, 4, 2]
    assert [len(c) for c in split(lines, "anthropic", (100, 700))] == [2, 2, 2, 2, 2]  # ~300 bytes a line
    assert sum(len(c) for c in split(lines, "openai")) == 10 and len(split(lines, "openai")) == 1
