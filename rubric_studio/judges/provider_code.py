"""Where the code of each judge provider is: the built-ins' table, and the lookup by part.

Kept apart from :mod:`rubric_studio.judges.providers` and imports only the core's registry: the
body builders and capability tables look their provider's part up here, and the table names
them in turn (a lookup in a module they import would make the two hold each other).
"""

from __future__ import annotations

from typing import Any

from rubric_studio.core.providers import get, load, names

#: The code of each built-in provider (:data:`rubric_studio.core.providers.BUILTIN`), by part.
BUILTIN_CODE: dict[str, dict[str, str]] = {
    "openai": {
        "judge": "rubric_studio.judges.openai:OpenAIJudge",
        "body": "rubric_studio.judges.bodies:openai_body",
        "capabilities": "rubric_studio.judges.capabilities:openai_capabilities",
        "batch": "rubric_studio.judges.batch_api:OpenAIBatches",
    },
    "anthropic": {
        "judge": "rubric_studio.judges.anthropic:AnthropicJudge",
        "body": "rubric_studio.judges.bodies:anthropic_body",
        "capabilities": "rubric_studio.judges.capabilities:anthropic_capabilities",
        "batch": "rubric_studio.judges.batch_api:AnthropicBatches",
    },
    "azure": {
        "judge": "rubric_studio.judges.azure:AzureJudge",
        "body": "rubric_studio.judges.bodies:openai_body",
        "capabilities": "rubric_studio.judges.azure:azure_capabilities",
        "batch": "rubric_studio.judges.azure:AzureBatches",
    },
}


def code(name: str, part: str) -> Any:
    """The ``part`` (``judge``, ``batch``, ``body``, ``capabilities``) of the provider ``name``,
    loaded. ValueError for a provider not registered or a part it does not have."""
    provider = get(name)
    reference = None
    if provider is not None:
        own = BUILTIN_CODE.get(provider.name, {}) if provider.origin == "built-in" else {}
        reference = own.get(part) or getattr(provider, part, None)
    if not reference:
        raise ValueError(f"judge provider {name!r} has no {part}; registered: {', '.join(names())}")
    return load(reference)
