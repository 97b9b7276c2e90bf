"""Window build time vs history length, with warm token counts (the pure engine only).

    python bench/window_build.py

For each history length the conversation is first compacted once (as the gateway would
have done over the earlier turns), then one new turn is planned and assembled many
times. The time must follow the new messages, not the history.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.context.engine import WindowInput, assemble, compacted_memory, plan_compaction
from gateway.context.policy import DEFAULT_POLICY, load_policies
from gateway.context.summaries import extractive_summary
from gateway.context.turn import EngineTokens
from gateway.context.types import Fact, Memory
from gateway.ledger.tokens import TokenCounter


def history(turns: int) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": "You are a support agent for an online store. " * 10}]
    for n in range(turns):
        msgs.append(
            {"role": "user", "content": f"Turn {n}: about order ORD-{n:05d}, " + "details " * 60}
        )
        msgs.append({"role": "assistant", "content": f"Noted for turn {n}. " + "reply " * 25})
    return msgs


def main() -> None:
    counter = TokenCounter()
    shipped = load_policies(DEFAULT_POLICY.parent).resolve("-", "default", "default")
    policy = dataclasses.replace(shipped, quota_tokens=8000)
    facts = [
        Fact(f"f{n}", f"Fact {n}: order ORD-{n:05d} shipped", ("order",), created_at=n)
        for n in range(10)
    ]
    print(f"{'turns':>6} {'messages':>9} {'plan+assemble':>14} {'steady (no fold)':>17}")
    for turns in (10, 50, 200, 1000):
        msgs = history(turns)
        tokens = EngineTokens(counter, "gpt-4o-mini")
        inp = WindowInput(
            messages=msgs, memory=Memory(), policy=policy, facts=facts, scopes=("basic",)
        )
        compaction = plan_compaction(inp, tokens)
        memory = Memory()
        if compaction.fold:
            summary = extractive_summary("", compaction.fold, policy.summary_ceiling, tokens.text)
            memory = compacted_memory(msgs, compaction, summary)
        msgs = [*msgs, {"role": "user", "content": "and one more question"}]
        inp = dataclasses.replace(inp, messages=msgs, memory=memory)
        assemble(inp, EngineTokens(counter, "gpt-4o-mini"))  # warm the token counts
        runs = 300
        start = time.perf_counter()
        for _ in range(runs):
            t = EngineTokens(counter, "gpt-4o-mini")  # per request, as in the gateway
            plan_compaction(inp, t)
            assemble(inp, t)
        per = (time.perf_counter() - start) / runs
        print(f"{turns:>6} {len(msgs):>9} {per * 1e3:>12.3f}ms {f'(cursor {memory.cursor})':>17}")


if __name__ == "__main__":
    main()
