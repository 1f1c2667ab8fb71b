"""Every registered judge provider reaches every export format, or is warned about: Azure becomes
promptfoo's and AgentV's Azure providers (and imports back), Letta and Docent (which have no
Azure) warn; a plugin provider, which no format knows, is warned about in each, naming the
judge, what to set by hand and the registry's variables — never written as OpenAI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.core import providers
from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import export_rubric, import_rubric
from tests._timing import scaled
from tests.fakellm import FakeLLM
from tests.interop.test_interop_exports_run import SAMPLES, WITH_JUDGE, _ours, _write, scripted_judge
from tests.judges.test_provider_registry import PLUGIN, install

CRITERIA = [{"id": "greets", "outcome": "Greets the customer"}]


def _rubric(**judge) -> Rubric:
    return Rubric.model_validate({"name": "reply", "criteria": CRITERIA, "judge": judge})


def _agentv_judge(text: str) -> dict | None:
    data = yaml.safe_load(text)
    return next((p for p in data.get("providers", []) if p.get("label") == "rubric-judge"), None)


@pytest.fixture
def house(tmp_path: Path, monkeypatch):
    """The house gateway plugin of the registry tests, installed through its entry point."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    providers.forget_plugins()
    install(folder, "house = house_gateway:PROVIDER\n")
    yield
    providers.forget_plugins()
    sys.modules.pop("house_gateway", None)


# -- Azure --------------------------------------------------------------------------------------
def test_azure_is_promptfoos_azure_provider_with_the_registrys_variables_and_imports_back():
    result = export_rubric(_rubric(model="azure:eval-prod", temperature=0), "promptfoo")
    provider = yaml.safe_load(result.text)["defaultTest"]["options"]["provider"]
    assert provider == {"id": "azure:chat:eval-prod", "config": {
        "apiBaseUrl": "{{ env.AZURE_OPENAI_ENDPOINT }}", "apiKeyEnvar": "AZURE_OPENAI_API_KEY",
        "apiVersion": "{{ env.OPENAI_API_VERSION | default('2024-12-01-preview') }}", "temperature": 0}}
    assert not [w for w in result.warnings if "judge" in w]
    back = import_rubric(result.text, "promptfoo")
    assert (back.rubric.judge.model, back.rubric.judge.base_url) == ("azure:eval-prod", None)


@pytest.mark.parametrize(("endpoint", "config", "imported"), [
    ("https://res.openai.azure.com/", {"apiHost": "res.openai.azure.com"}, "https://res.openai.azure.com"),
    ("http://127.0.0.1:8080/openai", {"apiBaseUrl": "http://127.0.0.1:8080"}, "http://127.0.0.1:8080"),
])  # fmt: skip
def test_an_azure_endpoint_in_the_rubric_is_promptfoos_host_or_base_url(endpoint, config, imported):
    result = export_rubric(_rubric(model="azure:eval-prod", base_url=endpoint), "promptfoo")
    written = yaml.safe_load(result.text)["defaultTest"]["options"]["provider"]["config"]
    assert {k: v for k, v in written.items() if k in ("apiHost", "apiBaseUrl")} == config
    back = import_rubric(result.text, "promptfoo").rubric.judge
    assert (back.model, back.base_url) == ("azure:eval-prod", imported)


def test_azure_is_agentv5s_azure_provider_and_imports_back_with_its_endpoint():
    result = export_rubric(_rubric(model="azure:eval-prod", base_url="https://res.openai.azure.com"), "agentv")
    assert _agentv_judge(result.text) == {"id": "azure", "label": "rubric-judge", "config": {
        "endpoint": "{{ env.AZURE_OPENAI_ENDPOINT | default('https://res.openai.azure.com') }}",
        "model": "{{ env.RUBRIC_JUDGE_MODEL | default('eval-prod') }}", "api_key": "{{ env.AZURE_OPENAI_API_KEY }}"}}
    assert any(w.startswith("judge azure:eval-prod: AgentV calls Azure's Responses API") for w in result.warnings)
    back = import_rubric(result.text, "agentv")
    assert (back.rubric.judge.model, back.rubric.judge.base_url) == ("azure:eval-prod", "https://res.openai.azure.com")
    bare = import_rubric(export_rubric(_rubric(model="azure:eval-prod"), "agentv").text, "agentv").rubric.judge
    assert (bare.model, bare.base_url) == ("azure:eval-prod", None)  # the endpoint stays in AZURE_OPENAI_ENDPOINT


def test_an_agentv_azure_provider_whose_deployment_is_only_in_the_environment_is_warned():
    text = export_rubric(_rubric(model="azure:eval-prod"), "agentv").text
    text = text.replace("{{ env.RUBRIC_JUDGE_MODEL | default('eval-prod') }}", "{{ env.MY_DEPLOYMENT }}")
    result = import_rubric(text, "agentv")
    assert result.rubric.judge is None or result.rubric.judge.model is None
    assert ("grader provider azure names no deployment (it comes from MY_DEPLOYMENT); set judge.model to "
            "azure:<deployment> yourself") in result.warnings


