"""The seed's cost curve: input tokens and cost of a conversation vs its length, with
and without the context quota, cached input priced as such.

    python bench/cost_curve.py [--turns 200] [--plot bench/results/cost_curve.png]

Three runs of the same 200-turn conversation on the simulated upstream (prices of
gpt-4o-mini from genai-prices): straight to the upstream (no quota: the whole history
every turn); through the gateway (quota 6,000 history tokens, cache-aware compaction to
the 60% low-water mark); through the gateway compacting to the exact limit every turn
(low_water 1.0: naive trimming). The cost of a conversation of length N is the sum of
its first N turns, so one run gives the whole curve.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from genai_prices import Usage, calc_price  # noqa: E402

from tests.servers import TENANT_KEYS, start_gateway, start_simulator, stop  # noqa: E402

SYSTEM = "You are the support agent of an online store. Follow the refund policy. " * 70
POINTS = (5, 10, 20, 50, 100, 150, 200)


def converse(url: str, turns: int, conversation: str) -> None:
    # Each run its own system prompt: no run may hit the simulator's cache of another.
    messages = [{"role": "system", "content": f"[{conversation}] {SYSTEM}"}]
    headers = {
        "Authorization": f"Bearer {TENANT_KEYS['acme']}",
        "X-Conversation-Id": conversation,
        "X-Conversation-Class": "default",
    }
    with httpx.Client(timeout=60) as client:
        for n in range(turns):
            text = (
                f"Turn {n}: about order ORD-{1000 + n}. " + "I still have questions about it. " * 18
            )
            messages.append({"role": "user", "content": text})
            reply = client.post(
                f"{url}/chat/completions",
                headers=headers,
                json={"model": "gpt-4o-mini", "messages": messages},
            ).json()
            messages.append(
                {"role": "assistant", "content": reply["choices"][0]["message"]["content"]}
            )


def costs(entries: list[dict]) -> list[tuple[int, int, Decimal]]:
    """(prompt tokens, cached tokens, cost) per turn."""
    out = []
    for e in entries:
        u = e["usage"]
        cached = u["prompt_tokens_details"]["cached_tokens"]
        price = calc_price(
            Usage(
                input_tokens=u["prompt_tokens"],
                cache_read_tokens=cached,
                output_tokens=u["completion_tokens"],
            ),
            "gpt-4o-mini",
        )
        out.append((u["prompt_tokens"], cached, price.total_price))
    return out


def run(args: argparse.Namespace) -> dict[str, list[tuple[int, int, Decimal]]]:
    sim, upstream = start_simulator()
    log_url = upstream.removesuffix("/v1") + "/sim/usage"
    results: dict[str, list[tuple[int, int, Decimal]]] = {}
    try:
        start = len(httpx.get(log_url).json())
        converse(upstream, args.turns, "no-quota")
        results["no quota"] = costs(httpx.get(log_url).json()[start:])
        for name, low_water in (("quota, cache-aware", 0.6), ("quota, naive trim", 1.0)):
            root = Path(tempfile.mkdtemp(prefix="curve-"))
            gw = start_gateway(root, upstream, f"sqlite:///{root / 'g.db'}")
            policy = yaml.safe_load((root / "policies" / "context.yaml").read_text())
            policy["defaults"]["low_water"] = low_water
            (root / "policies" / "context.yaml").write_text(yaml.safe_dump(policy))
            gw.restart()
            try:
                start = len(httpx.get(log_url).json())
                converse(gw.v1, args.turns, name)
                entries = [
                    e for e in httpx.get(log_url).json()[start:] if e["model"] == "gpt-4o-mini"
                ]
                results[name] = costs(entries)
            finally:
                gw.stop()
    finally:
        stop(sim)
    return results


def table(results: dict[str, list[tuple[int, int, Decimal]]]) -> str:
    lines = [
        f"{'turns':>5} | " + " | ".join(f"{name:^34}" for name in results),
        f"{'':>5} | "
        + " | ".join(f"{'input tok':>10} {'cached':>7} {'cost USD':>14}" for _ in results),
    ]
    for n in POINTS:
        cells = []
        for rows in results.values():
            head = rows[:n]
            prompt = sum(r[0] for r in head)
            cached = sum(r[1] for r in head)
            cost = sum((r[2] for r in head), Decimal(0))
            cells.append(f"{prompt:>10} {100 * cached / prompt:>6.1f}% {cost:>14.6f}")
        lines.append(f"{n:>5} | " + " | ".join(cells))
    return "\n".join(lines)


def plot(results: dict[str, list[tuple[int, int, Decimal]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, rows in results.items():
        xs = range(1, len(rows) + 1)
        tokens, money, t, m = [], [], 0, Decimal(0)
        for prompt, _, cost in rows:
            t, m = t + prompt, m + cost
            tokens.append(t)
            money.append(float(m))
        left.plot(xs, tokens, label=name)
        right.plot(xs, money, label=name)
    left.set(title="Input tokens of a conversation", xlabel="turns", ylabel="tokens (cumulative)")
    right.set(
        title="Cost of a conversation (gpt-4o-mini, cached priced)",
        xlabel="turns",
        ylabel="USD (cumulative)",
    )
    left.legend()
    right.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--plot", default=str(ROOT / "bench" / "results" / "cost_curve.png"))
    args = parser.parse_args()
    results = run(args)
    print(table(results))
    plot(results, Path(args.plot))
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
