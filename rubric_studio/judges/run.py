"""From a request to cells: call the judge, read its reply, repair once, never crash.

:func:`interpret` turns reply text into one :class:`CriterionResult` per criterion of the
request (the engine also uses it on cached replies). :func:`judge_request` calls the
judge, interprets, and when the reply is malformed or breaks the schema makes exactly
one repair call showing the judge its reply and what was wrong. Whatever still goes
wrong becomes ``error`` cells with a one-line reason and the raw reply kept for the
inspector: never ``unmet``, never a score of 0. Only a reply that produced a result for
every criterion is returned as ``reply`` (the one the cache may store).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.core.scoring import cell_status
from rubric_studio.judges.base import Judge, JudgeError, JudgeReply, JudgeRequest
from rubric_studio.judges.evidence import check_quotes
from rubric_studio.judges.parsing import Judgement, batch_entries, extract_json, read_single
from rubric_studio.judges.pricing import cost_usd
from rubric_studio.judges.prompts import repair_request


@dataclass
class JudgeOutcome:
    """Cells for every criterion of one request, plus what producing them cost."""

    results: dict[str, CriterionResult]
    reply: JudgeReply | None = None  # set only when every cell has a result
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0  # None: calls with tokens to a model without a known price
    error: JudgeError | None = None
    latency_s: float = 0.0


def _request_detail(request: JudgeRequest) -> dict[str, Any]:
    return {"request": {"system": request.system, "user": request.user, "schema": request.schema}}


def _is_batch(request: JudgeRequest) -> bool:
    return "criteria" in request.schema.get("properties", {})


def _cell(criterion: Criterion, judgement: Judgement, sample: Sample, detail: dict[str, Any]) -> CriterionResult:
    if criterion.kind == "analytic":
        raw: float | None = judgement.score
        score = (judgement.score or 0) / 10
    else:
        raw, score = None, 1.0 if judgement.verdict == "met" else 0.0
    return CriterionResult(
        id=criterion.key,
        status=cell_status(criterion, score),
        score=score,
        raw_score=raw,
        rationale=judgement.rationale,
        evidence=check_quotes(judgement.quotes, sample.output),
        source="judge",
        detail=dict(detail),
    )


def error_cell(criterion_id: str, error: JudgeError, detail: dict[str, Any] | None = None) -> CriterionResult:
    """An ``error`` cell: the one-line reason, and the raw reply for the inspector."""
    info = dict(detail or {})
    info.setdefault("raw_reply", error.raw)
    info["error_kind"] = error.kind
    return CriterionResult(id=criterion_id, status=Status.ERROR, error=error.message, source="judge", detail=info)


def _malformed(message: str, text: str) -> JudgeError:
    return JudgeError("malformed", message, raw=text)


def interpret(request: JudgeRequest, reply_text: str, rubric: Rubric, sample: Sample) -> dict[str, CriterionResult]:
    """One cell per criterion of ``request``. Raises JudgeError(kind="malformed") when
    nothing usable is in the reply; criteria a batch reply left out become error cells."""
    detail = {**_request_detail(request), "reply": reply_text}
    try:
        data = extract_json(reply_text)
    except ValueError as exc:
        raise _malformed(str(exc), reply_text) from None
    criteria = [rubric.criterion(cid) for cid in request.criterion_ids]
    if not _is_batch(request):
        criterion = criteria[0]
        if isinstance(data, dict) and isinstance(data.get("criteria"), list) and len(data["criteria"]) == 1:
            data = data["criteria"][0]
        try:
            judgement = read_single(data, criterion.kind == "analytic")
        except ValueError as exc:
            raise _malformed(str(exc), reply_text) from None
        return {criterion.key: _cell(criterion, judgement, sample, detail)}
    try:
        entries = batch_entries(data)
    except ValueError as exc:
        raise _malformed(str(exc), reply_text) from None
    if not any(c.key in entries for c in criteria):
        wanted = ", ".join(request.criterion_ids)
        raise _malformed(f"the reply has none of the criteria asked about ({wanted})", reply_text)
    results: dict[str, CriterionResult] = {}
    for criterion in criteria:
        if criterion.key not in entries:
            omitted = JudgeError("omitted", f"judge omitted criterion {criterion.key}", raw=reply_text)
            results[criterion.key] = error_cell(criterion.key, omitted, detail)
            continue
        try:
            judgement = read_single(entries[criterion.key], criterion.kind == "analytic")
        except ValueError as exc:
            raise _malformed(f"criterion {criterion.key}: {exc}", reply_text) from None
        results[criterion.key] = _cell(criterion, judgement, sample, detail)
    return results


async def _call(judge: Judge, request: JudgeRequest, outcome: JudgeOutcome) -> JudgeReply:
    outcome.calls += 1
    started = time.perf_counter()
    try:
        reply = await judge.complete(request)
    finally:
        outcome.latency_s += time.perf_counter() - started
    outcome.input_tokens += reply.input_tokens
    outcome.output_tokens += reply.output_tokens
    return reply


async def judge_request(judge: Judge, request: JudgeRequest, rubric: Rubric, sample: Sample) -> JudgeOutcome:
    """Call the judge for one request; every criterion of it ends with a cell, never an exception."""
    outcome = JudgeOutcome(results={})
    extra: dict[str, Any] = {}
    reply: JudgeReply | None = None
    try:
        reply = await _call(judge, request, outcome)
        try:
            results = interpret(request, reply.text, rubric, sample)
        except JudgeError as exc:
            extra = {"first_reply": reply.text, "repair_reason": exc.message}
            reply = await _call(judge, repair_request(request, reply.text, exc.message), outcome)
            try:
                results = interpret(request, reply.text, rubric, sample)
            except JudgeError as again:
                raise JudgeError("malformed", f"malformed reply after one repair: {again.message}", raw=reply.text) from None
    except JudgeError as exc:
        outcome.error = exc
        info = {**_request_detail(request), **extra, "raw_reply": exc.raw or extra.get("first_reply")}
        results = {cid: error_cell(cid, exc, info) for cid in request.criterion_ids}
    except Exception as exc:  # a provider bug must not become a traceback in the user's face
        outcome.error = JudgeError("request", f"internal error in the {judge.config.provider} judge: {type(exc).__name__}: {exc}")
        results = {cid: error_cell(cid, outcome.error, _request_detail(request)) for cid in request.criterion_ids}

    usage = {
        "input_tokens": outcome.input_tokens,
        "output_tokens": outcome.output_tokens,
        "latency_s": round(outcome.latency_s, 4),
        "model": (reply.model if reply else None) or judge.config.model,
        "calls": outcome.calls,
        **extra,
    }
    if reply is not None and reply.wire:
        usage["wire"] = reply.wire
    for result in results.values():
        result.detail.update(usage)
    omitted = [r for r in results.values() if r.status is Status.ERROR]
    if outcome.error is None and omitted:
        outcome.error = JudgeError("omitted", "; ".join(r.error or "" for r in omitted))
    outcome.results = results
    outcome.reply = reply if outcome.error is None else None
    config = judge.config
    if outcome.input_tokens or outcome.output_tokens:
        outcome.cost_usd = cost_usd(config.alias or config.provider, config.model, outcome.input_tokens, outcome.output_tokens)
    return outcome
