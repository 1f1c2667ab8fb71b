"""The judge the user chooses, never the rubric: flags, the environment, and the user's own
judge defaults in ``config.yaml`` in the user config folder (optional).

::

    judge:
      model: anthropic:claude-haiku-4-5    # used when neither --judge nor the rubric names one
      base_url: https://llm-proxy.example/v1

What is written here is the user's choice, like ``--judge`` / ``--base-url`` and the
environment: it needs no trust (see :mod:`rubric_studio.core.trust._policy`), and it selects the
user's provider, so a rubric naming another provider needs trust. Precedence:
``--judge`` > rubric ``judge.model`` > this ``model`` > the key in the environment;
``--base-url`` > rubric ``judge.base_url`` (when trusted) > this ``base_url`` >
``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``. A file that cannot be read or has the wrong
shape is ignored with a logged warning.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rubric_studio.core.trust._policy import UserJudge
from rubric_studio.core.userdir import config_dir


@dataclass(frozen=True)
class UserConfig:
    """The ``judge:`` defaults of the user config file (both optional)."""

    model: str | None = None
    base_url: str | None = None


def user_config_path() -> Path:
    """Returns the path of the user's ``config.yaml`` (it may not exist yet). Raises nothing."""
    return config_dir() / "config.yaml"


def load_user_config(path: Path | None = None) -> UserConfig:
    """The user's judge defaults; an empty :class:`UserConfig` when there is no usable file."""
    path = path or user_config_path()
    if not path.is_file():
        return UserConfig()
    from rubric_studio.core.files import read_user_file
    from rubric_studio.core.problems import RubricError
    from rubric_studio.core.yamlpos import safe_load

    log = logging.getLogger(__name__)
    try:
        data = safe_load(read_user_file(path, "config"), str(path)) or {}
    except RubricError as exc:
        log.warning("ignoring %s", exc)
        return UserConfig()
    judge = data.get("judge") if isinstance(data, dict) else None
    if judge is None:
        return UserConfig()
    if not isinstance(judge, dict):
        log.warning("ignoring %s: expected judge: {model: provider:model, base_url: URL}", path)
        return UserConfig()
    values = {name: judge.get(name) for name in ("model", "base_url")}
    for name, value in values.items():
        if value is not None and not (isinstance(value, str) and value.strip()):
            log.warning("ignoring judge.%s in %s: expected a string", name, path)
            values[name] = None
    return UserConfig(**values)


def user_judge(
    cli_model: str | None = None,
    cli_base_url: str | None = None,
    env: Mapping[str, str] = os.environ,
    config: UserConfig | None = None,
) -> UserJudge:
    """The user's own judge choices: flags, user config file, environment."""
    return UserJudge(
        model=cli_model,
        base_url=cli_base_url,
        config_model=config.model if config else None,
        config_base_url=config.base_url if config else None,
        env=env,
    )


def user_choices(
    judge: str | None = None, base_url: str | None = None, env: Mapping[str, str] | None = None
) -> UserJudge:
    """The user's own judge choices as this run sees them: ``--judge`` / ``--base-url``, the user
    config file, the environment (``os.environ`` when None)."""
    return user_judge(judge, base_url, os.environ if env is None else env, load_user_config())
