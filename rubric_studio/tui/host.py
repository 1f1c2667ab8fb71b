"""What the studio's flows and screens may use of the app: :class:`StudioHost`.

Grading, files, outside edits, labelling, calibration, interop, trust, improvement and the other
flows act on the session and talk to the user; they get the app as a :class:`StudioHost` — the
session, the values several panes show, the editor and the few Textual calls they need — never
the ``StudioApp`` class itself, so no module of the studio imports the app back. The types are the concrete ones (the editor is an
:class:`~rubric_studio.tui.editor.EditorPane`), imported for type checking only; the flows
themselves (grading, labeller, calibration, trust ...) are not part of it: each flow module
defines its own, the flows do not import one another, and one flow reaches another through the
app's attribute for it (``app.grading``, ``app.live``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, overload

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from textual.css.query import DOMQuery
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.screen import Screen, ScreenResultCallbackType
    from textual.timer import Timer
    from textual.widget import AwaitMount, Widget
    from textual.worker import Worker, WorkType

    from rubric_studio.core.labels import Label
    from rubric_studio.core.problems import Problem
    from rubric_studio.engine.report import Report
    from rubric_studio.session.studio import StudioSession
    from rubric_studio.tui.editor import EditorPane

WidgetType = TypeVar("WidgetType", bound="Widget")
ScreenResult = TypeVar("ScreenResult")
WorkResult = TypeVar("WorkResult")


class StudioHost(Protocol):
    """The app as its flows see it."""

    session: StudioSession
    # What several panes show (the app's reactive values: setting one redraws every pane showing it).
    selection: tuple[str | None, str | None]  # (sample, criterion) last highlighted in Results
    problems: Sequence[Problem]
    graded: Sequence[str]
    report: Report | None
    labels: Mapping[str, Label]
    next_rubric: Path | None  # a rubric to open once this studio has closed

    @property
    def editor(self) -> EditorPane | None: ...  # the EditorPane once mounted, else None

    @property
    def screen(self) -> Screen[object]: ...

    @property
    def focused(self) -> Widget | None: ...

    @property
    def is_mounted(self) -> bool: ...

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    @overload
    def push_screen(self, screen: Screen[ScreenResult], callback: ScreenResultCallbackType[ScreenResult] | None = None,
                    wait_for_dismiss: Literal[False] = False) -> AwaitMount: ...

    @overload
    def push_screen(self, screen: Screen[ScreenResult], callback: ScreenResultCallbackType[ScreenResult] | None = None,
                    wait_for_dismiss: Literal[True] = True) -> asyncio.Future[ScreenResult]: ...

    def run_worker(self, work: WorkType[WorkResult], name: str | None = "", group: str = "default",
                   description: str = "", exit_on_error: bool = True, start: bool = True, exclusive: bool = False,
                   thread: bool = False) -> Worker[WorkResult]: ...

    def post_message(self, message: Message) -> bool: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def set_interval(self, interval: float, callback: Callable[[], Any] | None = None) -> Timer: ...

    def exit(self, *args: Any, **kwargs: Any) -> None: ...

    @overload
    def query_one(self, selector: type[WidgetType]) -> WidgetType: ...

    @overload
    def query_one(self, selector: str) -> Widget: ...

    @overload
    def query_one(self, selector: str, expect_type: type[WidgetType]) -> WidgetType: ...

    def query(self, selector: str | type[Widget] | None = None) -> DOMQuery[Widget]: ...

    def copy_to_clipboard(self, text: str) -> None: ...

    def action_save(self) -> None: ...

    def action_show(self, where: str) -> None: ...

    def action_help(self) -> None: ...

    def action_trust(self) -> None: ...

    def action_new_rubric(self) -> None: ...

    # Parse the rubric as saved (or ``text``) and re-grade if valid; True when a re-grade started.
    def apply_saved_rubric(self, text: str | None = None, *, initial: bool = False) -> bool: ...

    def refresh_editor(self) -> None: ...

    def ensure_editor_soon(self) -> None: ...  # mount the editor once this frame is drawn

    def refresh_bars(self) -> None: ...  # the run header and the status bar

    def refresh_inspector(self) -> None: ...

    def rebuild_grader(self) -> None: ...

    def consistency_run(self, k: int) -> bool: ...

    def select_sample(self, sample_id: str, criterion_id: str | None = None) -> None: ...
