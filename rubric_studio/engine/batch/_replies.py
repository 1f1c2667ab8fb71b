"""What the batch jobs of a run produced, and the judge that hands it to a grading run.

:class:`Collected` holds each planned request's downloaded reply or error by cache key;
:class:`PrefetchedJudge` answers the grader's requests from it, so batch replies are read,
validated, cached and scored exactly like live ones, at the batch price. A request without a
batch reply is never asked live: its error says why (:func:`missing_result`, :func:`not_in_a_job`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rubric_studio.judges.base import Judge, JudgeConfig, JudgeError, JudgeReply, JudgeRequest


@dataclass
class Collected:
    """What the jobs of a run produced, by cache key, and what could not be used."""

    replies: dict[str, JudgeReply] = field(default_factory=dict)
    errors: dict[str, JudgeError] = field(default_factory=dict)
    #: Job id -> successful replies to requests this run does not make (rubric or samples changed).
    unused: dict[str, int] = field(default_factory=dict)
    #: Jobs whose every batch ended and was read.
    finished: set[str] = field(default_factory=set)


def copy_error(error: JudgeError) -> JudgeError:
    """A fresh JudgeError like ``error`` (the run rewords the one it gets)."""
    fresh = JudgeError(error.kind, error.message, raw=error.raw, status=error.status)
    fresh.requests, fresh.input_tokens, fresh.output_tokens = error.requests, error.input_tokens, error.output_tokens
    return fresh


def missing_result(status: Any) -> JudgeError:
    """The error of a line a batch returned no result for, by how the batch ended."""
    from rubric_studio.judges.batch_api import line_error

    if status.state == "expired":
        return line_error("stopped", "batch request expired: the batch's 24 h window ended before it ran")
    if status.state == "cancelled":
        return line_error("stopped", "batch request canceled: the batch was cancelled before it ran")
    if status.state == "failed":
        return line_error("request", f"the batch failed: {status.detail}")
    return line_error("malformed", "malformed: the batch returned no result for this request")


def not_in_a_job() -> JudgeError:
    """The error of a planned request no job carries (so it was never sent)."""
    from rubric_studio.judges.batch_api import line_error

    return line_error("stopped", "not submitted: no batch job carries this request (the rubric or samples changed "
                                 "since the job was submitted); run grade --batch-api to submit it", requests=0)  # fmt: skip


class PrefetchedJudge(Judge):
    """A judge whose replies already arrived through a Batch API: the grader reads, caches and
    scores them exactly as live replies, with cost at the batch price."""

    def __init__(self, config: JudgeConfig, collected: Collected, *, jobs: Sequence[str] = (),
                 on_done: Callable[[], None] | None = None):
        from rubric_studio.judges.batch_api import BATCH_PRICE

        super().__init__(replace(config, price_factor=BATCH_PRICE))
        self.replies, self.errors = collected.replies, collected.errors
        #: The batch jobs the replies came from (for the report).
        self.batch_jobs = list(jobs)
        #: Called once the run through this judge is over (its replies are in the cache).
        self.on_done = on_done

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        from rubric_studio.judges.batch_api import line_error

        key = request.cache_key(self.config)
        if key in self.replies:
            return self.replies[key]
        if key in self.errors:
            raise copy_error(self.errors[key])
        raise line_error("stopped", "no batch reply for this request (a batch reply is never re-asked); grade "
                                    "without --batch-api to ask the judge live", requests=0)  # fmt: skip
