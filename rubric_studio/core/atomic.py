"""Safe writes of the user's files: atomic, never over an unseen change, never into a pipe or device.

Every file the studio or the CLI writes for the user (rubric, labels, exports, imports,
the starter rubric) goes through :func:`write_text_safely` (a report written piece by piece,
through :func:`replacing_text`):

* **Atomic.** The text goes to a temporary file beside the target
  (``.{name}.rubric-studio-{pid}-{random}.tmp``), is flushed to disk, then renamed over
  the target: a crash or a full disk never leaves a half-written file. Temporary files a
  killed process left behind (its pid is gone, or they are older than
  :data:`STALE_SECONDS`) are removed the next time that file is read or written
  (:func:`remove_stale_temps`).
* **Compare-and-swap.** With ``expect`` (the :class:`DiskState` the caller last read),
  the file is re-read just before the rename; if it holds anything else, nothing is
  written and :class:`ChangedOnDisk` carries what the disk holds now, so the caller can
  ask the user instead of overwriting someone else's edit.
* **Regular files only.** A target that exists and is a folder, a named pipe, a device,
  a socket or a symbolic link to one is refused with :class:`UnsafeTarget`. The checks use
  ``stat`` and reads open with ``O_NONBLOCK``, so a FIFO never blocks. A symbolic link to a
  regular file is written through (the link stays a link) only while it leads to a file in its
  own folder (:func:`check_write_target`).
* **Writes stay in the folder.** A write never follows the file's own symbolic link to a file
  outside its folder or into a hidden folder below it, never lands in a credentials folder
  (``~/.ssh`` …) the path does not name, and never replaces a file that has hard links
  elsewhere (:func:`write_refusal`): a shared repository that ships ``r.card.yaml -> ~/.bashrc`` gets one clear refusal
  (:class:`UnsafeTarget`), and nothing is written. See docs/concepts/trust.md.
* **Permissions.** A new file is created with mode ``0o666`` and the kernel applies the
  user's umask (no process-wide ``os.umask`` juggling); a replaced file keeps its mode.
* **Locked.** Every write over a state the caller read (``expect``), and every
  read-modify-write (:func:`rewrite_safely`), holds the file's lock (:func:`locked`) from its read to its rename, so two processes (two annotators'
  studios, a studio and ``labels import``) that change one file at once are serialised: the
  second reads what the first wrote and applies its own change to it. The compare-and-swap
  remains for writers that take no lock (an editor saving by hand).

Why an OS lock file: ``flock`` on Unix is released by the kernel when the holder dies
(``kill -9`` included: no stale lock to break), and on NFS Linux maps it to the server's
byte-range locks (NFSv4, or NLM on v3); elsewhere :mod:`filelock` (``msvcrt.locking`` on
Windows). The lock is a separate file because the target itself is replaced by a rename on
every write, and a lock on a replaced inode protects nothing. It lives in the folder's working
folder, ``.rubric-studio/`` (:data:`STATE_FOLDER`), which holds a ``.gitignore`` of ``*`` so
nothing in it shows in ``git status``. The lock file is opened without following links, never
truncated and never made writable beyond the user's umask.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rubric_studio.core.textstream import file_kind

STALE_SECONDS = 300
"""A temporary file older than this is stale even if its writer's pid is alive (pids get reused)."""

TEMP_MARK = ".rubric-studio-"
LOCK_WAIT_SECONDS = 30.0
"""How long a write waits for another process's write of the same file before it gives up
(a write holds the lock for milliseconds: this is reached only by a process stuck holding it)."""
LOCK_POLL_SECONDS = 0.01
"""How often a waiting write tries the lock again (filelock polls a non-blocking ``flock``; a long
interval lets the other writers take it again and again first: p99 8.6 s at 0.05 s, see BENCHMARKS.md)."""
_NAME_BYTES = 120  # the target's name is shortened in temp names so they stay under NAME_MAX


