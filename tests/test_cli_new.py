"""``rubric-studio new NAME.yaml [SAMPLES]``: a starter rubric, never over an existing file, then the studio."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

import rubric_studio.cli.studio as studio
from rubric_studio.cli import main
from rubric_studio.core.loading import load_rubric
from rubric_studio.engine.starter import awaits_outcome


@pytest.fixture
def opened(monkeypatch) -> list[argparse.Namespace]:
    """The studio is never started for real here: its run is recorded instead."""
    calls: list[argparse.Namespace] = []
    monkeypatch.setattr(studio, "run", lambda args: calls.append(args) or 0)
    return calls


def _terminal(monkeypatch, yes: bool = True) -> None:
    monkeypatch.setattr(sys.stdin, "isatty", lambda: yes, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: yes, raising=False)


def test_new_writes_a_starter_rubric_and_prints_the_next_command_without_a_terminal(tmp_path, capsys, opened, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "samples.jsonl").write_text('{"id": "a", "output": "hi"}\n')
    assert main(["new", "my-rubric.yaml", "samples.jsonl"]) == 0
    out = capsys.readouterr().out
    rubric = load_rubric(tmp_path / "my-rubric.yaml")
    assert rubric.name == "my-rubric" and [awaits_outcome(c) for c in rubric.criteria] == [True]
    assert "created my-rubric.yaml" in out and "rubric-studio my-rubric.yaml samples.jsonl" in out
    assert opened == []


def test_new_opens_the_studio_on_a_terminal_unless_no_open(tmp_path, capsys, opened, monkeypatch):
    _terminal(monkeypatch)
    samples = tmp_path / "s"
    samples.mkdir()
    assert main(["new", str(tmp_path / "a.yaml"), str(samples), "--judge", "openai:gpt-4o-mini"]) == 0
    (args,) = opened
    assert Path(args.rubric) == tmp_path / "a.yaml" and args.samples == str(samples)
    assert args.judge == "openai:gpt-4o-mini" and args.labels is None
    assert main(["new", str(tmp_path / "b.yaml"), "--no-open"]) == 0
    assert len(opened) == 1 and (tmp_path / "b.yaml").exists()
    assert "rubric-studio " in capsys.readouterr().out


def test_an_existing_file_is_never_replaced(tmp_path, capsys, opened):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ncriteria:\n  - {id: a, outcome: keep me}\n")
    assert main(["new", str(path), "--no-open"]) == 2
    err = capsys.readouterr().err
    assert "exists already" in err and str(path) in err
    assert "keep me" in path.read_text() and opened == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["notes.txt"], ".yaml"),
        (["r.yaml", "missing-samples.jsonl"], "samples not found"),
        (["r.yaml", "--repeat", "0"], "--repeat"),
    ],
)
def test_bad_arguments_exit_2_before_anything_is_written(tmp_path, capsys, monkeypatch, args, message, opened):
    monkeypatch.chdir(tmp_path)
    assert main(["new", *args]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_name_without_extension_gets_yaml_and_folders_are_created(tmp_path, capsys, opened):
    assert main(["new", str(tmp_path / "deep" / "er" / "plain"), "--no-open"]) == 0
    assert (tmp_path / "deep" / "er" / "plain.yaml").is_file()


def test_the_next_command_is_quoted_for_the_shell(tmp_path, capsys, monkeypatch, opened):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my samples").mkdir()
    assert main(["new", "my rubric.yaml", "my samples"]) == 0
    assert "rubric-studio 'my rubric.yaml' 'my samples'" in capsys.readouterr().out


def test_help_lists_new_and_history(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "rubric-studio new RUBRIC [SAMPLES]" in out and "rubric-studio history RUBRIC" in out
