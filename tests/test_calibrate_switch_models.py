"""The models the product names by itself are current: the bundled rubrics, ``new``'s starter and
each provider's default judge name models the installed ``openai`` / ``anthropic`` SDKs list in
their model types, and the built-in price table prices them (a switch compares cost per 100)."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _literals(annotation: object) -> set[str]:
    found: set[str] = set()
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Literal:
            found.update(typing.get_args(arg))
        else:
            found |= _literals(arg)
    return found


def sdk_models() -> dict[str, set[str]]:
    from anthropic.types import Model
    from openai.types import ChatModel

    return {"openai": _literals(ChatModel) or set(typing.get_args(ChatModel)), "anthropic": _literals(Model)}


def _named(spec: str) -> tuple[str, str]:
    provider, _, model = spec.partition(":")
    return provider, model


BUNDLED = sorted(p for p in (ROOT / "sample_rubrics").glob("*/*.yaml") if not p.name.endswith((".labels.yaml", ".samples.yaml")))


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_a_bundled_rubric_names_a_current_priced_model(path: Path):
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.judges.pricing import builtin_prices

    provider, model = _named(load_rubric(path).judge.model)
    assert model in sdk_models()[provider], f"{path.name}: {provider}:{model} is not a model the {provider} SDK lists"
    assert model in builtin_prices(provider)


def test_the_defaults_and_the_starter_name_the_same_current_priced_models():
    from rubric_studio.core.providers import BUILTIN
    from rubric_studio.engine.starter import STARTER_RUBRIC
    from rubric_studio.judges.pricing import builtin_prices

    defaults = {f"{p.name}:{p.default_model}" for p in BUILTIN if p.default_model}
    assert defaults == {"openai:gpt-6-luna", "anthropic:claude-haiku-5-5"}
    for spec in defaults:
        provider, model = _named(spec)
        assert model in sdk_models()[provider] and model in builtin_prices(provider)
    assert set(re.findall(r"(?:openai|anthropic):[\w.-]*\w", STARTER_RUBRIC)) == defaults


def test_the_judge_docs_say_when_prices_were_checked():
    page = (ROOT / "docs" / "how-to" / "choosing-a-judge.md").read_text()
    assert "Prices last checked: 2026-11-29" in page
    assert "2026-11-29" in (ROOT / "rubric_studio" / "core" / "providers" / "_builtin.py").read_text()


def test_a_gpt_6_judge_is_sent_no_temperature():
    """GPT-6 models reason: like o-series and GPT-5 they take only their default temperature."""
    from rubric_studio.judges.capabilities import OPENAI_REASONING

    assert all(OPENAI_REASONING.match(m) for m in ("gpt-6-luna", "gpt-6.2-sol", "gpt-5.4-mini", "o3"))
    assert not OPENAI_REASONING.match("gpt-4o-mini")
