"""Bookings reach the store in batches, or wait in memory until they can: nothing is lost.

`book()` queues a record and waits until it is written: the caller answers its client
only after that (a completed call is a booked call). One writer task drains the queue in
batches, so under load many bookings share one store round trip (one SQLite commit, one
Redis pipeline) instead of paying one each.

When the store is unreachable the waiting callers are released (`fail_open`: the
request goes on) and the records stay queued, in order, retried until the store answers.
At most `max_pending` are held in memory; more go to the spill file, which is queued
again once the store has taken the rest. Records carry their own id and the stores
ignore an id they already hold, so a retry never books twice. On shutdown, whatever is
still queued is written to the spill file that the next start replays.

A record the store refuses outright (`StoreRejected`: a counter would overflow) must
not stop the others: the batch is booked one record at a time, and the refused record
is set aside in the rejected-bookings file for an operator, logged and counted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import BinaryIO

import orjson

from gateway.errors import StoreUnavailable
from gateway.ops.metrics import GatewayMetrics
from gateway.store import Store
from gateway.store.base import (
    FINGERPRINT_PREFIX,
    erased_at,
    erased_conversation,
    erased_customer,
)
from gateway.store.records import UsageRecord
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway.ledger.booking")

MAX_BATCH = 256


class Bookkeeper:
    def __init__(
        self,
        store: Store,
        metrics: GatewayMetrics,
        spill_path: Path,
        *,
        max_pending: int,
        retry_s: float = 0.5,
    ) -> None:
        self._store = store
        self._metrics = metrics
        self._spill_path = spill_path
        self.rejected_path = spill_path.with_name(f"{spill_path.stem}-rejected.jsonl")
        self._max_pending = max_pending
        self._retry_s = retry_s
        self._queue: deque[UsageRecord] = deque()
        self._waiters: dict[str, asyncio.Future[None]] = {}
        self._wake = asyncio.Event()
        self._store_down = False
        self._spilled = False  # this run wrote records to the spill file
        self._replaying: list[Path] = []
        # Queued records held back by an outage or read from a spill file (a call journaled
        # at a kill comes that way too): checked against erasures when written (`_unerased`).
        self._held: set[str] = set()
        self._progress_at = time.monotonic()  # last write, or when the queue filled

    @property
    def pending(self) -> int:
        """Bookings not yet written to the store (held in memory)."""
        return len(self._queue)

    def stalled_for(self, now: float) -> float:
        """Seconds bookings have waited with none written (0 with none waiting): a
        writer that cannot drain while the store answers is wedged."""
        return now - self._progress_at if self._queue else 0.0

    async def book(self, record: UsageRecord) -> None:
        """Queue the record; return once it is written, or at once while the store is down."""
        if len(self._queue) >= self._max_pending and self.spill([record]):
            # Memory stays bounded and the record is not dropped: it is queued again
            # from the spill file once the store has taken the rest.
            self._metrics.bookings_spilled.inc()
            self._spilled = True
            return
        if not self._queue:
            self._progress_at = time.monotonic()
        self._queue.append(record)
        self._wake.set()
        if self._store_down:
            self._held.add(record.id)
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
        """Write the oldest batch; False when the store could not take it (retry later)."""
        batch = list(islice(self._queue, MAX_BATCH))
        try:
            written = await self._unerased(batch)
            await self._store.book_many(written)
            await self._release_renamed(batch, written)
        except StoreUnavailable as exc:
            self._outage(exc)
            return False
        except Exception as exc:  # noqa: BLE001 - one bad record must not stop the rest
            log.error(
                "a booking batch failed (%s): booking it record by record", type(exc).__name__
            )
            if not await self._one_by_one(batch):
                return False
        self._written(len(batch))
        return True

    async def _unerased(self, batch: list[UsageRecord]) -> list[UsageRecord]:
        """The batch as it may be written: a record held back (`_held`: through an outage
        of the store, spilled, journaled at a kill) of a call that began before its
        customer was erased is written under a pseudonym, as the erasure left the
        customer's rows (`pseudonymized`): else it would put the id back in the ledger
        and its spend counters. (A call in flight at the erasure and booked as it ends
        books under the id, where its reservation is: its customer's ceiling holds.)"""
        held = self._held
        named = {(r.tenant, r.customer) for r in batch if r.customer and r.id in held}
        if not named:
            return batch
        erased: dict[tuple[str, str], float] = {}
        for tenant, customer in named:
            at = await erased_at(self._store, tenant, customer)
            if at is not None:
                erased[(tenant, customer)] = at
        if not erased:
            return batch
        aliases: dict[tuple[str, str], str] = {}
        out = []
        for record in batch:
            key = (record.tenant, record.customer or "")
            at = erased.get(key)
            if at is not None and record.ts < at and record.id in held:
                out.append(pseudonymized(record, aliases.setdefault(key, erased_customer())))
            else:
                out.append(record)
        return out

    async def _release_renamed(
        self, batch: Sequence[UsageRecord], written: Sequence[UsageRecord]
    ) -> None:
        """A record written under a pseudonym (`_unerased`) settled no reservation under
        the customer's id, where its call held it (Redis settles a reservation in the
        budgets its record names): released there, as its call is over."""
        for held, record in zip(batch, written, strict=True):
            if record is not held and held.reservation:
                await self._store.release(held.reservation, held.budgets)

    async def _one_by_one(self, batch: list[UsageRecord]) -> bool:
        """Book each record alone and set aside those the store refuses; False when the
        store went down meanwhile (the batch stays queued: booked records are skipped)."""
        for held, record in zip(batch, await self._unerased(batch), strict=True):
            try:
                await self._store.book_many([record])
                await self._release_renamed([held], [record])
            except StoreUnavailable as exc:
                self._outage(exc)
                return False
            except Exception as exc:  # noqa: BLE001 - this record is the bad one
                self._reject(record, exc)
        return True

    def _outage(self, exc: StoreUnavailable) -> None:
        self._metrics.store_errors.inc()
        if not self._store_down:
            self._store_down = True
            log.warning("store failed, holding bookings in memory: %s", exc.message)
        self._release_all()  # fail_open: nobody waits for an outage to end
        self._held.update(r.id for r in self._queue)  # written after the outage: held back
        self._metrics.pending_bookings.set(len(self._queue))

    def _written(self, count: int) -> None:
        batch = [self._queue.popleft() for _ in range(count)]
        if self._held:
            self._held.difference_update(r.id for r in batch)
        self._progress_at = time.monotonic()
        self._release(batch)
        self._metrics.pending_bookings.set(len(self._queue))
        if self._store_down:
            self._store_down = False
            log.info("store reachable again: held bookings written")
        if not self._queue:
            if self._replaying:
                self._forget_replayed()  # every replayed record is in the store
            if self._spilled:
                self._spilled = False
                self._take_spill([self._spill_path])

    def _reject(self, record: UsageRecord, exc: Exception) -> None:
        try:
            with _private_append(self.rejected_path) as fh:
                fh.write(orjson.dumps(record.to_json()) + b"\n")
        except OSError as err:
            log.error("cannot write %s (%s): booking %s lost", self.rejected_path, err, record.id)
        self._metrics.bookings_rejected.inc()
        log.error(
            "booking %s refused by the store (%s: %s): set aside in %s",
            record.id,
            type(exc).__name__,
            exc,
            self.rejected_path,
        )

    def _forget_replayed(self) -> None:
        for path in self._replaying:
            path.unlink(missing_ok=True)
        self._replaying = []

    def _release_all(self) -> None:
        waiters, self._waiters = self._waiters, {}
        for waiter in waiters.values():
            if not waiter.done():
                waiter.set_result(None)

    def _release(self, batch: Iterable[UsageRecord]) -> None:
        for record in batch:
            waiter = self._waiters.pop(record.id, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def spill(self, records: Iterable[UsageRecord]) -> bool:
        """Append the records to the spill file, to be queued from it (`load_spill`);
        False when the disk refuses."""
        try:
            # One write per record line; readers skip a line a crash may have cut short.
            with _private_append(self._spill_path) as fh:
                for record in records:
                    fh.write(orjson.dumps(record.to_json()) + b"\n")
        except OSError as exc:
            warn_throttled(log, "cannot write the spill file %s: %s", self._spill_path, exc)
            return False
        return True

    def load_spill(self) -> None:
        """Queue the bookings a previous run could not write (see `close`). Files are
        renamed, not deleted, until their records are in the store: if this run dies
        too, the next start finds them again. Unreadable lines are skipped."""
        parent, stem = self._spill_path.parent, self._spill_path.stem
        self._take_spill([self._spill_path, *parent.glob(f"{stem}.replaying-*")])

    def _take_spill(self, candidates: list[Path]) -> None:
        parent, stem = self._spill_path.parent, self._spill_path.stem
        loaded = 0
        for path in candidates:
            taken = parent / f"{stem}.replaying-{os.getpid()}-{uuid.uuid4().hex[:12]}"
            try:
                path.rename(taken)
            except FileNotFoundError:
                continue  # another worker took it
            for line in taken.read_bytes().splitlines():
                try:
                    record = UsageRecord.from_json(orjson.loads(line))
                    self._queue.append(record)
                    self._held.add(record.id)
                    loaded += 1
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                    log.error("skipping an unreadable line of %s", path)
            self._replaying.append(taken)
        if loaded:
            self._wake.set()
            log.warning("replaying %d spilled bookings", loaded)

    async def close(self, timeout_s: float = 3.0) -> None:
        """Write what is queued (the writer task is stopped); spill the rest to disk."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        try:
            while self._queue and loop.time() < deadline:
                if not await self._write_batch():
                    await asyncio.sleep(0.2)
        finally:
            self._spill_queue()

    def _spill_queue(self) -> None:
        self._held.clear()  # (read back from the spill file as held: `_take_spill`)
        if not self._queue:
            return
        if not self.spill(self._queue):
            log.error("%d bookings lost at shutdown: no spill file", len(self._queue))
        else:
            self._forget_replayed()  # their records are in the spill file now
            log.error(
                "store still unreachable at shutdown: %d bookings spilled to %s",
                len(self._queue),
                self._spill_path,
            )
        self._release(list(self._queue))
        self._queue.clear()


def _private_append(path: Path) -> BinaryIO:
    """`path` opened to append, made readable by its owner alone when new: the records
    name customers and conversations (as the in-flight journal, `inflight`)."""
    return open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")


def pseudonymized(record: UsageRecord, alias: str) -> UsageRecord:
    """A record of an erased customer as their erasure left their rows: under `alias`,
    in the ledger and in its spend counters' names, and a conversation id the gateway
    made from their id (`fp-`) a random one."""
    named, renamed = (
        f"{record.tenant}|customer:{record.customer}|",
        f"{record.tenant}|customer:{alias}|",
    )
    conversation = record.conversation
    if conversation and conversation.startswith(FINGERPRINT_PREFIX):
        conversation = erased_conversation()
    return dataclasses.replace(
        record,
        customer=alias,
        conversation=conversation,
        budgets=tuple(
            renamed + b.removeprefix(named) if b.startswith(named) else b for b in record.budgets
        ),
    )
