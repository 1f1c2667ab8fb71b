"""An LLM that writes rubric text — drafted criteria, reworded outcomes — rather than grading.

It is the judge's provider and model unless the user names another (``--model``), and it
goes through the same :class:`~rubric_studio.judges.base.Judge` interface, retries and
timeouts as grading. Replies are JSON under a schema, read with the judge's tolerant parser
(:func:`~rubric_studio.judges.parsing.extract_json`), repaired once when they do not fit,
and cached like judge replies (only valid ones), so asking the same thing twice is free.
Errors are :class:`~rubric_studio.judges.base.JudgeError`: callers report them, never crash.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from rubric_studio.core.rubric import Rubric
from rubric_studio.engine.cache import ReplyCache
from rubric_studio.engine.usage import Usage
from rubric_studio.judges.base import Judge, JudgeConfig, JudgeError, JudgeRequest

#: Checks a parsed reply; raises ValueError (shown to the model in the repair call) when it does not fit.
Validator = Callable[[Any], Any]


class Assistant:
    """Ask ``config``'s model for JSON; every call's tokens and cost land in :attr:`usage`."""

    def __init__(self, config: JudgeConfig, cache: ReplyCache | None = None, judge: Judge | None = None):
        from rubric_studio.judges import make_judge

        self.config = config
        self.cache = cache
        self.judge = judge or make_judge(config)
        self.usage = Usage()

    @property
    def label(self) -> str:
        return self.config.label

    async def ask(self, system: str, user: str, schema: dict[str, Any], name: str, validate: Validator) -> Any:
        """The validated reply to one request (cached); JudgeError when none could be had."""
        from rubric_studio.judges.parsing import extract_json
        from rubric_studio.judges.prompts import repair_request

        request = JudgeRequest(sample_id="", criterion_ids=(), system=system, user=user, schema=schema,
                               schema_name=name)
        key = request.cache_key(self.config)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            try:
                self.usage.cache_hits += 1
                return validate(extract_json(hit.text))
            except ValueError:
                pass  # a reply cached under other rules: ask again
        current = request
        for attempt in range(2):
            reply = await self._complete(current)
            try:
                value = validate(extract_json(reply.text))
            except ValueError as exc:
                if attempt == 1:
                    raise JudgeError("malformed", f"the assistant's reply did not fit: {exc}", raw=reply.text) from None
                current = repair_request(request, reply.text, str(exc))
                continue
            if self.cache is not None:
                self.cache.put(key, self.config.provider, self.config.model, reply.text, reply.input_tokens,
                               reply.output_tokens)
            return value
        raise AssertionError("unreachable")

    async def _complete(self, request: JudgeRequest):
        from rubric_studio.judges.pricing import cost_usd

        try:
            reply = await self.judge.complete(request)
        except JudgeError as exc:
            cache = (exc.cached_input_tokens, exc.cache_write_tokens)
            self.usage.add_call(1, exc.requests, exc.input_tokens, exc.output_tokens,
                                cost_usd(self.config.provider, self.config.model, exc.input_tokens, exc.output_tokens,
                                         *cache), *cache)
            raise
        cache = (reply.cached_input_tokens, reply.cache_write_tokens)
        self.usage.add_call(1, reply.requests, reply.input_tokens, reply.output_tokens,
                            cost_usd(self.config.provider, self.config.model, reply.input_tokens, reply.output_tokens,
                                     *cache), *cache)
        return reply

    async def aclose(self) -> None:
        await self.judge.aclose()
        if self.cache is not None:
            self.cache.close()


def make_assistant(
    rubric: Rubric | None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
    cache_path: str | Path | None = None,
    use_cache: bool = True,
    allow_code: bool = False,
    timeout: float | None = None,
) -> Assistant:
    """The assistant for ``rubric`` (its judge settings, trust-gated as for grading) or for no rubric
    yet (``draft``): ``model`` / ``base_url`` as on the command line. Raises JudgeError(kind="config")
    with the reason when no model can be used. ``timeout`` (seconds per call) overrides the
    settings' ``judge.timeout``, as ``--timeout`` does for grading."""
    from rubric_studio.core.trust import effective_trust, load_user_config
    from rubric_studio.judges import NoJudge, resolve_judge

    settings = rubric.judge if rubric is not None else None
    base_dir = Path(rubric.path).resolve().parent if rubric is not None and rubric.path else None
    trust = effective_trust(rubric, allow_code) if rubric is not None else None
    resolved = resolve_judge(settings, cli_model=model, cli_base_url=base_url, env=os.environ if env is None else env,
                             base_dir=base_dir, user_config=load_user_config(),
                             **({"trust": trust} if trust is not None else {}))
    if isinstance(resolved, NoJudge):
        raise JudgeError("config", resolved.reason)
    # Drafts and rewordings are longer than verdicts; the judge's own prompt template does not apply.
    config = replace(resolved, max_tokens=max(4096, resolved.max_tokens), prompt_template=None)
    if timeout:
        config = replace(config, timeout=timeout)
    return Assistant(config, ReplyCache(cache_path) if use_cache else None)
