"""Bookings reach the store in batches, or wait in memory until they can: nothing is lost.

`book()` queues a record and waits until it is written: the caller answers its client
only after that (a completed call is a booked call). One writer task drains the queue in
batches, so under load many bookings share one store round trip (one SQLite commit, one
Redis pipeline) instead of paying one each.

When the store is unreachable the waiting callers are released (`fail_open`: the
request goes on) and the records stay queued, in order, retried until the store answers.
Records carry their own id and the stores ignore an id they already hold, so a retry
never books twice. On shutdown, whatever is still queued is written to a spill file that
the next start replays.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from itertools import islice
from pathlib import Path

import orjson

from gateway.errors import StoreUnavailable
from gateway.metrics import GatewayMetrics
from gateway.store import Store
from gateway.store.records import UsageRecord

log = logging.getLogger("gateway.booking")

MAX_BATCH = 256


class Bookkeeper:
    def __init__(
        self, store: Store, metrics: GatewayMetrics, spill_path: Path, retry_s: float = 0.5
    ) -> None:
        self._store = store
        self._metrics = metrics
        self._spill_path = spill_path
        self._retry_s = retry_s
        self._queue: deque[UsageRecord] = deque()
        self._waiters: dict[str, asyncio.Future[None]] = {}
        self._wake = asyncio.Event()
        self._store_down = False

    @property
    def pending(self) -> int:
        """Bookings not yet written to the store."""
        return len(self._queue)

    async def book(self, record: UsageRecord) -> None:
        """Queue the record; return once it is written, or held because the store is down."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters[record.id] = waiter
        self._queue.append(record)
        self._wake.set()
        await waiter

    async def run(self) -> None:
        """Background task: write queued bookings, oldest first, in batches."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                if not await self._write_batch():
                    await asyncio.sleep(self._retry_s)

    async def _write_batch(self) -> bool:
        batch = list(islice(self._queue, MAX_BATCH))
        try:
            await self._store.book_many(batch)
        except StoreUnavailable as exc:
            self._metrics.store_errors.inc()
            if not self._store_down:
                self._store_down = True
                log.warning("store unreachable, holding bookings in memory: %s", exc.message)
            self._release(batch)
            self._metrics.pending_bookings.set(len(self._queue))
            return False
        for _ in batch:
            self._queue.popleft()
        self._release(batch)
        self._metrics.pending_bookings.set(len(self._queue))
        if self._store_down:
            self._store_down = False
            log.info("store reachable again: held bookings written")
        return True

    def _release(self, batch: list[UsageRecord]) -> None:
        for record in batch:
            waiter = self._waiters.pop(record.id, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def load_spill(self) -> None:
        """Queue the bookings a previous run could not write (see `close`)."""
        if not self._spill_path.exists():
            return
        lines = [line for line in self._spill_path.read_bytes().splitlines() if line.strip()]
        self._queue.extend(UsageRecord.from_json(orjson.loads(line)) for line in lines)
        self._spill_path.unlink()
        self._wake.set()
        log.warning("replaying %d bookings spilled by the previous run", len(lines))

    async def close(self, timeout_s: float = 3.0) -> None:
        """Write what is queued (the writer task is stopped); spill the rest to disk."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._queue and loop.time() < deadline:
            if not await self._write_batch():
                await asyncio.sleep(0.2)
        if self._queue:
            with self._spill_path.open("ab") as fh:
                for record in self._queue:
                    fh.write(orjson.dumps(record.to_json()) + b"\n")
            log.error(
                "store still unreachable at shutdown: %d bookings spilled to %s",
                len(self._queue),
                self._spill_path,
            )
            self._release(list(self._queue))
            self._queue.clear()
