"""Shared fixtures: isolated user folders (cache, secret, prices) and the bundled rubrics."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from hypothesis import settings

from tests._timing import ENV as TIME_SCALE_ENV
from tests._timing import scaled, time_scale

# Timing-based deadlines make property tests flaky on a loaded 2-core CI machine.
settings.register_profile("rubric-studio", deadline=None, print_blob=True)
settings.load_profile("rubric-studio")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_RUBRICS = ROOT / "sample_rubrics"


def pytest_configure(config: pytest.Config) -> None:
    # Measured once, by the process that starts the run: its xdist workers (and the CLI
    # children they start) inherit the same factor.
    os.environ.setdefault(TIME_SCALE_ENV, str(time_scale()))
    _bytecode_outside_the_tree()
    _scale_pilot_waits()
    _scale_notification_lifetimes()
    _pilot_tests_end_after_mounting()


def pytest_report_header(config: pytest.Config) -> str:
    return f"wall-clock limits x{time_scale():g} ({TIME_SCALE_ENV}; default: load per core, at least 2)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test's timeout (its own mark, its module's, or the ini's) scaled for this machine;
    the tests marked ``long`` first.

    xdist deals the first quarter of the tests out in turn and the rest as workers free up:
    a long test dealt last kept the whole run waiting on one worker, while the tests that
    wait (servers, retries, terminals) started first overlap with the others' work."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable: same order on every worker
    default = float(config.getini("timeout") or 0)
    for item in items:
        mark = item.get_closest_marker("timeout")
        options = {k: v for k, v in mark.kwargs.items() if k != "timeout"} if mark is not None else {}
        seconds = (mark.args[0] if mark.args else mark.kwargs.get("timeout")) if mark is not None else None
        seconds = default if seconds is None else float(seconds)
        if seconds > 0:
            item.add_marker(pytest.mark.timeout(scaled(seconds), **options), append=False)


def _bytecode_outside_the_tree() -> None:
    """Compiled modules are kept, in ``.pytest_cache/pycache`` rather than beside the sources.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (container images often set it, so nothing is written
    into the tree), every CLI child a test starts compiled the package afresh and every xdist
    worker re-rewrote every test module: about a fifth of the run's time in the CLI tests
    (BENCHMARKS.md). A bytecode cache of the checkout's own, which git ignores, keeps the tree
    clean all the same. Set here, in the process that starts the run, so the workers and the
    children they start inherit it."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    prefix = ROOT / ".pytest_cache" / "pycache"
    try:
        prefix.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only checkout: leave things as they are
        return
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    sys.dont_write_bytecode = False
    sys.pycache_prefix = str(prefix)


def _scale_pilot_waits() -> None:
    """Pilot's wait for the screen to process its messages: 30 s, scaled (it raises WaitForScreenTimeout)."""
    try:
        from textual.pilot import Pilot
    except ImportError:  # pragma: no cover - textual is a dependency
        return
    wait = Pilot._wait_for_screen
    defaults = wait.__defaults__ or ()
    if len(defaults) == 1 and isinstance(defaults[0], int | float):
        wait.__defaults__ = (scaled(30.0),)


def _scale_notification_lifetimes() -> None:
    """A studio notification lives its timeout times the scale: the tests read the notes
    shown, and a step slowed down by load must not find the note already gone."""
    try:
        from textual.app import App
    except ImportError:  # pragma: no cover - textual is a dependency
        return
    notify = App.notify
    if getattr(notify, "scaled_for_tests", False):
        return

    @functools.wraps(notify)
    def scaled_notify(self, *args, timeout: float | None = None, **kwargs):
        return notify(self, *args, timeout=scaled(self.NOTIFICATION_TIMEOUT if timeout is None else timeout), **kwargs)

    scaled_notify.scaled_for_tests = True  # type: ignore[attr-defined]
    App.notify = scaled_notify  # type: ignore[method-assign]


MOUNTING_WAIT = 10.0
"""At most this long (scaled) a Pilot test's app waits, as the test ends, for widgets still mounting."""


