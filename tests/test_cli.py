"""The command-line contract (docs/reference/command-line.md, docs/reference/reports.md#grade):
formats, JSON shape, exit codes, messages."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from rubric_studio.cli import main
from tests._timing import scaled

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = ROOT / "sample_rubrics/support_reply"
CHECKS_ONLY = """\
name: checks-only
pass_threshold: 0.9
criteria:
  - id: short
    check: {type: length, max_words: 8}
  - id: polite
    check: {type: keywords, required: [thanks]}
    required: true
"""


def write_checks_rubric(tmp_path: Path) -> tuple[Path, Path]:
    rubric = tmp_path / "r.yaml"
    rubric.write_text(CHECKS_ONLY)
    samples = tmp_path / "s.jsonl"
    samples.write_text(
        '{"id": "good", "output": "thanks, done"}\n'
        '{"id": "long", "output": "thanks but this answer goes on and on and on"}\n'
        '{"id": "rude", "output": "done"}\n'
    )
    return rubric, samples


def test_grade_json_has_the_documented_shape_and_exit_1_on_fail(tmp_path: Path, capsys):
    rubric, samples = write_checks_rubric(tmp_path)
    code = main(["grade", str(rubric), str(samples), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert set(out) >= {"rubric", "judge", "samples", "summary", "usage"}
    assert set(out["rubric"]) == {"name", "path", "hash"} and out["judge"] is None
    assert set(out["usage"]) == {"judge_calls", "requests", "cache_hits", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "cost_usd", "wall_seconds"}
    by_id = {s["id"]: s for s in out["samples"]}
    assert by_id["good"]["verdict"] == "pass" and by_id["good"]["score"] == 1.0
    long_ = by_id["long"]
    assert long_["verdict"] == "fail"
    words = 10
    assert long_["criteria"][0]["score"] == round(1 - (words - 8) / 4, 6)
    assert set(long_["criteria"][0]) == {"id", "status", "score", "raw_score", "rationale", "evidence", "source", "error"}
    assert by_id["rude"]["verdict"] == "fail"  # required keyword missing
    assert out["summary"] == {"samples": 3, "passed": 1, "failed": 2, "errors": 0,
                              "mean_score": round((1 + (0.5 + 1) / 2 + 0.5) / 3, 6),
                              "cells": {"met": 4, "unmet": 2}}


def test_grade_exit_0_when_all_pass(tmp_path: Path, capsys):
    rubric, samples = write_checks_rubric(tmp_path)
    samples.write_text('{"id": "a", "output": "thanks"}\n')
    assert main(["grade", str(rubric), str(samples)]) == 0
    assert "1 passed" in capsys.readouterr().out


def test_grade_invalid_rubric_exits_2_with_position(tmp_path: Path, capsys):
    rubric, samples = write_checks_rubric(tmp_path)
    rubric.write_text(CHECKS_ONLY.replace("max_words", "max_wrds"))
    assert main(["grade", str(rubric), str(samples)]) == 2
    err = capsys.readouterr().err
    assert f"{rubric}:5:" in err and "did you mean 'max_words'" in err


def test_grade_missing_samples_exits_2(tmp_path: Path, capsys):
    rubric, _ = write_checks_rubric(tmp_path)
    assert main(["grade", str(rubric)]) == 2
    assert "no SAMPLES given" in capsys.readouterr().err
    assert main(["grade", str(rubric), str(tmp_path / "nope.jsonl")]) == 2


def test_grade_bad_records_are_reported_and_others_graded(tmp_path: Path, capsys):
    rubric, samples = write_checks_rubric(tmp_path)
    samples.write_text('{"id": "a", "output": "thanks"}\n{broken\n')
    assert main(["grade", str(rubric), str(samples), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert f"{samples}:2:" in captured.err
    assert len(json.loads(captured.out)["samples"]) == 1


def test_usage_errors_exit_2(capsys):
    assert main(["grade"]) == 2
    assert main(["export", "x.yaml", "--to", "nowhere"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_jsonl_streams_one_line_per_sample_then_summary(tmp_path: Path):
    rubric, samples = write_checks_rubric(tmp_path)
    out = tmp_path / "out.jsonl"
    assert main(["grade", str(rubric), str(samples), "--format", "jsonl", "-o", str(out)]) == 1
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line.get("id") for line in lines[:3]] == ["good", "long", "rude"]
    assert lines[3]["summary"]["passed"] == 1 and lines[3]["summary"]["samples"] == 3


def test_junit_and_markdown(tmp_path: Path):
    rubric, samples = write_checks_rubric(tmp_path)
    junit = tmp_path / "r.xml"
    main(["grade", str(rubric), str(samples), "--format", "junit", "-o", str(junit)])
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "2"
    failed = [tc.get("name") for tc in suite.findall("testcase") if tc.find("failure") is not None]
    assert failed == ["long", "rude"]
    md = tmp_path / "r.md"
    main(["grade", str(rubric), str(samples), "--format", "markdown", "-o", str(md)])
    text = md.read_text()
    assert "| sample | verdict | score | short | polite |" in text and "| rude | **fail** |" in text


def test_no_judge_marks_judge_cells_unjudged_and_says_how_to_configure(capsys):
    code = main(["grade", str(SUPPORT / "support_reply.yaml"), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["summary"]["unjudged"] == out["summary"]["samples"]
    assert out["summary"]["mean_score"] is None  # partial scores of ungraded samples are not averaged
    assert "OPENAI_API_KEY" in out["judge_note"] and "--base-url" in out["judge_note"]


MIXED = """\
name: mixed
criteria:
  - id: helpful
    outcome: Helps the customer
  - id: polite
    check: {type: keywords, required: [thanks]}
