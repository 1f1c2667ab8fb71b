"""The YAML tab of the rubric editor, and the editor's one-line status.

:class:`YamlView` shows the document's text and takes the user's typing; the editor pane
applies it after a pause. The view counts *typing bursts*: moving the cursor (keys,
mouse, a jump to a criterion) starts a new one, so the pane can make each burst its own
undo step without looking at the clock. Showing a new document text replaces only the
part that changed, so the cursor and scroll position stay where the user had them.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import TextArea
from textual.widgets.text_area import Edit, EditResult, Selection

from rubric_studio.core.document import RubricDocument
from rubric_studio.core.problems import Problem
from rubric_studio.core.safe_text import escape_textual_markup, terminal_safe
from rubric_studio.tui.editor._text_fields import TextEditor

__all__ = ["YamlView", "problems_summary", "status_markup", "yaml_note"]


class YamlView(TextEditor):
    """The raw YAML, editable; ``burst`` goes up whenever the cursor moves other than by typing."""

    burst = 0
    _editing = False  # inside an edit: the cursor moves with the text

    def __init__(self, text: str, **kwargs: Any) -> None:
        super().__init__(text, language="yaml", show_line_numbers=True, soft_wrap=False, tab_behavior="indent",
                         **kwargs)

    def edit(self, edit: Edit) -> EditResult:
        self._editing = True
        try:
            return super().edit(edit)
        finally:
            self._editing = False

    def watch_selection(self, previous: Selection, selection: Selection) -> None:
        if not self._editing and previous != selection:
            self.burst += 1

    def show_text(self, new: str, *, reset: bool = False) -> None:
        """Show ``new`` (posting no change), replacing only the span that differs unless ``reset``."""
        old = self.text
        if old == new:
            return
        with self.prevent(TextArea.Changed):
            if reset or not old:
                self.load_text(new)
                return
            prefix = 0
            limit = min(len(old), len(new))
            while prefix < limit and old[prefix] == new[prefix]:
                prefix += 1
            suffix = 0
            while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
                suffix += 1
            start = self.document.get_location_from_index(prefix)
            end = self.document.get_location_from_index(len(old) - suffix)
            self.replace(new[prefix : len(new) - suffix], start, end)


def yaml_note(document: RubricDocument) -> tuple[str, str]:
    """What shows under the YAML view, and its state: ``error``, ``warning`` or ``ok`` (nothing to show)."""
    problem = document.yaml_problem
    if problem is not None:
        text = terminal_safe(problem, multiline=True)
        return f"✗ {text}\nThe text is kept; fix it here (the other tabs wait for valid YAML).", "error"
    problems = document.problems()
    if not problems:
        return problems_summary(problems), "ok"
    errors = any(p.severity == "error" for p in problems)
    return problems_summary(problems), "error" if errors else "warning"


def problems_summary(problems: list[Problem], limit: int = 4) -> str:
    """How many errors and warnings, then the first few of them."""
    if not problems:
        return "✓ valid rubric"
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    head = []
    if errors:
        head.append(f"{len(errors)} error{'s' if len(errors) != 1 else ''}")
    if warnings:
        head.append(f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''}")
    lines = [", ".join(head) + ":"]
    lines += [f"  {terminal_safe(p, multiline=True)}" for p in (errors + warnings)[:limit]]
    if len(problems) > limit:
        lines.append(f"  … and {len(problems) - limit} more")
    return "\n".join(lines)


def status_markup(document: RubricDocument) -> str:
    """The editor's status line: file, saved or modified, validity, and the undo hint."""
    parts = [f"[b]{escape_textual_markup(document.path.name)}[/b]"]
    parts.append("[$warning]● modified[/]" if document.dirty else "[dim]saved[/]")
    if document.reverted_outside is not None and document.dirty:
        parts.append("[$text-warning]undoes an outside edit[/]")
    problem = document.yaml_problem
    if problem is not None:
        parts.append(f"[$text-error]✗ YAML line {problem.line}[/]")
    else:
        problems = document.problems()
        errors = sum(1 for p in problems if p.severity == "error")
        warnings = len(problems) - errors
        if errors:
            parts.append(f"[$text-error]✗ {errors} error{'s' if errors != 1 else ''}[/]")
        elif warnings:
            parts.append(f"[$text-warning]! {warnings} warning{'s' if warnings != 1 else ''}[/]")
        else:
            parts.append("[$text-success]✓ valid[/]")
    if document.can_undo:
        parts.append("[dim]ctrl+z undo[/]")
    return " · ".join(parts)
