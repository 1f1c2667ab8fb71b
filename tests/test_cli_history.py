"""``rubric-studio history``: the versions recorded in the studio, listed and diffed from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.labels import Label
from rubric_studio.core.loading import parse_rubric
from rubric_studio.engine.versions import history_path, open_history
from tests.calibration.calib_helpers import result

TEXT = "name: t\ncriteria:\n  - id: quotes\n    outcome: {outcome}\n"
LABELS = {"s1": Label(verdict="fail", criteria={"quotes": "unmet"}), "s2": Label(verdict="pass", criteria={"quotes": "met"})}


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """A rubric with three recorded versions: first run, an outcome edit that fixes s1, a samples change that breaks it."""
    monkeypatch.setenv("RUBRIC_STUDIO_CACHE", str(tmp_path / "cache" / "judge.sqlite"))
    rubric = tmp_path / "r.yaml"
    rubric.write_text(TEXT.format(outcome="Quotes the source"))
    history = open_history(rubric)
    steps = [("Quotes the source", "pass", "S1", 1_700_000_000.0), ("Quotes the source word for word", "fail", "S1", 1_700_000_600.0),
             ("Quotes the source word for word", "pass", "S2", 1_700_001_200.0)]  # fmt: skip
    for outcome, s1, samples, t in steps:
        results = [result("s1", s1, {"quotes": "met" if s1 == "pass" else "unmet"}), result("s2", "pass", {"quotes": "met"})]
        history.record(parse_rubric(TEXT.format(outcome=outcome), str(rubric)), results, timestamp=t,
                       samples_fingerprint=samples, judge_key="openai:gpt-4o-mini#abcd", labels=LABELS)  # fmt: skip
    assert history.warnings == []
    return rubric


def test_lists_each_version_with_its_kind_counts_kappa_and_summary(project: Path, capsys):
    assert main(["history", str(project)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "3 versions" in lines[0]
    v1 = next(line for line in lines if line.startswith("v1 "))
    v2 = next(line for line in lines if line.startswith("v2 "))
    v3 = next(line for line in lines if line.startswith("v3 "))
    assert "first run" in v1 and "pass 2" in v1 and "fail 0" in v1 and "kappa 0.00" in v1
    assert "rubric edit" in v2 and "pass 1" in v2 and "fail 1" in v2 and "kappa 1.00" in v2
    assert "samples change" in v3
    assert "v1 → v2 (rubric edit): fixed 1 disagreement, broke 0" in out
    assert "v2 → v3 (samples change): fixed 0 disagreements, broke 1" in out
    assert "2023-11-14" in v1  # the date, not only the time: the history spans days


def test_json_lists_the_same_versions(project: Path, capsys):
    assert main(["history", str(project), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [v["number"] for v in data["versions"]] == [1, 2, 3]
    assert [v["kind"] for v in data["versions"]] == ["first run", "rubric edit", "samples change"]
    assert data["versions"][1]["counts"] == {"pass": 1, "fail": 1, "other": 0}
    assert data["versions"][1]["kappa"] == 1.0 and data["versions"][0]["summary"] is None
    assert data["versions"][2]["summary"].startswith("v2 → v3 (samples change)")
    assert data["history_file"] == str(history_path(project))


def test_diff_of_two_versions_shows_summary_criteria_and_rubric_changes(project: Path, capsys):
    assert main(["history", str(project), "--diff", "1", "v2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("v1 → v2 (rubric edit): fixed 1 disagreement, broke 0")
    assert "per criterion:" in out and "  quotes: fixed 1, broke 0 · 1 cells flipped" in out
    assert "rubric changes:" in out and "  changed quotes (outcome)" in out
    assert "  pass→fail: s1" in out

    assert main(["history", str(project), "--diff", "2", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "samples change" and data["overall"] == {"fixed": [], "broken": ["s1"]}


@pytest.mark.parametrize("bad", ["9", "v0", "latest", "-1"])
def test_an_unknown_version_is_a_usage_error(project: Path, capsys, bad: str):
    assert main(["history", str(project), "--diff", "1", bad]) == 2
    err = capsys.readouterr().err
    assert f"no version {bad!r}" in err and "versions 1–3" in err and "Traceback" not in err


def test_a_rubric_without_history_says_so_and_a_missing_one_is_a_usage_error(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("RUBRIC_STUDIO_CACHE", str(tmp_path / "judge.sqlite"))
    rubric = tmp_path / "fresh.yaml"
    rubric.write_text(TEXT.format(outcome="x"))
    assert main(["history", str(rubric)]) == 0
    assert "no versions" in capsys.readouterr().out
    assert main(["history", str(rubric), "--diff", "1", "2"]) == 2
    assert "no versions yet" in capsys.readouterr().err
    assert main(["history", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_corrupt_or_hostile_history_never_breaks_the_command(project: Path, capsys):
    path = history_path(project)
    lines = path.read_text().splitlines()
    hostile = json.loads(lines[-1]) | {"number": 4, "kind": "rubric edit\x1b[2J", "verdicts": {"\x1b]0;pwned\x07": "pass"}}
    path.write_text("\n".join([lines[0], "{not json", "\x00" * 50, lines[1], json.dumps(hostile)]) + "\n")
    assert main(["history", str(project)]) == 0
    captured = capsys.readouterr()
    assert "warning:" in captured.err and "skipped" in captured.err
    assert "\x1b" not in captured.out and "\x07" not in captured.out
    assert [line.split()[0] for line in captured.out.splitlines() if line.startswith("v")] == ["v1", "v2", "v4"]


def test_history_and_new_import_nothing_heavy_at_import_time():
    code = ("import sys, rubric_studio.cli.history, rubric_studio.cli.new, rubric_studio.cli.studio; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'pydantic', 'ruamel', 'textual'}))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
