"""`rubric-studio export` / `import` through the real CLI."""

from __future__ import annotations

import subprocess
import sys

import yaml

from rubric_studio.cli import main
from rubric_studio.core.loading import load_rubric
from tests._timing import scaled


def test_export_to_file_with_warnings_on_stderr(support_reply, tmp_path, capsys):
    out = tmp_path / "support.eval.yaml"
    code = main(["export", support_reply.path, "--to", "agentv", "-o", str(out)])
    captured = capsys.readouterr()
    assert code == 0 and captured.out == ""
    assert yaml.safe_load(out.read_text())["name"] == "support-reply"
    lines = captured.err.splitlines()
    assert lines and all(line.startswith(("warning: ", "note: ")) for line in lines)
    assert any(line.startswith("warning: ") and "asks-for-credentials" in line for line in lines)
    # the samples beside the rubric are the tests; their outputs are replayed from a file beside the eval
    assert (tmp_path / "support.outputs.jsonl").is_file()
    assert any(line.startswith("note: wrote ") and "support.outputs.jsonl" in line for line in lines)


def test_export_markdown_to_stdout(support_reply, capsys):
    assert main(["export", support_reply.path, "--to", "markdown"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("# Rubric: support-reply") and captured.err == ""


def test_export_invalid_rubric_exits_2_with_position(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ncriteria:\n  - outcome: ok\n    wieght: 2\n")
    assert main(["export", str(bad), "--to", "promptfoo"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:4:5: unknown key 'wieght'" in err and "did you mean 'weight'" in err


def test_export_unknown_target_is_a_usage_error(support_reply, capsys):
    assert main(["export", support_reply.path, "--to", "inspect"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_import_writes_native_yaml(fixtures, tmp_path, capsys):
    out = tmp_path / "rubric.yaml"
    assert main(["import", str(fixtures / "promptfoo" / "promptfooconfig.yaml"), "-o", str(out)]) == 0
    rubric = load_rubric(out)
    assert rubric.pass_threshold == 0.7 and len(rubric.criteria) == 8
    assert out.read_text().startswith("# Imported by rubric-studio from promptfoo file promptfooconfig.yaml.")
    assert "warning: " in capsys.readouterr().err


def test_import_bad_foreign_yaml_exits_2_with_position(tmp_path, capsys):
    bad = tmp_path / "suite.yaml"
    bad.write_text("name: s\ngraders:\n  - kind: model_judge\n")
    assert main(["import", str(bad), "--from", "letta"]) == 2
    assert f"{bad}:3:3: graders: expected a mapping, got list" in capsys.readouterr().err


def test_import_from_stdin(monkeypatch, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO('{"criterion": "Is kind", "points": 2, "tags": []}\n'))
    assert main(["import", "-", "--from", "healthbench"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Imported by rubric-studio from HealthBench standard input.")
    assert "outcome: Is kind" in out and "weight: 2" in out


def test_import_missing_file_exits_2(tmp_path, capsys):
    assert main(["import", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_end_to_end_subprocess(support_reply, tmp_path):
    exported = tmp_path / "suite.yaml"
    run = subprocess.run([sys.executable, "-m", "rubric_studio.cli", "export", support_reply.path, "--to", "letta",
                          "-o", str(exported)], capture_output=True, text=True, timeout=scaled(60))
    assert run.returncode == 0, run.stderr
    assert "warning: criterion 'short'" in run.stderr
    back = subprocess.run([sys.executable, "-m", "rubric_studio.cli", "import", str(exported)],
                          capture_output=True, text=True, timeout=scaled(60))
    assert back.returncode == 0, back.stderr
    imported = yaml.safe_load(back.stdout)
    assert imported["name"] == "support-reply"
    assert [c["id"] for c in imported["criteria"]] == ["resolves-issue", "policy-accurate", "tone",
                                                       "asks-for-credentials"]
