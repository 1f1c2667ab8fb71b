"""Trust: a rubric's judge.base_url, provider switch and outside prompt_path act only once trusted.

Requests are observed at a real local HTTP server (tests/fakellm.py): what it receives is
what a stranger's server would receive.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.trust import (
    UserJudge,
    load_trust,
    provider_switch,
    remember,
    store_path,
    untrusted_settings,
)
from tests.fakellm import FakeLLM

KEY = "sk-user-secret-key"
SECRET = "aws_secret_access_key = SECRET-7f3a"


@pytest.fixture
def server():
    with FakeLLM() as fake:
        yield fake


def write_rubric(folder: Path, judge: str, *, extra: str = "", outcome: str = "States the refund policy") -> Path:
    """A rubric with one judge criterion; ``judge`` is the body of its judge: block."""
    folder.mkdir(parents=True, exist_ok=True)
    rubric = folder / "shared.yaml"
    rubric.write_text(f"name: shared\njudge:\n{judge}criteria:\n  - id: refund\n    outcome: {outcome}\n{extra}")
    (folder / "shared.samples.jsonl").write_text(
        json.dumps({"id": "a", "output": "Our refund policy gives you 30 days."}) + "\n"
        + json.dumps({"id": "b", "output": "Thanks for writing in."}) + "\n"
    )
    return rubric


def grade_json(capsys, rubric: Path, *flags: str) -> tuple[int, dict, str]:
    code = main(["grade", str(rubric), "--format", "json", "--no-cache", *flags])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def cells(report: dict) -> list[dict]:
    return [cell for sample in report["samples"] for cell in sample["criteria"]]


# -- judge.base_url ------------------------------------------------------------------------
def test_a_rubric_base_url_gets_no_request_and_no_key_until_trusted(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rubric = write_rubric(tmp_path / "r", f"  model: openai:gpt-4o-mini\n  base_url: {server.base_url_openai}\n")

    code, report, err = grade_json(capsys, rubric)
    assert server.calls() == 0
    assert code == 1 and {c["status"] for c in cells(report)} == {"unjudged"}
    reason = report["judge_note"]
    assert f"judge.base_url {server.base_url_openai} is set by the rubric, not by you" in reason
    assert "--allow-code" in reason and "--base-url" in reason
    warnings = [line for line in err.splitlines() if line.startswith("warning: not trusted")]
    assert len(warnings) == 1 and f"judge.base_url {server.base_url_openai}" in warnings[0]

    code, report, err = grade_json(capsys, rubric, "--allow-code")
    assert server.calls() == 2 and {r.api_key for r in server.requests} == {KEY}
    assert {c["source"] for c in cells(report)} == {"judge"} and "warning: not trusted" not in err


def test_a_stored_trust_is_used_and_a_new_base_url_asks_again(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = tmp_path / "r"
    rubric = write_rubric(folder, f"  model: openai:gpt-4o-mini\n  base_url: {server.base_url_openai}\n")
    remember(rubric, untrusted_settings(load_rubric(rubric)))
    grade_json(capsys, rubric)
    assert server.calls() == 2

    with FakeLLM() as other:
        write_rubric(folder, f"  model: openai:gpt-4o-mini\n  base_url: {other.base_url_openai}\n")
        code, report, _ = grade_json(capsys, rubric)
        assert other.calls() == 0 and "judge.base_url" in report["judge_note"]


def test_the_users_base_url_is_used_and_the_rubrics_never_called(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLM() as stranger:
        rubric = write_rubric(tmp_path / "r", f"  model: openai:gpt-4o-mini\n  base_url: {stranger.base_url_openai}\n")
        code, report, err = grade_json(capsys, rubric, "--base-url", server.base_url_openai)
        assert stranger.calls() == 0
    assert server.calls() == 2 and {c["source"] for c in cells(report)} == {"judge"}
    assert "warning: not trusted" not in err


def test_a_base_url_the_user_set_in_the_environment_needs_no_trust(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url_openai)
    rubric = write_rubric(tmp_path / "r", f"  model: openai:gpt-4o-mini\n  base_url: {server.base_url_openai}/\n")
    code, report, _ = grade_json(capsys, rubric)
    assert server.calls() == 2 and {c["source"] for c in cells(report)} == {"judge"}


def test_the_user_config_file_chooses_a_base_url_and_a_provider(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    config = store_path().parent / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"judge:\n  model: openai:gpt-4o-mini\n  base_url: {server.base_url_openai}\n")
    rubric = write_rubric(tmp_path / "r", f"  base_url: {server.base_url_openai}\n")
    code, report, _ = grade_json(capsys, rubric)
    assert server.calls() == 2 and report["judge"]["model"] == "gpt-4o-mini"
    # The user config says anthropic: a rubric asking for openai is now a provider switch.
    config.write_text("judge:\n  model: anthropic:claude-haiku-4-5\n")
    switched = write_rubric(tmp_path / "s", "  model: openai:gpt-4o-mini\n")
    assert [g.setting for g in untrusted_settings(load_rubric(switched))] == ["judge.model"]


# -- judge.prompt_path -----------------------------------------------------------------------
def _outside_prompt(tmp_path: Path, how: str) -> tuple[Path, str]:
    """A secret file outside the rubric's folder and how the rubric names it."""
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\nGrade {{submission}}\n")
    folder = tmp_path / "r"
    folder.mkdir()
    if how == "relative":
        return secret, "../secret.txt"
    if how == "absolute":
        return secret, str(secret)
    (folder / "prompt.txt").symlink_to(secret)
    return secret, "prompt.txt"


