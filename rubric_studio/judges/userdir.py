"""The per-user config folder and the secret that keys sample fence nonces.

Folder: ``$RUBRIC_STUDIO_HOME`` if set, else ``$XDG_CONFIG_HOME/rubric-studio``, else
``~/.config/rubric-studio``. The secret (32 random bytes, hex, file mode 0600) is made on
first use. It makes the fence around a sample unpredictable to whoever wrote the sample,
yet stable on this machine so identical requests stay identical and cacheable.
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
