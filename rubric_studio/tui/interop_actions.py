"""Export and import as studio actions (palette: "Export rubric as …", "Import rubric from file…").

* **Export** writes the saved rubric (what is graded) for another tool as
  ``<stem><suffix>`` beside it (:data:`rubric_studio.interop.FORMATS` gives the suffix),
  atomically and with the user's umask, after asking before it replaces an existing file
  (and only if that file did not change while asking). Everything the target
  cannot express is listed in a dialog — never only logged.
* **Import** asks for a path, reads the file in a worker thread (format detected),
  writes the native rubric as ``<stem>.imported.yaml`` beside it (asking before it
  replaces a file) and lists the warnings. It does not switch the studio to the new
  rubric (that could drop unsaved edits); it shows the command that opens it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import SystemCommand

from rubric_studio.core.atomic import ChangedOnDisk, DiskState, disk_state, write_text_safely
from rubric_studio.interop import FORMATS, ImportResult, export_rubric, import_rubric, rubric_to_yaml
from rubric_studio.tui.dialogs import AskScreen, ConfirmScreen, NoticeScreen
from rubric_studio.tui.messages import ActionFailed, ImportDone

if TYPE_CHECKING:
    from rubric_studio.tui.app import StudioApp

IMPORT_SUFFIX = ".imported.yaml"


def shown_path(path: Path) -> str:
    """``path`` relative to the working directory when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def export_target(rubric_path: Path, target: str) -> Path:
    return rubric_path.with_name(rubric_path.stem + FORMATS[target].suffix)


def import_target(source: Path) -> Path:
    return source.with_name(source.stem + IMPORT_SUFFIX)


def _write_then(app: StudioApp, path: Path, text: str, done: object) -> None:
    """Write ``text`` to ``path`` atomically, then call ``done()``.

    A new file is only created (never over one that appears meanwhile); an existing one is
    replaced once the person says so, and only while it holds what it held when they were
    asked. A path that is not a regular file (a FIFO, a device) is refused with a message.
    """

    def write(expect: DiskState) -> None:
        try:
            write_text_safely(path, text, expect=expect)
        except ChangedOnDisk:
            app.notify(f"{shown_path(path)} changed on disk meanwhile; nothing written (export again to replace it).",
                       severity="warning", title="Not written")
            return
        except OSError as exc:
            app.notify(f"Could not write {shown_path(path)}: {exc}", severity="error", title="Not written")
            return
        done()  # type: ignore[operator]

    try:
        seen = disk_state(path)
    except OSError as exc:  # not a regular file, unreadable
        app.notify(f"Could not write {shown_path(path)}: {exc}", severity="error", title="Not written")
        return
    if not seen.exists:
        write(seen)
        return

    def chosen(overwrite: bool | None) -> None:
        if overwrite:
            write(seen)
        else:
            app.notify(f"Kept {shown_path(path)}; nothing written.", timeout=3)

    app.push_screen(ConfirmScreen(f"{path.name} exists", f"Replace {shown_path(path)}?", yes="Replace",
                                  no="Keep it"), chosen)


# -- export -----------------------------------------------------------------------------
def export_as(app: StudioApp, target: str) -> None:
    info = FORMATS[target]
    rubric = app.rubric
    if rubric is None or app.file_problems.get("rubric"):
        app.notify("The rubric has problems (see the banner): fix them before exporting.", severity="error")
        return
    try:
        result = export_rubric(rubric, target)
    except Exception as exc:  # an exporter bug must be a notification, not a traceback
        app.notify(f"Export to {info.title} failed: {exc}", severity="error", title="Export")
        return
    path = export_target(app.rubric_path, target)
    unsaved = app.document.dirty

    def written() -> None:
        where = shown_path(path)
        note = " (the saved rubric; your unsaved edits are not in it)" if unsaved else ""
        if not result.warnings:
            app.notify(f"Wrote {where}{note}. {info.title} expresses everything in the rubric.",
                       title=f"Exported for {info.title}", timeout=6)
            return
        count = len(result.warnings)
        app.notify(f"Wrote {where}{note} — {count} warning{'s' if count != 1 else ''}.",
                   title=f"Exported for {info.title}", severity="warning", timeout=8)
        intro = Text.assemble(
            "Wrote ", (where, "bold"), note, ".\n",
            f"{info.title} cannot express everything in this rubric; what changed or was left out:",
        )
        app.push_screen(NoticeScreen(f"Exported for {info.title}: {count} warning{'s' if count != 1 else ''}",
                                     intro, result.warnings))

    _write_then(app, path, result.text, written)


