"""Judges: resolve a judge, build requests, call a provider, turn replies into cells.

The pieces, in the order the engine uses them::

    config = resolve_judge(rubric.judge, cli_model="openai:gpt-4o-mini")   # or NoJudge(reason)
    judge = make_judge(config)
    for request in build_requests(rubric, sample, rubric.judge_criteria, config):
        key = request.cache_key(config)                     # cached reply? interpret(request, text, ...)
        outcome = await judge_request(judge, request, rubric, sample)   # cells, tokens, cost

Importing this package does not import the ``openai`` or ``anthropic`` SDKs (a test
enforces it): :func:`make_judge` imports the registered provider's module it needs
(:mod:`rubric_studio.core.providers`).
"""

from __future__ import annotations

from rubric_studio._lazy import public_dir
from rubric_studio.judges.base import (
    ERROR_KINDS,
    Judge,
    JudgeConfig,
    JudgeError,
    JudgeReply,
    JudgeRequest,
)
from rubric_studio.judges.config import NoJudge, resolve_judge
from rubric_studio.judges.evidence import check_quotes
from rubric_studio.judges.parsing import extract_json
from rubric_studio.judges.pricing import cost_usd, price_for
from rubric_studio.judges.prompts import build_requests, repair_request, sample_nonce
from rubric_studio.judges.run import JudgeOutcome, interpret, judge_request

__all__ = [
    "ERROR_KINDS",
    "Judge",
    "JudgeConfig",
    "JudgeError",
    "JudgeOutcome",
    "JudgeReply",
    "JudgeRequest",
    "NoJudge",
    "build_requests",
    "check_quotes",
    "cost_usd",
    "extract_json",
    "interpret",
    "judge_request",
    "make_judge",
    "price_for",
    "repair_request",
    "resolve_judge",
    "sample_nonce",
]


def make_judge(config: JudgeConfig) -> Judge:
    """The judge of ``config``'s registered provider. Raises JudgeError(kind="config").

    Imports no SDK: the provider imports it and builds its client on the first request,
    so a fully cached run never pays for the import.
    """
    from rubric_studio.judges.providers import code, definition

    judge: Judge = code(definition(config).name, "judge")(config)
    return judge


__dir__ = public_dir(__name__)
