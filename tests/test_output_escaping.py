"""Text from user files cannot break what shows it: table, Markdown, JUnit, JSON, validate.

Sample ids and rubric names are free text in files someone else may have written:
brackets that look like rich markup, pipes and backticks that look like Markdown,
and control characters (an OSC sequence retitles the terminal) must all come out
literally, or as visible stand-ins, and never as raw escape bytes.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.text import Text
from textual.content import Content

from rubric_studio.cli import main
from rubric_studio.core.safe_text import (
    escape_rich_markup,
    escape_textual_markup,
    markdown_code,
    markdown_text,
    terminal_safe,
    xml_text,
)

OSC = "t\x1b]0;pwned\x07"  # would retitle the terminal
IDS = ["q[a]", "x[/]", "[$text-error]v", "[bold]b", OSC, "c\x01\x0b\x1b[31mred", "pipe|and`tick", "rtl\u202eevil"]
RUBRIC = """\
name: "x[/] \\e[2J"
criteria:
  - id: short
    check: {type: length, max_words: 8}
"""
RAW_CONTROLS = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, 0x9B]] + ["\u202e"]


def shown(sample_id: str) -> str:
    return terminal_safe(sample_id)


def assert_no_raw_controls(text: str) -> None:
    found = sorted({repr(c) for c in RAW_CONTROLS if c in text})
    assert found == [], f"raw control characters reached the output: {found}"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    rubric = tmp_path / "r.yaml"
    rubric.write_text(RUBRIC)
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps({"id": i, "output": "thanks"}) + "\n" for i in IDS))
    return rubric, samples


def grade(files, capsys, fmt: str) -> tuple[int, str, str]:
    rubric, samples = files
    code = main(["grade", str(rubric), str(samples), "--format", fmt])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_table_shows_every_id_literally(files, capsys):
    code, out, err = grade(files, capsys, "table")
    assert code == 0, err  # no crash on markup-like text, every sample graded
    assert_no_raw_controls(out + err)
    for sample_id in IDS:
        assert shown(sample_id) in out
    assert "t␛]0;pwned␇" in out and "x[/] ␛[2J — 8 samples" in out


def test_markdown_escapes_ids_so_rows_keep_their_columns(files, capsys):
    code, out, _ = grade(files, capsys, "markdown")
    assert code == 0
    assert_no_raw_controls(out)
    assert out.startswith("## x\\[/\\] ␛\\[2J\n")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "**pass**" in line]
    assert len(rows) == len(IDS)
    for row, sample_id in zip(rows, IDS, strict=True):
        cells = [cell.strip() for cell in row.replace("\\|", "\0").split("|")[1:-1]]
        assert len(cells) == 4  # sample, verdict, score, short: a pipe in an id splits nothing
        assert cells[0].replace("\0", "\\|") == markdown_text(sample_id)
    assert "| q\\[a\\] |" in out and "| pipe\\|and\\`tick |" in out


def test_junit_always_parses_and_names_every_sample(files, capsys):
    code, out, _ = grade(files, capsys, "junit")
    assert code == 0
    assert_no_raw_controls(out)
    root = ET.fromstring(out)
    suite = root.find("testsuite")
    assert suite.get("name") == "x[/] ␛[2J"
    assert [case.get("name") for case in suite.findall("testcase")] == [xml_text(i) for i in IDS]


def test_json_keeps_ids_exactly(files, capsys):
    code, out, _ = grade(files, capsys, "json")
    assert code == 0
    assert_no_raw_controls(out)  # JSON escapes them itself
    assert [s["id"] for s in json.loads(out)["samples"]] == IDS


def test_validate_prints_problems_and_names_without_escape_sequences(tmp_path: Path, capsys):
    good = tmp_path / "good.yaml"
    good.write_text(RUBRIC)
    bad = tmp_path / "bad.yaml"
    bad.write_text(RUBRIC + '"bad\\e]0;pwned\\akey": 1\n')
    assert main(["validate", str(good), str(bad)]) == 2
    captured = capsys.readouterr()
    assert_no_raw_controls(captured.out + captured.err)
    assert "ok — x[/] ␛[2J" in captured.out
    assert f"{bad}:5:" in captured.err and "pwned" in captured.err


# -- the helpers -------------------------------------------------------------------

@pytest.mark.parametrize("text", ["x[/]", "q[a]", "[$text-error]boom", "[A]", "a\\[b]", "\\[b]x", "end\\",
                                  "[@click=app.quit]x", "[bold red]x[/bold red]"])
def test_markup_escapes_show_the_text_as_it_is(text):
    assert Text.from_markup(escape_rich_markup(text)).plain == text
    assert Content.from_markup(escape_textual_markup(text)).plain == text


def test_terminal_safe_shows_controls_as_visible_stand_ins():
    assert terminal_safe(OSC) == "t␛]0;pwned␇"
    assert terminal_safe("a\nb\tc\x7f\x9b\u202e\udc80") == "a␊b␉c␡\\x9b\\u202e\\udc80"
    assert terminal_safe("a\nb\tc", multiline=True) == "a\nb\tc"
    assert terminal_safe("plain ünïcode ✓") == "plain ünïcode ✓"


def test_xml_text_keeps_only_characters_xml_allows():
    text = "".join(chr(c) for c in range(0x20)) + "\x7f\ufffe\udc80 ok"
    ET.fromstring(f"<a b={json.dumps(xml_text(text))}>{xml_text(text).replace('&', '&amp;')}</a>")


def test_markdown_code_survives_backticks_and_pipes():
    assert markdown_code("plain") == "`plain`"
    assert markdown_code("a`b|c") == "`` a`b\\|c ``"
