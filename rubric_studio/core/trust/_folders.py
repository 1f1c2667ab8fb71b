"""The folder rule of trust: what counts as inside a rubric's folder. It is defined in
:mod:`rubric_studio.core.folders`, below trust, because the samples readers apply it too."""

from __future__ import annotations

from rubric_studio.core.folders import (
    CREDENTIAL_NAMES,
    credentials_folder,
    outside_reason,
    prompt_path_reason,
    resolve_prompt_path,
    user_config_homes,
)

__all__ = ["CREDENTIAL_NAMES", "credentials_folder", "outside_reason", "prompt_path_reason", "resolve_prompt_path",
           "user_config_homes"]
