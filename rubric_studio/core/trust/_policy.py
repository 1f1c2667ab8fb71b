"""The trust policy: the settings of a rubric that act only once the user trusts that rubric.

A rubric is a file someone else may have written. Opening, validating or grading it must
never run its code, send the user's key to a host the user did not choose, or put the
user's files into a judge request. So these *trust-gated settings* of a rubric take
effect only when a :class:`Trust` covers them:

* each ``python`` check (value: its ``module:function``) and ``command`` check (value:
  the command) — it runs code;
* ``judge.base_url`` (value: the URL) — every request, with the user's key, would go
  there. Not gated when the user gives the endpoint (``--base-url`` replaces it) or set
  that same URL themselves (user config ``judge.base_url``, ``OPENAI_BASE_URL``,
  ``ANTHROPIC_BASE_URL``);
* a provider switch in ``judge.model`` (value: the model string): see :func:`provider_switch`;
* ``judge.prompt_path`` resolving, after ``~``, ``..`` and symlinks, outside the rubric's
  folder, or to a file that counts as outside though under it: in a hidden folder below it
  (a rubric saved in HOME naming ``.aws/credentials``), in a credentials folder, or with
  hard links elsewhere (see :func:`~rubric_studio.core.folders.outside_reason`)
  (value: the resolved path) — its text would go into every request.

A :class:`Trust` covers a setting by its name and value, so trusting a rubric remembers
exactly what was trusted: editing criteria text never asks again, while a new base URL,
a new prompt file or a new command check does. ``--allow-code`` trusts everything of a
rubric for one run (:data:`TRUST_ALL`). The trust store (a file in the user's config
folder, :mod:`rubric_studio.core.trust._store`) keeps what the user trusted per rubric path.

Pure logic: no file is read here (resolving a path only looks at the file system's names).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# From the provider registry: KEY_VARS / BASE_URL_VARS (provider -> variable), KEY_FAMILY (which
# user key a written provider uses: ``openai-compatible`` runs on the openai key and base URL;
# ``ollama`` uses no key at all) and KEYLESS (names that carry no user key).
from rubric_studio.core.providers import BASE_URL_VARS, KEY_FAMILY, KEY_VARS, KEYLESS
from rubric_studio.core.trust._folders import prompt_path_reason

if TYPE_CHECKING:
    from rubric_studio.core.rubric import JudgeSettings, Rubric

HOW_TO_TRUST = 'trust this rubric (--allow-code, or "Trust this rubric" in the studio)'


@dataclass(frozen=True)
class UserJudge:
    """The judge as the user's own configuration chooses it — never the rubric.

    ``model`` / ``base_url``: ``--judge`` / ``--base-url``; ``config_model`` /
    ``config_base_url``: the user config file; ``env``: the environment (keys, base URLs).
    """

    model: str | None = None
    base_url: str | None = None
    config_model: str | None = None
    config_base_url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    def env_value(self, name: str) -> str | None:
        value = self.env.get(name)
        return value.strip() if value and value.strip() else None

    def provider(self) -> str | None:
        """The key family the user selects: ``--judge``, else the user config's model, else the
        environment (the provider whose key is set, openai first); None when nothing selects one."""
        for model in (self.model, self.config_model):
            family = provider_family(model) if model else None
            if family is not None:  # a malformed model string selects nothing (its judge is refused anyway)
                return family
        for family in KEY_VARS:  # registration order: openai, anthropic, …
            if self.env_value(KEY_VARS[family]):
                return family
        return None

    def chose_url(self, url: str) -> bool:
        """True when the user set ``url`` themselves (flag, user config or environment)."""
        mine = [self.base_url, self.config_base_url, *(self.env_value(v) for v in BASE_URL_VARS.values())]
        return normalize_url(url) in {normalize_url(u) for u in mine if u}


@dataclass(frozen=True)
class Gate:
    """One trust-gated setting of a rubric: ``setting`` and ``value`` are what trust remembers;
    ``loc`` is the YAML path of its key (for file:line:col), ``where`` says where it is."""

    setting: str  # judge.base_url | judge.model | judge.prompt_path | check.python | check.command
    value: str
    loc: tuple[Any, ...]
    where: str = ""
    why: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.setting, self.value)

    @property
    def is_judge(self) -> bool:
        return self.setting.startswith("judge.")

    def describe(self) -> str:
        """``judge.base_url http://host/v1`` or ``command check ./score.sh (criterion mine)``."""
        if self.is_judge:
            return f"{self.setting} {self.value}"
        kind = self.setting.removeprefix("check.")
        return f"{kind} check {self.value}" + (f" ({self.where})" if self.where else "")

    def reason(self) -> str:
        """One line: what the setting is, why it did not take effect, how to make it."""
        return f"{self.describe()} {self.why}: {HOW_TO_TRUST}{_ALTERNATIVE.get(self.setting, '')}"


_ALTERNATIVE = {
    "judge.base_url": " or pass --base-url",
    "judge.model": " or pass --judge",
    "judge.prompt_path": " or move the prompt file into the rubric's folder",
}


@dataclass(frozen=True)
class Trust:
    """What the user trusts of one rubric: everything (``--allow-code``), or these (setting, value) pairs."""

    everything: bool = False
    values: frozenset[tuple[str, str]] = frozenset()

    def covers(self, gate: Gate) -> bool:
        return self.everything or gate.key in self.values

    def plus(self, other: Trust | Iterable[Gate]) -> Trust:
        """This trust and ``other`` (another Trust, or gates now trusted)."""
        if isinstance(other, Trust):
            return Trust(self.everything or other.everything, self.values | other.values)
        return Trust(self.everything, self.values | {gate.key for gate in other})


