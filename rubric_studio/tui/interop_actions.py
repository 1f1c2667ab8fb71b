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

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import SystemCommand

from rubric_studio.core.atomic import disk_state
from rubric_studio.interop import FORMATS, ImportResult, import_rubric
from rubric_studio.session.interop import (
    FilePlan,
    InteropRefused,
    plan_export,
    plan_import,
    resolve_import_path,
    shown_path,
    write_file,
)
from rubric_studio.tui.dialogs import AskScreen, ConfirmScreen, NoticeScreen
from rubric_studio.tui.messages import ActionFailed, ImportDone

if TYPE_CHECKING:
    from rubric_studio.tui.host import StudioHost


def _plural(count: int) -> str:
    return f"{count} warning{'s' if count != 1 else ''}"


def _write_then(app: StudioHost, plan: FilePlan, done: Callable[[], None]) -> None:
    """Write ``plan`` atomically, then call ``done()``.

    A new file is only created (never over one that appears meanwhile); an existing one is
    replaced once the person says so, and only while it holds what it held when they were
    asked. A path that is not a regular file (a FIFO, a device) is refused with a message.
    """
    path = plan.path

    def write(expect: object) -> None:
        try:
            write_file(plan, expect)  # type: ignore[arg-type]
        except InteropRefused as exc:
            app.notify(str(exc), severity=exc.severity, title="Not written")
            return
        done()

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
def export_as(app: StudioHost, target: str) -> None:
    try:
        plan = plan_export(app.session, target)
    except InteropRefused as exc:
        app.notify(str(exc), severity="error", title="Export")
        return
    _write_then(app, plan, lambda: _exported(app, plan))


def _exported(app: StudioHost, plan: FilePlan) -> None:
    where, count = shown_path(plan.path), len(plan.warnings)
    note = " (the saved rubric; your unsaved edits are not in it)" if plan.unsaved_edits else ""
    title = f"Exported for {plan.title}"
    if not count:
        app.notify(f"Wrote {where}{note}. {plan.title} expresses everything in the rubric.", title=title, timeout=6)
        return
    app.notify(f"Wrote {where}{note} — {_plural(count)}.", title=title, severity="warning", timeout=8)
    intro = Text.assemble("Wrote ", (where, "bold"), note, ".\n",
                          f"{plan.title} cannot express everything in this rubric; what changed or was left out:")
    app.push_screen(NoticeScreen(f"{title}: {_plural(count)}", intro, plan.warnings))


# -- import -----------------------------------------------------------------------------
def ask_import(app: StudioHost) -> None:
    formats = ", ".join(FORMATS[name].title for name in FORMATS.importers())

    def validate(text: str) -> str | None:
        if not text:
            return "type the path of the file to import"
        return None if resolve_import_path(app.session, text) is not None else f"no such file: {text}"

    def chosen(text: str | None) -> None:
        source = resolve_import_path(app.session, text) if text else None
        if source is not None:
            start_import(app, source)

    app.push_screen(AskScreen(
        "Import rubric from file",
        Text.assemble(f"A file from {formats} (the format is detected). The rubric is written beside it as ",
                      ("<stem>.imported.yaml", "bold"), f".\nA relative path starts at the working directory ({Path.cwd()}) "
                      "or else at the rubric's folder."),
        placeholder="path/to/suite.yaml", validate=validate,
    ), chosen)


def start_import(app: StudioHost, source: Path) -> None:
    """Read ``source`` in a worker thread; posts ImportDone or ActionFailed."""

    def work() -> None:
        try:
            result = import_rubric(source)
        except Exception as exc:  # RubricError (with file:line), ValueError, unreadable file ...
            app.post_message(ActionFailed(f"import of {shown_path(source)}", str(exc) or type(exc).__name__))
            return
        app.post_message(ImportDone(source, result))

    app.run_worker(work, thread=True, group="import", exclusive=True, exit_on_error=False)


def imported(app: StudioHost, source: Path, result: ImportResult) -> None:
    """Write the native rubric of an import and list what did not carry over."""
    try:
        plan = plan_import(source, result)
    except InteropRefused as exc:
        app.notify(str(exc), severity="error", title="Import")
        return
    _write_then(app, plan, lambda: _imported(app, source, plan))


def _imported(app: StudioHost, source: Path, plan: FilePlan) -> None:
    count = len(plan.warnings)
    intro = Text.assemble(
        "Read ", (shown_path(source), "bold"), f" as {plan.title}; wrote ", (shown_path(plan.path), "bold"), ".\n",
        "Open it in the studio (this session keeps the current rubric):\n  ", (plan.command, "bold cyan"), "\n",
        f"{_plural(count)} — what could not be carried over exactly:" if count else "Everything was carried over.",
    )
    app.notify(f"Wrote {shown_path(plan.path)}" + (f" — {_plural(count)}" if count else ""),
               title=f"Imported from {plan.title}", severity="warning" if count else "information", timeout=8)

    def after(choice: str | None) -> None:
        if choice == "copy-command":
            app.copy_to_clipboard(plan.command)
            app.notify(f"Copied: {plan.command}", timeout=3)

    app.push_screen(NoticeScreen(f"Imported {source.name}", intro, plan.warnings,
                                 actions=[("copy-command", "Copy command")]), after)


def commands(app: StudioHost) -> Iterable[SystemCommand]:
    stem = app.session.rubric_path.stem
    for name in FORMATS.exporters():
        info = FORMATS[name]
        yield SystemCommand(
            f"Export rubric as {info.title}",
            f"{info.description} → {stem}{info.suffix} beside the rubric; warnings listed",
            lambda n=name: export_as(app, n),
        )
    titles = " / ".join(FORMATS[name].title for name in FORMATS.importers())
    yield SystemCommand("Import rubric from file…", f"Read an {titles} file and write it as a rubric "
                        "(<stem>.imported.yaml)", lambda: ask_import(app))
