"""Trust: the settings of a rubric that take effect only once the user trusts that rubric, and
what the user trusted, kept across runs.

A rubric is a file someone else may have written: its code checks, a judge endpoint or
provider the user did not choose, a prompt file from outside its folder act only when trusted.

* the policy (``_policy``): which settings of a rubric need trust (:class:`Gate`), what a
  :class:`Trust` covers, and the judge the user chose (:class:`UserJudge`);
* what counts as inside a folder (``_folders``): :func:`outside_reason`, also for samples files;
* the user's own judge choices (``_user``): flags, environment, ``config.yaml``;
* the store (``_store``): ``trust.json`` in the user config folder, per rubric path and value;
* what is trusted in a run (``_effective``): ``--allow-code``, the store, this window's answers.

Asking the user is the studio's business (``rubric_studio.tui.trust_prompt``); what a studio
window trusted so far is its session's (``rubric_studio.session.trust``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.core.trust._effective import code_trusted, effective_trust, untrusted_settings
    from rubric_studio.core.trust._folders import (
        CREDENTIAL_NAMES,
        credentials_folder,
        outside_reason,
        prompt_path_reason,
        resolve_prompt_path,
        user_config_homes,
    )
    from rubric_studio.core.trust._policy import (
        BASE_URL_VARS,
        HOW_TO_TRUST,
        KEY_FAMILY,
        KEY_VARS,
        KEYLESS,
        NO_TRUST,
        TRUST_ALL,
        Gate,
        Trust,
        UserJudge,
        code_gates,
        command_text,
        judge_gates,
        normalize_url,
        provider_family,
        provider_switch,
        rubric_gates,
        untrusted,
        untrusted_reason,
        warning_line,
    )
    from rubric_studio.core.trust._store import load_trust, remember, rubric_key, store_path
    from rubric_studio.core.trust._user import (
        UserConfig,
        load_user_config,
        user_choices,
        user_config_path,
        user_judge,
    )

#: Public name -> the private module that defines it.
_EXPORTS = {
    "BASE_URL_VARS": "_policy",
    "code_gates": "_policy",
    "code_trusted": "_effective",
    "command_text": "_policy",
    "CREDENTIAL_NAMES": "_folders",
    "effective_trust": "_effective",
    "Gate": "_policy",
    "HOW_TO_TRUST": "_policy",
    "judge_gates": "_policy",
    "KEY_FAMILY": "_policy",
    "KEY_VARS": "_policy",
    "KEYLESS": "_policy",
    "load_trust": "_store",
    "load_user_config": "_user",
    "NO_TRUST": "_policy",
    "normalize_url": "_policy",
    "credentials_folder": "_folders",
    "outside_reason": "_folders",
    "prompt_path_reason": "_folders",
    "provider_family": "_policy",
    "provider_switch": "_policy",
    "remember": "_store",
    "resolve_prompt_path": "_folders",
    "rubric_gates": "_policy",
    "rubric_key": "_store",
    "store_path": "_store",
    "Trust": "_policy",
    "TRUST_ALL": "_policy",
    "untrusted": "_policy",
    "untrusted_reason": "_policy",
    "untrusted_settings": "_effective",
    "user_choices": "_user",
    "user_config_homes": "_folders",
    "user_config_path": "_user",
    "user_judge": "_user",
    "UserConfig": "_user",
    "UserJudge": "_policy",
    "warning_line": "_policy",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
