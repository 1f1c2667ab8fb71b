"""resolve_judge: model strings, providers, keys, base URLs, prompt files."""

from __future__ import annotations

from rubric_studio.core.rubric import JudgeSettings
from rubric_studio.core.trust import TRUST_ALL, Trust, UserConfig
from rubric_studio.judges import JudgeConfig, NoJudge, resolve_judge


def test_no_key_no_model_is_no_judge_with_how_to():
    result = resolve_judge(None, env={})
    assert isinstance(result, NoJudge) and not result.invalid
    assert "OPENAI_API_KEY" in result.reason and "--judge openai:gpt-6-luna" in result.reason and "--base-url" in result.reason


def test_explicit_provider_without_key_is_no_judge():
    result = resolve_judge(JudgeSettings(model="anthropic:claude-haiku-4-5"), env={"OPENAI_API_KEY": "sk-o"}, trust=TRUST_ALL)
    assert isinstance(result, NoJudge) and "ANTHROPIC_API_KEY is not set" in result.reason


def test_default_model_from_whichever_key_is_present():
    openai = resolve_judge(None, env={"OPENAI_API_KEY": "sk-o"})
    assert isinstance(openai, JudgeConfig) and openai.label == "openai:gpt-6-luna" and openai.api_key == "sk-o"
    anthropic = resolve_judge(None, env={"ANTHROPIC_API_KEY": "sk-a"})
    assert isinstance(anthropic, JudgeConfig) and anthropic.label == "anthropic:claude-haiku-5-5"
    assert anthropic.provider == "anthropic" and anthropic.base_url is None


def test_cli_overrides_rubric_and_settings_carry_over():
    settings = JudgeSettings(model="openai:gpt-4o", temperature=0.5, timeout=12, max_retries=5, mode="batch", max_tokens=300)
    env = {"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}
    result = resolve_judge(settings, cli_model="anthropic:claude-sonnet-4-5", env=env)
    assert isinstance(result, JudgeConfig)
    assert (result.provider, result.model, result.api_key) == ("anthropic", "claude-sonnet-4-5", "sk-a")
    assert (result.temperature, result.timeout, result.max_retries, result.mode, result.max_tokens) == (0.5, 12, 5, "batch", 300)
    assert "sk-a" not in repr(result)


def test_base_url_env_and_flag_apply_to_the_chosen_provider():
    env = {"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": "https://proxy.example/anthropic/", "OPENAI_BASE_URL": "http://x/v1"}
    from_env = resolve_judge(JudgeSettings(model="anthropic:claude-haiku-4-5"), env=env)
    assert from_env.base_url == "https://proxy.example/anthropic"
    from_flag = resolve_judge(JudgeSettings(model="anthropic:claude-haiku-4-5", base_url="http://a/"), cli_base_url="http://b:1", env=env)
    assert from_flag.base_url == "http://b:1"


def test_base_url_without_key_uses_a_placeholder_key():
    result = resolve_judge(None, cli_model="openai:llama-3", cli_base_url="http://127.0.0.1:8000/v1", env={})
    assert isinstance(result, JudgeConfig) and result.api_key == "not-needed" and result.base_url == "http://127.0.0.1:8000/v1"


def test_ollama_shorthand():
    result = resolve_judge(JudgeSettings(model="ollama:llama3.1:8b"), env={})
    assert isinstance(result, JudgeConfig)
    assert (result.provider, result.model, result.base_url, result.api_key) == ("openai", "llama3.1:8b", "http://localhost:11434/v1", "ollama")
    assert result.label == "ollama:llama3.1:8b" and result.alias == "ollama"
    remote = resolve_judge(JudgeSettings(model="ollama:qwen3"), cli_base_url="http://gpu-box:11434/v1", env={})
    assert remote.base_url == "http://gpu-box:11434/v1"


def test_openai_compatible_needs_a_base_url():
    missing = resolve_judge(JudgeSettings(model="openai-compatible:mistral"), env={"OPENAI_API_KEY": "sk"})
    assert isinstance(missing, NoJudge) and missing.invalid and "--base-url" in missing.reason
    ok = resolve_judge(JudgeSettings(model="openai-compatible:mistral", base_url="http://h:1/v1"), env={}, trust=TRUST_ALL)
    assert isinstance(ok, JudgeConfig) and ok.provider == "openai" and ok.alias == "openai-compatible"


def test_unknown_provider_and_bad_strings_are_invalid_no_judge():
    unknown = resolve_judge(None, cli_model="gemini:pro", env={"OPENAI_API_KEY": "sk"})
    assert isinstance(unknown, NoJudge) and unknown.invalid
    assert "unknown judge provider 'gemini'" in unknown.reason and "openai-compatible" in unknown.reason
    bare = resolve_judge(None, cli_model="gpt-4o", env={"OPENAI_API_KEY": "sk"})
    assert isinstance(bare, NoJudge) and "provider:model" in bare.reason
    bad_url = resolve_judge(None, cli_model="openai:gpt-4o", cli_base_url="localhost:8000", env={})
    assert isinstance(bad_url, NoJudge) and "http://" in bad_url.reason


def test_base_url_without_model_says_what_to_pass():
    result = resolve_judge(None, cli_base_url="http://127.0.0.1:8000/v1", env={})
    assert isinstance(result, NoJudge) and "openai-compatible:MODEL" in result.reason


def test_prompt_inline_and_from_file(tmp_path):
    inline = resolve_judge(JudgeSettings(model="openai:gpt-4o", prompt="Grade {submission}"), env={"OPENAI_API_KEY": "k"})
    assert inline.prompt_template == "Grade {submission}"
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "judge.txt").write_text('Answer: {submission}\nReply {"score": 1}', encoding="utf-8")
    settings = JudgeSettings(model="openai:gpt-4o", prompt_path="prompts/judge.txt")
    from_file = resolve_judge(settings, env={"OPENAI_API_KEY": "k"}, base_dir=tmp_path)
    assert from_file.prompt_template.startswith("Answer: {submission}")
    missing = resolve_judge(settings, env={"OPENAI_API_KEY": "k"}, base_dir=tmp_path / "elsewhere")
    assert isinstance(missing, NoJudge) and missing.invalid and "judge.txt" in missing.reason
    (tmp_path / "prompts" / "judge.txt").write_text("Grade {answer}", encoding="utf-8")
    unknown = resolve_judge(settings, env={"OPENAI_API_KEY": "k"}, base_dir=tmp_path)
    assert isinstance(unknown, NoJudge) and "{answer}" in unknown.reason


