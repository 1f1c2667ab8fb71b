"""Safe writes: compare-and-swap, regular files only (never blocking on a FIFO), umask, stale temp files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rubric_studio.core.atomic import (
    ABSENT,
    STALE_SECONDS,
    TEMP_MARK,
    ChangedOnDisk,
    UnsafeTarget,
    disk_state,
    read_bytes,
    remove_stale_temps,
    write_text_safely,
)
from rubric_studio.core.files import read_user_file_state
from rubric_studio.core.problems import RubricError
from tests._timing import scaled

pytestmark = pytest.mark.timeout(20)  # a FIFO opened the blocking way would hang here


@pytest.fixture
def umask() -> Iterator[object]:
    """Set the process umask for one test (restored after)."""
    saved = os.umask(0o022)
    os.umask(saved)

    def set_umask(value: int) -> None:
        os.umask(value)

    yield set_umask
    os.umask(saved)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def temps_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def killed_save(target: Path) -> Path:
    """Start a save of ``target`` in another process and kill it before the rename: its temp file stays."""
    code = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from rubric_studio.core.atomic import _create_temp\n"
        "fd, tmp = _create_temp(Path(sys.argv[1]), None)\n"
        "os.write(fd, b'half a rub')\n"
        "print(tmp, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, timeout=scaled(30))
    assert done.returncode == -9
    leftover = Path(done.stdout.strip())
    assert leftover.exists() and leftover.parent == target.parent
    return leftover


# -- compare-and-swap -----------------------------------------------------------------------------
def test_write_over_the_version_read_succeeds_and_returns_the_new_state(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("name: a\n", encoding="utf-8")
    _, seen = read_bytes(path)
    written = write_text_safely(path, "name: b\n", expect=seen)
    assert path.read_text(encoding="utf-8") == "name: b\n"
    assert written.same_content(disk_state(path)) and not written.same_content(seen)
    assert temps_in(tmp_path) == []


def test_a_change_on_disk_since_the_read_is_never_overwritten(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("name: a\ndescription: mine\n", encoding="utf-8")
    _, seen = read_bytes(path)
    subprocess.run(["sed", "-i", "s/^description:.*/description: EXT/", str(path)], check=True)  # outside edit
    with pytest.raises(ChangedOnDisk) as caught:
        write_text_safely(path, "name: a\ndescription: studio\n", expect=seen)
    assert path.read_text(encoding="utf-8") == "name: a\ndescription: EXT\n"
    assert caught.value.text == "name: a\ndescription: EXT\n"
    assert caught.value.state.same_content(disk_state(path))
    assert "nothing was written" in str(caught.value)
    assert temps_in(tmp_path) == []


def test_same_content_with_a_new_mtime_is_not_a_change(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("name: a\n", encoding="utf-8")
    _, seen = read_bytes(path)
    os.utime(path, ns=(seen.mtime_ns + 5_000_000_000, seen.mtime_ns + 5_000_000_000))  # touched, not edited
    write_text_safely(path, "name: b\n", expect=seen)
    assert path.read_text(encoding="utf-8") == "name: b\n"


def test_creating_never_replaces_a_file_that_appeared(tmp_path: Path):
    path = tmp_path / "new.yaml"
    write_text_safely(path, "first\n", expect=ABSENT)
    with pytest.raises(ChangedOnDisk):
        write_text_safely(path, "second\n", expect=ABSENT)
    assert path.read_text(encoding="utf-8") == "first\n"


def test_a_removed_file_is_a_change_too(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("x\n", encoding="utf-8")
    _, seen = read_bytes(path)
    path.unlink()
    with pytest.raises(ChangedOnDisk) as caught:
        write_text_safely(path, "y\n", expect=seen)
    assert not caught.value.state.exists and caught.value.text is None and "removed" in str(caught.value)
    assert not path.exists()


def test_text_is_read_and_written_exactly_as_stored(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_bytes(b"a: 1\r\nb: 2\r\n")
    text, state = read_user_file_state(path)
    assert text == "a: 1\r\nb: 2\r\n" and state.size == 12
    write_text_safely(path, text.replace("1", "3"), expect=state)
    assert path.read_bytes() == b"a: 3\r\nb: 2\r\n"


# -- not a regular file ------------------------------------------------------------------------
def test_a_fifo_is_refused_for_reading_and_writing_without_blocking(tmp_path: Path):
    fifo = tmp_path / "out.md"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeTarget, match="named pipe"):
        read_bytes(fifo)
    with pytest.raises(UnsafeTarget, match="named pipe"):
        write_text_safely(fifo, "text\n")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # left as it was
    assert temps_in(tmp_path) == []


def test_a_symlink_to_a_device_is_refused_and_left_alone(tmp_path: Path):
    link = tmp_path / "out.md"
    link.symlink_to("/dev/null")
    with pytest.raises(UnsafeTarget, match="symbolic link to a device") as caught:
        write_text_safely(link, "text\n")
    assert "/dev/null" in str(caught.value)
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    with pytest.raises(UnsafeTarget):
        read_bytes(link)


def test_a_folder_and_a_dangling_link_are_refused(tmp_path: Path):
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(UnsafeTarget, match="a folder"):
        write_text_safely(tmp_path / "dir.yaml", "x\n")
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere" / "x.yaml")
    with pytest.raises(UnsafeTarget, match="missing file"):
        write_text_safely(tmp_path / "dangling.yaml", "x\n")
    assert not (tmp_path / "nowhere").exists()


def test_a_symlink_to_a_regular_file_is_written_through(tmp_path: Path):
    real = tmp_path / "real" / "r.yaml"
    real.parent.mkdir()
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "r.yaml"
    link.symlink_to(real)
    _, seen = read_bytes(link)
    write_text_safely(link, "new\n", expect=seen)
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new\n"


# -- permissions -------------------------------------------------------------------------------
@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_users_umask(tmp_path: Path, umask, mask: int, expected: int):
    umask(mask)
    path = tmp_path / "new.md"
    write_text_safely(path, "x\n")
    assert mode_of(path) == expected


def test_a_replaced_file_keeps_its_mode_whatever_the_umask(tmp_path: Path, umask):
    path = tmp_path / "r.yaml"
    path.write_text("x\n", encoding="utf-8")
    os.chmod(path, 0o640)
    umask(0o077)
    write_text_safely(path, "y\n")
    assert mode_of(path) == 0o640


# -- temporary files a killed save left --------------------------------------------------------
def test_a_killed_save_leaves_a_temp_that_the_next_write_removes(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("x\n", encoding="utf-8")
    leftover = killed_save(path)
    assert TEMP_MARK in leftover.name and leftover.name.startswith(".r.yaml")
    write_text_safely(path, "y\n")
    assert not leftover.exists() and temps_in(tmp_path) == []


def test_only_stale_temps_of_that_file_are_removed(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("x\n", encoding="utf-8")
    mine_now = tmp_path / f".r.yaml{TEMP_MARK}{os.getpid()}-0123abcd.tmp"  # a write in progress here
    mine_old = tmp_path / f".r.yaml{TEMP_MARK}{os.getpid()}-4567abcd.tmp"
    legacy_old = tmp_path / ".r.yaml.ab12cd_9.tmp"  # an earlier version's temp name
    other_file = tmp_path / f".other.yaml{TEMP_MARK}999999999-0123abcd.tmp"
    users_own = tmp_path / ".r.yaml.notes.tmp"
    for item in (mine_now, mine_old, legacy_old, other_file, users_own):
        item.write_text("", encoding="utf-8")
    old = time.time() - STALE_SECONDS - 60
    for item in (mine_old, legacy_old, users_own):
        os.utime(item, (old, old))
    removed = remove_stale_temps(path)
    assert sorted(p.name for p in removed) == sorted([mine_old.name, legacy_old.name])
    assert mine_now.exists() and other_file.exists() and users_own.exists()


def test_a_temp_of_a_dead_process_is_removed_even_when_fresh(tmp_path: Path):
    path = tmp_path / "r.yaml"
    leftover = killed_save(path)
    assert time.time() - leftover.stat().st_mtime < STALE_SECONDS
    assert remove_stale_temps(path) == [leftover]


def test_a_file_read_for_writing_back_reports_a_bad_byte_by_line_and_column(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_bytes("name: ok\ndescription: caf\xe9\n".encode("latin-1"))
    with pytest.raises(RubricError) as caught:
        read_user_file_state(path)
    problem = caught.value.problems[0]
    assert (problem.line, problem.column) == (2, 17) and "not UTF-8" in problem.message