class UnsafeTarget(OSError):
    """The path exists but is not a regular file (or a link to one), or is a link a write must not
    follow (:func:`write_refusal`): nothing is read or written. ``path`` is the file refused."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        super().__init__(message)
        self.path = Path(path)


class ChangedOnDisk(OSError):
    """The file no longer holds what the caller last read: nothing was written.

    ``state`` and ``data`` are what the disk holds now (``data`` is None when the file is
    gone); ``text`` is ``data`` decoded as UTF-8 (None when it is not UTF-8 or gone).
    """

    def __init__(self, path: str | os.PathLike[str], state: DiskState, data: bytes | None) -> None:
        what = "was removed" if not state.exists else "changed on disk"
        super().__init__(f"{what} since it was last read; nothing was written")
        self.path = Path(path)
        self.state = state
        self.data = data

    @property
    def text(self) -> str | None:
        if self.data is None:
            return None
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None


@dataclass(frozen=True)
class DiskState:
    """What a file held when it was read or written: absent, or its mtime, size and SHA-256."""

    exists: bool
    size: int = 0
    sha256: str = ""
    mtime_ns: int = 0

    @classmethod
    def of_bytes(cls, data: bytes, mtime_ns: int = 0) -> DiskState:
        return cls(True, len(data), hashlib.sha256(data).hexdigest(), mtime_ns)

    @classmethod
    def of_text(cls, text: str, encoding: str = "utf-8", mtime_ns: int = 0) -> DiskState:
        """The state of a file holding exactly ``text`` (for text read without newline translation)."""
        return cls.of_bytes(text.encode(encoding), mtime_ns)

    def same_content(self, other: DiskState) -> bool:
        """Both absent, or both present with the same bytes (the mtime alone changes nothing)."""
        if self.exists != other.exists:
            return False
        return not self.exists or (self.size == other.size and self.sha256 == other.sha256)


ABSENT = DiskState(False)
"""The state to expect when a file must not exist yet (creating it never replaces one)."""


# -- checks ---------------------------------------------------------------------------
def _refuse(path: Path, mode: int, link: Path | None = None) -> UnsafeTarget:
    kind = file_kind(mode) or "not a regular file"
    if link is not None:
        return UnsafeTarget(path, f"is a symbolic link to {kind} ({link}), not a regular file")
    return UnsafeTarget(path, f"is {kind}, not a regular file")


def regular_target(path: str | os.PathLike[str]) -> tuple[Path, os.stat_result | None]:
    """The file to read or replace for ``path`` and its stat (None when absent).

    A symbolic link to a regular file resolves to that file. Raises :class:`UnsafeTarget`
    for anything else that exists (folder, FIFO, device, socket, a link to one, a dangling link).
    Only ``stat`` calls: nothing is opened, so nothing blocks.
    """
    target = Path(path)
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target, None
    if stat.S_ISREG(info.st_mode):
        return target, info
    if not stat.S_ISLNK(info.st_mode):
        raise _refuse(target, info.st_mode)
    real = Path(os.path.realpath(target))
    try:
        info = os.stat(real)
    except OSError:
        raise UnsafeTarget(target, f"is a symbolic link to a missing file ({real})") from None
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(target, info.st_mode, real)
    return real, info


# -- where a write may go ---------------------------------------------------------------
def write_refusal(path: str | os.PathLike[str]) -> str | None:
    """Why writing ``path`` would change a file that is not the one its folder shows, or None.

    The folder a file is written in is the one its path names — the rubric's folder, or the
    folder of an ``-o`` path — and the links on the way to it are the user's. What that folder
    holds may have been shipped by someone else, so when the file itself is a symbolic link it
    may lead only to a place inside that folder: not outside it, not into a hidden folder below it
    that the path does not name. Wherever the links are, a write never lands in a credentials
    folder (:func:`rubric_studio.core.folders.credentials_folder`) that the path does not name, and
    never replaces a regular file with hard links in other folders (its content is shared with a
    file from anywhere). Only ``lstat``/``stat`` calls: nothing is opened.
    """
    from rubric_studio.core.folders import credentials_folder, hard_links_elsewhere, outside_reason

    lexical = Path(os.path.abspath(path))
    real = Path(os.path.realpath(lexical))
    info = _stat_or_none(real)
    if stat.S_ISLNK(_lstat_mode(lexical)):
        bound = Path(os.path.realpath(lexical.parent))
        reason = outside_reason(real, bound, info, hard_links=False)
        if reason is not None and not _hidden_but_named(lexical, real, bound, reason):
            return f"is a symbolic link to {real}, which {reason.replace('the folder', f'the folder {bound}')}"
    secret = credentials_folder(real)
    if secret is not None and credentials_folder(lexical) is None:
        return f"leads through a symbolic link to {real}, in {secret}, where credentials are kept"
    if info is not None and hard_links_elsewhere(real, info):
        return (f"has {info.st_nlink} names (hard links), not all in its folder: writing it would "
                f"change a file elsewhere")
    return None


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _lstat_mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def _hidden_but_named(lexical: Path, real: Path, bound: Path, reason: str) -> bool:
    """True when the hidden folder a link leads into is one the path names itself (``.cache/x``
    a link to ``.cache/y``): the hidden-folder rule only refuses a hidden folder the path does not show."""
    if not reason.startswith("is in the hidden"):
        return False
    named = {part for part in lexical.parent.parts if part.startswith(".")}
    shown = {part for part in real.relative_to(bound).parts if part.startswith(".")}
    return shown <= named


def check_write_target(path: str | os.PathLike[str]) -> None:
    """Raise :class:`UnsafeTarget` when :func:`write_refusal` refuses ``path``; nothing is written."""
    reason = write_refusal(path)
    if reason is not None:
        raise UnsafeTarget(path, f"{reason}; nothing written")


# -- reading ----------------------------------------------------------------------------
def read_bytes(path: str | os.PathLike[str], limit: int | None = None) -> tuple[bytes | None, DiskState]:
    """The bytes of ``path`` and their :class:`DiskState`; ``(None, ABSENT)`` when it does not exist.

    Raises :class:`UnsafeTarget` when it is not a regular file, without blocking on a FIFO.
    With ``limit``, at most ``limit + 1`` bytes are read (the caller refuses a longer file).
    """
    target, info = regular_target(path)
    if info is None:
        return None, ABSENT
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except FileNotFoundError:
        return None, ABSENT
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno())
        if not stat.S_ISREG(opened.st_mode):  # swapped for something else after the stat
            raise _refuse(Path(path), opened.st_mode)
        data = handle.read() if limit is None else handle.read(limit + 1)
    return data, DiskState.of_bytes(data, opened.st_mtime_ns)


def disk_state(path: str | os.PathLike[str]) -> DiskState:
    """What ``path`` holds now (:data:`ABSENT` when missing)."""
    return read_bytes(path)[1]


# -- temporary files --------------------------------------------------------------------
def _short_name(name: str) -> str:
    raw = name.encode("utf-8", "surrogateescape")[:_NAME_BYTES]
    return raw.decode("utf-8", "ignore")


def _temp_pattern(target: Path) -> re.Pattern[str]:
    prefix = re.escape(f".{_short_name(target.name)}{TEMP_MARK}")
    return re.compile(prefix + r"(\d+)-[0-9a-f]{8,}\.tmp")


def _legacy_pattern(target: Path) -> re.Pattern[str]:
    """Temporary names of earlier versions (``mkstemp``: ``.{name}.XXXXXXXX.tmp``)."""
    return re.compile(re.escape(f".{target.name}.") + r"[a-z0-9_]{8}\.tmp")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # someone else's process (or cannot tell): rely on the age
    return True


def remove_stale_temps(path: str | os.PathLike[str], *, now: float | None = None) -> list[Path]:
    """Remove temporary files a killed save of ``path`` left beside it; returns what was removed.

    A temp file is stale when its writer's pid is no longer alive or it is older than
    :data:`STALE_SECONDS`. Only regular files with this module's naming are touched.
    """
    target = Path(path)
    folder = target.parent
    ours, legacy = _temp_pattern(target), _legacy_pattern(target)
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = ours.fullmatch(entry.name)
        if match is None and not legacy.fullmatch(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        old = now - info.st_mtime > STALE_SECONDS
        dead = match is not None and not _pid_alive(int(match.group(1)))
        if old or dead:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _create_temp(target: Path, mode: int | None) -> tuple[int, Path]:
    """An exclusive new temp file beside ``target``: ``0o666`` minus the umask when ``target`` is
    new, owner-only until the content is in when it replaces a file (its mode is set after)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        name = f".{_short_name(target.name)}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}.tmp"
        tmp = target.with_name(name)
        try:
            return os.open(tmp, flags, 0o666 if mode is None else 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {target}")


# -- locking ----------------------------------------------------------------------------
class LockTimeout(OSError):
    """Another process held the file's lock for longer than :data:`LOCK_WAIT_SECONDS`: nothing was written."""


STATE_FOLDER = ".rubric-studio"
"""The working folder rubric-studio keeps beside the files it writes (the write lock): hidden, with a ``.gitignore`` of ``*`` so none of it shows in ``git status``."""
LOCK_NAME = "lock"
_STATE_GITIGNORE = "# rubric-studio's working files (the write lock): not for version control\n*\n"


def state_folder(path: str | os.PathLike[str], *, create: bool = True) -> Path:
    """The working folder (:data:`STATE_FOLDER`) of the folder that really holds ``path`` (a
    symbolic link's target folder, so every path to one file shares it), made on first use.

    :class:`UnsafeTarget` when something other than a real folder has that name (a planted link
    to elsewhere is never written through).
    """
    folder = Path(os.path.realpath(path)).parent / STATE_FOLDER
    if create:
        _ensure_state_folder(folder)
    return folder


def _ensure_state_folder(folder: Path) -> None:
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o777)  # the umask decides who else may write
        info = os.lstat(folder)
        if stat.S_ISDIR(info.st_mode):
            _write_gitignore(folder / ".gitignore")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeTarget(folder, f"{folder} is not a folder (a symbolic link or a file has its name); "
                                   "rubric-studio keeps its lock there: nothing written")


