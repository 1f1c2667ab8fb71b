"""What counts as inside a rubric's folder, for the folder named ``.config``: a project's own
``.config/`` is an ordinary folder, the user's config folder (``~/.config``, ``$XDG_CONFIG_HOME``,
where tools keep tokens) is a credentials folder wherever the rubric is."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.core.discovery import refuse_found_elsewhere
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.problems import RubricError
from rubric_studio.core.trust import outside_reason, untrusted_settings
from rubric_studio.judges import resolve_judge

TOKEN = "gho_TOKEN-4b1d"


@pytest.fixture
def home(tmp_path, monkeypatch):
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user")
    return folder


def rubric_in(folder: Path, prompt_path: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rubric = folder / "shared.yaml"
    rubric.write_text(f"name: shared\njudge:\n  model: openai:gpt-4o-mini\n  prompt_path: {prompt_path}\n"
                      "criteria:\n  - id: refund\n    outcome: States the refund policy\n")
    return rubric


def test_a_projects_own_config_folder_holds_its_prompt_without_trust(home, tmp_path):
    project = tmp_path / "work" / "support-bot" / ".config"
    rubric = rubric_in(project, "judge.txt")
    (project / "judge.txt").write_text("HOUSE-PROMPT\nGrade {submission}\n")
    (project / "shared.samples.jsonl").write_text('{"id": "a", "output": "hi"}\n')

    assert untrusted_settings(load_rubric(rubric)) == []
    judge = resolve_judge(load_rubric(rubric).judge, env={"OPENAI_API_KEY": "sk-user"}, base_dir=project)
    assert "HOUSE-PROMPT" in judge.prompt_template  # untrusted, yet its own folder's prompt is used
    refuse_found_elsewhere(rubric, project / "shared.samples.jsonl")  # read: no error


def test_a_rubric_in_the_users_config_folder_cannot_send_a_tools_token(home):
    config = home / ".config"
    (config / "gh").mkdir(parents=True)
    (config / "gh" / "hosts.yml").write_text(f"github.com:\n  oauth_token: {TOKEN}\n")
    rubric = rubric_in(config, "gh/hosts.yml")

    [gate] = untrusted_settings(load_rubric(rubric))
    assert gate.setting == "judge.prompt_path"
    assert gate.why == f"is in {config.resolve()}, where credentials are kept"
    judge = resolve_judge(load_rubric(rubric).judge, env={"OPENAI_API_KEY": "sk-user"}, base_dir=config)
    assert TOKEN not in repr(judge) and "where credentials are kept" in judge.reason
    with pytest.raises(RubricError, match="where credentials are kept"):
        refuse_found_elsewhere(rubric, config / "gh" / "hosts.yml")


def test_xdg_config_home_is_the_users_config_folder_too(home, tmp_path, monkeypatch):
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    (xdg / "gcloud").mkdir(parents=True)
    token = xdg / "gcloud" / "credentials.db"
    token.write_text(TOKEN)
    assert outside_reason(token.resolve(), xdg.resolve()) == f"is in {xdg.resolve()}, where credentials are kept"


def test_an_xdg_config_home_set_to_home_does_not_make_home_a_credentials_folder(home, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    project = home / "support-bot"
    rubric = rubric_in(project, "judge.txt")
    (project / "judge.txt").write_text("Grade {submission}\n")
    assert untrusted_settings(load_rubric(rubric)) == []


def test_other_credentials_folders_stay_refused_anywhere(home, tmp_path):
    folder = tmp_path / "srv" / ".aws" / "project"
    rubric = rubric_in(folder, "judge.txt")
    (folder / "judge.txt").write_text("Grade {submission}\n")
    [gate] = untrusted_settings(load_rubric(rubric))
    assert gate.why == "is in .aws, where credentials are kept"
