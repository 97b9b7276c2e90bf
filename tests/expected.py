"""The test's own reading of what the upstream billed, independent of the gateway."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

from genai_prices import Usage, calc_price

TABLE = {"local-llama": (Decimal("0.05"), Decimal("0.10"))}


def split(usage: dict[str, Any]) -> tuple[int, int, int]:
    """(fresh input, cached input, output) from the simulator's reported usage."""
    if "input_tokens" in usage:
        return usage["input_tokens"], usage["cache_read_input_tokens"], usage["output_tokens"]
    if "prompt_tokens_details" in usage:
        cached = usage["prompt_tokens_details"]["cached_tokens"]
        return usage["prompt_tokens"] - cached, cached, usage["completion_tokens"]
    return usage["prompt_tokens"], 0, 0  # embeddings


def cost(model: str, fresh: int, cached: int, output: int) -> Decimal | None:
    if model == "text-embedding-3-small":  # no provider known: priced as its maker lists it
        return calc_price(Usage(input_tokens=fresh), model, provider_id="openai").total_price
    if model in TABLE:
        rate_in, rate_out = TABLE[model]
        return ((fresh + cached) * rate_in + output * rate_out) / Decimal(1_000_000)
    price = calc_price(
        Usage(input_tokens=fresh + cached, cache_read_tokens=cached, output_tokens=output), model
    )
    return price.total_price


def per_tenant(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    totals: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "requests": 0,
            "fresh": 0,
            "cached": 0,
            "output": 0,
            "cost": Decimal(0),
            "unpriced": 0,
        }
    )
    for entry in entries:
        tenant = entry["headers"]["x-simulator-test-tenant"]
        fresh, cached, output = split(entry["usage"])
        row = totals[tenant]
        row["requests"] += 1
        row["fresh"] += fresh
        row["cached"] += cached
        row["output"] += output
        price = cost(entry["model"], fresh, cached, output)
        if price is None:
            row["unpriced"] += 1
        else:
            row["cost"] += price.quantize(Decimal("1e-10"))
    return dict(totals)