def _write_gitignore(path: Path) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError:
        return  # there already (another process made it), or a read-only folder
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(_STATE_GITIGNORE)


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file of ``path``: :data:`LOCK_NAME` in the working folder (:func:`state_folder`)
    of the folder that really holds it. One lock per folder, not per file: writes hold it for
    milliseconds, so files of one folder waiting on each other costs nothing."""
    return state_folder(path, create=False) / LOCK_NAME


class _FolderLock:
    """One folder's write lock in this process: re-entrant in a thread (a locked read-modify-write
    calls a locked write), exclusive between threads (an ``RLock``) and processes (``flock`` on a
    descriptor opened only while held)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._in_process = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def acquire(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        if not self._in_process.acquire(timeout=timeout):
            raise LockTimeout(str(self.path))
        try:
            if self._depth == 0:
                self._fd = _hold_os_lock(self.path, deadline)
            self._depth += 1
        except BaseException:
            self._in_process.release()
            raise

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor releases the flock
        self._in_process.release()


def _open_lock_file(path: Path) -> int:
    """The lock file opened for locking only: created with the user's umask, never through a link,
    never truncated; :class:`UnsafeTarget` when it is not a regular file."""
    _ensure_state_folder(path.parent)
    return open_working_file(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), "lock")


def open_working_file(path: Path, flags: int, what: str) -> int:
    """A descriptor of one of rubric-studio's working files (the lock, the labels journal and its
    copies): opened never through a link, created with the user's umask; :class:`UnsafeTarget`,
    naming ``what`` it is, when it is a link or not a regular file."""
    try:
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        if stat.S_ISLNK(_lstat_mode(path)):
            raise UnsafeTarget(path, f"{path} is a symbolic link; rubric-studio never opens its {what} "
                                     "through one: nothing written") from None
        raise exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeTarget(path, f"{path} is not a regular file: nothing written")
    return fd


