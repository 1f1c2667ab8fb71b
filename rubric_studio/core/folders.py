"""What counts as inside a folder: the rule that decides which files a rubric (or a samples
folder) may take as its own without trust.

A file counts as inside a folder when, after ``~``, ``..`` and symlinks, it is under that folder,
not in a hidden folder below it, not in a credentials folder anywhere (``~/.ssh``, ``.aws`` …, and
the user's own config folder ``~/.config``), and has no hard links elsewhere. Pure logic: nothing is
opened (resolving a path and counting a file's links only look at the file system's names).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Names of folders and files that hold credentials: a file with one of them in its path is
#: never taken as part of a rubric's (or samples) folder, wherever that folder is. A folder named
#: ``.config`` is not one of them: a project may keep its own ``.config/``; the user's config
#: folder is (:func:`user_config_homes`).
CREDENTIAL_NAMES = frozenset({
    ".ssh", ".aws", ".gnupg", ".docker", ".kube", ".azure", ".netrc", ".git-credentials",
    ".pgpass", ".npmrc", ".pypirc", ".password-store",
})  # fmt: skip
#: Most folder entries looked at to account for a file's hard links (beyond: counted as outside).
MAX_LINK_SCAN = 10_000


def hard_links_elsewhere(target: Path, info: os.stat_result) -> bool:
    """True when the regular file ``target`` has a hard link not in its own folder (or may have).

    A hard link is a second name of the same content; from one name there is no way to tell
    where the others are, short of searching the disk. A link count above one is explained only
    when every name is found in the file's own folder (two samples saved as one file); else the
    content may be a file from anywhere (``ln ~/.ssh/id_rsa prompt.txt``) and counts as outside.
    """
    if not stat.S_ISREG(info.st_mode) or info.st_nlink <= 1:
        return False
    names = 0
    try:
        with os.scandir(target.parent) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_LINK_SCAN:
                    return True
                if entry.inode() == info.st_ino and entry.stat(follow_symlinks=False).st_dev == info.st_dev:
                    names += 1
    except OSError:
        return True
    return names < info.st_nlink


def user_config_homes() -> list[Path]:
    """The user's config folders (resolved), where command line tools keep their tokens
    (``gh/hosts.yml``, ``gcloud/``, ``hub`` …): ``~/.config``, and ``$XDG_CONFIG_HOME`` unless
    that is the home folder itself or above it (then it is not a folder of config files)."""
    homes = []
    try:
        home = Path.home().resolve()
    except (OSError, RuntimeError):
        home = None
    if home is not None:
        homes.append(home / ".config")
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
    if xdg:
        try:
            folder = Path(xdg).expanduser().resolve()
        except (OSError, RuntimeError, ValueError):
            folder = None
        if folder is not None and folder.is_absolute() and not (home is not None and home.is_relative_to(folder)):
            homes.append(folder)
    return homes


def credentials_folder(target: Path) -> str | None:
    """The credentials folder ``target`` is in (a name of :data:`CREDENTIAL_NAMES`, or the user's
    config folder), or None."""
    secret = next((part for part in target.parts if part in CREDENTIAL_NAMES), None)
    if secret is not None:
        return secret
    return next((str(home) for home in user_config_homes() if target.is_relative_to(home)), None)


def outside_reason(target: Path, folder: Path, info: os.stat_result | None = None, *,
                   hard_links: bool = True) -> str | None:
    """Why the file ``target`` (symlinks resolved) does not count as inside ``folder`` (resolved), or None.

    Outside means: not under the folder; under a hidden (dot) folder or file below it
    (``.aws/credentials`` of a rubric saved in HOME, ``.git/config``); anywhere under a
    credentials folder (:func:`credentials_folder`); or a regular file with hard links
    elsewhere (:func:`hard_links_elsewhere`). ``info`` is the file's stat (taken here when None;
    a file that does not exist has no links; ``hard_links=False`` leaves them out).
    """
    if not target.is_relative_to(folder):
        return "is outside the folder"
    hidden = next((part for part in target.relative_to(folder).parts if part.startswith(".")), None)
    if hidden is not None:
        return f"is in the hidden {hidden} below the folder"
    secret = credentials_folder(target)
    if secret is not None:
        return f"is in {secret}, where credentials are kept"
    if not hard_links:
        return None
    if info is None:
        try:
            info = os.stat(target)
        except OSError:
            return None
    if hard_links_elsewhere(target, info):
        return f"has {info.st_nlink} names (hard links), not all in its folder: its content may come from anywhere"
    return None


def resolve_prompt_path(text: str, base_dir: Path | None) -> tuple[Path, bool]:
    """Where ``judge.prompt_path`` points (``~``, ``..`` and symlinks resolved), and whether
    that is inside the rubric's folder (``base_dir``; the working directory when None), as
    :func:`prompt_path_reason` decides."""
    target, reason = prompt_path_reason(text, base_dir)
    return target, reason is None


def prompt_path_reason(text: str, base_dir: Path | None) -> tuple[Path, str | None]:
    """Where ``judge.prompt_path`` points and why it counts as outside the rubric's folder
    (:func:`outside_reason`), None when inside. Nothing is opened. A path that cannot be
    resolved (a symlink loop, an unknown ``~user``) counts as outside."""
    folder = Path(base_dir or Path.cwd())
    try:
        folder = folder.resolve()
        target = (folder / Path(text).expanduser()).resolve()
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(folder / text)), "is outside the folder"
    reason = outside_reason(target, folder)
    return target, None if reason is None else reason.replace("the folder", "the rubric's folder")
