"""Bookings reach the store, or wait in memory until they can: nothing is lost.

A booking that the store refuses (unreachable) is queued and retried in order by a
background task. Records carry their own id and the stores ignore an id they already
hold, so a retry never books twice. On shutdown, whatever is still queued is written
to a spill file that the next start replays.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from pathlib import Path

import orjson

from gateway.errors import StoreUnavailable
from gateway.metrics import GatewayMetrics
from gateway.store import Store
from gateway.store.records import UsageRecord

log = logging.getLogger("gateway.booking")


class Bookkeeper:
    def __init__(
        self, store: Store, metrics: GatewayMetrics, spill_path: Path, retry_s: float = 0.5
    ) -> None:
        self._store = store
        self._metrics = metrics
        self._spill_path = spill_path
        self._retry_s = retry_s
        self._pending: deque[UsageRecord] = deque()
        self._wake = asyncio.Event()

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def book(self, record: UsageRecord) -> None:
        if not self._pending:
            try:
                await self._store.book(record)
                return
            except StoreUnavailable as exc:
                self._metrics.store_errors.inc()
                log.warning("store unreachable, holding bookings in memory: %s", exc.message)
        self._queue(record)

    def _queue(self, record: UsageRecord) -> None:
        self._pending.append(record)
        self._metrics.pending_bookings.set(len(self._pending))
        self._wake.set()

    async def run(self) -> None:
        """Background task: write queued bookings, oldest first, as the store allows."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending and await self._flush_one():
                pass
            if self._pending:
                await asyncio.sleep(self._retry_s)
                self._wake.set()

    async def _flush_one(self) -> bool:
        try:
            await self._store.book(self._pending[0])
        except StoreUnavailable:
            self._metrics.store_errors.inc()
            return False
        self._pending.popleft()
        self._metrics.pending_bookings.set(len(self._pending))
        if not self._pending:
            log.info("store reachable again: held bookings written")
        return True

    def load_spill(self) -> None:
        """Queue the bookings a previous run could not write (see `spill`)."""
        if not self._spill_path.exists():
            return
        lines = self._spill_path.read_bytes().splitlines()
        for line in lines:
            if line.strip():
                self._queue(UsageRecord.from_json(orjson.loads(line)))
        self._spill_path.unlink()
        log.warning("replaying %d bookings spilled by the previous run", len(lines))

    async def close(self, timeout_s: float = 3.0) -> None:
        """Try to write what is queued; spill the rest to disk for the next start."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while self._pending and asyncio.get_running_loop().time() < deadline:
            if not await self._flush_one():
                await asyncio.sleep(0.2)
        if self._pending:
            with self._spill_path.open("ab") as fh:
                for record in self._pending:
                    fh.write(orjson.dumps(record.to_json()) + b"\n")
            log.error(
                "store still unreachable at shutdown: %d bookings spilled to %s",
                len(self._pending),
                self._spill_path,
            )
            self._pending.clear()