def _hold_os_lock(path: Path, deadline: float) -> int:
    """A descriptor of ``path`` holding its exclusive ``flock``, polled until ``deadline``."""
    import fcntl

    fd = _open_lock_file(path)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise LockTimeout(str(path)) from None
            time.sleep(LOCK_POLL_SECONDS)
        except BaseException:
            os.close(fd)
            raise


_held: dict[str, Any] = {}
_held_guard = threading.Lock()


def _file_lock(path: Path) -> Any:
    """One lock object per lock file in this process (:class:`_FolderLock`; :mod:`filelock`
    where the OS has no ``fcntl``)."""
    key = str(path)
    with _held_guard:
        lock = _held.get(key)
        if lock is None:
            lock = _held[key] = _new_lock(path)
        return lock


def _new_lock(path: Path) -> Any:
    try:
        import fcntl  # noqa: F401
    except ImportError:  # Windows
        from filelock import FileLock

        _ensure_state_folder(path.parent)
        return FileLock(str(path), timeout=LOCK_WAIT_SECONDS, poll_interval=LOCK_POLL_SECONDS)
    return _FolderLock(path)


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], *, user_file: bool = False) -> Iterator[None]:
    """Hold ``path``'s lock (see the module's docstring) for the block.

    :class:`LockTimeout` when another process holds it past :data:`LOCK_WAIT_SECONDS`;
    :class:`UnsafeTarget` when ``path`` is a link :func:`check_write_target` refuses; other
    ``OSError`` when the lock file cannot be created (a read-only folder: the write would fail too).
    """
    if not user_file:  # every lock is taken to write: refuse a planted link before anything is made
        check_write_target(path)
    where = lock_path(path)
    lock = _file_lock(where)
    try:
        if isinstance(lock, _FolderLock):
            lock.acquire(LOCK_WAIT_SECONDS)
        else:
            lock.acquire()
    except (LockTimeout, TimeoutError):  # filelock's Timeout is a TimeoutError
        raise LockTimeout(f"{path}: another rubric-studio held its lock for over "
                          f"{LOCK_WAIT_SECONDS:.0f} s ({where}); nothing written") from None
    try:
        yield
    finally:
        lock.release()