def test_a_rubric_base_url_is_never_paired_with_the_key_untrusted():
    settings = JudgeSettings(model="openai:gpt-4o", base_url="http://evil.example/v1")
    env = {"OPENAI_API_KEY": "sk-user"}
    refused = resolve_judge(settings, env=env)  # a caller that passes no trust gets none
    assert isinstance(refused, NoJudge) and not refused.invalid
    assert refused.reason.startswith("judge.base_url http://evil.example/v1 is set by the rubric, not by you")
    trusted = resolve_judge(settings, env=env, trust=Trust(values=frozenset({("judge.base_url", "http://evil.example/v1")})))
    assert isinstance(trusted, JudgeConfig) and (trusted.base_url, trusted.api_key) == ("http://evil.example/v1", "sk-user")
    other = resolve_judge(settings, env=env, trust=Trust(values=frozenset({("judge.base_url", "http://other/v1")})))
    assert isinstance(other, NoJudge)
    mine = resolve_judge(settings, cli_base_url="http://127.0.0.1:9/v1", env=env)
    assert isinstance(mine, JudgeConfig) and mine.base_url == "http://127.0.0.1:9/v1"


def test_an_outside_prompt_path_is_not_read_untrusted(tmp_path):
    (tmp_path / "outside.txt").write_text("Grade {answer}", encoding="utf-8")
    (tmp_path / "rubric").mkdir()
    settings = JudgeSettings(model="openai:gpt-4o", prompt_path="../outside.txt")
    env = {"OPENAI_API_KEY": "k"}
    refused = resolve_judge(settings, env=env, base_dir=tmp_path / "rubric")
    assert isinstance(refused, NoJudge) and "{answer}" not in refused.reason  # the file was not read
    assert f"judge.prompt_path {tmp_path / 'outside.txt'} is outside the rubric's folder" in refused.reason
    read = resolve_judge(settings, env=env, base_dir=tmp_path / "rubric", trust=TRUST_ALL)
    assert isinstance(read, NoJudge) and "{answer}" in read.reason


def test_user_config_defaults_come_after_the_rubric_and_flags():
    config = UserConfig(model="anthropic:claude-haiku-4-5", base_url="http://proxy.example/v1")
    env = {"ANTHROPIC_API_KEY": "sk-a"}
    default = resolve_judge(None, env=env, user_config=config)
    assert isinstance(default, JudgeConfig) and (default.label, default.base_url) == (
        "anthropic:claude-haiku-4-5", "http://proxy.example/v1")
    rubric = resolve_judge(JudgeSettings(model="anthropic:claude-opus-4-1"), env=env, user_config=config)
    assert rubric.model == "claude-opus-4-1"
    flag = resolve_judge(None, cli_model="ollama:qwen3", env=env, user_config=UserConfig(model="anthropic:x"))
    assert flag.label == "ollama:qwen3"


def test_a_hostile_user_config_is_ignored_not_a_crash(tmp_path):
    from rubric_studio.core.trust import UserConfig, load_user_config

    deep = tmp_path / "config.yaml"
    deep.write_text("judge: " + "[" * 20_000 + "]" * 20_000 + "\n")  # the stdlib-recursive loader overflows
    assert load_user_config(deep) == UserConfig()
