"""Azure OpenAI (``azure:<deployment>``) through the openai SDK's AzureOpenAI, against the local fake
server speaking Azure's URL shape: deployments, ``?api-version=``, the ``api-key`` header, and the
Batch API under ``/openai/files`` and ``/openai/batches``."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from rubric_studio.cli import main
from rubric_studio.core.trust import TRUST_ALL
from rubric_studio.judges import JudgeConfig, NoJudge, resolve_judge
from rubric_studio.judges.capabilities import capabilities
from rubric_studio.judges.pricing import price_for
from tests.fakebatch import FakeBatches
from tests.fakellm import FakeLLM, rate_limited, server_error

pytestmark = pytest.mark.timeout(120)
API_VERSION = "2024-10-21"
RUBRIC = """\
name: az
judge: {max_retries: 2, max_retry_wait: 0.01}
criteria:
  - {id: hello, outcome: Says hello}
  - {id: thanks, outcome: Says thanks}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
    monkeypatch.setenv("OPENAI_API_VERSION", API_VERSION)
    monkeypatch.setenv("RUBRIC_STUDIO_BATCH_POLL", "0.01")
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "s.jsonl").write_text('{"id": "s0", "output": "hello there"}\n{"id": "s1", "output": "thanks a lot"}\n')
    return tmp_path


def grade(project: Path, *extra: str) -> tuple[int, dict | None]:
    out = project / "report.json"
    out.unlink(missing_ok=True)
    code = main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--cache-path", str(project / "c.sqlite"),
                 "--format", "json", "-o", str(out), *extra])  # fmt: skip
    return code, json.loads(out.read_text()) if out.exists() else None


def verdicts(report: dict) -> dict[tuple[str, str], str]:
    return {(s["id"], c["id"]): c["status"] for s in report["samples"] for c in s["criteria"]}


def sdk_body_keys() -> set[str]:
    """The body fields the installed openai SDK declares for a chat completion."""
    from openai.types.chat import completion_create_params

    return set(completion_create_params.CompletionCreateParamsBase.__annotations__)


# -- live calls ---------------------------------------------------------------------------------


@pytest.mark.parametrize("deployment, sent, absent", [
    ("gpt-4o-mini", {"temperature", "max_tokens"}, {"max_completion_tokens", "reasoning_effort"}),
    ("o3-mini", {"max_completion_tokens"}, {"temperature", "max_tokens"}),
    ("judge-prod", {"max_completion_tokens"}, {"temperature", "max_tokens", "reasoning_effort"}),
])  # fmt: skip
def test_grades_through_a_deployment_in_azures_url_shape(project: Path, monkeypatch, deployment, sent, absent):
    with FakeLLM(api_key="az-key") as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url + "/")
        code, report = grade(project, "--judge", f"azure:{deployment}")
        requests = list(server.requests)
    assert code == 1 and report is not None  # s0 lacks thanks, s1 lacks hello
    assert report["judge"] == {"provider": "azure", "model": deployment}
    assert verdicts(report) == {("s0", "hello"): "met", ("s0", "thanks"): "unmet",
                                ("s1", "hello"): "unmet", ("s1", "thanks"): "met"}  # fmt: skip
    assert len(requests) == 4
    for request in requests:
        assert request.path == f"/openai/deployments/{deployment}/chat/completions"
        assert parse_qs(request.query) == {"api-version": [API_VERSION]}
        assert request.headers["api-key"] == "az-key" and "authorization" not in request.headers
        assert set(request.body) <= sdk_body_keys(), set(request.body) - sdk_body_keys()
        assert request.body["model"] == deployment and request.body["response_format"]["type"] == "json_schema"
        assert sent <= set(request.body) and not absent & set(request.body)


def test_a_second_run_is_answered_by_the_cache(project: Path, monkeypatch):
    with FakeLLM(api_key="az-key") as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url)
        grade(project, "--judge", "azure:gpt-4o-mini")
        code, report = grade(project, "--judge", "azure:gpt-4o-mini")
        assert server.calls() == 4  # the first run only
    assert code == 1 and report["usage"]["cache_hits"] == 4


def test_a_bad_key_is_one_line_naming_the_azure_variable(project: Path, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "wrong")
    with FakeLLM(api_key="az-key") as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url)
        code, report = grade(project, "--judge", "azure:gpt-4o-mini")
    errors = {c["error"] for s in report["samples"] for c in s["criteria"] if c["status"] == "error"}
    assert code == 3 and errors
    assert any("401 from http://127.0.0.1" in e and "(check AZURE_OPENAI_API_KEY)" in e for e in errors)
    assert all("\n" not in e for e in errors)


def test_a_rate_limit_is_waited_out_and_a_5xx_retried(project: Path, monkeypatch):
    with FakeLLM(api_key="az-key") as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url)
        server.queue(rate_limited(retry_after=0.01), server_error(503))
        code, report = grade(project, "--judge", "azure:gpt-4o-mini", "--concurrency", "1")
        assert server.calls() == 6  # 4 cells, two of the requests retried
    assert code == 1 and "error" not in set(verdicts(report).values())
    assert report["usage"]["requests"] == 6


def test_a_5xx_that_persists_ends_as_an_error_cell(project: Path, monkeypatch):
    with FakeLLM(api_key="az-key") as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url)
        server.always(server_error(500))
        code, report = grade(project, "--judge", "azure:gpt-4o-mini")
    errors = [c["error"] for s in report["samples"] for c in s["criteria"]]
    assert code == 3 and all(e and "500 from http://127.0.0.1" in e for e in errors)