"""


def test_a_sample_without_a_final_verdict_shows_only_a_bracketed_partial_score(tmp_path: Path, capsys):
    rubric, samples = tmp_path / "mixed.yaml", tmp_path / "s.jsonl"
    rubric.write_text(MIXED)
    samples.write_text('{"id": "a", "output": "thanks, done"}\n')
    args = ["grade", str(rubric), str(samples)]
    assert main([*args, "--format", "json"]) == 1  # no judge: not graded, so not a pass
    (sample,) = json.loads(capsys.readouterr().out)["samples"]
    assert sample["verdict"] == "unjudged"
    assert sample["score"] is None and sample["partial_score"] == 1.0
    main([*args, "--format", "table"])
    row = next(line for line in capsys.readouterr().out.splitlines() if " a " in line)
    assert "[1.000]" in row and "1.000" not in row.replace("[1.000]", "")
    main([*args, "--format", "markdown"])
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| a |"))
    assert row.split(" | ")[2] == "\\[1.000\\]"
    main([*args, "--format", "junit"])
    case = ET.fromstring(capsys.readouterr().out).find("testsuite/testcase")
    assert case.find("skipped") is not None and case.find("system-out").text == "score [1.000] (partial: no final verdict)"


def test_validate_reports_every_problem_and_exit_codes(tmp_path: Path, capsys):
    good = SUPPORT / "support_reply.yaml"
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ncriteria:\n  - id: a\n    outcome: x\n  - id: a\n    check: {type: regex, pattern: '('}\n")
    assert main(["validate", str(good)]) == 0
    assert main(["validate", str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:5:9:" in err and f"{bad}:6:12:" in err


def test_validate_lists_code_checks(tmp_path: Path, capsys):
    rubric = tmp_path / "r.yaml"
    rubric.write_text("name: x\ncriteria:\n  - id: mine\n    check: {type: command, command: ./score.sh}\n")
    assert main(["validate", str(rubric)]) == 0
    assert "runs code: mine (command: ./score.sh)" in capsys.readouterr().out


def test_cache_stats_and_clear(tmp_path: Path, capsys):
    from rubric_studio.engine.cache import ReplyCache

    path = tmp_path / "c.sqlite"
    cache = ReplyCache(path)
    cache.put("k1", "openai", "m", "{}")
    cache.close()
    assert main(["cache", "stats", "--cache-path", str(path)]) == 0
    assert "entries: 1" in capsys.readouterr().out
    assert main(["cache", "clear", "--cache-path", str(path)]) == 0
    assert ReplyCache(path).stats().entries == 0


def test_help_is_fast_path_and_lists_commands():
    done = subprocess.run([sys.executable, "-m", "rubric_studio", "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    assert "rubric-studio grade RUBRIC SAMPLES" in done.stdout and "exit codes" in done.stdout


# -- writing output files safely ------------------------------------------------------------------
def test_export_and_import_refuse_a_fifo_or_a_device_link_without_hanging(tmp_path: Path, capsys):
    import os

    rubric, _ = write_checks_rubric(tmp_path)
    fifo = tmp_path / "out.md"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "rubric_studio.cli", "export", str(rubric), "--to", "markdown",
                           "-o", str(fifo)], capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 2 and f"cannot write {fifo}: is a named pipe (FIFO)" in done.stderr
    link = tmp_path / "imported.yaml"
    link.symlink_to("/dev/null")
    assert main(["import", str(rubric), "-o", str(link)]) == 2
    assert "symbolic link to a device (/dev/null)" in capsys.readouterr().err
    assert link.is_symlink()


def test_grade_and_calibrate_refuse_a_device_output_with_a_message(tmp_path: Path, capsys):
    rubric, samples = write_checks_rubric(tmp_path)
    for command in (["grade", str(rubric), str(samples)], ["calibrate", str(rubric), str(samples)]):
        assert main([*command, "-o", "/dev/null"]) == 2  # before: a traceback from grade and calibrate
        err = capsys.readouterr().err
        assert "cannot write /dev/null: is a device" in err and "Traceback" not in err


def test_export_creates_files_with_the_users_umask_and_keeps_a_replaced_files_mode(tmp_path: Path):
    import os
    import stat

    rubric, _ = write_checks_rubric(tmp_path)
    saved = os.umask(0o022)
    try:
        assert main(["export", str(rubric), "--to", "markdown", "-o", str(tmp_path / "a.md")]) == 0
        assert stat.S_IMODE((tmp_path / "a.md").stat().st_mode) == 0o644
        os.umask(0o077)
        assert main(["export", str(rubric), "--to", "markdown", "-o", str(tmp_path / "b.md")]) == 0
        os.chmod(tmp_path / "a.md", 0o664)
        assert main(["export", str(rubric), "--to", "promptfoo", "-o", str(tmp_path / "a.md")]) == 0
    finally:
        os.umask(saved)
    assert stat.S_IMODE((tmp_path / "a.md").stat().st_mode) == 0o664
    assert stat.S_IMODE((tmp_path / "b.md").stat().st_mode) == 0o600
