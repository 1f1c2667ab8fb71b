"""What the studio's flows and screens may use of the app: :class:`StudioHost`.

Labelling, calibration, interop, trust and improvement flows act on the session and talk to
the user; they get the app as a :class:`StudioHost` — the session, the editor and the few
Textual calls they need — never the ``StudioApp`` class itself, so no module of the studio
imports the app back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rubric_studio.session.studio import StudioSession


class StudioHost(Protocol):
    """The app as its flows see it."""

    session: StudioSession
    selection: tuple[str | None, str | None]  # (sample, criterion) last highlighted in Results

    @property
    def editor(self) -> Any: ...  # the EditorPane once mounted, else None

    @property
    def screen(self) -> Any: ...

    @property
    def focused(self) -> Any: ...

    @property
    def is_mounted(self) -> bool: ...

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    def push_screen(self, screen: Any, callback: Any = None, wait_for_dismiss: bool = False) -> Any: ...

    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Any: ...

    def post_message(self, message: Any) -> bool: ...

    def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

    def query(self, selector: Any = None) -> Any: ...

    def copy_to_clipboard(self, text: str) -> None: ...

    def action_save(self) -> None: ...

    def action_show(self, where: str) -> None: ...

    def apply_saved_rubric(self) -> None: ...  # parse the saved rubric and re-grade

    def refresh_editor(self) -> None: ...

    def rebuild_grader(self) -> None: ...

    def consistency_run(self, k: int) -> bool: ...

    def select_sample(self, sample_id: str, criterion_id: str | None = None) -> None: ...
