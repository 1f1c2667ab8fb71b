"""The progress line ``grade`` shows on stderr while it works, whatever ``--format`` is.

It appears only when stderr is a terminal, so CI logs (stderr a pipe or a file) never
get cursor movements or bar frames, and it is transient: it erases itself before the
report is written. It never touches stdout, where the report goes (rich's stdout
redirection is off). The one case without a bar is ``--format jsonl`` or ``json``
streaming onto a terminal: there the lines themselves show the progress, and a bar
redrawn between them would tear them.

What it counts: while checks run, the samples; while the judge works, the judge calls
(cache hits are not calls) and the concurrency in use ("concurrency 2/6": it adapts to a
slow or rate-limiting server); when nothing needs judging, the samples graded.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any


def wanted(args, *, streaming: bool = False) -> bool:
    """Whether to show the bar: stderr is a terminal (and a stream is not printing to one)."""
    if not _is_terminal(sys.stderr):
        return False
    onto_terminal = getattr(args, "output", None) in (None, "-") and _is_terminal(sys.stdout)
    return not (streaming and onto_terminal)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


class Bar:
    """Turns the grader's events into updates of one progress task.

    ``samples`` is the number of samples of a whole run, or None when streaming (then
    :meth:`chunk_done` keeps the running count between the chunks).
    """

    def __init__(self, progress: Any, samples: int | None) -> None:
        self.progress = progress
        self.samples = samples
        self.graded = 0
        self.task = progress.add_task("", total=None, count="")
        self._show("checks" if samples is not None else "grading")

    def _show(self, phase: str, done: int | None = None, total: int | None = None, unit: str = "",
              concurrency: str | None = None) -> None:
        where = f"{self.samples} samples" if self.samples is not None else f"{self.graded} samples done"
        if concurrency:
            where += f" · concurrency {concurrency}"
        count = f"{done}/{total} {unit}" if total is not None else ""
        self.progress.update(self.task, description=f"{phase} · {where}", completed=done or 0, total=total,
                             count=count)

    def chunk_done(self, count: int) -> None:
        """Streaming: one chunk of ``count`` samples is written."""
        self.graded += count
        self._show("grading")

    def __call__(self, event: object) -> None:
        from rubric_studio.engine.events import Progress, RunStarted

        if isinstance(event, RunStarted):
            if event.to_send:
                self._show("judging", 0, event.to_send, "calls")
            elif self.samples is not None:
                self._show("graded", self.samples, self.samples, "samples")
        elif isinstance(event, Progress):
            self._show("judging", event.done, event.total, "calls", event.concurrency)


@contextlib.contextmanager
def progress_bar(args, samples: int | None, *, streaming: bool = False) -> Iterator[Bar | None]:
    """A transient progress line on stderr while grading (None when it is not wanted)."""
    if not wanted(args, streaming=streaming):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"), TimeElapsedColumn(), console=Console(stderr=True), transient=True, redirect_stdout=False,
    )
    bar = Bar(progress, samples)
    with progress:
        yield bar
