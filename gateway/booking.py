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
import os
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
        self._replaying: list[Path] = []

    @property
    def pending(self) -> int:
        """Bookings not yet written to the store."""
        return len(self._queue)

    async def book(self, record: UsageRecord) -> None:
        """Queue the record; return once it is written, or at once while the store is down."""
        self._queue.append(record)
        self._wake.set()
        if self._store_down:
            self._metrics.pending_bookings.set(len(self._queue))
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters[record.id] = waiter
        await waiter

    async def run(self) -> None:
        """Background task: write queued bookings, oldest first, in batches."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                try:
                    written = await self._write_batch()
                except Exception as exc:  # noqa: BLE001 - the writer must outlive any one batch
                    log.error("booking writer failed (%s: %s); retrying", type(exc).__name__, exc)
                    self._release_all()
                    written = False
                if not written:
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
            self._release_all()  # fail_open: nobody waits for an outage to end
            self._metrics.pending_bookings.set(len(self._queue))
            return False
        for _ in batch:
            self._queue.popleft()
        self._release(batch)
        self._metrics.pending_bookings.set(len(self._queue))
        if not self._queue and self._replaying:
            self._forget_replayed()  # every replayed record is in the store
        if self._store_down:
            self._store_down = False
            log.info("store reachable again: held bookings written")
        return True

    def _forget_replayed(self) -> None:
        for path in self._replaying:
            path.unlink(missing_ok=True)
        self._replaying = []

    def _release_all(self) -> None:
        waiters, self._waiters = self._waiters, {}
        for waiter in waiters.values():
            if not waiter.done():
                waiter.set_result(None)

    def _release(self, batch: list[UsageRecord]) -> None:
        for record in batch:
            waiter = self._waiters.pop(record.id, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def load_spill(self) -> None:
        """Queue the bookings a previous run could not write (see `close`). Files are
        renamed, not deleted, until their records are in the store: if this run dies
        too, the next start finds them again. Unreadable lines are skipped."""
        parent, stem = self._spill_path.parent, self._spill_path.stem
        candidates = [self._spill_path, *parent.glob(f"{stem}.replaying-*")]
        loaded = 0
        for path in candidates:
            taken = parent / f"{stem}.replaying-{os.getpid()}-{loaded}-{path.name[-8:]}"
            try:
                path.rename(taken)
            except FileNotFoundError:
                continue  # another worker took it
            for line in taken.read_bytes().splitlines():
                try:
                    self._queue.append(UsageRecord.from_json(orjson.loads(line)))
                    loaded += 1
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                    log.error("skipping an unreadable line of %s", path)
            self._replaying.append(taken)
        if self._replaying:
            self._wake.set()
            log.warning("replaying %d bookings left by a previous run", loaded)

    async def close(self, timeout_s: float = 3.0) -> None:
        """Write what is queued (the writer task is stopped); spill the rest to disk."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._queue and loop.time() < deadline:
            if not await self._write_batch():
                await asyncio.sleep(0.2)
        if self._queue:
            # One write per record line; readers skip a line a crash may have cut short.
            with self._spill_path.open("ab") as fh:
                for record in self._queue:
                    fh.write(orjson.dumps(record.to_json()) + b"\n")
            self._forget_replayed()  # their records are in the spill file now
            log.error(
                "store still unreachable at shutdown: %d bookings spilled to %s",
                len(self._queue),
                self._spill_path,
            )
            self._release(list(self._queue))
            self._queue.clear()
