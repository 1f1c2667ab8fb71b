"""Report formats written as they are graded: ``--format json`` is the same text it always
was, in constant memory; the table is drawn row by row; a report that cannot be written
(a full disk, a closed pipe) is one clear line and exit 2, not a traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rubric_studio.cli import main

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"


def _normalised(text: str, rubric_path: str) -> str:
    """The report with what changes between runs fixed: the rubric path, the wall time and
    the no-key note (its wording belongs to the judge configuration)."""
    text = text.replace(rubric_path, "RUBRIC_PATH")
    text = re.sub(r'"wall_seconds": [0-9.e-]+', '"wall_seconds": 0', text)
    return re.sub(r'"judge_note": ".*"', '"judge_note": "NOTE"', text)


@pytest.fixture
def no_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("name", "extra", "golden"), [
    ("checks", [], "checks.json"),
    ("checks", ["--repeat", "2"], "checks.repeat2.json"),
    ("judged", [], "judged.json"),
])
def test_json_report_is_byte_identical_to_the_recorded_one(name, extra, golden, no_keys, capsys):
    rubric = str(GOLDEN / f"{name}.yaml")
    main(["grade", rubric, str(GOLDEN / f"{name}.samples.jsonl"), "--format", "json", "--no-cache", *extra])
    out = capsys.readouterr().out
    assert _normalised(out, rubric) == (GOLDEN / golden).read_text(encoding="utf-8")


def _many_samples(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "many.jsonl"
    with path.open("w") as handle:
        for i in range(n):
            handle.write(json.dumps({"id": f"s{i}", "output": "thanks " * (i % 13) + "merci 2026-01-0" + str(i % 10)}) + "\n")
    return path


def test_json_report_over_several_chunks_equals_the_whole_report(tmp_path, no_keys, capsys):
    """600 samples are written in three chunks; the text is the one ``json.dumps`` gives for
    the report of the whole run, key order, indentation and commas included."""
    from rubric_studio import grade
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.samples import load_samples

    rubric_path = str(GOLDEN / "checks.yaml")
    samples = _many_samples(tmp_path, 600)
    main(["grade", rubric_path, str(samples), "--format", "json", "--no-cache"])
    streamed = capsys.readouterr().out
    report = grade(load_rubric(rubric_path), load_samples(samples).samples, cache=False)
    whole = json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
    assert streamed.count('\n      "id": "s') == 600
    assert _normalised(streamed, rubric_path) == _normalised(whole, rubric_path)


def test_json_to_a_file_replaces_it_only_with_a_whole_report(tmp_path, no_keys):
    out = tmp_path / "report.json"
    out.write_text("previous report\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["grade", str(GOLDEN / "checks.yaml"), str(empty), "--format", "json", "-o", str(out)]) == 2
    assert out.read_text() == "previous report\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    main(["grade", str(GOLDEN / "checks.yaml"), str(GOLDEN / "checks.samples.jsonl"), "--format", "json",
          "-o", str(out)])
    assert json.loads(out.read_text())["summary"]["samples"] == 4


CHECKS = [str(GOLDEN / "checks.yaml"), str(GOLDEN / "checks.samples.jsonl")]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", [
    ["grade", *CHECKS, "--format", "json"], ["grade", *CHECKS, "--format", "jsonl"],
    ["grade", *CHECKS, "--format", "table"], ["grade", *CHECKS, "--format", "markdown"],
    ["validate", CHECKS[0]], ["calibrate", *CHECKS, "--format", "json"],
], ids=["json", "jsonl", "table", "markdown", "validate", "calibrate"])
def test_a_full_stdout_is_a_clear_error_not_a_traceback(command, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path))
    args = command if command[0] == "validate" else [*command, "--no-cache"]
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "rubric_studio.cli", *args],
                              stdout=full, stderr=subprocess.PIPE, text=True, env=env, timeout=60)
    assert "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr
    assert re.search(r"cannot write (the report )?to standard output: No space left on device", done.stderr)
    assert done.returncode == 2


def test_table_rows_line_up_and_a_long_id_is_cut_with_an_ellipsis(tmp_path, no_keys, capsys):
    samples = tmp_path / "s.jsonl"
    rows = [{"id": "x" * 50, "output": "thanks"}, {"id": "日本語のサンプル", "output": "merci thanks"},
            {"id": "para\u2028graph", "output": "thanks"}]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["grade", str(GOLDEN / "checks.yaml"), str(samples), "--no-cache"])
    out = capsys.readouterr().out
    from rich.cells import cell_len

    box = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert len(box) == 7
    assert len({cell_len(line) for line in box}) == 1  # every row as wide as the box
    assert "x" * 31 + "…" in out and "x" * 33 not in out
    assert "para␤graph" in out and "\u2028" not in out


def test_a_table_wider_than_the_page_still_lines_up(tmp_path, no_keys, capsys):
    """Forty criteria do not fit 200 columns: the columns shrink to fit instead of running on."""
    from rich.cells import cell_len

    rubric = tmp_path / "wide.yaml"
    rubric.write_text("name: wide\ncriteria:\n" + "".join(
        f"  - id: criterion-number-{i}\n    check: {{type: length, max_words: {i + 1}}}\n" for i in range(40)))
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"id": "a", "output": "one two three"}\n{"id": "b", "output": "x"}\n')
    out = tmp_path / "table.txt"
    main(["grade", str(rubric), str(samples), "-o", str(out)])
    box = [line for line in out.read_text().splitlines() if line[:1] in "┏┃┡│└"]
    assert len(box) == 6 and len({cell_len(line) for line in box}) == 1
    assert cell_len(box[0]) <= 200
