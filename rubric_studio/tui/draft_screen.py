"""The "Draft criteria…" screen: the model proposes criteria, the user ticks the ones to keep.

A Task field (pre-filled with the rubric's description) and a Draft button start a worker that
asks the assistant's model (:mod:`rubric_studio.engine.draft`) with the studio's samples and
labels and posts :class:`DraftScreen.Drafted` or :class:`DraftScreen.DraftFailed`. Each valid
proposal is a checkbox row (id, kind, weight, required, outcome or check, and why it was
proposed); dropped proposals are listed with their reasons. "Keep selected" appends the ticked
criteria to the open rubric document through :func:`~rubric_studio.engine.draft.append_drafted`
(one undo step, a comment above each saying where it came from, the file's own comments kept);
nothing is saved until the user saves. In a rubric the studio just created, the starter
criterion is replaced and the task becomes the description. The studio offers this screen
first when the rubric is new or has no criteria; escape closes it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Static

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.tui.editor import TextInput

if TYPE_CHECKING:
    from rubric_studio.core.document import RubricDocument
    from rubric_studio.engine.draft import Draft, Proposal
    from rubric_studio.tui.host import StudioHost

INTRO = ("Describe what the outputs are for; the model proposes criteria from that and up to 8 of your "
         "samples (labelled ones included). Tick the ones to keep; they are added to the rubric unsaved.")
FIRST_INTRO = "This rubric is new. " + INTRO + " Escape starts from the template instead."


def proposal_line(proposal: Proposal) -> str:
    """One row: id, kind, weight, required, and the outcome or check."""
    flags = f"{proposal.kind_text()}, weight {proposal.data['weight']:g}"
    if proposal.criterion.required:
        flags += ", required"
    return terminal_safe(f"{proposal.id}  [{flags}]  {proposal.criterion.summary()}")


class DraftScreen(ModalScreen[None]):
    """Propose criteria with the model and keep the ticked ones (see the module docstring)."""

    BINDINGS = [Binding("escape", "close", "Close")]
    AUTO_FOCUS = "#draft-task"
    DEFAULT_CSS = """
    DraftScreen { align: center middle; }
    #draft-box { width: 92%; max-width: 130; height: 90%; border: thick $primary; background: $surface; padding: 1 2; }
    #draft-title, #draft-intro, #draft-status { height: auto; margin: 0 0 1 0; }
    #draft-task-row, #draft-buttons { height: auto; }
    #draft-task { width: 1fr; }
    #draft-list { height: 1fr; border: round $panel; }
    .draft-why { height: auto; padding: 0 0 0 6; color: $text-muted; }
    .draft-dropped { height: auto; color: $text-warning; }
    """

    @dataclass
    class Drafted(Message):
        """The model answered: the valid proposals, the dropped ones, and what it cost."""

        draft: Draft
        usage: Any

    @dataclass
    class DraftFailed(Message):
        """No usable proposals: why, in one line."""

        reason: str

    def __init__(self, task: str = "", *, first: bool = False) -> None:
        super().__init__()
        self.initial_task = task
        self.first = first
        self.draft: Draft | None = None
        self.drafting = False

    def compose(self) -> ComposeResult:
        with Vertical(id="draft-box"):
            yield Static(Text("Draft criteria", style="bold"), id="draft-title")
            yield Static(FIRST_INTRO if self.first else INTRO, id="draft-intro", markup=False)
            with Horizontal(id="draft-task-row"):
                yield TextInput(self.initial_task, placeholder="e.g. Replies to billing support tickets", id="draft-task")
                yield Button("Draft", id="draft-run", variant="primary")
            yield Static("", id="draft-status", markup=False)
            yield VerticalScroll(id="draft-list")
            with Horizontal(id="draft-buttons"):
                yield Button("Keep selected", id="draft-keep", variant="success", disabled=True)
                yield Button("Close", id="draft-close")

    # -- drafting -------------------------------------------------------------------------
    @on(Button.Pressed, "#draft-run")
    @on(Input.Submitted, "#draft-task")
    def start(self) -> None:
        """Ask the model (in a worker); the answer comes back as a message."""
        task = self.query_one("#draft-task", Input).value.strip()
        if not task:
            self._status("Describe the task first: what are the outputs for?")
            return
        app: StudioHost = self.app  # type: ignore[assignment]
        self.drafting = True
        self.query_one("#draft-run", Button).disabled = True
        self._status(f"Asking the model with the task and {min(len(app.session.samples), 8)} samples…")
        self.run_draft(task, app.session.rubric, dict(app.session.grader_options), app.session.env, list(app.session.samples), dict(app.session.labels))

    @work(group="draft", exclusive=True, exit_on_error=False)
    async def run_draft(self, task: str, rubric: Any, options: Mapping[str, Any], env: Mapping[str, str] | None,
                        samples: Sequence[Any], labels: Mapping[str, Any]) -> None:
        from rubric_studio.engine.assistant import make_assistant
        from rubric_studio.engine.draft import draft_criteria
        from rubric_studio.judges.base import JudgeError

        try:
            assistant = await asyncio.to_thread(
                make_assistant, rubric, model=options.get("judge"), base_url=options.get("base_url"), env=env,
                cache_path=options.get("cache_path"), use_cache=bool(options.get("use_cache", True)),
                allow_code=bool(options.get("allow_code")))
        except JudgeError as exc:
            self.post_message(self.DraftFailed(exc.message))
            return
        except Exception as exc:  # the SDK rejects the configuration
            self.post_message(self.DraftFailed(f"the model is not usable: {exc}"))
            return
        try:
            draft = await draft_criteria(assistant, task, samples, labels)
        except (JudgeError, ValueError) as exc:
            self.post_message(self.DraftFailed(f"{assistant.label}: {getattr(exc, 'message', exc)}"))
        else:
            self.post_message(self.Drafted(draft, assistant.usage))
        finally:
            with contextlib.suppress(Exception):
                await assistant.aclose()

    async def on_draft_screen_drafted(self, message: Drafted) -> None:
        self.drafting = False
        self.draft = None  # set again once its rows are on screen
        self.query_one("#draft-run", Button).disabled = False
        listing = self.query_one("#draft-list", VerticalScroll)
        await listing.remove_children()
        rows: list[Any] = []
        for number, proposal in enumerate(message.draft.proposals, 1):
            rows.append(Checkbox(Content(proposal_line(proposal)), True, id=f"draft-pick-{number}", compact=True))
            if proposal.why:
                rows.append(Static(Text(f"why: {terminal_safe(proposal.why)}"), classes="draft-why"))
        for dropped in message.draft.dropped:
            what = f"#{dropped.number}" + (f" ({dropped.id})" if dropped.id else "")
            rows.append(Static(Text(terminal_safe(f"dropped {what}: {dropped.reason}")), classes="draft-dropped"))
        await listing.mount_all(rows)
        self.draft = message.draft
        self.query_one("#draft-keep", Button).disabled = False
        usage = message.usage
        cost = f", {usage.cost_text()}" if usage.requests else " (from the cache)"
        self._status(f"{len(message.draft.proposals)} proposed by {message.draft.model} from the task and "
                     f"{message.draft.samples_used} samples{cost}. Untick what you don't want, then Keep selected.")

    def on_draft_screen_draft_failed(self, message: DraftFailed) -> None:
        self.drafting = False
        self.query_one("#draft-run", Button).disabled = False
        self._status(f"Drafting failed: {message.reason}")

    # -- keeping ----------------------------------------------------------------------------
    def selected(self) -> list[Proposal]:
        """The ticked proposals, in their order."""
        if self.draft is None:
            return []
        return [p for number, p in enumerate(self.draft.proposals, 1)
                if self.query_one(f"#draft-pick-{number}", Checkbox).value]

    @on(Button.Pressed, "#draft-keep")
    async def keep(self) -> None:
        chosen = self.selected()
        if self.draft is None or not chosen:
            self._status("Tick at least one proposal to keep (or Close).")
            return
        try:
            ids = await keep_drafted(self.app, self.draft, chosen)  # type: ignore[arg-type]
        except Exception as exc:  # EditError: the YAML does not parse right now
            self._status(f"Could not add the criteria: {exc}")
            return
        self.app.notify(f"Added {len(ids)} drafted criteria ({', '.join(ids)}); ctrl+s saves and grades them.",
                        title="Draft criteria")
        self.dismiss(None)

    @on(Button.Pressed, "#draft-close")
    def action_close(self) -> None:
        self.dismiss(None)

    def _status(self, text: str) -> None:
        self.query_one("#draft-status", Static).update(Text(terminal_safe(text, multiline=True)))


def _starter_index(document: RubricDocument) -> int | None:
    """The index of the untouched starter criterion when it is the rubric's only one."""
    from rubric_studio.core.document import RubricDocument
    from rubric_studio.engine.starter import STARTER_RUBRIC

    if document.criteria_count != 1:
        return None
    starter = RubricDocument.from_text(STARTER_RUBRIC.format(name="starter"), "starter.yaml").criterion_data(0)
    return 0 if document.criterion_data(0) == starter else None