NO_TRUST = Trust()
TRUST_ALL = Trust(everything=True)


def normalize_url(url: str) -> str:
    """Returns ``url`` without surrounding spaces and trailing slashes, the form trust is stored
    and compared in. Raises nothing."""
    return url.strip().rstrip("/")


def provider_family(model: str) -> str | None:
    """The key family of ``provider:model`` (None for an unknown provider or a bare name)."""
    provider, sep, _ = model.strip().partition(":")
    return KEY_FAMILY.get(provider.strip().lower().replace("_", "-")) if sep else None


def provider_switch(rubric_model: str | None, user: UserJudge) -> bool:
    """True when the rubric's ``judge.model`` picks a provider the user did not select.

    The user's provider is :meth:`UserJudge.provider`: ``--judge``, else the user config's
    model, else the provider whose key is set (openai first). Then:

    * ``--judge`` given: the rubric's model is not used at all — no switch;
    * same key family (``openai``, ``openai-compatible`` → the openai key; ``anthropic``):
      the rubric merely picks a model within the user's provider — no switch;
    * ``ollama`` never carries a user key (a placeholder key, to localhost:11434 unless the
      user gives ``--base-url``; a rubric's own base URL is gated on its own) — no switch;
    * the user selects no provider at all: then no key is set in the environment (a set key
      is what selects one), so whatever provider the rubric names has no user key to carry.
      Its requests could only go to a base URL the user set (with a placeholder key) or to
      the provider's official host, which is never called without a key (the judge stays
      unjudged: "…_API_KEY is not set"). No switch;
    * otherwise (e.g. the user's key is for openai and the rubric says ``anthropic:…``, or
      the user config says ``ollama:…`` and the rubric ``openai:…``) the rubric would spend
      another provider's key and send the samples to a vendor the user did not pick: a switch.
    """
    if not rubric_model or user.model:
        return False
    family = provider_family(rubric_model)
    if family is None or family in KEYLESS:
        return False
    chosen = user.provider()
    return chosen is not None and family != chosen


def judge_gates(settings: JudgeSettings | None, user: UserJudge, base_dir: Path | None) -> list[Gate]:
    """The trust-gated settings of a rubric's ``judge:`` block (and of each panel member), given the
    user's own choices."""
    if settings is None:
        return []
    gates = _settings_gates(settings, user, base_dir, ("judge",))
    for index, member in enumerate(settings.panel or []):
        gates += _settings_gates(member, user, base_dir, ("judge", "panel", index))
    return gates


def _settings_gates(settings: JudgeSettings, user: UserJudge, base_dir: Path | None,
                    loc: tuple[Any, ...]) -> list[Gate]:
    gates = []
    if settings.base_url and settings.base_url.strip() and not user.base_url and not user.chose_url(settings.base_url):
        gates.append(Gate("judge.base_url", normalize_url(settings.base_url), (*loc, "base_url"),
                          why="is set by the rubric, not by you"))
    if provider_switch(settings.model, user):
        assert settings.model is not None
        chosen = user.provider()
        gates.append(Gate("judge.model", settings.model.strip(), (*loc, "model"),
                          why=f"switches to provider {provider_family(settings.model)}, not the one you use ({chosen})"))
    if settings.prompt_path is not None:
        target, reason = prompt_path_reason(settings.prompt_path, base_dir)
        if reason is not None:
            gates.append(Gate("judge.prompt_path", str(target), (*loc, "prompt_path"), why=reason))
    return gates


def command_text(command: str | list[str]) -> str:
    """A command check's command as one string (a list is shell-quoted, so it stays unambiguous)."""
    return command if isinstance(command, str) else shlex.join(command)


def code_gates(rubric: Rubric) -> list[Gate]:
    """One gate per python / command check of ``rubric``."""
    gates = []
    for index, criterion in enumerate(rubric.criteria):
        spec = criterion.check
        if spec is None or not spec.runs_code:
            continue
        where = f"criterion {criterion.key}"
        if spec.type == "python":
            gates.append(Gate("check.python", spec.function, ("criteria", index, "check", "function"), where,  # type: ignore[union-attr]
                              why="runs code"))
        else:
            gates.append(Gate("check.command", command_text(spec.command), ("criteria", index, "check", "command"),  # type: ignore[union-attr]
                              where, why="runs code"))
    return gates


def rubric_gates(rubric: Rubric, user: UserJudge) -> list[Gate]:
    """Every trust-gated setting of ``rubric``: its code checks, then its judge settings."""
    base_dir = Path(rubric.path).resolve().parent if rubric.path else None
    return [*code_gates(rubric), *judge_gates(rubric.judge, user, base_dir)]


def untrusted(gates: Iterable[Gate], trust: Trust) -> list[Gate]:
    """Returns the gates of ``gates`` that ``trust`` does not cover, in order. Raises nothing."""
    return [gate for gate in gates if not trust.covers(gate)]


def untrusted_reason(gates: list[Gate]) -> str:
    """One line for judge cells left unjudged by untrusted judge settings."""
    first = gates[0].reason()
    if len(gates) == 1:
        return first
    return first + "; also not trusted: " + ", ".join(gate.describe() for gate in gates[1:])


def warning_line(gates: list[Gate]) -> str:
    """The one line ``grade`` / ``calibrate`` print about settings not used."""
    names = "; ".join(gate.describe() for gate in gates)
    return (f"warning: not trusted, so not used: {names} — pass --allow-code to trust this rubric for this run "
            "(or --judge / --base-url to choose the judge yourself)")
