"""Token, call and cost accounting for a run or a session.

``judge_calls`` counts the cells sent to the judge (a batch call for 3 criteria is 3, a
re-ask adds none), ``requests`` the HTTP requests actually sent (retries, re-asks and
calls aborted mid-flight included), and the
tokens include replies that were cut off or refused (providers bill them). ``input_tokens``
counts every prompt token; ``cached_input_tokens`` and ``cache_write_tokens`` are the part
of them the provider read from and wrote to its prompt cache, each billed at its own rate.
Cost comes from the price table (:mod:`rubric_studio.judges.pricing`); calls to a
model with no known price are counted in ``unpriced_calls`` so a report never
shows a made-up total.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Usage:
    judge_calls: int = 0
    requests: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    unpriced_calls: int = 0
    wall_seconds: float = 0.0
    #: A judge panel's usage per member (label -> Usage); empty for one judge.
    members: dict[str, Usage] = field(default_factory=dict)
    #: A panel member's cells: those it judged (a verdict or an error) and those that errored, with
    #: the first error's reason, and why its judging stopped (its server went away, ...) when it
    #: did. A member that errored on any cell fails the run (exit 3), as an errored cell does.
    judged: int = 0
    errors: int = 0
    error_reason: str | None = None
    stopped: str | None = None

    def add_call(self, cells: int, requests: int, input_tokens: int, output_tokens: int, cost: float | None,
                 cached_input_tokens: int = 0, cache_write_tokens: int = 0) -> None:
        self.judge_calls += cells
        self.requests += requests
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cached_input_tokens += cached_input_tokens
        self.cache_write_tokens += cache_write_tokens
        if cost is None:
            self.unpriced_calls += cells
        else:
            self.cost_usd += cost

    def merge(self, other: Usage) -> None:
        self.judge_calls += other.judge_calls
        self.requests += other.requests
        self.cache_hits += other.cache_hits
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cached_input_tokens += other.cached_input_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cost_usd += other.cost_usd
        self.unpriced_calls += other.unpriced_calls
        self.wall_seconds += other.wall_seconds
        self.judged += other.judged
        self.errors += other.errors
        self.error_reason = self.error_reason or other.error_reason
        self.stopped = self.stopped or other.stopped
        for label, usage in other.members.items():
            self.members.setdefault(label, Usage()).merge(usage)

    def failed_members(self) -> dict[str, Usage]:
        """The panel members that errored on some cell they judged (label -> usage): the cells were
        pooled over the other members, and the run exits 3 as it does for an errored cell."""
        return {label: usage for label, usage in self.members.items() if usage.errors}

    def member_failures(self) -> list[tuple[str, bool]]:
        """(what to say, whether the member died) per panel member that errored: it failed on every
        cell it judged (from the start), it stopped answering mid-run (its judging stopped after it
        had answered some cells), or it failed on some cells and answered the others."""
        out = []
        for label, usage in self.members.items():
            if not usage.errors:
                continue
            answered = usage.judged - usage.errors
            reason = (usage.error_reason if not answered else usage.stopped) or usage.error_reason or "error"
            if not answered:
                out.append((f"judge panel member {label} failed on every cell it judged ({usage.errors} of "
                            f"{usage.judged}): {reason}", True))
            elif usage.stopped:
                out.append((f"judge panel member {label} stopped answering mid-run: failed on {usage.errors} of "
                            f"{usage.judged} cells after answering {answered} (those cells pooled over the other "
                            f"members): {reason}", True))
            else:
                out.append((f"judge panel member {label} failed on {usage.errors} of {usage.judged} cells "
                            f"(pooled over the other members): {reason}", False))
        return out

    @property
    def full_price_input_tokens(self) -> int:
        """Prompt tokens billed at the full input price (neither read from nor written to a prompt cache)."""
        return self.input_tokens - self.cached_input_tokens - self.cache_write_tokens

    def tokens_text(self) -> str:
        """``1200+80 tokens`` or, with prompt caching, ``1200+80 tokens (900 cached, 100 cache write)``."""
        text = f"{self.input_tokens}+{self.output_tokens} tokens"
        parts = [f"{self.cached_input_tokens} cached"] if self.cached_input_tokens else []
        if self.cache_write_tokens:
            parts.append(f"{self.cache_write_tokens} cache write")
        return f"{text} ({', '.join(parts)})" if parts else text

    @property
    def cost_known(self) -> bool:
        return self.unpriced_calls == 0

    def cost_text(self) -> str:
        if not self.cost_known and self.cost_usd == 0:
            return "cost unknown"
        text = f"${self.cost_usd:.4f}"
        return text if self.cost_known else f"{text} + {self.unpriced_calls} unpriced calls"

    def to_dict(self) -> dict:
        data = self._totals()
        if self.members:
            data["members"] = {label: {**usage._totals(), "errors": usage.errors,
                                       **({"stopped": usage.stopped} if usage.stopped else {})}
                               for label, usage in self.members.items()}
        return data

    def _totals(self) -> dict:
        return {
            "judge_calls": self.judge_calls,
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if (not self.cost_known and self.cost_usd == 0) else round(self.cost_usd, 6),
            "wall_seconds": round(self.wall_seconds, 3),
        }