async def keep_drafted(app: StudioHost, draft: Draft, proposals: Sequence[Proposal]) -> list[str]:
    """Append ``proposals`` to the studio's document (one undo step) and show them; the ids written."""
    from rubric_studio.engine.draft import append_drafted

    document = app.session.document
    editor = app.editor
    if editor is not None:
        await editor.flush()  # typing still waiting for its pause goes in first
    with document.transaction():
        starter = _starter_index(document)
        ids = append_drafted(document, proposals, draft.samples_used)
        if starter is not None:
            document.delete_criterion(starter)
        if not str(document.rubric_data().get("description") or "").strip():
            document.set_rubric_field("description", draft.task)
    if editor is not None:
        editor.refresh_from_document()
        editor.post_message(editor.Changed(document))
    return ids


def open_draft(app: StudioHost, *, first: bool = False) -> None:
    """Show the screen (once), the Task pre-filled with the rubric's description."""
    if isinstance(app.screen, DraftScreen):
        return
    try:
        task = str(app.session.document.rubric_data().get("description") or "")
    except Exception:  # the YAML does not parse right now
        task = ""
    app.push_screen(DraftScreen(task, first=first))


def offer_on_new(app: StudioHost) -> None:
    """Open the screen first when the studio just created the rubric or its criteria list is empty
    (not when the file does not parse: that needs fixing, not drafting)."""
    document = app.session.document
    empty = document.structure_problem is None and not document.rubric_data().get("criteria")
    if app.session.created_rubric or empty:
        open_draft(app, first=True)


def commands(app: StudioHost) -> Iterable[SystemCommand]:
    yield SystemCommand("Draft criteria…", "Let the model propose criteria from a task description and your samples",
                        lambda: open_draft(app))
