"""``calibrate --judges`` with ``--judge-base-url``: the members of a panel entry ``A+B`` go to the
endpoints named for them, and an entry that would fall back to its provider's cloud endpoint while
the user named local ones is refused before any call.

Three fake servers stand for three places a request can go: ``local_b`` and ``local_c`` are the
endpoints the user names, ``elsewhere`` is where a judge without one of its own goes
(``OPENAI_BASE_URL``). What is asserted is which server received which model's requests.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from tests.fakellm import FakeLLM
from tests.panels.judges import LONG, RIGHT, RUBRIC, Judges, member, sample_text, truth

pytestmark = pytest.mark.timeout(120)
N = 8
COIN = "judge-coin"
A, B, C = member(RIGHT), member(LONG), member(COIN)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "s.jsonl").write_text("".join(json.dumps({"id": f"s{i:02d}", "output": sample_text(i)}) + "\n"
                                              for i in range(N)))
    (tmp_path / "r.labels.yaml").write_text("".join(f"s{i:02d}: {{verdict: {'pass' if truth(i) else 'fail'}}}\n"
                                                    for i in range(N)))
    return tmp_path


@pytest.fixture
def servers(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeLLM(brain=Judges()) as elsewhere, FakeLLM(brain=Judges()) as local_b, FakeLLM(brain=Judges()) as local_c:
        yield elsewhere, local_b, local_c


def calibrate(project: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "json",
                 "--cache-path", str(project / "c.sqlite"), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def models(server: FakeLLM) -> dict[str, int]:
    """How many requests ``server`` received per model."""
    counts: dict[str, int] = {}
    for request in server.requests:
        counts[request.body["model"]] = counts.get(request.body["model"], 0) + 1
    return counts


def test_the_members_of_a_panel_entry_go_to_the_endpoints_named_for_them(project, servers, capsys, monkeypatch):
    elsewhere, local_b, local_c = servers
    monkeypatch.setenv("OPENAI_BASE_URL", elsewhere.base_url_openai)  # where A, named with no URL, goes
    code, out, err = calibrate(project, capsys, "--judges", f"{A},{B}+{C}",
                               "--judge-base-url", f"{B}={local_b.base_url_openai}",
                               "--judge-base-url", f"{C}={local_c.base_url_openai}")
    assert code in (0, 1), err
    assert models(local_b) == {LONG: N}  # the panel's member B, at its own server
    assert models(local_c) == {COIN: N}
    assert models(elsewhere) == {RIGHT: N}  # nothing of the panel went to the default endpoint
    judged = {entry["judge"]: entry for entry in json.loads(out)["judges"]}
    assert judged[f"{B}+{C}"]["judge_calls"] == 2 * N and judged[f"{B}+{C}"]["errors"] == 0


def test_a_url_for_the_whole_panel_entry_goes_to_each_member_without_one_of_its_own(project, servers, capsys):
    elsewhere, local_b, local_c = servers
    code, _, err = calibrate(project, capsys, "--judges", f"{B},{B}+{C}",
                             "--judge-base-url", f"{B}={local_b.base_url_openai}",
                             "--judge-base-url", f"{B}+{C}={local_c.base_url_openai}")
    assert code in (0, 1), err
    assert models(local_b) == {LONG: N}  # B alone, and B in the panel (taken from the cache: same endpoint)
    assert models(local_c) == {COIN: N}  # C has no URL of its own: the panel's
    assert models(elsewhere) == {}


@pytest.mark.parametrize(("judges", "urls", "entry", "falls_back"), [
    # C is named in no --judge-base-url: the panel would send it to OpenAI's own endpoint
    ("{B},{B}+{C}", {"{B}": "local_b"}, "{B}+{C}", "{C}"),
    # A, a judge of its own, has none either
    ("{A},{B}+{C}", {"{B}": "local_b", "{C}": "local_c"}, "{A}", "{A}"),
])
def test_an_entry_that_would_fall_back_to_the_cloud_default_is_refused_before_any_call(
        project, servers, capsys, judges, urls, entry, falls_back):
    elsewhere, local_b, local_c = servers
    by_name = {"local_b": local_b, "local_c": local_c}
    names = {"A": A, "B": B, "C": C}
    flags = [part for name, server in urls.items()
             for part in ("--judge-base-url", f"{name.format(**names)}={by_name[server].base_url_openai}")]
    code, out, err = calibrate(project, capsys, "--judges", judges.format(**names), *flags)
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert entry.format(**names) in line and f"{falls_back.format(**names)} has no --judge-base-url" in line
    assert "https://api.openai.com/v1" in line and "Traceback" not in err
    assert elsewhere.calls() == local_b.calls() == local_c.calls() == 0


def test_naming_a_member_that_is_in_no_entry_is_still_a_usage_error(project, servers, capsys):
    _, local_b, _ = servers
    code, _, err = calibrate(project, capsys, "--judges", f"{A},{B}+{C}",
                             "--judge-base-url", f"openai:judge-other={local_b.base_url_openai}")
    assert code == 2 and "'openai:judge-other' is not one of the judges" in err
    assert local_b.calls() == 0


async def test_a_known_cloud_model_of_its_own_is_compared_where_it_lives(project, servers):
    """Comparing a cloud judge with local ones is what --judges is for: only a name meant for a local
    server (in an entry with endpoints, or a model the provider does not sell) is refused."""
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.engine.judge_compare import cloud_fallback

    _, local_b, _ = servers
    rubric = load_rubric(project / "r.yaml")
    urls = {B: local_b.base_url_openai}
    options = {"use_cache": False}
    assert await cloud_fallback(rubric, ["openai:gpt-4o-mini", B], options, urls) is None
    refused = await cloud_fallback(rubric, ["openai:gpt-4o-mini+" + C, B], options, urls)
    assert refused is not None and f"{C} has no --judge-base-url" in refused  # C is no model OpenAI sells
    refused = await cloud_fallback(rubric, [A, B], options, urls)
    assert refused is not None and f"{A} has no --judge-base-url" in refused
