"""Formats from other packages: the ``rubric_studio.formats`` entry points, read through real
distribution metadata (a ``*.dist-info`` folder with ``entry_points.txt`` on ``sys.path``)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rubric_studio.interop import (
    ENTRY_POINT_GROUP,
    FORMATS,
    ExportResult,
    FormatInfo,
    FormatRegistry,
)
from rubric_studio.interop._formats import BUILTIN
from tests._timing import scaled

ROOT = Path(__file__).resolve().parents[2]
SUPPORT_REPLY = ROOT / "sample_rubrics" / "support_reply" / "support_reply.yaml"

HOUSE_MODULE = '''
import json
from rubric_studio.interop import ExportResult, FormatInfo
from rubric_studio.interop._common import build_rubric

def export(rubric):
    criteria = [{"key": c.key, "weight": c.weight} for c in rubric.criteria]
    return ExportResult(json.dumps({"house_rubric": rubric.name, "items": criteria}) + "\\n",
                        ["house format keeps no outcomes"])

def import_(source, warn):
    data = source.data
    warn.add("outcomes are the keys")
    return build_rubric({"name": data["house_rubric"],
                         "criteria": [{"id": i["key"], "check": {"type": "keywords",
                                       "required": [i["key"]]}} for i in data["items"]]}, source)

def detect(data, file):
    return isinstance(data, dict) and "house_rubric" in data

FORMAT = FormatInfo("house", "House gateway", ".house.json", "the house gateway's rubric file",
                    exporter="house_format:export", importer="house_format:import_", detector="house_format:detect")
SHADOW = FormatInfo("markdown", "Not markdown", ".md", "tries to replace a built-in", exporter="house_format:export")
'''


def _install(root: Path, entry_points: dict[str, str], module: str = HOUSE_MODULE) -> Path:
    """A distribution ``house-format`` in ``root``: its module and metadata declaring ``entry_points``."""
    (root / "house_format.py").write_text(module, encoding="utf-8")
    info = root / "house_format-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: house-format\nVersion: 0.1\n", encoding="utf-8")
    lines = [f"[{ENTRY_POINT_GROUP}]"] + [f"{name} = {value}" for name, value in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _cli(args: list[str], plugin_root: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_root), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "rubric_studio.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=scaled(60))


def test_a_plugin_format_exports_and_imports_through_the_command_line(tmp_path):
    (tmp_path / "site").mkdir()
    plugin = _install(tmp_path / "site", {"house": "house_format:FORMAT"})
    exported = _cli(["export", str(SUPPORT_REPLY), "--to", "house"], plugin, tmp_path)
    assert exported.returncode == 0, exported.stderr
    data = json.loads(exported.stdout)
    assert data["house_rubric"] == "support-reply" and len(data["items"]) >= 3
    assert exported.stderr.splitlines() == ["warning: house format keeps no outcomes"]

    # the file it wrote comes back through auto-detection (its own detector) and its importer
    source = tmp_path / "support.house.json"
    source.write_text(exported.stdout, encoding="utf-8")
    imported = _cli(["import", str(source)], plugin, tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert "Imported by rubric-studio from House gateway file support.house.json." in imported.stdout
    assert "warning: outcomes are the keys" in imported.stderr

    listed = _cli(["export", "--help"], plugin, tmp_path)  # help reads no plugin: the built-ins, "or a plugin's"
    assert listed.returncode == 0 and "markdown, or a plugin's" in " ".join(listed.stdout.split())


def test_without_the_plugin_the_format_is_unknown(tmp_path):
    refused = _cli(["export", str(SUPPORT_REPLY), "--to", "house"], tmp_path, tmp_path)
    assert refused.returncode == 2 and "invalid choice: 'house'" in refused.stderr


def test_a_broken_plugin_is_skipped_with_one_warning_and_the_rest_still_work(tmp_path):
    (tmp_path / "site").mkdir()
    plugin = _install(tmp_path / "site", {"broken": "house_missing:FORMAT", "shadow": "house_format:SHADOW",
                                          "house": "house_format:FORMAT"})
    result = _cli(["export", str(SUPPORT_REPLY), "--to", "markdown"], plugin, tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith("# Rubric: support-reply")  # the built-in, not the shadow
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning: format plugin")]
    assert len(warned) == 2, result.stderr
    assert any("entry point broken = house_missing:FORMAT" in line for line in warned)
    assert any("entry point shadow = " in line and "built in and cannot be replaced" in line for line in warned)
    assert "Traceback" not in result.stderr


def test_the_registry_reads_entry_points_once_and_lazily(tmp_path, monkeypatch, caplog):
    (tmp_path / "site").mkdir()
    _install(tmp_path / "site", {"broken": "house_missing:FORMAT", "house": "house_format:FORMAT"})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "house_format", raising=False)
    registry = FormatRegistry()
    assert "house_format" not in sys.modules  # nothing read before the formats are listed
    with caplog.at_level(logging.WARNING, logger="rubric_studio.plugins"):
        assert registry.exporters() == [info.name for info in BUILTIN] + ["house"]
        assert registry.importers()[-1] == "house" and registry["house"].title == "House gateway"
        assert "house" in registry and len(registry) == len(BUILTIN) + 1  # listing again warns no more
    assert [record.getMessage() for record in caplog.records] == [
        "warning: format plugin house-format (entry point broken = house_missing:FORMAT) skipped: it failed to load "
        "(ModuleNotFoundError: No module named 'house_missing')"]
    assert not registry.is_builtin("house") and registry.is_builtin("agentv")


def test_registering_checks_the_definition():
    registry = FormatRegistry()
    with pytest.raises(ValueError, match="built in"):
        registry.register(FormatInfo("agentv", "x", ".x", "x", exporter=lambda rubric: ExportResult("")))
    with pytest.raises(TypeError, match="FormatInfo"):
        registry.register({"name": "x"})  # type: ignore[arg-type]


def test_an_exporter_must_return_an_export_result(support_reply):
    info = FormatInfo("tuple", "Tuple", ".t", "old style", exporter=lambda rubric: ("text", []))
    with pytest.raises(TypeError, match="returned tuple, not ExportResult"):
        info.export(support_reply)
    made = FormatInfo("plain", "Plain", ".p", "new style", exporter=lambda rubric: ExportResult("x\n"))
    assert made.export(support_reply).suggested_suffix == ".p"


def test_every_format_list_comes_from_the_registry(monkeypatch):
    """The command line's choices and the studio's commands follow the registry, not copies of it."""
    from types import SimpleNamespace

    from rubric_studio.cli import build_parser
    from rubric_studio.tui.interop_actions import commands

    house = FormatInfo("house", "House", ".house.txt", "the house file", exporter=lambda rubric: ExportResult(""))
    monkeypatch.setitem(FORMATS._formats, "house", house)
    export_to = {a.dest: a.type for a in build_parser("export")._actions}["to"]
    import_from = {a.dest: a.type for a in build_parser("import")._actions}["source"]
    assert export_to("house") == "house" and export_to("markdown") == "markdown"
    assert import_from("docent") == "docent" and import_from("auto") == "auto"
    for refused in ("house", "markdown"):  # neither can import
        with pytest.raises(argparse.ArgumentTypeError, match=f"invalid choice: '{refused}'"):
            import_from(refused)
    app = SimpleNamespace(session=SimpleNamespace(rubric_path=Path("support.yaml")))
    titles = {command.title: command.help for command in commands(app)}  # type: ignore[arg-type]
    assert titles["Export rubric as House"] == "the house file → support.house.txt beside the rubric; warnings listed"
    assert "Export rubric as Markdown" in titles
    assert "HealthBench" in titles["Import rubric from file…"] and "House" not in titles["Import rubric from file…"]