def test_azure_is_an_agentv4_azure_target_with_its_deployment_and_endpoint_in_dotenv():
    result = export_rubric(_rubric(model="azure:eval-prod", base_url="https://res.openai.azure.com"), "agentv",
                           agentv_version=4)  # fmt: skip
    header = [line.removeprefix("# ") for line in result.text.splitlines() if line.startswith("#")]
    start = header.index("targets:")
    assert header[start + 1:start + 6] == [
        "  - name: rubric-judge", "    provider: azure", "    model: ${{ RUBRIC_JUDGE_MODEL }}",
        "    endpoint: ${{ AZURE_OPENAI_ENDPOINT }}", "    api_key: ${{ AZURE_OPENAI_API_KEY }}"]
    assert "AZURE_OPENAI_ENDPOINT=https://res.openai.azure.com" in header and "RUBRIC_JUDGE_MODEL=eval-prod" in header
    assert "and export AZURE_OPENAI_API_KEY before running." in header
    bare = export_rubric(_rubric(model="azure:eval-prod"), "agentv", agentv_version=4).text
    assert "# and export AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY before running." in bare


def test_letta_and_docent_have_no_azure_and_say_what_to_set_by_hand():
    rubric = _rubric(model="azure:eval-prod")
    letta = export_rubric(rubric, "letta")
    grader = yaml.safe_load(letta.text)["graders"]["reply"]
    assert (grader["provider"], grader["model"]) == ("openai", "gpt-4o-mini")  # Letta's default, said so
    assert ("judge azure:eval-prod: Letta evals has no azure provider (it has anthropic, openai); the grader is "
            "written with Letta's default model (openai gpt-4o-mini) — set graders.reply.provider and model by "
            "hand; rubric-studio reads its key from AZURE_OPENAI_API_KEY and its endpoint from "
            "AZURE_OPENAI_ENDPOINT") in letta.warnings
    docent = export_rubric(rubric, "docent")
    assert "judge_model" not in json.loads(docent.text)
    assert ("judge azure:eval-prod: Docent has no azure provider (it has openai, anthropic, google, openrouter); "
            "judge_model omitted, Docent's default judge applies — set judge_model by hand") in docent.warnings


# -- a plugin provider --------------------------------------------------------------------------
@pytest.mark.parametrize(("target", "options", "set_by_hand"), [
    ("promptfoo", {}, "set defaultTest.options.provider by hand"),
    ("agentv", {}, "set a grader provider by hand"),
    ("agentv", {"agentv_version": 4}, "set a grader provider by hand"),
    ("letta", {}, "set graders.reply.provider and model by hand"),
    ("docent", {}, "set judge_model by hand"),
])  # fmt: skip
def test_a_plugin_provider_is_warned_in_every_format_never_written_as_openai(house, target, options, set_by_hand):
    result = export_rubric(_rubric(model=f"{PLUGIN}:house-small", base_url="https://gw.example/v1"), target, **options)
    warning = next(w for w in result.warnings if w.startswith(f"judge {PLUGIN}:house-small: "))
    assert f"has no plugin provider '{PLUGIN}' (plugin house-gateway)" in warning and set_by_hand in warning
    if target != "docent":
        assert warning.endswith("rubric-studio reads its key from HOUSE_GATEWAY_KEY and its endpoint from "
                                "HOUSE_GATEWAY_URL")  # fmt: skip
    assert "house-small" not in result.text and "OPENAI_API_KEY" not in result.text
    if target == "promptfoo":
        assert "provider" not in yaml.safe_load(result.text)["defaultTest"]["options"]
    if target == "agentv" and not options:
        assert _agentv_judge(result.text) is None


# -- the real promptfoo grades through an Azure export ---------------------------------------------
def test_the_real_promptfoo_grades_an_azure_export_on_the_deployment_as_we_do(tmp_path, capsys, monkeypatch):
    promptfoo = os.environ.get("PROMPTFOO") or shutil.which("promptfoo")
    if promptfoo is None:
        pytest.skip("promptfoo not installed (npm install -g promptfoo@0.121.20; set $PROMPTFOO)")
    rubric = _write(tmp_path, WITH_JUDGE.replace("openai:gpt-4o-mini", "azure:eval-prod"))
    config = tmp_path / "promptfooconfig.yaml"
    assert main(["export", str(rubric), "--to", "promptfoo", "-o", str(config)]) == 0
    with FakeLLM(brain=scripted_judge, api_key="az-key") as server:
        azure = {"AZURE_OPENAI_API_KEY": "az-key", "AZURE_OPENAI_ENDPOINT": server.url, "OPENAI_API_VERSION": "2024-10-21"}
        for name, value in azure.items():
            monkeypatch.setenv(name, value)
        ours = _ours(rubric, capsys)
        server.reset()
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **azure, "PROMPTFOO_DISABLE_TELEMETRY": "1",
               "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_CACHE_ENABLED": "false"}
        done = subprocess.run([promptfoo, "eval", "-c", str(config), "-o", str(tmp_path / "out.json"),
                               "--no-progress-bar"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=scaled(240))  # fmt: skip
        sent = list(server.requests)
    assert (tmp_path / "out.json").is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    assert len(sent) == len(SAMPLES)  # the llm-rubric reached the deployment once per sample
    assert {(r.path, r.query, r.api_key) for r in sent} == {
        ("/openai/deployments/eval-prod/chat/completions", "api-version=2024-10-21", "az-key")}
    results = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    theirs = {r["testCase"]["description"]: "pass" if r["success"] else "fail" for r in results}
    assert set(ours.values()) == {"pass", "fail"}
    assert theirs == ours
