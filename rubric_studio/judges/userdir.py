"""The secret that keys sample fence nonces, kept in the per-user config folder
(:func:`rubric_studio.core.userdir.config_dir`). The secret makes the fence around a sample unpredictable to
whoever wrote the sample, yet stable, so identical requests stay identical and cacheable.

Because the fence is part of every request, the secret is part of every cache key: two
machines share judge replies only when they share the secret. :func:`fence_secret` picks,
in order: ``$RUBRIC_STUDIO_SECRET`` (the value, e.g. a CI secret; at least 32 characters),
``$RUBRIC_STUDIO_SECRET_FILE`` (a file holding it, e.g. a team's secret outside the
repository; a regular file, read bounded, with a warning when every user may read it), else
the per-user secret (32 random bytes, hex, file mode 0600, made on first use). A shared
secret that cannot be used (too short, unreadable) is named in a one-line warning and the
next source is used: grading never stops over it. Keep a shared secret like a credential:
anyone who knows it can forge fences. For that reason no secret file is picked up from the
rubric's folder or repository: a folder someone else wrote could ship one along with the
samples it fences.
"""

from __future__ import annotations

import os
import secrets
import stat
import sys
from pathlib import Path

from rubric_studio.core.problems import RubricError
from rubric_studio.core.textstream import open_regular_file
from rubric_studio.core.userdir import config_dir

#: Shortest secret accepted: 32 characters (``secrets.token_hex(16)``; ``token_hex(32)`` is advised).
MIN_SECRET = 32
#: Largest secret file read: a secret is one line, so anything bigger is the wrong file.
SECRET_FILE_LIMIT = 4096

_SECRETS: dict[Path, bytes] = {}
_FILE_SECRETS: dict[tuple, bytes | str] = {}  # by file version: the secret, or why not
_WARNED: set[str] = set()


def _create(path: Path) -> None:
    """Write a new secret without ever replacing one another process made first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".secret-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (secrets.token_hex(32) + "\n").encode())
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # fails if it exists: the first writer wins
    except FileExistsError:
        pass
    except OSError:  # no hard links here (some filesystems): best effort
        if not path.exists():
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def user_secret() -> bytes:
    """The per-user secret, created (0600) on first use; per-process if the folder is unwritable."""
    path = config_dir() / "secret"
    cached = _SECRETS.get(path)
    if cached is not None:
        return cached
    try:
        if not path.exists():
            _create(path)
        with open_regular_file(path, "secret") as handle:  # never blocks on a FIFO, never reads /dev/zero
            value = handle.read(SECRET_FILE_LIMIT + 1).decode("ascii").strip().encode()
        if not MIN_SECRET <= len(value) <= SECRET_FILE_LIMIT:
            raise ValueError("not a secret (one line of at least 32 characters)")
    except RubricError as exc:
        _warn_once(f"cannot use {path} ({exc.problems[0].message}); sample fences will change between runs")
        value = secrets.token_hex(32).encode()
    except (OSError, ValueError) as exc:
        _warn_once(f"cannot use {path} ({exc}); sample fences will change between runs")
        value = secrets.token_hex(32).encode()
    _SECRETS[path] = value
    return value


def _warn_once(message: str) -> None:
    """One ``warning:`` line on stderr per distinct message and process (a run judges many samples)."""
    if message not in _WARNED:
        _WARNED.add(message)
        sys.stderr.write(f"warning: {message}\n")


def _read_secret_file(path: Path) -> bytes:
    """The secret held in ``path``: a regular file (never blocks on a FIFO), bounded, ≥ MIN_SECRET chars."""
    try:
        with open_regular_file(path, "secret") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            raw = handle.read(SECRET_FILE_LIMIT + 1)
    except RubricError as exc:
        raise ValueError(exc.problems[0].message) from None
    if len(raw) > SECRET_FILE_LIMIT:
        raise ValueError(f"longer than {SECRET_FILE_LIMIT} bytes; a secret is one line")
    try:
        value = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    if len(value) < MIN_SECRET:
        raise ValueError(f"shorter than {MIN_SECRET} characters")
    if mode & stat.S_IROTH:
        _warn_once(f"RUBRIC_STUDIO_SECRET_FILE {path} is readable by every user of this machine "
                   f"(chmod o-r {path})")  # fmt: skip
    return value.encode()


def _secret_from_file(path_text: str) -> tuple[bytes | None, str]:
    """:func:`_read_secret_file` as ``(secret, "")`` or ``(None, why not)``; read again only when
    the file changes, since a fence is made for every sample."""
    path = Path(path_text).expanduser()
    try:
        info = os.stat(path)
    except OSError as exc:
        return None, (exc.strerror or str(exc)).lower()
    key = (str(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)
    if key not in _FILE_SECRETS:
        try:
            _FILE_SECRETS[key] = _read_secret_file(path)
        except ValueError as exc:
            _FILE_SECRETS[key] = str(exc)
    found = _FILE_SECRETS[key]
    return (found, "") if isinstance(found, bytes) else (None, found)


def _shared_secret() -> tuple[bytes | None, str]:
    """The shared secret the environment configures and where it comes from, else ``(None, why
    none is used)`` (empty when none is configured). Each one skipped is named in a warning."""
    skipped: list[str] = []
    chosen: tuple[bytes, str] | None = None
    value = os.environ.get("RUBRIC_STUDIO_SECRET")
    if value is not None:
        value = value.strip()
        if len(value) >= MIN_SECRET:
            chosen = value.encode(), "RUBRIC_STUDIO_SECRET"
        else:
            why = "is set but empty" if not value else f"is shorter than {MIN_SECRET} characters"
            skipped.append(f"RUBRIC_STUDIO_SECRET {why}")
    file = os.environ.get("RUBRIC_STUDIO_SECRET_FILE", "").strip()
    if chosen is None and file:
        secret, problem = _secret_from_file(file)
        if secret is not None:
            chosen = secret, f"RUBRIC_STUDIO_SECRET_FILE {file}"
        else:
            skipped.append(f"RUBRIC_STUDIO_SECRET_FILE {file}: {problem}")
    for reason in skipped:
        _warn_once(f"{reason}; using {chosen[1] if chosen else 'the per-user secret'}")
    if chosen is not None:
        return chosen[0], f"{chosen[1]} (shared)"
    return None, "; ".join(f"ignored: {reason}" for reason in skipped)


def fence_secret() -> bytes:
    """The secret keying sample fences: the shared one when configured and usable, else the per-user one."""
    shared, _ = _shared_secret()
    return shared if shared is not None else user_secret()


def secret_source() -> str:
    """Where the fence secret comes from, never its value (``cache stats`` prints it)."""
    shared, label = _shared_secret()
    if shared is not None:
        return label
    return f"per-user {config_dir() / 'secret'}" + (f" ({label})" if label else "")
