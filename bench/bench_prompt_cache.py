"""What prompt caching does to the bill: input tokens billed at the full price, and cost.

A 6-criterion rubric over 30 samples of ~3,000 tokens each, per-criterion mode (one call per
sample × criterion, the sample first), against the local fake server with prompt caching on:
each sample's shared prefix (system prompt + fenced sample) is written on its first call and
read on the other five. Real SDKs (openai, anthropic), real HTTP on 127.0.0.1, no reply cache.

*Before* is how the bill was computed until cached tokens were read: every prompt token at the
full input price (the same run's ``input_tokens``, priced with no cached or written tokens);
*after* is each kind of prompt token at its own rate.

Run: ``python bench/bench_prompt_cache.py``
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rubric_studio.core.loading import parse_rubric  # noqa: E402
from rubric_studio.core.samples import Sample  # noqa: E402
from rubric_studio.engine.api import make_grader  # noqa: E402
from rubric_studio.judges.pricing import cost_usd  # noqa: E402
from tests.fakellm import FakeLLM  # noqa: E402

RUBRIC = """\
name: bench-prompt-cache
judge: {{model: "{judge}", concurrency: 8, timeout: 30, max_retries: 0}}
criteria:
  - {{id: refund, outcome: Mentions the refund timeline}}
  - {{id: thanks, outcome: Thanks the customer}}
  - {{id: policy, outcome: States the refund policy}}
  - {{id: next-steps, outcome: Gives clear next steps}}
  - {{id: apology, outcome: Apologises for the delay}}
  - {{id: rude, outcome: Insults the customer, weight: -1}}
"""
N_SAMPLES, TOKENS_PER_SAMPLE = 30, 3000
JUDGES = ("openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5")
PARAGRAPH = ("Thank you for writing to us about order {i}. We are sorry for the delay. Your refund takes 5-7 "
             "business days under our refund policy, and the next step is to reply here with the receipt. ")


def samples() -> list[Sample]:
    out = []
    for i in range(N_SAMPLES):
        text = PARAGRAPH.format(i=i)
        body = (text * (TOKENS_PER_SAMPLE * 4 // len(text) + 1))[: TOKENS_PER_SAMPLE * 4]
        out.append(Sample(id=f"s{i:02d}", output=body))
    return out


async def run(judge: str, server: FakeLLM, cache_dir: Path) -> dict:
    rubric = parse_rubric(RUBRIC.format(judge=judge), "bench.yaml")
    provider = judge.split(":")[0]
    base = server.base_url_openai if provider == "openai" else server.base_url_anthropic
    env = {"OPENAI_API_KEY": "bench", "ANTHROPIC_API_KEY": "bench"}
    grader = make_grader(rubric, judge=judge, base_url=base, env=env, use_cache=False,
                         cache_path=cache_dir / f"{provider}.sqlite")
    try:
        report = await grader.run(rubric, samples())
    finally:
        await grader.aclose()
    usage = report.usage
    errors = [c.error for s in report.samples for c in s.criteria if c.error]
    if errors or report.judge_note or report.judge_stopped:
        raise SystemExit(f"{judge}: {len(errors)} errored cells: {(errors or [report.judge_note or report.judge_stopped])[0]}")
    model = judge.split(":", 1)[1]
    before = cost_usd(provider, model, usage.input_tokens, usage.output_tokens)
    return {"judge": judge, "calls": usage.judge_calls, "input": usage.input_tokens, "cached": usage.cached_input_tokens,
            "written": usage.cache_write_tokens, "full_after": usage.full_price_input_tokens, "output": usage.output_tokens,
            "before": before, "after": usage.cost_usd}


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for judge in JUDGES:
            with FakeLLM(prompt_caching=True) as server:
                rows.append(asyncio.run(run(judge, server, Path(tmp))))
    print(f"{N_SAMPLES} samples x 6 criteria (~{TOKENS_PER_SAMPLE} tokens each), per-criterion mode, "
          "fake server with prompt caching")
    print("| judge | calls | input tokens | cached (read) | cache writes | billed at full price: before → after "
          "| cost USD: before → after |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['judge']} | {r['calls']} | {r['input']:,} | {r['cached']:,} | {r['written']:,} | "
              f"{r['input']:,} → {r['full_after']:,} | {r['before']:.4f} → {r['after']:.4f} "
              f"({(r['after'] - r['before']) / r['before']:+.0%}) |")


if __name__ == "__main__":
    main()
