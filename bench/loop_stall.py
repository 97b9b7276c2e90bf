"""How long one long request holds the event loop: a stateless app's request of a long
history (every turn folded at once on its first request), while another connection pings
`/livez` (no store, no upstream: only the loop) every 5 ms.

    python bench/loop_stall.py [--turns 100,300,900] [--repeats 2] [--tree DIR]

Prints, per history length, the request's time and the longest and median `/livez` wait
meanwhile. `--tree`: the gateway of another checkout (A/B). Numbers only; no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.servers import TENANT_KEYS, start_gateway, start_simulator, stop  # noqa: E402

LINES = [
    "My order ORD-{n} from Boston has not arrived, I paid R$ {n},00 and my email is "
    "ana{n}@example.com.",
    "I'm Ana Souza, I live at 27 Clarendon Park Road, Leicester, phone 415 555 {n:04d}.",
    "Meu pedido {n} chegou com defeito, quero trocar ou receber o dinheiro de volta.",
    "Actually the correct name is Beatriz Pereira and the deadline was until Friday the 13th.",
]


def history(turns: int, rng: random.Random) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": "You are a support agent for ACME. Be concise."}]
    for i in range(turns):
        text = rng.choice(LINES).format(n=rng.randint(1000, 9999))
        messages.append({"role": "user", "content": f"{text} ({i})"})
        messages.append(
            {
                "role": "assistant",
                "content": f"Sorry to hear that. We will refund R$ {i * 7},00 within five "
                f"business days. Protocol RES-2026-{i:06d}. Anything else?",
            }
        )
    messages.append({"role": "user", "content": "any news?"})
    return messages


async def one(url: str, turns: int, rng: random.Random) -> tuple[float, float, float]:
    stop_pinging = asyncio.Event()
    waits: list[float] = []

    async def ping() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            while not stop_pinging.is_set():
                start = time.perf_counter()
                await client.get("/livez")
                waits.append(time.perf_counter() - start)
                await asyncio.sleep(0.005)

    pinger = asyncio.create_task(ping())
    await asyncio.sleep(0.3)
    headers = {
        "Authorization": f"Bearer {TENANT_KEYS['acme']}",
        "X-Conversation-Id": f"stall-{uuid.uuid4().hex}",
        "X-Customer-Id": f"cust-{uuid.uuid4().hex[:8]}",
    }
    body = {"model": "gpt-4o-mini", "messages": history(turns, rng)}
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        start = time.perf_counter()
        reply = await client.post("/v1/chat/completions", json=body, headers=headers)
        took = time.perf_counter() - start
    reply.raise_for_status()
    await asyncio.sleep(0.2)
    stop_pinging.set()
    await pinger
    return took, max(waits), statistics.median(waits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", default="100,300,900")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--tree", help="the gateway of another checkout")
    args = parser.parse_args()
    if args.tree:
        os.environ["PYTHONPATH"] = str(Path(args.tree).resolve())
        os.environ["PYTHONSAFEPATH"] = "1"
    sim, upstream = start_simulator()
    with tempfile.TemporaryDirectory() as tmp:
        gw = start_gateway(Path(tmp), upstream, f"sqlite:///{tmp}/g.db")
        try:
            rng = random.Random(7)
            print("turns  body-messages  request   /livez max  /livez p50")
            for turns in [int(t) for t in args.turns.split(",")]:
                for _ in range(args.repeats):
                    took, worst, median = asyncio.run(one(gw.url, turns, rng))
                    print(
                        f"{turns:5d}  {2 * turns + 2:13d}  {took * 1000:6.0f} ms"
                        f"  {worst * 1000:7.1f} ms  {median * 1000:6.1f} ms"
                    )
        finally:
            gw.stop()
            stop(sim)


if __name__ == "__main__":
    main()