@pytest.mark.parametrize("unset, message", [
    ("AZURE_OPENAI_ENDPOINT", "azure:gpt-4o-mini: azure needs an endpoint: set AZURE_OPENAI_ENDPOINT, or pass "
                              "--base-url URL (or set judge.base_url)"),
    ("OPENAI_API_VERSION", "azure:gpt-4o-mini: OPENAI_API_VERSION is not set (the azure provider's api_version)"),
])  # fmt: skip
def test_a_missing_endpoint_or_api_version_is_one_line(project: Path, monkeypatch, capsys, unset, message):
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv(unset)
    code, report = grade(project, "--judge", "azure:gpt-4o-mini")
    assert "Traceback" not in capsys.readouterr().err
    assert code == 1 and report["judge_note"] == message and report["judge"] is None
    assert set(verdicts(report).values()) == {"unjudged"}  # nothing was sent


# -- trust, prices, capabilities --------------------------------------------------------------


def test_a_rubrics_endpoint_is_used_only_when_trusted(tmp_path: Path):
    from rubric_studio.core.rubric import JudgeSettings

    env = {"AZURE_OPENAI_API_KEY": "k", "OPENAI_API_VERSION": API_VERSION}
    settings = JudgeSettings(model="azure:gpt-4o", base_url="https://elsewhere.example.com")
    refused = resolve_judge(settings, env=env, base_dir=tmp_path)
    assert isinstance(refused, NoJudge) and refused.reason.startswith(
        "judge.base_url https://elsewhere.example.com is set by the rubric, not by you")
    trusted = resolve_judge(settings, env=env, base_dir=tmp_path, trust=TRUST_ALL)
    assert isinstance(trusted, JudgeConfig) and trusted.base_url == "https://elsewhere.example.com"
    mine = resolve_judge(settings, env={**env, "AZURE_OPENAI_ENDPOINT": "https://elsewhere.example.com/"})
    assert isinstance(mine, JudgeConfig)  # the user set that same endpoint: nothing to trust


def test_an_openai_key_does_not_let_a_rubric_switch_to_azure(tmp_path: Path):
    from rubric_studio.core.rubric import JudgeSettings

    env = {"OPENAI_API_KEY": "k", "AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_ENDPOINT": "https://r.example.com",
           "OPENAI_API_VERSION": API_VERSION}  # fmt: skip
    found = resolve_judge(JudgeSettings(model="azure:gpt-4o"), env=env, base_dir=tmp_path)
    assert isinstance(found, NoJudge) and "switches to provider azure, not the one you use (openai)" in found.reason


def test_a_deployment_named_after_a_model_costs_its_price():
    assert price_for("azure", "gpt-4o-mini-2024-07-18") == price_for("openai", "gpt-4o-mini") is not None
    assert price_for("azure", "judge-prod") is None  # unknown, never 0


def test_an_unknown_deployment_is_warned_about_the_parameters_not_sent():
    from rubric_studio.judges.capabilities import dropped_settings

    config = JudgeConfig(provider="azure", model="judge-prod", base_url="https://r.example.com", temperature=0.2)
    assert capabilities(config).sends == frozenset()
    [line] = dropped_settings(config, ["temperature"])
    assert line.startswith("judge.temperature is not sent to azure:judge-prod (Azure deployment of an unknown model)")


# -- the Batch API --------------------------------------------------------------------------------


def test_batch_api_goes_through_azures_files_and_batches(project: Path, monkeypatch):
    with FakeBatches(polls=1) as fake:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake.url)
        code, report = grade(project, "--judge", "azure:gpt-4o-mini", "--batch-api")
        seen, uploads, batches, files = list(fake.seen), list(fake.uploads), dict(fake.batches), dict(fake.files)
    assert code == 1 and verdicts(report)[("s0", "hello")] == "met" and verdicts(report)[("s1", "hello")] == "unmet"
    assert {(method, path) for method, path, _, _ in seen} >= {
        ("POST", "/openai/files"), ("POST", "/openai/batches"), ("GET", "/openai/batches/batch_1"),
        ("GET", "/openai/files/out-batch_1/content")}  # fmt: skip
    azure = [(query, headers) for _, path, query, headers in seen if path.startswith("/openai/")]
    assert len(azure) == len([path for _, path, _, _ in seen if path not in ("/props", "/slots")])  # slot probes aside
    assert all(parse_qs(query) == {"api-version": [API_VERSION]} and headers.get("api-key") == "az-key"
               for query, headers in azure)  # fmt: skip
    assert uploads == [{"purpose": "batch"}]
    assert [batch["endpoint"] for batch in batches.values()] == ["/chat/completions"]
    lines = [json.loads(line) for line in files["file-1"].decode().splitlines()]
    assert {line["url"] for line in lines} == {"/chat/completions"} and len(lines) == 4
    assert {line["body"]["model"] for line in lines} == {"gpt-4o-mini"}
    assert all(set(line["body"]) <= sdk_body_keys() for line in lines)
    assert report["usage"]["cost_usd"] is not None  # priced as gpt-4o-mini at the batch price


def test_ollama_has_no_batch_api_and_says_so(project: Path, capsys):
    code, _ = grade(project, "--judge", "ollama:llama3", "--batch-api")
    assert code == 2 and "provider ollama has no Batch API: grade without --batch-api" in capsys.readouterr().err
