"""The Results tab's body: the results matrix and its search box.

``/`` opens a one-line search box above the table; every key typed narrows the rows to the
samples whose id, input or output contains the text (any case, see
:meth:`~rubric_studio.session.results_model.ResultsModel.visible`). Enter goes back to
the table keeping the search (the box stays, showing it); esc, in the box or in the table,
closes the box and clears the search. The pane only passes the text down
(:attr:`ResultsMatrix.search <rubric_studio.tui.results._matrix.ResultsMatrix.search>`); the table
filters, and its ``ViewChanged`` messages bubble up through the pane unchanged. When the table
clears its search itself (:meth:`ResultsMatrix.reveal_sample`), the box follows.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input

from rubric_studio.session.results_model import ResultsModel
from rubric_studio.tui.editor import TextInput
from rubric_studio.tui.results._matrix import ResultsMatrix

SEARCH_HINT = "search sample ids, inputs and outputs — enter: back to the table · esc: clear"


class ResultsPane(Vertical):
    """The search box (hidden until ``/``) over the :class:`ResultsMatrix`."""

    BINDINGS = [
        Binding("slash", "open_search", "Search", key_display="/"),
        Binding("escape", "close_search", "Clear search", show=False),
    ]

    def __init__(self, model: ResultsModel | None = None, *, matrix_id: str = "matrix", name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.model = model or ResultsModel()
        self._matrix_id = matrix_id
        self._sent = ""  # the search this pane last gave the table

    def compose(self) -> ComposeResult:
        yield TextInput(placeholder=SEARCH_HINT, id="results-search", select_on_focus=False)
        yield ResultsMatrix(self.model, id=self._matrix_id)

    def on_mount(self) -> None:
        self.watch(self.matrix, "search", self._table_search_changed, init=False)

    @property
    def matrix(self) -> ResultsMatrix:
        return self.query_one(ResultsMatrix)

    @property
    def search_box(self) -> Input:
        return self.query_one("#results-search", Input)

    @property
    def searching(self) -> bool:
        """The search box is open."""
        return self.has_class("-searching")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_search":  # otherwise esc goes on to the app
            return self.searching or bool(self.matrix.search)
        return True

    def action_open_search(self) -> None:
        self.add_class("-searching")
        self.search_box.focus()

    def action_close_search(self) -> None:
        self.remove_class("-searching")
        self._give("")
        self.search_box.value = ""
        self.matrix.focus()

    def _give(self, text: str) -> None:
        self._sent = text
        self.matrix.search = text

    @on(Input.Changed, "#results-search")
    def _search_typed(self, event: Input.Changed) -> None:
        event.stop()
        self._give(event.value)

    @on(Input.Submitted, "#results-search")
    def _search_done(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.remove_class("-searching")
        self.matrix.focus()

    def _table_search_changed(self, text: str) -> None:
        """Someone else set the table's search (it clears it to show a sample asked for): the box follows."""
        if text != self._sent:
            self._sent = text
            self.search_box.value = text
            self.set_class(bool(text), "-searching")
