"""Where a report goes, and what happens when it cannot go there.

Standard output on a full disk (``> /dev/full``), a pipe whose reader left, an ``-o`` file
that fills up: each becomes :class:`OutputFailed`, which ``main`` reports in one line with
exit code 2. Only the standard library is imported here: ``main`` catches the error
without loading anything heavy.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path


class OutputFailed(Exception):
    """The report could not be written where it goes (standard output on a full disk, a closed
    pipe, an ``-o`` file that filled up): said in one line, exit 2, never a traceback."""

    def __init__(self, where: str, error: OSError) -> None:
        super().__init__(f"cannot write {where}: {error.strerror or error}")
        self.error = error

    @property
    def quiet(self) -> bool:
        """A reader that went away (``| head``) is no news to the user."""
        import errno

        return self.error.errno == errno.EPIPE


class GuardedOutput:
    """A text stream whose write errors become :class:`OutputFailed` naming where it goes."""

    def __init__(self, stream, where: str) -> None:
        self._stream = stream
        self.where = where
        #: Set by the writer once the report is whole: only then does it replace an ``-o`` file.
        self.complete = False

    def write(self, text: str) -> None:
        try:
            self._stream.write(text)
        except OSError as exc:
            raise OutputFailed(self.where, exc) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise OutputFailed(self.where, exc) from exc


def stdout() -> GuardedOutput:
    """Standard output, guarded: returns a :class:`GuardedOutput` whose writes raise
    :class:`OutputFailed` (not ``OSError``) when the disk is full or the pipe is closed."""
    return GuardedOutput(sys.stdout, "the report to standard output")


@contextlib.contextmanager
def streamed_output(output: str | None, *, replace_atomically: bool = True) -> Iterator[GuardedOutput]:
    """Where a report written piece by piece goes: standard output, or the ``-o`` file.

    With ``replace_atomically`` the pieces go to a temporary file beside the target that
    replaces it only once the report is complete (a failed run leaves the old file), and
    a target that is not a regular file is refused, as :func:`write_output` does.
    Raises :class:`OutputFailed`.
    """
    if output in (None, "-"):
        yield stdout()
        return
    where = output
    if not replace_atomically:
        from rubric_studio.core.atomic import check_write_target

        try:
            check_write_target(output)  # the file is written in place: never through a planted link
            handle = open(output, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise OutputFailed(where, exc) from exc
        with handle:
            yield GuardedOutput(handle, where)
        return
    yield from _replacing(Path(output), where)


class _Incomplete(Exception):
    """The run wrote no whole report: the ``-o`` file keeps what it held."""


def _replacing(path: Path, where: str) -> Iterator[GuardedOutput]:
    """The generator body of :func:`streamed_output` for an atomically replaced file."""
    from rubric_studio.core.atomic import replacing_text

    writing = False
    try:
        with replacing_text(path) as handle:
            out = GuardedOutput(handle, where)
            writing = True
            yield out
            writing = False
            if not out.complete:
                raise _Incomplete
    except _Incomplete:
        pass
    except OSError as exc:
        if writing:  # raised by the run itself, not by the file
            raise
        raise OutputFailed(where, exc) from exc
