"""Azure OpenAI: chat completions on a deployment of the user's own resource.

``azure:<deployment>`` names a deployment, not a model: requests go through the openai SDK's
``AsyncAzureOpenAI`` to ``{endpoint}/openai/deployments/{deployment}/chat/completions`` with
``?api-version=`` and an ``api-key`` header. The key comes from ``AZURE_OPENAI_API_KEY``, the
endpoint from ``AZURE_OPENAI_ENDPOINT`` (or ``--base-url``, or a rubric's ``judge.base_url``
once the rubric is trusted), the API version from ``OPENAI_API_VERSION``; all three are
required. Bodies, structured output and reply reading are the OpenAI judge's.

Which model a deployment runs cannot be told from its name, so :func:`azure_capabilities`
chooses what every model accepts unless the name says more: a name like an OpenAI reasoning
model (``o1``, ``o3-mini``, ``o4-mini``, ``gpt-5…``) gets the reasoning row; a name like
another GPT model (``gpt-4o-mini``, ``gpt-35-turbo``) gets ``temperature``; any other name
(``judge``, ``prod-eval``) gets neither ``temperature`` nor ``reasoning_effort`` (a reasoning
model rejects a temperature, and only reasoning models take an effort), and the rubric that
sets them is warned once. Prices follow the same idea: a deployment named after a priced
OpenAI model costs that model's list price, any other is of unknown cost.

Batch API (:class:`AzureBatches`): a JSONL file uploaded to ``/openai/files`` with purpose
``batch``, a batch created at ``/openai/batches`` for endpoint ``/chat/completions``, polled
and downloaded as OpenAI's; the deployment must be a Global Batch (or Data Zone Batch) one.
"""

from __future__ import annotations

import re
from typing import Any

from rubric_studio.judges.batch_api import OpenAIBatches
from rubric_studio.judges.capabilities import OPENAI_REASONING, OPTIONAL_PARAMETERS, Capabilities
from rubric_studio.judges.openai import OpenAIJudge

#: Deployment names that say they run a GPT chat model that is not a reasoning model.
GPT_CHAT = re.compile(r"^gpt-(?!5)", re.I)
#: Azure's limits per batch input file: requests and bytes.
AZURE_BATCH_LIMITS = (100_000, 200 * 1024 * 1024)
#: The code of the built-in provider ``azure``, by part, as ``"module:attr"`` references
#: imported on first use (:func:`rubric_studio.judges.provider_code.code`).
CODE = {
    "judge": "rubric_studio.judges.azure:AzureJudge",
    "body": "rubric_studio.judges.bodies:openai_body",
    "capabilities": "rubric_studio.judges.azure:azure_capabilities",
    "batch": "rubric_studio.judges.azure:AzureBatches",
}


class AzureJudge(OpenAIJudge):
    """A judge on an Azure OpenAI deployment (``JudgeConfig.model`` is the deployment name)."""

    key_var = "AZURE_OPENAI_API_KEY"

    def __init__(self, config: Any):
        super().__init__(config)
        endpoint = (config.base_url or "").rstrip("/")
        self.base_url = endpoint[: -len("/openai")] if endpoint.endswith("/openai") else endpoint

    def new_client(self, sdk: Any) -> Any:
        return sdk.AsyncAzureOpenAI(
            api_key=self.config.api_key, azure_endpoint=self.base_url, api_version=self.config.setting("api_version"),
            max_retries=0, timeout=self.config.timeout,
            http_client=self.http_client(sdk),
        )  # fmt: skip

    @property
    def wire_url(self) -> str:
        return (f"{self.base_url}/openai/deployments/{self.config.model}/chat/completions"
                f"?api-version={self.config.setting('api_version')}")  # fmt: skip

    @property
    def official(self) -> bool:
        return False


def azure_capabilities(config: Any) -> Capabilities:
    """The capability row for a deployment, from what its name says (see the module docstring)."""
    if OPENAI_REASONING.match(config.model):
        return Capabilities(
            family="Azure deployment named like a reasoning model (o1, o3, o4, gpt-5)",
            sends=frozenset({"reasoning_effort"}),
            why_not={"temperature": "reasoning models accept only their default temperature"},
            max_tokens_field="max_completion_tokens",
        )
    if GPT_CHAT.match(config.model):
        return Capabilities(
            family="Azure deployment named like a GPT chat model",
            sends=frozenset({"temperature"}),
            why_not={"reasoning_effort": "only reasoning models (o1, o3, o4, gpt-5) take it"},
        )
    why = ("the deployment's name does not say which model it runs, and a reasoning model would reject it; "
           "name the deployment after its model (e.g. gpt-4o-mini or o3-mini) to have it sent")  # fmt: skip
    return Capabilities(family="Azure deployment of an unknown model", sends=frozenset(),
                        why_not={name: why for name in OPTIONAL_PARAMETERS},
                        max_tokens_field="max_completion_tokens")  # fmt: skip


class AzureBatches(OpenAIBatches):
    """Azure OpenAI Batch: OpenAI's protocol under ``/openai`` with the deployment-relative endpoint."""

    completions_url = "/chat/completions"

    @property
    def limits(self) -> tuple[int, int]:
        return AZURE_BATCH_LIMITS