# -- import -----------------------------------------------------------------------------
def _resolve(app: StudioApp, text: str) -> Path | None:
    """The file a typed path names: as typed (from the working directory), else beside the rubric."""
    if not text:
        return None
    path = Path(os.path.expanduser(text))
    candidates = [path] if path.is_absolute() else [path, app.rubric_path.parent / path]
    return next((c for c in candidates if c.is_file()), None)


def ask_import(app: StudioApp) -> None:
    formats = ", ".join(info.title for info in FORMATS.values() if info.can_import)

    def validate(text: str) -> str | None:
        if not text:
            return "type the path of the file to import"
        return None if _resolve(app, text) is not None else f"no such file: {text}"

    def chosen(text: str | None) -> None:
        source = _resolve(app, text) if text else None
        if source is not None:
            start_import(app, source)

    app.push_screen(AskScreen(
        "Import rubric from file",
        Text.assemble(f"A file from {formats} (the format is detected). The rubric is written beside it as ",
                      ("<stem>.imported.yaml", "bold"), f".\nA relative path starts at the working directory ({Path.cwd()}) "
                      "or else at the rubric's folder."),
        placeholder="path/to/suite.yaml", validate=validate,
    ), chosen)


def start_import(app: StudioApp, source: Path) -> None:
    """Read ``source`` in a worker thread; posts ImportDone or ActionFailed."""

    def work() -> None:
        try:
            result = import_rubric(source)
        except Exception as exc:  # RubricError (with file:line), ValueError, unreadable file ...
            app.post_message(ActionFailed(f"import of {shown_path(source)}", str(exc) or type(exc).__name__))
            return
        app.post_message(ImportDone(source, result))

    app.run_worker(work, thread=True, group="import", exclusive=True, exit_on_error=False)


def imported(app: StudioApp, source: Path, result: ImportResult) -> None:
    """Write the native rubric of an import and list what did not carry over."""
    try:
        text = rubric_to_yaml(result.rubric)
    except Exception as exc:
        app.notify(f"Could not convert {shown_path(source)}: {exc}", severity="error", title="Import")
        return
    path = import_target(source)
    title = FORMATS[result.detected].title if result.detected in FORMATS else (result.detected or "unknown")
    command = f"rubric-studio {shlex.quote(shown_path(path))}"

    def written() -> None:
        count = len(result.warnings)
        intro = Text.assemble(
            "Read ", (shown_path(source), "bold"), f" as {title}; wrote ", (shown_path(path), "bold"), ".\n",
            "Open it in the studio (this session keeps the current rubric):\n  ", (command, "bold cyan"), "\n",
            f"{count} warning{'s' if count != 1 else ''} — what could not be carried over exactly:" if count
            else "Everything was carried over.",
        )
        severity = "warning" if count else "information"
        app.notify(f"Wrote {shown_path(path)}" + (f" — {count} warning{'s' if count != 1 else ''}" if count else ""),
                   title=f"Imported from {title}", severity=severity, timeout=8)

        def after(choice: str | None) -> None:
            if choice == "copy-command":
                app.copy_to_clipboard(command)
                app.notify(f"Copied: {command}", timeout=3)

        app.push_screen(NoticeScreen(f"Imported {source.name}", intro, result.warnings,
                                     actions=[("copy-command", "Copy command")]), after)

    _write_then(app, path, text, written)


def commands(app: StudioApp) -> Iterable[SystemCommand]:
    for name, info in FORMATS.items():
        if info.can_export:
            yield SystemCommand(
                f"Export rubric as {info.title}",
                f"{info.description} → {app.rubric_path.stem}{info.suffix} beside the rubric; warnings listed",
                lambda n=name: export_as(app, n),
            )
    yield SystemCommand("Import rubric from file…", "Read an AgentV / promptfoo / Letta / Docent / HealthBench file "
                        "and write it as a rubric (<stem>.imported.yaml)", lambda: ask_import(app))
