"""Checks that run the author's code: a Python function (``python``) or a command (``command``).

Both are bounded in time — a function in a daemon thread left behind when it overruns, a
command through the subprocess timeout — and anything they raise, print or return that is
not a score becomes a :class:`~rubric_studio.core.checks._eval.CheckFailure` naming the cause.
They run only for a trusted rubric (:class:`~rubric_studio.core.check_runner.CheckRunner` decides).
"""

from __future__ import annotations

import importlib
import inspect
import json
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from rubric_studio.core.checks._eval import CheckFailure, CheckTimeout, Evaluator, TextView
from rubric_studio.core.checks._spec import CommandCheck, PythonCheck
from rubric_studio.core.results import Evidence
from rubric_studio.core.samples import Sample

__all__ = ["command_check", "python_check"]


def _run_bounded(function: Callable[[], Any], timeout: float, what: str) -> Any:
    """Run ``function`` in a daemon thread; give up (leaving it behind) after ``timeout``."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = function()
        except BaseException as exc:  # isolate the author's code from ours
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True, name=f"check:{what}")
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise CheckTimeout(f"{what} did not finish within {timeout:g}s")
    if "error" in box:
        exc = box["error"]
        raise CheckFailure(f"{what} raised {type(exc).__name__}: {exc}")
    return box.get("value")


def _coerce_score(value: Any, what: str) -> tuple[float, str]:
    reason = ""
    if isinstance(value, tuple) and len(value) == 2:
        value, reason = value
        reason = str(reason)
    if isinstance(value, bool):
        return (1.0 if value else 0.0), reason
    if isinstance(value, int | float):
        score = float(value)
        if not 0.0 <= score <= 1.0:
            raise CheckFailure(f"{what} returned {score}, expected a score between 0 and 1")
        return score, reason
    raise CheckFailure(f"{what} returned {type(value).__name__}, expected a number in [0, 1], a bool or (score, reason)")


def python_check(spec: PythonCheck, base_dir: Path | None) -> Evaluator:
    module_name, _, function_name = spec.function.partition(":")
    cache: dict[str, Any] = {}

    def load() -> Callable[..., Any]:
        if "fn" not in cache:
            added = False
            if base_dir is not None and str(base_dir) not in sys.path:
                sys.path.insert(0, str(base_dir))
                added = True
            try:
                module = importlib.import_module(module_name)
            except Exception as exc:
                raise CheckFailure(f"cannot import {module_name!r}: {type(exc).__name__}: {exc}") from None
            finally:
                if added:
                    with suppress(ValueError):
                        sys.path.remove(str(base_dir))
            fn = getattr(module, function_name, None)
            if not callable(fn):
                raise CheckFailure(f"{spec.function}: no function {function_name!r} in module {module_name!r}")
            cache["fn"] = fn
        return cache["fn"]

    def evaluate(view: TextView) -> tuple[float, str, list[Evidence]]:
        fn = load()
        sample = view.sample
        value = _run_bounded(lambda: _call_user_function(fn, sample), spec.timeout, spec.function)
        score, reason = _coerce_score(value, spec.function)
        return score, reason or f"{spec.function} returned {score:g}", []

    return evaluate


def _call_user_function(fn: Callable[..., Any], sample: Sample) -> Any:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(sample.output)
    offered = {
        "input": sample.input,
        "ground_truth": sample.ground_truth,
        "metadata": sample.metadata,
        "sample": sample,
    }
    kwargs = {name: offered[name] for name in params if name in offered}
    return fn(sample.output, **kwargs)


def command_check(spec: CommandCheck, base_dir: Path | None) -> Evaluator:
    argv = shlex.split(spec.command) if isinstance(spec.command, str) else list(spec.command)
    shown = spec.command if isinstance(spec.command, str) else shlex.join(spec.command)

    def evaluate(view: TextView) -> tuple[float, str, list[Evidence]]:
        try:
            done = subprocess.run(
                argv,
                input=view.text,
                capture_output=True,
                text=True,
                timeout=spec.timeout,
                cwd=base_dir,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CheckTimeout(f"command {shown!r} did not finish within {spec.timeout:g}s") from None
        except OSError as exc:
            raise CheckFailure(f"command {shown!r} could not start: {exc.strerror or exc}") from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
            raise CheckFailure(f"command {shown!r} exited with {done.returncode}: {tail[0][:200]}")
        first = done.stdout.strip().splitlines()[:1]
        if not first:
            raise CheckFailure(f"command {shown!r} printed nothing; expected a score between 0 and 1")
        head, _, reason = first[0].partition(" ")
        try:
            value: Any = float(head)
        except ValueError:
            try:
                payload = json.loads(done.stdout)
                value, reason = (payload["score"], payload.get("reason", "")) if isinstance(payload, dict) else (payload, "")
            except (ValueError, KeyError, TypeError):
                raise CheckFailure(f"command {shown!r} printed {first[0][:80]!r}; expected a score between 0 and 1") from None
        score, _ = _coerce_score(value, f"command {shown!r}")
        return score, reason.strip() or f"command returned {score:g}", []

    return evaluate
