"""From a request to cells: call the judge, read its reply, re-ask once, never crash.

:func:`read_reply` turns reply text into a cell per criterion it answers, the text to
cache for each (a criterion's own verdict, so a later per-criterion or batch run can reuse
it) and a problem per criterion it does not answer usably. :func:`judge_cells` asks about
a set of criteria of one sample (one per-criterion request, or a batch); when the reply is
malformed, or leaves out or garbles some criteria, it makes exactly one more call asking
only for those, showing the judge its reply and what was wrong. Whatever still goes wrong
becomes ``error`` cells with a one-line reason and the raw reply kept for the inspector:
never ``unmet``, never a score of 0.

Accounting (:class:`JudgeOutcome`): ``calls`` judge calls made (the first ask, the re-ask),
``requests`` HTTP requests they took (retries included), and every token the provider
billed, also for replies that were cut off or refused.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.core.scoring import cell_status
from rubric_studio.judges.base import Judge, JudgeError, JudgeReply, JudgeRequest
from rubric_studio.judges.evidence import check_sample_quotes
from rubric_studio.judges.parsing import Judgement, batch_entries, extract_json, read_single
from rubric_studio.judges.pricing import cost_usd
from rubric_studio.judges.prompts import repair_request

#: Builds the request asking about these criterion ids (one id: the per-criterion request).
Asker = Callable[[Sequence[str]], JudgeRequest]


@dataclass
class JudgeOutcome:
    """Cells for every criterion asked about, plus what producing them cost."""

    results: dict[str, CriterionResult]
    #: Criterion id -> reply text to cache under that criterion's own request (valid cells only).
    texts: dict[str, str] = field(default_factory=dict)
    reply: JudgeReply | None = None  # the last reply, when every cell has a result
    calls: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    #: Of ``input_tokens``: read from / written to the provider's prompt cache.
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = 0.0  # None: calls with tokens to a model without a known price
    error: JudgeError | None = None
    latency_s: float = 0.0
    #: Criterion id -> the body of the call that answered it, when that call judged several criteria.
    batch_bodies: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class ReadReply:
    """What one reply answered: cells and cacheable texts per criterion, problems for the rest."""

    cells: dict[str, CriterionResult] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    problems: dict[str, JudgeError] = field(default_factory=dict)


def _request_detail(request: JudgeRequest) -> dict[str, Any]:
    return {"request": {"system": request.system, "user": request.user, "schema": request.schema}}


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
        evidence=check_sample_quotes(judgement.quotes, sample),
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


def read_reply(request: JudgeRequest, reply_text: str, rubric: Rubric, sample: Sample) -> ReadReply:
    """Every criterion of ``request`` ends in ``cells`` (with its text in ``texts``) or in ``problems``."""
    read = ReadReply()
    detail = {**_request_detail(request), "reply": reply_text}
    ids = request.criterion_ids
    try:
        data = extract_json(reply_text)
    except ValueError as exc:
        read.problems = {cid: _malformed(str(exc), reply_text) for cid in ids}
        return read
    if len(ids) == 1:
        if isinstance(data, dict) and isinstance(data.get(ids[0]), dict) and not {"verdict", "score"} & set(data):
            data = data[ids[0]]
        elif isinstance(data, dict) and isinstance(data.get("criteria"), list) and len(data["criteria"]) == 1:
            data = data["criteria"][0]
        entries, single_text = {ids[0]: data}, reply_text
    else:
        try:
            entries = batch_entries(data, ids)
        except ValueError as exc:
            read.problems = {cid: _malformed(str(exc), reply_text) for cid in ids}
            return read
        single_text = None
    for cid in ids:
        criterion = rubric.criterion(cid)
        if cid not in entries:
            read.problems[cid] = JudgeError("omitted", f"the reply left out criterion {cid}", raw=reply_text)
            continue
        try:
            judgement = read_single(entries[cid], criterion.kind == "analytic")
        except ValueError as exc:
            where = f"criterion {cid}: " if single_text is None else ""
            read.problems[cid] = _malformed(f"{where}{exc}", reply_text)
            continue
        read.cells[cid] = _cell(criterion, judgement, sample, detail)
        entry = {k: v for k, v in entries[cid].items() if k != "id"} if single_text is None else None
        read.texts[cid] = single_text if entry is None else json.dumps(entry, ensure_ascii=False)
    return read


def interpret(request: JudgeRequest, reply_text: str, rubric: Rubric, sample: Sample) -> dict[str, CriterionResult]:
    """One cell per criterion of ``request`` from a stored reply. Raises JudgeError when
    any criterion has no usable answer in it (the caller asks again)."""
    read = read_reply(request, reply_text, rubric, sample)
    if read.problems:
        raise next(iter(read.problems.values()))
    return read.cells


async def _call(judge: Judge, request: JudgeRequest, outcome: JudgeOutcome) -> JudgeReply:
    outcome.calls += 1
    started = time.perf_counter()
    try:
        reply = await judge.complete(request)
    except JudgeError as error:
        outcome.requests += error.requests
        outcome.input_tokens += error.input_tokens
        outcome.output_tokens += error.output_tokens
        outcome.cached_input_tokens += getattr(error, "cached_input_tokens", 0)
        outcome.cache_write_tokens += getattr(error, "cache_write_tokens", 0)
        raise
    finally:
        outcome.latency_s += time.perf_counter() - started
    outcome.requests += reply.requests
    outcome.input_tokens += reply.input_tokens
    outcome.output_tokens += reply.output_tokens
    outcome.cached_input_tokens += reply.cached_input_tokens
    outcome.cache_write_tokens += reply.cache_write_tokens
    return reply


def _problem_text(problems: dict[str, JudgeError]) -> str:
    messages = list(dict.fromkeys(p.message for p in problems.values()))
    return "; ".join(messages[:5])


async def judge_cells(judge: Judge, ask: Asker, ids: Sequence[str], rubric: Rubric, sample: Sample) -> JudgeOutcome:
    """Judge criteria ``ids`` of ``sample``; every one ends with a cell, never an exception."""
    outcome = JudgeOutcome(results={})
    missing = list(ids)
    extra: dict[str, Any] = {}
    request = ask(missing)
    problems: dict[str, JudgeError] = {}
    try:
        for attempt in range(2):
            if attempt:
                previous = outcome.reply.text if outcome.reply else ""
                extra = {"first_reply": previous, "repair_reason": _problem_text(problems)}
                request = repair_request(ask(missing), previous, extra["repair_reason"])
            outcome.reply = await _call(judge, request, outcome)
            read = read_reply(request, outcome.reply.text, rubric, sample)
            _note_provenance(request, outcome.reply, read, outcome)
            outcome.results.update(read.cells)
            outcome.texts.update(read.texts)
            problems, missing = read.problems, [cid for cid in missing if cid in read.problems]
            if not missing:
                break
    except JudgeError as exc:
        outcome.error = exc
        if extra:  # the re-ask itself failed
            exc.reword(f"{exc.message} (re-asking after: {extra['repair_reason']})")
        info = {**_request_detail(request), **extra, "raw_reply": exc.raw or extra.get("first_reply")}
        outcome.results.update({cid: error_cell(cid, exc, info) for cid in missing})
        missing = []
    for cid in missing:  # still unanswered after the re-ask
        problem = problems[cid]
        reason = "left out by the judge again after a re-ask" if problem.kind == "omitted" else problem.message
        failure = JudgeError(problem.kind, f"malformed reply after one repair: {reason}", raw=problem.raw)
        outcome.error = outcome.error or failure
        outcome.results[cid] = error_cell(cid, failure, {**_request_detail(request), **extra})
    _finish(judge, outcome, extra)
    return outcome


def provenance_of(criterion_ids: Sequence[str], job: str | None = None) -> dict[str, Any]:
    """Where a verdict came from: a call about this criterion alone, a batch call of several, or
    (``job``) a request of provider Batch API job ``job``, with its criteria when it asked about several."""
    together = {"criteria": len(criterion_ids), "ids": list(criterion_ids)} if len(criterion_ids) > 1 else {}
    if job is not None:
        return {"mode": "batch-api", "job": job, **together}
    return {"mode": "batch", **together} if together else {"mode": "single"}


def judged_together(origin: dict[str, Any] | None) -> bool:
    """True when the verdict came from one request about several criteria (live or Batch API)."""
    origin = origin or {}
    return origin.get("mode") == "batch" or (origin.get("mode") == "batch-api" and len(origin.get("ids") or ()) > 1)


def provenance_from(origin: dict[str, Any] | None) -> dict[str, Any] | None:
    """The provenance a cache entry's ``origin`` records, its fields checked; None when it records none."""
    origin = origin or {}
    ids = origin.get("ids")
    ids = ids if isinstance(ids, list) and all(isinstance(cid, str) for cid in ids) else []
    job = origin.get("job")
    if origin.get("mode") == "single":
        return {"mode": "single"}
    if origin.get("mode") == "batch" and ids:
        return provenance_of(ids)
    if origin.get("mode") == "batch-api" and isinstance(job, str):
        return provenance_of(ids, job)
    return None