@pytest.mark.parametrize("how", ["relative", "absolute", "symlink"])
def test_an_outside_prompt_path_is_never_read_untrusted(tmp_path, server, capsys, monkeypatch, how):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    secret, written = _outside_prompt(tmp_path, how)
    rubric = write_rubric(tmp_path / "r", f"  model: openai:gpt-4o-mini\n  prompt_path: {written}\n")

    assert main(["validate", str(rubric)]) == 0
    out, err = capsys.readouterr()
    assert "SECRET-7f3a" not in out + err
    assert f"{rubric}:4:3: warning: not trusted: judge.prompt_path {secret} is outside the rubric's folder" in err

    code, report, _ = grade_json(capsys, rubric, "--base-url", server.base_url_openai)
    assert server.calls() == 0 and "judge.prompt_path" in report["judge_note"]
    assert not any("SECRET-7f3a" in json.dumps(r.body) for r in server.requests)

    grade_json(capsys, rubric, "--base-url", server.base_url_openai, "--allow-code")
    assert server.calls() == 2 and all("SECRET-7f3a" in json.dumps(r.body) for r in server.requests)


def test_a_hard_linked_prompt_file_in_the_folder_counts_as_outside(tmp_path, server, capsys, monkeypatch):
    """``ln ~/.ssh/id_rsa prompt.txt``: the name is inside the folder, the content is not."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\nGrade {{submission}}\n")
    folder = tmp_path / "r"
    folder.mkdir()
    os.link(secret, folder / "prompt.txt")
    rubric = write_rubric(folder, "  model: openai:gpt-4o-mini\n  prompt_path: prompt.txt\n")

    assert main(["validate", str(rubric)]) == 0
    err = capsys.readouterr().err
    assert "SECRET-7f3a" not in err and "judge.prompt_path" in err and "hard links" in err and "--allow-code" in err
    code, report, _ = grade_json(capsys, rubric, "--base-url", server.base_url_openai)
    assert server.calls() == 0 and "hard links" in report["judge_note"]
    grade_json(capsys, rubric, "--base-url", server.base_url_openai, "--allow-code")
    assert server.calls() == 2 and all("SECRET-7f3a" in json.dumps(r.body) for r in server.requests)


def test_two_names_of_one_prompt_file_in_the_same_folder_stay_inside(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "judge.txt").write_text("HOUSE-PROMPT\nGrade {submission}\n")
    os.link(folder / "judge.txt", folder / "judge-copy.txt")
    rubric = write_rubric(folder, "  model: openai:gpt-4o-mini\n  prompt_path: judge-copy.txt\n")
    grade_json(capsys, rubric, "--base-url", server.base_url_openai)
    assert server.calls() == 2 and all("HOUSE-PROMPT" in json.dumps(r.body) for r in server.requests)


@pytest.mark.parametrize("written", [".aws/credentials", "~/.aws/credentials", "./.aws/../.aws/credentials"])
def test_a_rubric_saved_in_home_cannot_send_a_dot_folder_file(tmp_path, server, capsys, monkeypatch, written):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(f"[default]\n{SECRET}\nGrade {{submission}}\n")
    monkeypatch.setenv("HOME", str(home))
    rubric = write_rubric(home, f"  model: openai:gpt-4o-mini\n  prompt_path: {written}\n")

    assert main(["validate", str(rubric)]) == 0
    err = capsys.readouterr().err
    assert "SECRET-7f3a" not in err and "hidden .aws" in err and "--allow-code" in err
    code, report, _ = grade_json(capsys, rubric, "--base-url", server.base_url_openai)
    assert server.calls() == 0 and ".aws" in report["judge_note"]
    grade_json(capsys, rubric, "--base-url", server.base_url_openai, "--allow-code")
    assert server.calls() == 2 and all("SECRET-7f3a" in json.dumps(r.body) for r in server.requests)


@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_a_samples_folder_file_linked_from_outside_is_not_sent_until_trusted(tmp_path, server, capsys, monkeypatch,
                                                                             link):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    secret = tmp_path / "id_rsa.txt"
    secret.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    rubric = write_rubric(tmp_path / "r", "  model: openai:gpt-4o-mini\n")
    samples = tmp_path / "r" / "samples"
    samples.mkdir()
    (samples / "good.txt").write_text("Our refund policy gives you 30 days.")
    if link == "symlink":
        (samples / "key.txt").symlink_to(secret)
    else:
        os.link(secret, samples / "key.txt")

    code = main(["grade", str(rubric), str(samples), "--format", "json", "--no-cache",
                 "--base-url", server.base_url_openai])  # fmt: skip
    captured = capsys.readouterr()
    assert code in (0, 1) and [s["id"] for s in json.loads(captured.out)["samples"]] == ["good"]
    assert f"{samples / 'key.txt'}: not read: this samples file" in captured.err and "--allow-code" in captured.err
    assert server.calls() == 1 and not any("SECRET-7f3a" in json.dumps(r.body) for r in server.requests)

    code = main(["grade", str(rubric), str(samples), "--format", "json", "--no-cache", "--allow-code",
                 "--base-url", server.base_url_openai])  # fmt: skip
    assert [s["id"] for s in json.loads(capsys.readouterr().out)["samples"]] == ["good", "key"]
    assert server.calls() == 3 and any("SECRET-7f3a" in json.dumps(r.body) for r in server.requests)


def test_an_untrusted_outside_prompt_file_is_not_checked_by_validate_until_trusted(tmp_path, capsys):
    (tmp_path / "bad.txt").write_text("Grade {answer}\n")
    rubric = write_rubric(tmp_path / "r", "  prompt_path: ../bad.txt\n")
    assert main(["validate", str(rubric)]) == 0
    assert "{answer}" not in capsys.readouterr().err  # never opened
    remember(rubric, untrusted_settings(load_rubric(rubric)))
    assert main(["validate", str(rubric)]) == 2
    assert "unknown placeholder {answer}" in capsys.readouterr().err


def test_a_prompt_path_inside_the_folder_works_untrusted(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = tmp_path / "r"
    (folder / "prompts").mkdir(parents=True)
    (folder / "prompts" / "judge.txt").write_text("HOUSE-PROMPT\nGrade {submission}\n")
    rubric = write_rubric(folder, "  model: openai:gpt-4o-mini\n  prompt_path: prompts/../prompts/judge.txt\n")
    assert main(["validate", str(rubric)]) == 0
    assert "not trusted" not in capsys.readouterr().err
    grade_json(capsys, rubric, "--base-url", server.base_url_openai)
    assert server.calls() == 2 and all("HOUSE-PROMPT" in json.dumps(r.body) for r in server.requests)


def test_a_huge_prompt_file_is_refused_not_read_into_memory(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = tmp_path / "r"
    folder.mkdir()
    with (folder / "judge.txt").open("w") as handle:  # 3 MB: sent with every request, so refused
        handle.write("Grade {submission}\n" + "x" * (3 * 1024 * 1024))
    rubric = write_rubric(folder, "  model: openai:gpt-4o-mini\n  prompt_path: judge.txt\n")
    assert main(["validate", str(rubric)]) == 2
    err = capsys.readouterr().err
    assert f"{rubric}:4:16: judge.prompt_path:" in err and "larger than 1 MB" in err
    assert main(["grade", str(rubric), "--base-url", server.base_url_openai]) == 2
    assert "larger than 1 MB" in capsys.readouterr().err and server.calls() == 0


# -- provider switch -----------------------------------------------------------------------
def test_a_provider_switch_waits_for_trust(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-user")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url_anthropic)
    rubric = write_rubric(tmp_path / "r", "  model: anthropic:claude-haiku-4-5\n")
    code, report, err = grade_json(capsys, rubric)
    assert server.calls() == 0
    assert "judge.model anthropic:claude-haiku-4-5 switches to provider anthropic, not the one you use (openai)" in (
        report["judge_note"])
    assert "judge.model" in err
    grade_json(capsys, rubric, "--allow-code")
    assert server.calls("anthropic") == 2 and {r.api_key for r in server.requests} == {"sk-ant-user"}


def test_a_model_within_the_users_provider_needs_no_trust(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-user")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url_anthropic)
    rubric = write_rubric(tmp_path / "r", "  model: anthropic:claude-custom-judge\n")
    code, report, _ = grade_json(capsys, rubric)
    assert server.calls("anthropic") == 2 and report["judge"]["model"] == "claude-custom-judge"


@pytest.mark.parametrize(
    ("rubric_model", "user", "switch"),
    [
        ("anthropic:claude-haiku-4-5", UserJudge(env={"OPENAI_API_KEY": "k"}), True),
        ("anthropic:claude-haiku-4-5", UserJudge(env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "a"}), True),
        ("openai:gpt-4o", UserJudge(env={"ANTHROPIC_API_KEY": "a"}), True),
        ("openai:gpt-4o", UserJudge(config_model="ollama:llama3", env={"OPENAI_API_KEY": "k"}), True),
        ("openai:gpt-4.1", UserJudge(env={"OPENAI_API_KEY": "k"}), False),
        ("openai-compatible:qwen", UserJudge(env={"OPENAI_API_KEY": "k"}), False),
        ("anthropic:claude-haiku-4-5", UserJudge(model="openai:gpt-4o", env={"OPENAI_API_KEY": "k"}), False),
        ("anthropic:claude-haiku-4-5", UserJudge(config_model="anthropic:x", env={"OPENAI_API_KEY": "k"}), False),
        ("ollama:llama3", UserJudge(env={"OPENAI_API_KEY": "k"}), False),
        ("anthropic:claude-haiku-4-5", UserJudge(env={}), False),
    ],
)
def test_provider_switch_cases(rubric_model, user, switch):
    assert provider_switch(rubric_model, user) is switch


# -- the store -----------------------------------------------------------------------------
def test_trust_is_remembered_per_path_and_value(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = tmp_path / "r"
    rubric = write_rubric(folder, "  base_url: http://gpu-box:8000/v1\n",
                          extra="  - id: mine\n    check: {type: command, command: ./score.sh}\n")
    gates = untrusted_settings(load_rubric(rubric))
    assert sorted(g.key for g in gates) == [("check.command", "./score.sh"), ("judge.base_url", "http://gpu-box:8000/v1")]
    remember(rubric, gates)
    assert untrusted_settings(load_rubric(rubric)) == []
    # Editing criteria text keeps the trust.
    write_rubric(folder, "  base_url: http://gpu-box:8000/v1\n", outcome="Quotes the 30-day refund policy",
                 extra="  - id: mine\n    check: {type: command, command: ./score.sh}\n")
    assert untrusted_settings(load_rubric(rubric)) == []
    # A new value, a new command check, or the same rubric at another path asks again.
    write_rubric(folder, "  base_url: http://elsewhere:8000/v1\n",
                 extra="  - id: mine\n    check: {type: command, command: ./score.sh}\n"
                       "  - id: more\n    check: {type: command, command: ./other.sh}\n")
    assert sorted(g.value for g in untrusted_settings(load_rubric(rubric))) == ["./other.sh", "http://elsewhere:8000/v1"]
    copy = write_rubric(tmp_path / "copy", "  base_url: http://gpu-box:8000/v1\n")
    assert [g.setting for g in untrusted_settings(load_rubric(copy))] == ["judge.base_url"]


def test_a_corrupt_store_trusts_nothing_and_is_replaced(tmp_path, monkeypatch):
    rubric = write_rubric(tmp_path / "r", "  base_url: http://gpu-box:8000/v1\n")
    store_path().parent.mkdir(parents=True, exist_ok=True)
    store_path().write_text("{not json")
    assert load_trust(rubric).values == frozenset()
    remember(rubric, untrusted_settings(load_rubric(rubric)))
    assert load_trust(rubric).values == {("judge.base_url", "http://gpu-box:8000/v1")}


def test_two_studios_trusting_at_once_both_keep_their_entries(tmp_path, monkeypatch):
    """The store is written over exactly the version read: a write in between is not lost."""
    import rubric_studio.core.trust._store as store

    first = write_rubric(tmp_path / "a", "  base_url: http://gpu-a:8000/v1\n")
    second = write_rubric(tmp_path / "b", "  base_url: http://gpu-b:8000/v1\n")
    real_read = store._read_store
    calls = {"n": 0}

    def read_then_another_studio_writes():
        found = real_read()
        calls["n"] += 1
        if calls["n"] == 1:  # between our read and our write, another studio trusts its rubric
            monkeypatch.setattr(store, "_read_store", real_read)
            remember(second, untrusted_settings(load_rubric(second)))
            monkeypatch.setattr(store, "_read_store", read_then_another_studio_writes)
        return found

    monkeypatch.setattr(store, "_read_store", read_then_another_studio_writes)
    remember(first, untrusted_settings(load_rubric(first)))
    assert load_trust(first).values == {("judge.base_url", "http://gpu-a:8000/v1")}
    assert load_trust(second).values == {("judge.base_url", "http://gpu-b:8000/v1")}


def test_a_store_nested_too_deep_trusts_nothing_and_grading_goes_on(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rubric = write_rubric(tmp_path / "r", "  model: openai:gpt-4o-mini\n")
    store_path().parent.mkdir(parents=True, exist_ok=True)
    store_path().write_text("[" * 100_000 + "]" * 100_000)
    code, report, err = grade_json(capsys, rubric, "--base-url", server.base_url_openai)
    assert code in (0, 1) and server.calls() == 2 and "Traceback" not in err
    assert load_trust(rubric).values == frozenset()
    remember(rubric, [])  # the next write replaces it
    assert json.loads(store_path().read_text())["rubrics"] == {str(rubric.resolve()): []}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_store_that_is_a_fifo_trusts_nothing_without_blocking(tmp_path):
    rubric = write_rubric(tmp_path / "r", "  base_url: http://gpu-box:8000/v1\n")
    store_path().parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(store_path())
    assert load_trust(rubric).values == frozenset()
    with pytest.raises(OSError, match="not a regular file"):
        remember(rubric, untrusted_settings(load_rubric(rubric)))


def test_code_checks_run_only_once_every_one_is_trusted(tmp_path, capsys):
    folder = tmp_path / "r"
    folder.mkdir()
    rubric = folder / "code.yaml"
    rubric.write_text("name: code\ncriteria:\n  - id: mine\n    check: {type: command, command: ['true']}\n")
    (folder / "code.samples.jsonl").write_text(json.dumps({"id": "a", "output": "x"}) + "\n")
    _, report, err = grade_json(capsys, rubric)
    assert cells(report)[0]["status"] == "unjudged" and "command check true (criterion mine)" in err
    remember(rubric, untrusted_settings(load_rubric(rubric)))
    _, report, err = grade_json(capsys, rubric)
    assert cells(report)[0]["status"] == "error" and "not trusted" not in err  # ran: `true` prints no score


def test_validate_lists_untrusted_settings_at_their_keys(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rubric = write_rubric(tmp_path / "r", "  model: anthropic:claude-haiku-4-5\n  base_url: http://evil.example/v1\n")
    assert main(["validate", str(rubric)]) == 0
    err = capsys.readouterr().err
    assert f"{rubric}:3:3: warning: not trusted: judge.model anthropic:claude-haiku-4-5" in err
    assert f"{rubric}:4:3: warning: not trusted: judge.base_url http://evil.example/v1 is set by the rubric" in err
    assert main(["validate", str(rubric), "--format", "json"]) == 0
    entry = json.loads(capsys.readouterr().out)["files"][0]
    assert {u["setting"] for u in entry["untrusted"]} == {"judge.model", "judge.base_url"}


@pytest.mark.parametrize("text", ["judge: [1, 2]\n", "judge: {model: 5, base_url: ''}\n", "judge: {model: [\n", "- a\n"])
def test_a_malformed_user_config_is_ignored(text):
    from rubric_studio.core.trust import UserConfig, load_user_config, user_config_path

    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(text)
    assert load_user_config() == UserConfig()


@pytest.mark.parametrize("found", ["samples folder", "samples file"])
def test_samples_found_beside_the_rubric_that_are_a_link_to_elsewhere_are_not_sent(tmp_path, server, capsys,
                                                                                     monkeypatch, found):
    """Naming only the rubric lets its folder decide what is graded: a ``samples`` link to
    another folder, or ``r.samples.jsonl`` linked from elsewhere, is not read unasked."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    private = tmp_path / "private"
    private.mkdir()
    (private / "notes.txt").write_text(f"my notes {SECRET}\n")
    (private / "notes.jsonl").write_text(json.dumps({"id": "notes", "output": f"my notes {SECRET}"}) + "\n")
    rubric = write_rubric(tmp_path / "r", "  model: openai:gpt-4o-mini\n")
    (tmp_path / "r" / "shared.samples.jsonl").unlink()
    if found == "samples folder":
        (tmp_path / "r" / "samples").symlink_to(private, target_is_directory=True)
    else:
        (tmp_path / "r" / "shared.samples.jsonl").symlink_to(private / "notes.jsonl")

    code = main(["grade", str(rubric), "--format", "json", "--no-cache", "--base-url", server.base_url_openai])
    err = capsys.readouterr().err
    assert code == 2 and "not read: the samples found beside the rubric is outside the folder" in err
    assert "--allow-code" in err and server.calls() == 0

    code = main(["grade", str(rubric), "--format", "json", "--no-cache", "--allow-code",
                 "--base-url", server.base_url_openai])  # fmt: skip
    assert [s["id"] for s in json.loads(capsys.readouterr().out)["samples"]] == ["notes"]
    assert any("SECRET-7f3a" in json.dumps(r.body) for r in server.requests)
