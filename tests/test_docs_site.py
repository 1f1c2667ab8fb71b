"""The documentation site's generated parts stay true: the CLI page matches the parser, every
JSON Schema is a valid schema that rejects a malformed report, and each is checked against real
output by a documented command (``tests/test_documented_commands.py`` validates it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.doccommands import all_blocks

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = sorted((ROOT / "docs" / "reference" / "schemas").glob("*.schema.json"))


def test_the_cli_reference_is_generated_from_the_current_parser():
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "gen_cli.py"), "--check"], capture_output=True,
                          text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_cli_reference_lists_every_command():
    from rubric_studio.cli import SUBCOMMANDS

    page = (ROOT / "docs" / "reference" / "cli.md").read_text()
    assert all(f"## rubric-studio {command}\n" in page for command in SUBCOMMANDS)


def test_there_is_a_schema_for_grade_calibrate_and_probe():
    assert {p.name.split(".")[0] for p in SCHEMAS} >= {"grade", "calibrate", "probe"}


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_a_report_schema_is_valid_and_rejects_a_malformed_report(path: Path):
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"usage": "none"}, schema)


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_schema_is_checked_against_real_output_by_a_documented_command(path: Path):
    name = path.name.split(".")[0]
    assert any(block.schema == name and not block.skip for block in all_blocks()), name


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    assert [p for p in pages if p not in nav] == []