def _batch_job(reply: JudgeReply) -> str | None:
    """The provider Batch API job a reply came from (see engine.batch_run), or None for a live reply."""
    batch = (reply.wire or {}).get("batch")
    job = batch.get("job") if isinstance(batch, dict) else None
    return job if isinstance(job, str) else None


def _note_provenance(request: JudgeRequest, reply: JudgeReply, read: ReadReply, outcome: JudgeOutcome) -> None:
    """Mark the cells ``request`` answered with its provenance; keep a batch call's body for the cache."""
    origin = provenance_of(request.criterion_ids, _batch_job(reply))
    sent = reply.wire.get("request") if reply.wire else None
    for cid, cell in read.cells.items():
        cell.provenance = dict(origin)
        if judged_together(origin) and isinstance(sent, dict):
            outcome.batch_bodies[cid] = sent


def _finish(judge: Judge, outcome: JudgeOutcome, extra: dict[str, Any]) -> None:
    """Usage into every cell's detail; cost; ``reply`` kept only when nothing failed."""
    reply = outcome.reply
    usage = {
        "input_tokens": outcome.input_tokens,
        "output_tokens": outcome.output_tokens,
        "cached_input_tokens": outcome.cached_input_tokens,
        "cache_write_tokens": outcome.cache_write_tokens,
        "latency_s": round(outcome.latency_s, 4),
        "model": (reply.model if reply else None) or judge.config.model,
        "calls": outcome.calls,
        "requests": outcome.requests,
        **extra,
    }
    if reply is not None and reply.wire:
        usage["wire"] = reply.wire
    for result in outcome.results.values():
        result.detail.update(usage)
    if outcome.error is not None:
        outcome.reply = None
    config = judge.config
    if outcome.input_tokens or outcome.output_tokens:
        cost = cost_usd(config.alias or config.provider, config.model, outcome.input_tokens, outcome.output_tokens,
                        outcome.cached_input_tokens, outcome.cache_write_tokens)
        outcome.cost_usd = None if cost is None else cost * config.price_factor


async def judge_request(judge: Judge, request: JudgeRequest, rubric: Rubric, sample: Sample) -> JudgeOutcome:
    """Call the judge for one request (per-criterion or batch); every criterion ends with a cell."""
    from rubric_studio.judges.prompts import batch_request

    def ask(ids: Sequence[str]) -> JudgeRequest:
        if tuple(ids) == request.criterion_ids:
            return request
        return batch_request(sample, [rubric.criterion(cid) for cid in ids], judge.config, request.repeat_index)

    return await judge_cells(judge, ask, request.criterion_ids, rubric, sample)
