"""Store work per request as the number of conversations grows (issue 12, part 5).

Loads synthetic conversation documents (the shape the gateway stores: a header, a
summary, the opening, verbatim messages as fields; ~3 KB) through the Store API,
spread over 1,000 tenants and 100,000 customers (each with an episode index and a facts
document), then at each size measures on a sample of existing conversations:
  turn        read the conversation and its customer's facts, write the turn's changes
              (header fields, two new messages, two dropped), 2 round trips
  new conv    the customer's episode index, the facts, register in the index: 3
  booking     reserve against the tenant's and the customer's budgets, then book (the
              settlement is inside the booking script): 2
and Redis memory per conversation (INFO used_memory), and per idle conversation once
expired (a TTL'd key costs nothing once gone: measured with a short TTL on a sample).

    python bench/scale.py [--redis redis://127.0.0.1:6379/13] [--sizes 1000,10000,100000,1000000]
The database is emptied first.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis as sync_redis  # noqa: E402

from gateway.ledger.usage import TokenUsage  # noqa: E402
from gateway.store.options import RedisConfig  # noqa: E402
from gateway.store.records import UsageRecord  # noqa: E402
from gateway.store.redis import RedisStore, doc_key  # noqa: E402

TENANTS, CUSTOMERS = 1000, 100_000
SAMPLE = 1500
TTL = 30 * 86400.0
WORDS = [
    "order",
    "parcel",
    "refund",
    "address",
    "invoice",
    "delivery",
    "courier",
    "payment",
    "account",
    "store",
]


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def who(n: int) -> tuple[str, str, str]:
    return f"t{n % TENANTS}", f"cust-{n % CUSTOMERS}", f"conv-{n}"


def conversation(rng: random.Random, n: int) -> dict[str, object]:
    tenant, customer, conv = who(n)
    doc: dict[str, object] = {
        "id": conv,
        "tenant": tenant,
        "customer": customer,
        "channel": "chat",
        "plan": "pro",
        "turns": 12,
        "summary": text(rng, 120),
        "cursor": 8,
        "opening": [{"role": "user", "content": text(rng, 30)}],
        "recent_at": 8,
        "cost_units": 123456,
        "last_seen": time.time(),
        "loop_state": {"v": 2, "s": "AAAA" * 20},
    }
    for place in range(8, 14):
        doc[f"m:{place}"] = {"role": "user" if place % 2 else "assistant", "content": text(rng, 40)}
    return doc


async def load(store: RedisStore, first: int, last: int) -> None:
    rng = random.Random(first)
    sem = asyncio.Semaphore(256)

    async def one(n: int) -> None:
        tenant, customer, conv = who(n)
        async with sem:
            await store.patch_doc("conversation", tenant, conv, conversation(rng, n), (), TTL)
            entry = {"conversation": conv, "channel": "chat", "summary": text(rng, 40), "at": n}
            await store.patch_doc("episodes", tenant, customer, {conv: entry}, (), 180 * 86400.0)
            if n < CUSTOMERS:
                facts = {"facts": [{"id": f"f{n}", "text": f"name: Customer {n}", "value": str(n)}]}
                await store.put_doc("facts", tenant, f"customer:{customer}", facts)

    for start in range(first, last, 5000):
        await asyncio.gather(*(one(n) for n in range(start, min(last, start + 5000))))


async def timed(fn, rounds: list[int]) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for n in rounds:
        t0 = time.perf_counter()
        await fn(n)
        out.append((time.perf_counter() - t0) * 1e6)
    return out


async def measure(store: RedisStore, size: int) -> dict[str, float]:
    rng = random.Random(size)
    sample = [rng.randrange(size) for _ in range(SAMPLE)]

    async def turn(n: int) -> None:
        tenant, customer, conv = who(n)
        await store.get_docs(tenant, [("conversation", conv), ("facts", f"customer:{customer}")])
        changed = {
            "turns": 13,
            "last_seen": time.time(),
            "m:14": {"role": "user", "content": "x" * 200},
        }
        changed["m:15"] = {"role": "assistant", "content": "y" * 300}
        await store.patch_doc("conversation", tenant, conv, changed, ["m:8", "m:9"], TTL)

    async def start(n: int) -> None:
        tenant, customer, _ = who(n)
        new = f"new-{uuid.uuid4().hex[:8]}"
        await store.get_doc("episodes", tenant, customer)
        await store.get_doc("facts", tenant, f"customer:{customer}")
        entry = {"conversation": new, "channel": "chat", "summary": None, "at": time.time()}
        await store.patch_doc("episodes", tenant, customer, {new: entry}, (), 180 * 86400.0)

    async def booking(n: int) -> None:
        tenant, customer, conv = who(n)
        rid = uuid.uuid4().hex
        budgets = [f"{tenant}|month|2026-12", f"{tenant}|customer:{customer}|day|2026-12-01"]
        await store.reserve(rid, [(b, 10**15) for b in budgets], 5000, 120)
        record = UsageRecord(
            id=rid,
            ts=time.time(),
            tenant=tenant,
            plan="pro",
            model="gpt-4o-mini",
            usage=TokenUsage(fresh_input=1000, cached_input=500, output=50),
            cost_units=1234,
            customer=customer,
            conversation=conv,
            budgets=tuple(budgets),
            reservation=rid,
        )
        await store.book_many([record])

    figures = {}
    for name, fn in (("turn", turn), ("new conversation", start), ("booking", booking)):
        await timed(fn, sample[:100])  # warm the pool
        figures[name] = statistics.median(await timed(fn, sample))
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--keep-ledger", action="store_true", help="ledger rows in Redis too")
    args = parser.parse_args()
    raw = sync_redis.Redis.from_url(args.redis)
    raw.flushdb(asynchronous=True)
    base = int(raw.info("memory")["used_memory"])
    store = RedisStore(args.redis, RedisConfig(max_connections=300), keep_ledger=args.keep_ledger)
    print(
        f"{'conversations':>13} {'load s':>7} {'turn µs':>8} {'new conv µs':>11} "
        f"{'booking µs':>10} {'bytes/conv':>10}"
    )
    loaded = 0
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            t0 = time.perf_counter()
            await load(store, loaded, size)
            took = time.perf_counter() - t0
            loaded = size
            used = int(raw.info("memory")["used_memory"]) - base
            f = await measure(store, size)
            print(
                f"{size:>13,} {took:>7.1f} {f['turn']:>8.0f} {f['new conversation']:>11.0f} "
                f"{f['booking']:>10.0f} {used / size:>10,.0f}",
                flush=True,
            )
        # idle conversations after their TTL: expire a sample and measure what is left
        before = int(raw.info("memory")["used_memory"])
        sample = range(0, min(loaded, 10_000))
        pipe = raw.pipeline(transaction=False)
        for n in sample:
            tenant, _, conv = who(n)
            pipe.pexpire(doc_key("conversation", tenant, conv), 1)
        pipe.execute()
        time.sleep(0.2)
        for n in sample:  # touch: expired keys are reclaimed on access too
            tenant, _, conv = who(n)
            pipe.exists(doc_key("conversation", tenant, conv))
        left = sum(pipe.execute())
        after = int(raw.info("memory")["used_memory"])
        print(
            f"after TTL: {len(sample):,} idle conversations expired, {left} left, "
            f"memory freed {(before - after) / len(sample):,.0f} bytes each"
        )
    finally:
        await store.close()
        raw.flushdb(asynchronous=True)


if __name__ == "__main__":
    asyncio.run(main())