# -- writing ----------------------------------------------------------------------------
def _check_unchanged(target: Path, expect: DiskState) -> None:
    data, now = read_bytes(target)
    if not now.same_content(expect):
        raise ChangedOnDisk(target, now, data)


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_text_safely(
    path: str | os.PathLike[str],
    text: str,
    *,
    expect: DiskState | None = None,
    encoding: str = "utf-8",
    lock: bool = False,
    user_file: bool = False,
) -> DiskState:
    """Replace ``path`` with ``text`` atomically; returns the :class:`DiskState` written.

    ``expect`` is what the caller last read (:data:`ABSENT`: the file must not exist). When
    the file holds anything else, :class:`ChangedOnDisk` is raised and nothing is written.
    ``expect=None`` replaces whatever is there: only for a write the user explicitly asked
    for (an ``-o`` path, "Replace?" answered yes). :class:`UnsafeTarget` for a target that
    is not a regular file.

    A write with ``expect`` (a file the user and others edit: rubric, labels, history) holds
    the file's lock (:func:`locked`); so does one with ``lock=True`` (a file several processes
    replace: a batch job's record). A report or export written once (``expect=None``) does not,
    and leaves no lock file beside it.

    Every write is refused (:class:`UnsafeTarget`) through a link :func:`check_write_target`
    refuses, except with ``user_file``: a file in the user's own folders (the trust store, batch
    job records), where the folders and their links are the user's doing, not a repository's.
    """
    data = text.encode(encoding)
    if expect is None and not lock:
        return _write(path, data, None, check=not user_file)
    with locked(path, user_file=user_file):  # checks the target before it makes the lock
        return _write(path, data, expect, check=False)


def _write(path: str | os.PathLike[str], data: bytes, expect: DiskState | None, *, check: bool) -> DiskState:
    """The atomic replace of :func:`write_text_safely`; ``check``: refuse a planted link first
    (:func:`check_write_target`; a caller holding :func:`locked` has)."""
    target, info = regular_target(path)
    if check:
        check_write_target(path)
    remove_stale_temps(target)
    if expect is not None:
        _check_unchanged(target, expect)
    mode = None if info is None else stat.S_IMODE(info.st_mode)
    fd, tmp = _create_temp(target, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            written = os.fstat(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)  # the replaced file's mode, set once the content is in
        if expect is not None:
            _check_unchanged(target, expect)  # again, right before the rename
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(target.parent)
    return DiskState.of_bytes(data, written.st_mtime_ns)


@contextlib.contextmanager
def replacing_text(path: str | os.PathLike[str], *, encoding: str = "utf-8") -> Iterator[TextIO]:
    """A text file to write piece by piece that replaces ``path`` atomically, as
    :func:`write_text_safely` does, when the block ends normally; removed when it raises.

    :class:`UnsafeTarget` for a target that is not a regular file or that
    :func:`check_write_target` refuses; other ``OSError`` when the temporary file cannot be
    created or put in place.
    """
    target, info = regular_target(path)
    check_write_target(path)
    remove_stale_temps(target)
    mode = None if info is None else stat.S_IMODE(info.st_mode)
    fd, tmp = _create_temp(target, mode)
    try:
        with os.fdopen(fd, "w", encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(target.parent)


def rewrite_safely(
    path: str | os.PathLike[str], edit: Callable[[], tuple[str, DiskState] | None], *, attempts: int = 2,
    user_file: bool = False,
) -> bool:
    """Read-modify-write ``path`` over exactly the version read; True when something was written.

    ``edit()`` reads the file and returns the new text with the :class:`DiskState` it read
    (None: nothing to write). The file's lock is held from each read to its write, so no other
    rubric-studio process writes in between; when a writer that takes no lock (an editor)
    changes it between that read and the write, ``edit`` runs again on the new content, up to
    ``attempts`` times in all; then :class:`ChangedOnDisk`. ``user_file`` as for
    :func:`write_text_safely`.
    """
    for attempt in range(attempts):
        with locked(path, user_file=user_file):
            written = _rewrite_once(path, edit, last=attempt + 1 == attempts)
        if written is not None:
            return written
    return False


def _rewrite_once(path: str | os.PathLike[str], edit: Callable[[], tuple[str, DiskState] | None],
                  *, last: bool) -> bool | None:
    """One try of :func:`rewrite_safely` under the lock it holds: True / False as it returns, None
    to try again."""
    planned = edit()
    if planned is None:
        return False
    text, state = planned
    try:
        _write(path, text.encode("utf-8"), state, check=False)  # checked when the lock was taken
    except ChangedOnDisk:
        if last:
            raise
        return None
    return True
