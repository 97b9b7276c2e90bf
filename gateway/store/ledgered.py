"""A hot store (Redis) with the ledger in PostgreSQL: the deployment for many replicas.

Redis keeps what every request reads and must be fast and atomic across replicas: spend
counters, budgets, reservations, idempotency markers, conversation documents. PostgreSQL
keeps the record of every call, for finance (`/admin/spend`, `/admin/ledger`, `gateway
report` and the customer export read it).

A booking goes to Redis first (its counters and its reservation's settlement, idempotent
on the record's id), then to PostgreSQL in one transaction per batch (group commit,
idempotent on the id). When PostgreSQL is down the batch raises `StoreUnavailable`: the
bookkeeper keeps it (in memory, then in the replica's spill file) and books it again
later; Redis then answers "booked before" and changes nothing, PostgreSQL takes the
rows. So every call is counted once in each, whatever fails in between. A record Redis
booked before goes to PostgreSQL as Redis booked it (its marker keeps that until the
ledger has the row): a process killed between the two writes has its call replayed at
the next start with the in-flight journal's estimate, and the ledger must hold the
figures the ceilings counted, not those.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from gateway.errors import StoreUnavailable
from gateway.store.base import Erased, RateUse, StoreHealth
from gateway.store.postgres import PostgresLedger
from gateway.store.records import SpendRow, UsageRecord
from gateway.store.redis import RedisStore


class LedgeredStore:
    def __init__(self, hot: RedisStore, ledger: PostgresLedger) -> None:
        self.hot = hot
        self.ledger_db = ledger
        self._opened = False

    async def _open(self) -> None:
        """The pool starts on first use, and the schema is checked then: a gateway
        never writes to a database `gateway migrate` has not prepared (ConfigError)."""
        if not self._opened:
            await self.ledger_db.open()
            await self.ledger_db.check_schema()
            self._opened = True

    async def book_many(self, records: Sequence[UsageRecord]) -> list[bool]:
        """Redis first (the counters the spend guard reads stay current through a
        PostgreSQL outage), then the ledger; then the Redis idempotency markers are
        dropped, so nothing in Redis grows per call but counters. A record the ledger
        holds already was counted in Redis before it got there (Redis goes first), so it
        is not counted again, whether or not its marker is still there (a replayed spill
        file after a crash). With PostgreSQL down that check is skipped and the markers
        (kept until the ledger has the rows, else expiring after 2 days) guard the
        counters alone. A record Redis had booked before is written to the ledger with
        the figures Redis booked for it (`RedisStore.booked_records`)."""
        try:
            await self._open()
            known = await self.ledger_db.existing([r.id for r in records])
        except StoreUnavailable:
            known = set()
        todo = [r for r in records if r.id not in known]
        if todo:
            fresh = await self.hot.book_many(todo)
            before = [r for r, new in zip(todo, fresh, strict=True) if not new]
            if before:
                booked_as = {r.id: r for r in await self.hot.booked_records(before)}
                records = [booked_as.get(r.id, r) for r in records]
        await self._open()
        booked = await self.ledger_db.append(records)
        with contextlib.suppress(StoreUnavailable):  # else they expire
            await self.hot.forget_bookings(todo)
        return booked

    async def spend(self, period: str | None) -> list[SpendRow]:
        await self._open()
        return await self.ledger_db.spend(period)

    async def ledger(
        self, period: str, tenant: str | None = None, limit: int = 1000
    ) -> list[UsageRecord]:
        await self._open()
        return await self.ledger_db.ledger(period, tenant, limit)

    async def ledger_page(
        self, tenant: str | None, period: str | None, before: str | None, limit: int
    ) -> tuple[list[UsageRecord], str | None]:
        await self._open()
        return await self.ledger_db.ledger_page(tenant, period, before, limit)

    async def customer_ledger(self, tenant: str, customer: str, limit: int) -> list[UsageRecord]:
        await self._open()
        return await self.ledger_db.customer_ledger(tenant, customer, limit)

    async def erase_customer(
        self, tenant: str, customer: str, alias: str, docs: Sequence[tuple[str, str]]
    ) -> Erased:
        await self._open()
        hot = await self.hot.erase_customer(tenant, customer, alias, docs)
        rows = await self.ledger_db.pseudonymize(tenant, customer, alias)
        return dataclasses.replace(hot, ledger_rows=rows)

    async def reserve(
        self, reservation: str, budgets: Sequence[tuple[str, int]], amount: int, ttl_s: float
    ) -> str | None:
        return await self.hot.reserve(reservation, budgets, amount, ttl_s)

    async def release(self, reservation: str, budgets: Sequence[str]) -> None:
        await self.hot.release(reservation, budgets)

    async def renew(self, reservation: str, budgets: Sequence[str], ttl_s: float) -> bool:
        return await self.hot.renew(reservation, budgets, ttl_s)

    async def budgets(self, keys: Sequence[str]) -> dict[str, tuple[int, int]]:
        return await self.hot.budgets(keys)

    async def count_rate(
        self,
        tenant: str,
        counters: Sequence[tuple[str, int, int]],
        bucket_ms: int,
        span: int,
        settle_bucket: int | None = None,
    ) -> RateUse:
        return await self.hot.count_rate(tenant, counters, bucket_ms, span, settle_bucket)

    async def get_doc(self, kind: str, tenant: str, key: str) -> dict[str, Any] | None:
        return await self.hot.get_doc(kind, tenant, key)

    async def get_docs(
        self, tenant: str, wanted: Sequence[tuple[str, str]]
    ) -> list[dict[str, Any] | None]:
        return await self.hot.get_docs(tenant, wanted)

    async def put_doc(
        self, kind: str, tenant: str, key: str, doc: dict[str, Any], ttl_s: float | None = None
    ) -> None:
        await self.hot.put_doc(kind, tenant, key, doc, ttl_s)

    async def patch_doc(
        self,
        kind: str,
        tenant: str,
        key: str,
        changed: Mapping[str, Any],
        removed: Sequence[str] = (),
        ttl_s: float | None = None,
    ) -> None:
        await self.hot.patch_doc(kind, tenant, key, changed, removed, ttl_s)

    async def swap_doc(
        self,
        kind: str,
        tenant: str,
        key: str,
        changed: Mapping[str, Any],
        removed: Sequence[str],
        ttl_s: float | None,
        version: int,
    ) -> bool:
        return await self.hot.swap_doc(kind, tenant, key, changed, removed, ttl_s, version)

    async def renew_doc(self, kind: str, tenant: str, key: str, ttl_s: float) -> bool:
        return await self.hot.renew_doc(kind, tenant, key, ttl_s)

    async def delete_doc(self, kind: str, tenant: str, key: str) -> bool:
        return await self.hot.delete_doc(kind, tenant, key)

    async def list_docs(self, kind: str, tenant: str, prefix: str) -> list[dict[str, Any]]:
        return await self.hot.list_docs(kind, tenant, prefix)

    async def ping(self) -> None:
        await self.hot.ping()
        await self._open()
        await self.ledger_db.ping()

    async def health(self) -> StoreHealth:
        hot = await self.hot.health()
        return hot if not hot.ok else await self.ledger_db.health()

    async def close(self) -> None:
        try:
            await self.hot.close()
        finally:
            await self.ledger_db.close()
