"""What optimistic concurrency costs a turn's conversation write (issue 15): a plain
patch of the changed fields against the compare-and-set save (ConversationStore.save:
one swap script, plus a read and a merge for each lost race), on SQLite and Redis,
one writer at a time (c=1) and 64 at once on 64 conversations, and 2 or 4 at once on
one conversation. Each writer pauses 0-5 ms between its writes (a turn's writes are an
upstream call apart); writers that rewrite one record back to back with no pause can
starve each other (a save gives up after 16 lost races).

    python bench/conversation_writes.py [--redis redis://127.0.0.1:6379/12] [--writes 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.context.conversations import CONVERSATION, ConversationStore  # noqa: E402
from gateway.store import Store, open_store  # noqa: E402


async def prepared(store: Store, conversations: ConversationStore, n: int) -> list[object]:
    records = []
    for i in range(n):
        record = await conversations.load("bench", f"c{i}")
        if record is None:
            from gateway.context.conversation_record import ConversationRecord

            record = ConversationRecord(id=f"c{i}", tenant="bench", started=time.time())
            await conversations.save(record)
        records.append(record)
    return records


async def run(
    store: Store, mode: str, writes: int, concurrency: int, spread: int
) -> tuple[float, float]:
    """(µs per write, lost races per write)."""
    conversations = ConversationStore(store)
    lost = 0
    timings: list[float] = []
    rng = random.Random(7)

    async def writer(k: int) -> None:
        nonlocal lost
        for n in range(writes // concurrency):
            conv = f"c{(k + n) % spread}"
            record = await conversations.load("bench", conv)
            assert record is not None
            record.turns += 1
            record.last_seen = time.time()
            record.recent = [{"role": "user", "content": f"turn {n} of writer {k}"}]
            record.recent_at = record.turns
            t0 = time.perf_counter()
            if mode == "patch":
                fields = record.to_fields()
                await store.patch_doc(CONVERSATION, "bench", conv, fields, (), 86400.0)
            else:
                lost += await conversations.save(record)
            timings.append((time.perf_counter() - t0) * 1e6)
            await asyncio.sleep(rng.uniform(0, 0.005))  # a turn's next write is not at once

    await prepared(store, conversations, spread)
    await asyncio.gather(*(writer(k) for k in range(concurrency)))
    return statistics.mean(timings), lost / max(1, len(timings))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--writes", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        backends = {"sqlite": f"sqlite:///{tmp}/bench.db", "redis": args.redis}
        print(
            f"{'store':<7} {'c':>3} {'conversations':>13} {'patch µs':>9} {'CAS µs':>8} "
            f"{'lost/write':>10}"
        )
        for name, url in backends.items():
            for concurrency, spread in ((1, 64), (64, 64), (2, 1), (4, 1)):
                store = open_store(url)
                try:
                    patch, _ = await run(store, "patch", args.writes, concurrency, spread)
                    cas, lost = await run(store, "cas", args.writes, concurrency, spread)
                finally:
                    await store.close()
                print(
                    f"{name:<7} {concurrency:>3} {spread:>13} {patch:>9.0f} {cas:>8.0f} "
                    f"{lost:>10.2f}"
                )


if __name__ == "__main__":
    asyncio.run(main())
