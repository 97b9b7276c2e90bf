"""The spend guard's cost on the request path: reserve + settle (settling happens inside
the booking) against booking alone, on SQLite and Redis, one at a time and 64 at once.

    python bench/spend_guard.py [--redis redis://127.0.0.1:6379/14] [--calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.ledger.usage import TokenUsage  # noqa: E402
from gateway.store import Store, open_store  # noqa: E402
from gateway.store.records import UsageRecord  # noqa: E402

BUDGETS = ("bench|month|2026-11", "bench|day|2026-11-30")


def record(rid: str) -> UsageRecord:
    return UsageRecord(
        id=rid,
        ts=time.time(),
        tenant="bench",
        plan="pro",
        model="gpt-4o-mini",
        usage=TokenUsage(fresh_input=1000, cached_input=500, output=50),
        cost_units=1234,
        budgets=BUDGETS,
        reservation=rid,
    )


async def one(store: Store, guarded: bool) -> None:
    rid = uuid.uuid4().hex
    if guarded:
        await store.reserve(rid, [(k, 10**15) for k in BUDGETS], 5000, 120)
    await store.book_many(
        [record(rid) if guarded else dataclasses.replace(record(rid), reservation=None)]
    )


async def measure(url: str, calls: int, concurrency: int, guarded: bool) -> tuple[float, float]:
    store = open_store(url)
    await store.ping()
    todo = iter(range(calls))

    async def worker() -> None:
        for _ in todo:
            await one(store, guarded)

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await store.close()
    return wall / calls, cpu / calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    urls = {"sqlite": f"sqlite:///{tempfile.mkdtemp()}/g.db", "redis": args.redis}
    print(f"{'store':<7} {'conc':>4} {'book only':>22} {'reserve + book/settle':>24}")
    print(f"{'':<7} {'':>4} {'wall/call  CPU/call':>22} {'wall/call  CPU/call':>24}")
    for name, url in urls.items():
        for concurrency in (1, 64):
            plain = asyncio.run(measure(url, args.calls, concurrency, guarded=False))
            guard = asyncio.run(measure(url, args.calls, concurrency, guarded=True))
            print(
                f"{name:<7} {concurrency:>4} {plain[0] * 1e3:>9.3f}ms {plain[1] * 1e3:>8.3f}ms "
                f"{guard[0] * 1e3:>12.3f}ms {guard[1] * 1e3:>8.3f}ms"
            )


if __name__ == "__main__":
    main()
