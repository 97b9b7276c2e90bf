"""The least a window can cost on a workload, as a share of full history (issue 10).

A window cannot make two things cheaper: the output (the replies are the same whatever
the prompt held) and the requests whose whole history already fits in the quota (the
window sends them as they are, billed as full history bills them). This plays the
workload as full history on the simulator, as `gateway replay`'s baseline does, and
prints for each quota the cost left if every longer request cost nothing at all:

    floor(q) = (output cost + input cost of the requests whose history <= q) / full cost

No policy with that quota can cost less than floor(quota) on that workload. A smaller
quota lowers the floor but is not enough by itself: a window under 1,024 tokens is not
cached (RESULTS.md, 2026-12-04).

    python bench/window_cost_floor.py FILE.jsonl [--quotas 1000,2000,2500,3500,5000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.dev.replay import (
    BaselineSide,
    Sent,
    SideResult,
    conversation_offsets,
    play_conversation,
    read_workload,
)
from gateway.ledger.tokens import TokenCounter
from gateway.spend.pricing import Pricer

MODEL = "gpt-4o-mini"


class _Measured(BaselineSide):
    """Full history on the simulator, each request's size and cost kept."""

    def __init__(self) -> None:
        super().__init__(MODEL, Pricer({}, "openai"))
        self.tokens = TokenCounter()
        self.requests: list[tuple[int, Decimal, Decimal]] = []

    async def send(
        self,
        conv: dict[str, Any],
        played: str,
        channel: str,
        messages: list[Any],
        answer: str,
        at: float | None = None,
    ) -> Sent:
        sent = await super().send(conv, played, channel, messages, answer, at)
        size = self.tokens.count_messages(MODEL, messages[1:])  # the quota leaves out system
        self.requests.append((size, sent.input_cost, sent.cost))
        return sent


async def _requests(path: Path) -> list[tuple[int, Decimal, Decimal]]:
    """(history tokens after the system message, input cost, whole cost) per request."""
    side = _Measured()
    try:
        for conv in read_workload(path):
            offsets = conversation_offsets(conv, side.tokens, MODEL)
            await play_conversation(side, conv, offsets, SideResult())
    finally:
        await side.aclose()
    return side.requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", type=Path)
    parser.add_argument("--quotas", default="1000,1500,2000,2500,3500,5000")
    args = parser.parse_args()
    requests = asyncio.run(_requests(args.workload))
    whole = sum(cost for _, _, cost in requests)
    output = whole - sum(inputs for _, inputs, _ in requests)
    print(f"{args.workload}: {len(requests)} requests, full history ${whole:.4f}")
    print(f"output: {output / whole:.1%} of the full cost (no window changes it)")
    print("quota   requests sent whole   their input cost   floor (output + them)")
    for quota in (int(q) for q in args.quotas.split(",")):
        fits = [inputs for size, inputs, _ in requests if size <= quota]
        kept = sum(fits, Decimal(0))
        print(
            f"{quota:5d}   {len(fits) / len(requests):19.1%}   {kept / whole:16.1%}"
            f"   {(output + kept) / whole:21.1%}"
        )


if __name__ == "__main__":
    main()
