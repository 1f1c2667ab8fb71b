"""Plugins cannot take a command down: each kind (check types, providers, formats) is loaded
through the same guard, whatever the plugin raises, and said in one ``warning:`` line.

Every test installs a real distribution — a module and a ``*.dist-info`` folder with
``entry_points.txt`` — on ``PYTHONPATH`` and runs the real command in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parent.parent
GROUPS = {"check-type": "rubric_studio.checks", "provider": "rubric_studio.providers", "format": "rubric_studio.formats"}
PLAIN = "name: r\ncriteria:\n  - {id: a, outcome: Mentions x}\n  - {id: b, check: {type: regex, pattern: x}}\n"


def install(site: Path, kind: str, body: str, attr: str = "THING") -> None:
    """A distribution ``house-plugin`` whose entry point ``house`` of ``kind`` names ``house_plugin:attr``."""
    site.mkdir(exist_ok=True)
    (site / "house_plugin.py").write_text(textwrap.dedent(body))
    info = site / "house_plugin-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: house-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUPS[kind]}]\nhouse = house_plugin:{attr}\n")


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "AZURE"))}
    env.update(PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(ROOT)]), HOME=str(tmp_path),
               MARKER=str(tmp_path / "imported"))
    # As at a terminal: ctrl-c interrupts. A test run started as a background job without job
    # control (CI, nohup) has SIGINT ignored, and the child would inherit that; the child puts
    # Python's own handler back first (a preexec_fn could deadlock: this process has threads).
    return subprocess.run([sys.executable, "-c", AS_AT_A_TERMINAL, *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=90)


AS_AT_A_TERMINAL = ("import runpy, signal\n"
                    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
                    "runpy.run_module('rubric_studio', run_name='__main__', alter_sys=True)\n")


#: kind -> (rubric, command) that reads that kind's plugins, and the exit code when the plugin is skipped
READS = {
    # a check type no built-in has: the check plugins are read to look for it
    "check-type": ("name: r\ncriteria:\n  - {id: a, check: {type: word_count, at_most: 3}}\n", ["validate", "r.yaml"], 2),
    # a provider no built-in has (a name no built-in will take): the provider plugins are read to look for it
    "provider": ("name: r\njudge: {model: 'zz-test-plugin-provider:small'}\n"
                 "criteria:\n  - {id: a, outcome: Mentions x}\n",
                 ["validate", "r.yaml"], 2),
    # a format no built-in has
    "format": (PLAIN, ["export", "r.yaml", "--to", "house"], 2),
}


def one_warning(done: subprocess.CompletedProcess[str], kind: str) -> str:
    warned = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1, done.stderr
    assert warned[0].startswith(f"warning: {kind} plugin house-plugin (entry point house = house_plugin:")
    assert "Traceback" not in done.stderr and "Warning:" not in done.stderr and ".py:" not in done.stderr
    return warned[0]


@pytest.mark.parametrize("kind", sorted(GROUPS))
@pytest.mark.parametrize(("body", "said"), [
    ("import sys\nsys.exit(3)\n", "skipped: it failed to load (it called sys.exit(3))"),
    ("raise KeyboardInterrupt\n", "skipped: it failed to load (KeyboardInterrupt raised by the plugin)"),
    ("raise RuntimeError('no licence')\n", "skipped: it failed to load (RuntimeError: no licence)"),
], ids=["sys.exit", "KeyboardInterrupt", "error"])
def test_a_plugin_that_fails_to_import_is_one_warning_and_the_command_goes_on(tmp_path, kind, body, said):
    install(tmp_path / "site", kind, body)
    rubric, command, code = READS[kind]
    (tmp_path / "r.yaml").write_text(rubric)
    done = cli(tmp_path, *command)
    assert one_warning(done, kind).endswith(said)
    assert done.returncode == code  # the command's own answer (the name is unknown), not the plugin's exit 3
    assert "r.yaml" in done.stdout + done.stderr or "invalid choice: 'house'" in done.stderr


def test_a_real_ctrl_c_while_a_plugin_imports_names_it_then_stops(tmp_path):
    install(tmp_path / "site", "format", """\
        import os, signal, time
        os.kill(os.getpid(), signal.SIGINT)  # the user presses ctrl-c while this import is slow
        time.sleep(30)
    """)
    (tmp_path / "r.yaml").write_text(PLAIN)
    done = cli(tmp_path, "export", "r.yaml", "--to", "markdown")
    assert done.returncode == 130 and done.stdout == ""
    warned = one_warning(done, "format")
    assert "was importing when interrupted" in warned
    assert done.stderr.splitlines()[-1] == "interrupted"


def test_a_slow_plugin_is_named_once_with_its_time(tmp_path):
    install(tmp_path / "site", "format", """\
        import time
        from rubric_studio.interop import ExportResult, FormatInfo
        time.sleep(1.5)
        THING = FormatInfo("house", "House", ".house.txt", "the house file",
                           exporter=lambda rubric, **options: ExportResult("house!\\n"))
    """)
    (tmp_path / "r.yaml").write_text(PLAIN)
    done = cli(tmp_path, "export", "r.yaml", "--to", "house")
    assert done.returncode == 0 and done.stdout == "house!\n", done.stderr
    warned = one_warning(done, "format")
    assert " took " in warned and " s to import" in warned


def test_a_broken_check_type_is_one_warning_line_like_the_other_kinds(tmp_path):
    install(tmp_path / "site", "check-type", """\
        from rubric_studio.core.checks import CheckModel, CheckType
        class Bad(CheckModel):
            pass
        THING = CheckType("Word Count", Bad, lambda spec, base_dir: None)
    """)
    (tmp_path / "r.yaml").write_text(READS["check-type"][0])
    done = cli(tmp_path, "validate", "r.yaml")
    assert one_warning(done, "check-type").endswith("skipped: check type name 'Word Count' is not lower_snake_case")
    assert done.returncode == 2 and "word_count" in done.stdout + done.stderr  # the type is still unknown


@pytest.mark.parametrize("kind", sorted(GROUPS))
@pytest.mark.parametrize("command", [["--help"], ["grade", "--help"], ["export", "--help"], ["import", "--help"],
                                     ["validate", "r.yaml"], ["export", "r.yaml", "--to", "markdown"]])
def test_commands_that_need_no_plugin_do_not_import_one(tmp_path, kind, command):
    if command[0] == "export" and kind == "format" and "--to" in command:
        pytest.skip("naming a format reads the format plugins (it may be a plugin's)")
    install(tmp_path / "site", kind, "import os\nopen(os.environ['MARKER'], 'w').close()\nraise SystemExit(3)\n")
    (tmp_path / "r.yaml").write_text(PLAIN)
    done = cli(tmp_path, *command)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "imported").exists()  # the plugin's module never ran
    assert "warning:" not in done.stderr
