"""Reading the user's files with one set of clear messages (never a traceback)."""

from __future__ import annotations

from pathlib import Path

from rubric_studio.core.problems import Problem, RubricError


def read_user_file(path: str | Path, what: str = "rubric", *, keep_newlines: bool = False) -> str:
    """The text of ``path``; RubricError naming the file and the reason when it cannot be read.

    ``keep_newlines`` keeps ``\\r\\n`` as written (for round-trip editing).
    """
    source = Path(path)

    def fail(message: str) -> RubricError:
        return RubricError([Problem(str(source), None, None, message)])

    try:
        with open(source, encoding="utf-8", newline="" if keep_newlines else None) as handle:
            return handle.read()
    except FileNotFoundError:
        raise fail(f"{what} not found: no such file") from None
    except IsADirectoryError:
        raise fail(f"expected a {what} file, got a folder") from None
    except UnicodeDecodeError as exc:
        raise fail(f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror}") from None