def _pilot_tests_end_after_mounting() -> None:
    """A Pilot test's app is torn down only once no widget of it is still mounting.

    The studio mounts its heaviest widgets (the editor, the Agreement panel) just after the first
    screen, and a dialog composes after its push: a test that had already seen what it asserts
    could end in the middle of such a mount. Textual's teardown then removes the children of a
    ``Tabs`` or a ``Select`` before their own mount handler runs, which fails ("No Tab with id …",
    "No nodes match 'SelectOverlay'") and turns the finished test into an error. A user's ctrl+q
    waits for a mounting editor the same way (:mod:`rubric_studio.tui.quit_flow`). Bounded: an app
    whose widgets never finish mounting is torn down anyway, and a test that failed is not held up."""
    try:
        from textual.app import App
    except ImportError:  # pragma: no cover - textual is a dependency
        return
    run_test = App.run_test
    if getattr(run_test, "ends_after_mounting", False):
        return

    @contextlib.asynccontextmanager
    async def run_test_ending_after_mounting(self, *args, **kwargs):
        async with run_test(self, *args, **kwargs) as pilot:
            yield pilot
            await _mounting_finished(self, scaled(MOUNTING_WAIT))

    functools.update_wrapper(run_test_ending_after_mounting, run_test)
    run_test_ending_after_mounting.ends_after_mounting = True  # type: ignore[attr-defined]
    App.run_test = run_test_ending_after_mounting  # type: ignore[method-assign]


def _still_mounting(app) -> bool:
    """Whether a widget on one of ``app``'s screens has not finished mounting."""
    return any(not node.is_mounted for screen in list(app.screen_stack) for node in screen.walk_children(with_self=True))


async def _mounting_finished(app, limit: float) -> None:
    """Wait (at most ``limit`` seconds) until no widget of the running ``app`` is still mounting."""
    deadline = time.monotonic() + limit
    while app.is_running and time.monotonic() < deadline:
        try:
            if not _still_mounting(app):
                return
        except Exception:  # the screens changed under the walk: look again
            pass
        await asyncio.sleep(0.01)


# The collector's first generation runs every this many allocations (Python's default: 700).
YOUNG_COLLECTION_EVERY = 50_000


def pytest_collection_finish(session: pytest.Session) -> None:
    """What is alive once the tests are collected (the modules, the studio's classes, their
    stylesheets) is frozen out of the garbage collector's view, and its first generation runs
    less often.

    A studio test allocates hundreds of thousands of objects, and a bounded cache of Textual's
    keeps up to a thousand gone widgets' styles and rendered lines for the rest of the process: with
    Python's defaults a worker's heap reached half a million objects and every full
    collection walked all of it, a quarter of a studio test's CPU time (BENCHMARKS.md)."""
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_COLLECTION_EVERY), max(middle, 20), old)


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """After each test (its teardown done), its garbage is collected and what survives it is
    frozen: the next test's collections walk only what that test allocates."""
    yield
    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Leave pytest's closing garbage collections (five full passes, after an xdist worker
    has said it finished) almost nothing to walk: collect now and freeze what survives.
    Walking a long run's heap five times could outlast the 5 s execnet gives a worker to end
    before it interrupts it with SIGINT (a KeyboardInterrupt printed from a gc callback)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real user's cache, secret or keys."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(home / "config"))
    monkeypatch.setenv("RUBRIC_STUDIO_CACHE", str(home / "cache" / "judge-cache.sqlite"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.delenv("RUBRIC_STUDIO_ANNOTATOR", raising=False)  # labels default to the OS user
    from rubric_studio.core.providers import BUILTIN

    for provider in BUILTIN:  # every built-in provider's key, endpoint and settings
        for name in (provider.key_var, provider.base_url_var, *provider.settings.values()):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    """A private copy of sample_rubrics/ that tests may edit."""
    target = tmp_path / "sample_rubrics"
    shutil.copytree(SAMPLE_RUBRICS, target)
    return target
