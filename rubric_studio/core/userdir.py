"""The per-user config folder: where the user's own files live (judge defaults ``config.yaml``,
the trust store ``trust.json``, the fence ``secret``, ``prices.yaml``).

``$RUBRIC_STUDIO_HOME`` if set, else ``$XDG_CONFIG_HOME/rubric-studio``, else
``~/.config/rubric-studio``. Only the user sets it, never a rubric: what is in it is the
user's choice.
"""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    """Where per-user files (config.yaml, trust.json, secret, prices.yaml) live."""
    home = os.environ.get("RUBRIC_STUDIO_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "rubric-studio"
