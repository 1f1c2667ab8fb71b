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
#: The plugin's provider name: one no user (and no future built-in) would pick.
PLUGIN = "zz-test-plugin-provider"
GATEWAY = f'''
from rubric_studio.core.providers import Provider
from rubric_studio.judges.openai import OpenAIJudge


class GatewayJudge(OpenAIJudge):
    key_var = "HOUSE_GATEWAY_KEY"


PROVIDER = Provider(
    name="{PLUGIN}", summary="the house LLM gateway", judge="house_gateway:GatewayJudge",
    body="rubric_studio.judges.bodies:openai_body",
    capabilities="rubric_studio.judges.capabilities:openai_capabilities",
    key_var="HOUSE_GATEWAY_KEY", base_url_var="HOUSE_GATEWAY_URL", needs_base_url=True,
    prices={{"house-small": (1.0, 2.0)}},
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
        code = main(["grade", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--judge", f"{PLUGIN}:house-small",
                     "--cache-path", str(tmp_path / "c.sqlite"), "--format", "json", "-o", str(out)])  # fmt: skip
        paths = [request.path for request in server.requests]
    report = json.loads(out.read_text())
    assert code == 1 and report["judge"] == {"provider": PLUGIN, "model": "house-small"}
    assert [s["criteria"][0]["status"] for s in report["samples"]] == ["met", "unmet"]
    assert paths == ["/v1/chat/completions"] * 2
    assert report["usage"]["cost_usd"] is not None and report["usage"]["cost_usd"] > 0  # its own price table
    assert KEY_VARS[PLUGIN] == "HOUSE_GATEWAY_KEY"  # trust sees its key too
    assert PLUGIN in providers.names() and f"`{PLUGIN}:<model>`" in providers.markdown_table()


def test_a_plugin_without_a_batch_api_says_so_instead_of_speaking_another_protocol(site: Path):
    install(site, "house = house_gateway:PROVIDER\n")
    judge = make_judge(JudgeConfig(provider=PLUGIN, model="m", base_url="http://127.0.0.1:9/v1", api_key="k"))
    with pytest.raises(JudgeError, match=rf"^config: provider {PLUGIN} has no Batch API: grade without --batch-api$"):
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
    assert str(found) == f"unknown judge provider 'vertex' in 'vertex:gemini'; expected one of {', '.join(providers.names())}"
    assert {"openai", "ollama", "openai-compatible", "anthropic"} <= set(providers.names())


def test_the_documented_provider_table_is_the_registry():
    page = ROOT / "docs" / "concepts" / "judges-and-cache.md"
    assert providers.markdown_table() in page.read_text(encoding="utf-8"), (
        f"the provider table in {page.relative_to(ROOT)} is not the registry's: replace it with the output of "
        "python -c 'from rubric_studio.core.providers import markdown_table; print(markdown_table())'")


def code_problems(provider: providers.Provider) -> list[str]:
    """What is wrong with the code of the built-in ``provider`` (its module's ``CODE``), one line each."""
    from rubric_studio.judges.provider_code import builtin_code, builtin_module, code

    if provider.judge or provider.body or provider.capabilities or provider.batch:
        return [f"built-in provider {provider.name!r} names code in the core; its module's CODE names it"]
    try:
        parts = builtin_code(provider.name)
    except ValueError as exc:
        return [str(exc)]
    where = f"{builtin_module(provider.name)}.CODE"
    problems = [f"{where} has no {part!r}" for part in ("judge", "body", "capabilities") if part not in parts]
    if ("batch" in parts) != provider.batch_api:
        problems.append(f"{where} must name a 'batch' client exactly when the provider has batch_api=True")
    for part in parts:
        try:
            assert callable(code(provider.name, part))
        except (ImportError, AttributeError, AssertionError) as exc:
            problems.append(f"{where}[{part!r}] = {parts[part]!r} does not load a callable ({exc!r})")
    return problems


@pytest.mark.parametrize("provider", providers.BUILTIN, ids=lambda provider: provider.name)
def test_every_built_in_provider_has_its_code_in_its_own_module(provider: providers.Provider):
    assert code_problems(provider) == []


def test_a_built_in_provider_without_its_module_is_named_with_what_to_write():
    """The second place of a built-in provider, said by the test and by the judge it cannot make."""
    from rubric_studio.judges.provider_code import builtin_code

    lost = providers.Provider(name="zz-no-module", summary="s", key_var="K", base_url_var="U")
    assert code_problems(lost) == ["built-in judge provider 'zz-no-module' has no code: "
                                   "rubric_studio/judges/zz_no_module.py must define CODE, a dict of judge, body, "
                                   "capabilities, batch -> \"module:attr\""]  # fmt: skip
    with pytest.raises(ValueError, match=r"rubric_studio/judges/base\.py must define CODE"):
        builtin_code("base")  # a module of the package that is no provider's


def test_a_new_built_in_provider_is_its_entry_and_its_module(monkeypatch):
    """Adding one takes its ``Provider(...)`` in ``BUILTIN`` and ``rubric_studio/judges/<name>.py``
    with its ``CODE``: the registry, the judge, the request body and the checks above read those two."""
    import types

    from rubric_studio.core.providers import _registry
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.core.samples import Sample
    from rubric_studio.judges import build_requests
    from rubric_studio.judges.bodies import request_body
    from rubric_studio.judges.openai import OpenAIJudge

    module = types.ModuleType("rubric_studio.judges.zz_throwaway")
    module.CODE = {"judge": "rubric_studio.judges.openai:OpenAIJudge", "body": "rubric_studio.judges.bodies:openai_body",
                   "capabilities": "rubric_studio.judges.capabilities:openai_capabilities"}  # fmt: skip
    monkeypatch.setitem(sys.modules, module.__name__, module)
    throwaway = providers.Provider(name="zz-throwaway", summary="a throwaway gateway", key_var="ZZ_KEY",
                                   base_url_var="ZZ_URL", needs_base_url=True)  # fmt: skip
    monkeypatch.setattr(_registry, "BUILTIN", (*_registry.BUILTIN, throwaway))
    assert "zz-throwaway" in providers.builtin_names() and code_problems(throwaway) == []
    config = JudgeConfig(provider="zz-throwaway", model="m", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert type(make_judge(config)) is OpenAIJudge
    rubric = Rubric.model_validate({"name": "r", "criteria": [{"id": "a", "outcome": "Says hi"}]})
    request = build_requests(rubric, Sample(id="s", output="hi"), rubric.judge_criteria, config)[0]
    assert request_body(config, request)["model"] == "m"  # the body and capability table it names
