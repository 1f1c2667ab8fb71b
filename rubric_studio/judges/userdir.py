"""The per-user config folder and the secret that keys sample fence nonces.

Folder: ``$RUBRIC_STUDIO_HOME`` if set, else ``$XDG_CONFIG_HOME/rubric-studio``, else
``~/.config/rubric-studio``. The secret makes the fence around a sample unpredictable to
whoever wrote the sample, yet stable, so identical requests stay identical and cacheable.

Because the fence is part of every request, the secret is part of every cache key: two
machines share judge replies only when they share the secret. :func:`fence_secret` picks,
in order: ``$RUBRIC_STUDIO_SECRET`` (the value, e.g. a CI secret; at least 32 characters),
``$RUBRIC_STUDIO_SECRET_FILE`` (a file holding it, e.g. a team's secret outside the
repository), else the per-user secret (32 random bytes, hex, file mode 0600, made on first
use). Keep a shared secret like a credential: anyone who knows it can forge fences.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

_SECRETS: dict[Path, bytes] = {}


def config_dir() -> Path:
    """Where per-user files (secret, prices.yaml) live."""
    home = os.environ.get("RUBRIC_STUDIO_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "rubric-studio"


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
        value = path.read_text(encoding="ascii").strip().encode()
        if len(value) < 32:
            raise ValueError(f"{path} is too short to be a secret")
    except (OSError, ValueError) as exc:
        logging.getLogger(__name__).warning("cannot use %s (%s); sample fences will change between runs", path, exc)
        value = secrets.token_hex(32).encode()
    _SECRETS[path] = value
    return value


MIN_SECRET = 32
SECRET_FILE_LIMIT = 4096
_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        logging.getLogger(__name__).warning("%s", message)
        import sys

        sys.stderr.write(f"rubric-studio: warning: {message}\n")


def _shared_from_file(path_text: str) -> bytes | None:
    path = Path(path_text).expanduser()
    try:
        if not path.is_file():  # never a FIFO or a device
            raise OSError("not a regular file")
        with path.open("rb") as handle:
            raw = handle.read(SECRET_FILE_LIMIT + 1)
        if len(raw) > SECRET_FILE_LIMIT:
            raise OSError(f"longer than {SECRET_FILE_LIMIT} bytes")
        value = raw.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        _warn_once(f"RUBRIC_STUDIO_SECRET_FILE {path}: {exc}; using the per-user secret")
        return None
    if len(value) < MIN_SECRET:
        _warn_once(f"RUBRIC_STUDIO_SECRET_FILE {path}: shorter than {MIN_SECRET} characters; using the per-user secret")
        return None
    return value.encode()


def secret_source() -> str:
    """Where the fence secret comes from (never the value): for ``cache stats`` and docs."""
    value = os.environ.get("RUBRIC_STUDIO_SECRET", "").strip()
    if len(value) >= MIN_SECRET:
        return "RUBRIC_STUDIO_SECRET (shared)"
    file = os.environ.get("RUBRIC_STUDIO_SECRET_FILE")
    if file and _shared_from_file(file) is not None:
        return f"RUBRIC_STUDIO_SECRET_FILE {file} (shared)"
    return f"per-user {config_dir() / 'secret'}"


def fence_secret() -> bytes:
    """The secret keying sample fences: a shared one when configured, else the per-user one."""
    value = os.environ.get("RUBRIC_STUDIO_SECRET", "").strip()
    if value:
        if len(value) >= MIN_SECRET:
            return value.encode()
        _warn_once(f"RUBRIC_STUDIO_SECRET is shorter than {MIN_SECRET} characters; using the per-user secret")
    file = os.environ.get("RUBRIC_STUDIO_SECRET_FILE")
    if file:
        shared = _shared_from_file(file)
        if shared is not None:
            return shared
    return user_secret()

