"""What pricing one call costs (`Pricer.cost`, run for every hold and every booking):
a model whose price no time changes (gpt-4o-mini standard), its service tiers (whose
rates start on a date), and a model priced by the time of day (deepseek-chat).

    python bench/pricing.py [--calls 20000] [--tree /path/to/another/checkout]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--calls", type=int, default=20000)
parser.add_argument("--tree", default=str(Path(__file__).resolve().parents[1]))
args = parser.parse_args()
sys.path.insert(0, args.tree)

from gateway.ledger.usage import TokenUsage  # noqa: E402
from gateway.spend.pricing import Pricer  # noqa: E402

USAGE = TokenUsage(fresh_input=1000, cached_input=500, output=50)
CASES = [
    ("gpt-4o-mini", "openai", None),
    ("gpt-4o-mini", "openai", "priority"),
    ("gpt-4o-mini", "openai", "flex"),
    ("deepseek-chat", "deepseek", None),
]


def per_call(pricer: Pricer, model: str, tier: str | None) -> float:
    pricer.cost(model, USAGE, tier)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(args.calls):
            pricer.cost(model, USAGE, tier)
        best = min(best, (time.perf_counter() - start) / args.calls)
    return best


for model, provider, tier in CASES:
    seconds = per_call(Pricer({}, provider), model, tier)
    print(f"{model:<15} {tier or 'standard':<9} {seconds * 1e6:6.2f} us/call (best of 5)")
