"""The provider registry: a third-party provider installed as a distribution with an entry point in
``rubric_studio.providers`` grades through the fake server; a broken one is skipped with one warning;
none replaces a built-in; the docs' table is the registry's."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core import providers
from rubric_studio.core.trust import KEY_VARS
from rubric_studio.judges import JudgeConfig, JudgeError, make_judge, resolve_judge
from rubric_studio.judges.batch_api import batch_client
from tests.fakellm import FakeLLM

ROOT = Path(__file__).resolve().parents[2]
GATEWAY = '''
from rubric_studio.core.providers import Provider
from rubric_studio.judges.openai import OpenAIJudge


class GatewayJudge(OpenAIJudge):
    key_var = "HOUSE_GATEWAY_KEY"


PROVIDER = Provider(
    name="house", summary="the house LLM gateway", judge="house_gateway:GatewayJudge",
    body="rubric_studio.judges.bodies:openai_body",
    capabilities="rubric_studio.judges.capabilities:openai_capabilities",
    key_var="HOUSE_GATEWAY_KEY", base_url_var="HOUSE_GATEWAY_URL", needs_base_url=True,
    prices={"house-small": (1.0, 2.0)},
)
CLASH = Provider(name="openai", summary="an impostor", judge="house_gateway:GatewayJudge", body="x:y",
                 capabilities="x:y", key_var="STOLEN", base_url_var="STOLEN_URL")
'''


def install(site: Path, entry_points: str) -> None:
    """A distribution as pip leaves it: a module and a dist-info with entry_points.txt."""
    (site / "house_gateway.py").write_text(GATEWAY)
    info = site / "house_gateway-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: house-gateway\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{providers.GROUP}]\n{entry_points}")


@pytest.fixture
def site(tmp_path: Path, monkeypatch):
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    providers.forget_plugins()
    yield folder
    providers.forget_plugins()
    sys.modules.pop("house_gateway", None)


def test_a_plugin_provider_grades_through_its_entry_point(site: Path, tmp_path: Path, monkeypatch):
    install(site, "house = house_gateway:PROVIDER\n")
    (tmp_path / "r.yaml").write_text("name: p\ncriteria:\n  - {id: hello, outcome: Says hello}\n")
    (tmp_path / "s.jsonl").write_text('{"id": "a", "output": "hello"}\n{"id": "b", "output": "bye"}\n')
    monkeypatch.setenv("HOUSE_GATEWAY_KEY", "gw-key")
    out = tmp_path / "o.json"
    with FakeLLM(api_key="gw-key") as server:
        monkeypatch.setenv("HOUSE_GATEWAY_URL", server.base_url_openai)
        code = main(["grade", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--judge", "house:house-small",
                     "--cache-path", str(tmp_path / "c.sqlite"), "--format", "json", "-o", str(out)])  # fmt: skip
        paths = [request.path for request in server.requests]
    report = json.loads(out.read_text())
    assert code == 1 and report["judge"] == {"provider": "house", "model": "house-small"}
    assert [s["criteria"][0]["status"] for s in report["samples"]] == ["met", "unmet"]
    assert paths == ["/v1/chat/completions"] * 2
    assert report["usage"]["cost_usd"] is not None and report["usage"]["cost_usd"] > 0  # its own price table
    assert KEY_VARS["house"] == "HOUSE_GATEWAY_KEY"  # trust sees its key too
    assert "house" in providers.names() and "house" in providers.markdown_table()


def test_a_plugin_without_a_batch_api_says_so_instead_of_speaking_another_protocol(site: Path):
    install(site, "house = house_gateway:PROVIDER\n")
    judge = make_judge(JudgeConfig(provider="house", model="m", base_url="http://127.0.0.1:9/v1", api_key="k"))
    with pytest.raises(JudgeError, match=r"^config: provider house has no Batch API: grade without --batch-api$"):
        batch_client(judge)


def test_a_broken_plugin_is_skipped_with_one_warning(site: Path, caplog):
    install(site, "missing = house_gateway_gone:PROVIDER\nimpostor = house_gateway:CLASH\n"
                  "notone = house_gateway:GatewayJudge\n")  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="rubric_studio.plugins"):
        assert providers.names() == providers.builtin_names()  # nothing registered, nothing replaced
        providers.names()  # read once: no second round of warnings
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 3
    assert lines[0].startswith("warning: provider plugin house-gateway (entry point missing = "
                               "house_gateway_gone:PROVIDER) skipped: it failed to load (ModuleNotFoundError")
    assert lines[1] == ("warning: provider plugin house-gateway (entry point impostor = house_gateway:CLASH) skipped: "
                        "the name 'openai' is taken by a built-in provider, which a plugin cannot replace")
    assert lines[2].endswith("skipped: it names the class GatewayJudge, not a rubric_studio.core.providers.Provider")
    config = resolve_judge(None, cli_model="openai:gpt-4o-mini", env={"OPENAI_API_KEY": "k"})
    assert isinstance(config, JudgeConfig) and make_judge(config).key_var == "OPENAI_API_KEY"


def test_an_unknown_provider_names_every_registered_one():
    found = resolve_judge(None, cli_model="vertex:gemini", env={})
    assert str(found) == ("unknown judge provider 'vertex' in 'vertex:gemini'; expected one of "
                          "openai, ollama, openai-compatible, anthropic, azure")  # fmt: skip


def test_the_documented_provider_table_is_the_registry():
    assert providers.markdown_table() in (ROOT / "docs" / "concepts" / "judges-and-cache.md").read_text(encoding="utf-8")


def test_every_built_in_provider_has_its_code_in_the_judges_layer():
    from rubric_studio.judges.provider_code import BUILTIN_CODE, code

    assert set(BUILTIN_CODE) == {provider.name for provider in providers.BUILTIN}
    for provider in providers.BUILTIN:
        assert provider.judge is None and provider.batch is None  # the core names no judges code
        parts = BUILTIN_CODE[provider.name]
        assert {"judge", "body", "capabilities"} <= set(parts) and ("batch" in parts) == provider.batch_api
        assert all(callable(code(provider.name, part)) for part in parts)
