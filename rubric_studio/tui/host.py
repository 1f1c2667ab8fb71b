"""What the studio's flows and screens may use of the app: :class:`StudioHost`.

Labelling, calibration, interop, trust and improvement flows act on the session and talk to
the user; they get the app as a :class:`StudioHost` — the session, the editor and the few
Textual calls they need — never the ``StudioApp`` class itself, so no module of the studio
imports the app back. The types are the concrete ones (the editor is an
:class:`~rubric_studio.tui.editor.EditorPane`), imported for type checking only; the flows
themselves (labeller, calibration, trust) are not part of it: each flow module defines its
own and the flows do not import one another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol, TypeVar, overload

if TYPE_CHECKING:
    import asyncio

    from textual.css.query import DOMQuery
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.screen import Screen, ScreenResultCallbackType
    from textual.widget import AwaitMount, Widget
    from textual.worker import Worker, WorkType

    from rubric_studio.session.studio import StudioSession
    from rubric_studio.tui.editor import EditorPane

WidgetType = TypeVar("WidgetType", bound="Widget")
ScreenResult = TypeVar("ScreenResult")
WorkResult = TypeVar("WorkResult")


class StudioHost(Protocol):
    """The app as its flows see it."""

    session: StudioSession
    selection: tuple[str | None, str | None]  # (sample, criterion) last highlighted in Results

    @property
    def editor(self) -> EditorPane | None: ...  # the EditorPane once mounted, else None

    @property
    def screen(self) -> Screen[object]: ...

    @property
    def focused(self) -> Widget | None: ...

    @property
    def is_mounted(self) -> bool: ...

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

    def rebuild_grader(self) -> None: ...

    def consistency_run(self, k: int) -> bool: ...

    def select_sample(self, sample_id: str, criterion_id: str | None = None) -> None: ...
