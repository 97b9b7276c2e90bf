"""SQLite backend: the default. One file, WAL, zero set-up, survives restarts.

SQLite work runs on dedicated threads (see `sqlite_threads`), so the event loop never
blocks on the disk: one thread writes, one reads, so reads never queue behind a write
waiting for another process's lock (WAL lets them proceed), and a third only probes
for `/healthz`. Several processes may share the file; a booking batch is one
`BEGIN IMMEDIATE` transaction, and writes queued at once share one (`_write`). Every call
waits at most `sqlite.busy_timeout_s`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from gateway.errors import StoreUnavailable
from gateway.store import sqlite_budgets, sqlite_docs, sqlite_rates
from gateway.store.base import Erased, RateUse, StoreHealth
from gateway.store.cursor import decode_cursor, encode_cursor
from gateway.store.options import SQLiteConfig
from gateway.store.records import (
    COUNTER_FIELDS,
    SpendRow,
    UsageRecord,
    increments,
)
from gateway.store.sqlite_customers import customer_rows, erase, records_of, truncate_wal
from gateway.store.sqlite_threads import (
    MIN_FREE_BYTES,
    SQLiteThread,
    free_bytes,
    take_write_lock,
    transaction,
    write_lock_probe,
)

T = TypeVar("T")
_HEALTH_WAIT_S = 0.4  # each of /healthz's two probes; it answers within a second
_PURGE_EVERY_S = 60.0  # a purge round starts at most this often, unless one left a backlog
_PURGE_ROUND_BATCHES = 40  # batches (sqlite_docs.PURGE_BATCH each) per round at most
_PURGE_AGAIN_S = 1.0  # a round that stopped with a backlog left: the next starts this soon

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger (
    id TEXT PRIMARY KEY,
    ts REAL NOT NULL,
    period TEXT NOT NULL,
    tenant TEXT NOT NULL,
    plan TEXT NOT NULL,
    customer TEXT,
    conversation TEXT,
    model TEXT NOT NULL,
    route TEXT NOT NULL,
    fresh_input_tokens INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL,
    cost_units INTEGER,
    estimated INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_period ON ledger (period, tenant, ts);
CREATE INDEX IF NOT EXISTS ledger_customer ON ledger (tenant, customer);
CREATE INDEX IF NOT EXISTS ledger_recent ON ledger (tenant, ts, id);
CREATE TABLE IF NOT EXISTS budget (
    key TEXT PRIMARY KEY,
    spent_units INTEGER NOT NULL DEFAULT 0,
    expires REAL
);
CREATE TABLE IF NOT EXISTS reservation (
    id TEXT NOT NULL,
    key TEXT NOT NULL,
    amount INTEGER NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (key, id)
);
CREATE INDEX IF NOT EXISTS reservation_id ON reservation (id);
CREATE TABLE IF NOT EXISTS tenant_month (
    tenant TEXT NOT NULL,
    period TEXT NOT NULL,
    plan TEXT NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    fresh_input_tokens INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cost_units INTEGER NOT NULL DEFAULT 0,
    estimated_requests INTEGER NOT NULL DEFAULT 0,
    unpriced_requests INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, period)
);
"""

_INSERT_LEDGER = """
INSERT OR IGNORE INTO ledger VALUES
(:id, :ts, :period, :tenant, :plan, :customer, :conversation, :model, :route,
 :fresh_input_tokens, :cached_input_tokens, :cache_write_tokens, :output_tokens,
 :reasoning_tokens, :cost_units, :estimated)
"""

_UPSERT_MONTH = (
    "INSERT INTO tenant_month (tenant, period, plan, "
    + ", ".join(COUNTER_FIELDS)
    + ") VALUES (:tenant, :period, :plan, "
    + ", ".join(f":{f}" for f in COUNTER_FIELDS)
    + ") ON CONFLICT (tenant, period) DO UPDATE SET plan = excluded.plan, "
    + ", ".join(f"{f} = {f} + excluded.{f}" for f in COUNTER_FIELDS)
)


def _reserve(
    conn: sqlite3.Connection,
    reservation: str,
    budgets: Sequence[tuple[str, int]],
    amount: int,
    ttl_s: float,
    now: float,
) -> str | None:
    """Check every budget and reserve against all of them in one write transaction: the
    file lock makes it atomic across every process that shares the file."""
    with transaction(conn):
        blocked = None
        for key, limit in budgets:
            conn.execute("DELETE FROM reservation WHERE key = ? AND expires_at <= ?", (key, now))
            spent = conn.execute("SELECT spent_units FROM budget WHERE key = ?", (key,)).fetchone()
            held = conn.execute(
                "SELECT COALESCE(SUM(amount), 0) FROM reservation WHERE key = ?", (key,)
            ).fetchone()[0]
            if (spent[0] if spent else 0) + held + amount > limit:
                blocked = key
                break
        if blocked is None:
            conn.executemany(
                "INSERT OR REPLACE INTO reservation VALUES (?, ?, ?, ?)",
                [(reservation, key, amount, now + ttl_s) for key, _ in budgets],
            )
    return blocked


def _purge_docs(conn: sqlite3.Connection, now: float) -> tuple[bool, bool]:
    """A batch of expired documents deleted: (any deleted, the batch was full: more may
    be left)."""
    gone = sqlite_docs.purge(conn, now)
    return gone > 0, gone >= sqlite_docs.PURGE_BATCH


def _purge_budgets(conn: sqlite3.Connection, now: float) -> tuple[bool, bool]:
    """A batch of ended periods' budget counters deleted: (any touched, it was full)."""
    gone = sqlite_budgets.purge(conn, now)
    return gone > 0, gone >= sqlite_budgets.BATCH


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    # NORMAL: a committed booking survives a killed process; only a power loss may drop
    # the last transactions.
    conn.execute("PRAGMA synchronous=NORMAL")
    # Deleted content is overwritten with zeros, so that no old version of a document
    # (a conversation is rewritten every turn) survives in the file's free pages after a
    # customer is erased.
    conn.execute("PRAGMA secure_delete=ON")
    # A reset write-ahead log is cut to nothing: stale frames do not outlive the reset.
    conn.execute("PRAGMA journal_size_limit=0")
    conn.executescript(_SCHEMA + sqlite_docs.SCHEMA + sqlite_rates.SCHEMA)
    sqlite_docs.setup(conn)
    sqlite_budgets.setup(conn)


def _no_setup(conn: sqlite3.Connection) -> None:
    pass


class SQLiteStore:
    def __init__(self, path: str, config: SQLiteConfig) -> None:
        self._path = path
        timeout = config.busy_timeout_s
        self._writer = SQLiteThread(path, "writer", timeout, _setup)
        self._reader = SQLiteThread(path, "reader", timeout, _setup)
        # The probe only takes the lock: no set-up that could itself wait for it.
        self._prober = SQLiteThread(path, "health", timeout, _no_setup)
        self._purge_at = 0.0
        self._purging: asyncio.Task[None] | None = None

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """A write (or anything that must not run beside a write of this process)."""
        return await self._writer.run(fn)

    @property
    def writes_together(self) -> int:
        """Writes that shared their transaction (and COMMIT) with others queued beside them."""
        return self._writer.jobs_together

    async def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """A write in one `transaction` (or one statement): it may share the transaction
        of other writes queued at the same time (gateway.store.sqlite_threads)."""
        return await self._writer.run(fn, together=True)

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await self._reader.run(fn)

    async def book_many(self, records: Sequence[UsageRecord]) -> list[bool]:
        booked = await self._write(lambda conn: _book_many(conn, records))
        self._start_purge(time.time())
        return booked

    async def spend(self, period: str | None) -> list[SpendRow]:
        return await self._read(lambda conn: _spend(conn, period))

    async def ledger(
        self, period: str, tenant: str | None = None, limit: int = 1000
    ) -> list[UsageRecord]:
        return await self._read(lambda conn: _ledger(conn, period, tenant, limit))

    async def ledger_page(
        self, tenant: str | None, period: str | None, before: str | None, limit: int
    ) -> tuple[list[UsageRecord], str | None]:
        after = None if before is None else decode_cursor(before)
        rows = await self._read(lambda conn: _page(conn, tenant, period, after, limit + 1))
        if len(rows) <= limit:
            return rows, None
        return rows[:limit], encode_cursor(rows[limit - 1])

    async def reserve(
        self, reservation: str, budgets: Sequence[tuple[str, int]], amount: int, ttl_s: float
    ) -> str | None:
        if not budgets:
            return None
        now = time.time()
        return await self._write(
            lambda conn: _reserve(conn, reservation, budgets, amount, ttl_s, now)
        )

    async def release(self, reservation: str, budgets: Sequence[str]) -> None:
        sql = "DELETE FROM reservation WHERE id = ?"
        await self._write(lambda conn: conn.execute(sql, (reservation,)))

    async def renew(self, reservation: str, budgets: Sequence[str], ttl_s: float) -> bool:
        now = time.time()
        sql = "UPDATE reservation SET expires_at = ? WHERE id = ? AND expires_at > ?"
        cursor = await self._write(lambda conn: conn.execute(sql, (now + ttl_s, reservation, now)))
        return cursor.rowcount > 0

    async def budgets(self, keys: Sequence[str]) -> dict[str, tuple[int, int]]:
        now = time.time()

        def read(conn: sqlite3.Connection) -> dict[str, tuple[int, int]]:
            out = {}
            for key in keys:
                spent = conn.execute(
                    "SELECT spent_units FROM budget WHERE key = ?", (key,)
                ).fetchone()
                held = conn.execute(
                    "SELECT COALESCE(SUM(amount), 0) FROM reservation "
                    "WHERE key = ? AND expires_at > ?",
                    (key, now),
                ).fetchone()[0]
                out[key] = (spent[0] if spent else 0, held)
            return out

        return await self._read(read)

    async def count_rate(
        self,
        tenant: str,
        counters: Sequence[tuple[str, int, int]],
        bucket_ms: int,
        span: int,
        settle_bucket: int | None = None,
    ) -> RateUse:
        now_ms = int(time.time() * 1000)
        return await self._write(
            lambda conn: sqlite_rates.count(
                conn, tenant, counters, bucket_ms, span, settle_bucket, now_ms
            )
        )

    async def get_doc(self, kind: str, tenant: str, key: str) -> dict[str, Any] | None:
        now = time.time()
        return await self._read(lambda conn: sqlite_docs.read(conn, (kind, tenant, key), now))

    async def get_docs(
        self, tenant: str, wanted: Sequence[tuple[str, str]]
    ) -> list[dict[str, Any] | None]:
        now = time.time()
        return await self._read(
            lambda conn: [sqlite_docs.read(conn, (kind, tenant, key), now) for kind, key in wanted]
        )

    async def put_doc(
        self, kind: str, tenant: str, key: str, doc: dict[str, Any], ttl_s: float | None = None
    ) -> None:
        await self._write_doc((kind, tenant, key), doc, (), ttl_s, replace=True)

    async def patch_doc(
        self,
        kind: str,
        tenant: str,
        key: str,
        changed: Mapping[str, Any],
        removed: Sequence[str] = (),
        ttl_s: float | None = None,
    ) -> None:
        await self._write_doc((kind, tenant, key), changed, removed, ttl_s, replace=False)

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
        now = time.time()
        ident = (kind, tenant, key)
        return await self._write(
            lambda conn: sqlite_docs.swap(conn, ident, changed, removed, ttl_s, now, version)
        )

    async def _write_doc(
        self,
        ident: tuple[str, str, str],
        changed: Mapping[str, Any],
        removed: Sequence[str],
        ttl_s: float | None,
        *,
        replace: bool,
    ) -> None:
        now = time.time()
        await self._write(
            lambda conn: sqlite_docs.write(
                conn, ident, changed, removed, ttl_s, now, replace=replace
            )
        )
        self._start_purge(now)

    def _start_purge(self, now: float) -> None:
        """A purge round is started by a write (a document's, a booking's) when one is due."""
        if now >= self._purge_at and self._purging is None:
            self._purge_at = now + _PURGE_EVERY_S
            self._purging = asyncio.get_running_loop().create_task(self._purge())

    async def _purge(self) -> None:
        """A purge round, beside the requests (never awaited by one): expired documents,
        then the budget counters of ended periods (sqlite_budgets), a batch per writer
        job (one short transaction each, the writes queued meanwhile run between them),
        batch after batch while they come back full, so a backlog is cleared however
        fast documents expire. At most _PURGE_ROUND_BATCHES batches of each: a backlog
        left then starts the next round _PURGE_AGAIN_S later. A round that deleted
        anything then truncates the write-ahead log, as an erasure does: the old page
        images of what expired must not outlive it there."""
        try:
            left = deleted = False
            for purge in (_purge_docs, _purge_budgets):
                for _ in range(_PURGE_ROUND_BATCHES):
                    some, full = await self._purge_batch(purge)
                    deleted = deleted or some
                    if not full:
                        break
                else:
                    left = True
            if deleted:
                # A reader holding the log back: its stale frames go at its next reset
                # (`journal_size_limit` 0), or at the next round that deletes.
                await self._run(truncate_wal)
            if left:
                self._purge_at = min(self._purge_at, time.time() + _PURGE_AGAIN_S)
        except StoreUnavailable:
            pass  # the next round tries again
        finally:
            self._purging = None

    async def _purge_batch(
        self, purge: Callable[[sqlite3.Connection, float], tuple[bool, bool]]
    ) -> tuple[bool, bool]:
        return await self._run(lambda conn: purge(conn, time.time()))

    async def purged(self) -> None:
        """Wait for the purge round under way, if any."""
        if self._purging is not None:
            await asyncio.shield(self._purging)

    async def renew_doc(self, kind: str, tenant: str, key: str, ttl_s: float) -> bool:
        now = time.time()
        ident = (kind, tenant, key)
        return await self._write(lambda conn: sqlite_docs.renew(conn, ident, ttl_s, now))

    async def delete_doc(self, kind: str, tenant: str, key: str) -> bool:
        return await self._write(lambda conn: sqlite_docs.delete(conn, (kind, tenant, key)))

    async def list_docs(self, kind: str, tenant: str, prefix: str) -> list[dict[str, Any]]:
        now = time.time()
        return await self._read(lambda conn: sqlite_docs.listing(conn, kind, tenant, prefix, now))

    async def customer_ledger(self, tenant: str, customer: str, limit: int) -> list[UsageRecord]:
        return await self._read(lambda conn: customer_rows(conn, tenant, customer, limit))

    async def erase_customer(
        self, tenant: str, customer: str, alias: str, docs: Sequence[tuple[str, str]]
    ) -> Erased:
        erased = await self._run(lambda conn: erase(conn, tenant, customer, alias, docs))
        scrubbed = await self._run(truncate_wal)
        return dataclasses.replace(erased, scrubbed=scrubbed)

    async def ping(self) -> None:
        """Can the store read, and take a booking? Once a write has failed, writing is
        checked too (at once while writes fail fast), so `fail_closed` refuses calls
        that could not be booked, not just calls that could not be read."""
        await self._read(lambda conn: conn.execute("SELECT 1").fetchone())
        if self._writer.failing:
            await self._run(take_write_lock)

    async def health(self) -> StoreHealth:
        """Checked on threads of their own, never queued behind the writer: can a write
        start (or who holds the lock), is the disk full, is the writer stuck, can we read."""
        for check in (self._lock_health, self._disk_health, self._writer_health):
            found = await check()
            if not found.ok:
                return found
        try:
            await self._reader.run(lambda conn: conn.execute("SELECT 1").fetchone(), _HEALTH_WAIT_S)
        except StoreUnavailable as exc:
            return StoreHealth("unreachable", exc.message)
        return StoreHealth()

    async def _lock_health(self) -> StoreHealth:
        try:
            code = await self._prober.run(write_lock_probe, _HEALTH_WAIT_S)
        except StoreUnavailable as exc:
            return StoreHealth("unreachable", exc.message)
        if code == "SQLITE_BUSY":
            return StoreHealth("locked", f"{self._path}: another connection holds the write lock")
        return (
            StoreHealth() if code is None else StoreHealth("unreachable", f"{self._path}: {code}")
        )

    async def _disk_health(self) -> StoreHealth:
        if self._writer.last_failure == "SQLITE_FULL" or free_bytes(self._path) < MIN_FREE_BYTES:
            return StoreHealth("disk_full", f"{self._path}: SQLITE_FULL, the disk is full")
        return StoreHealth()

    async def _writer_health(self) -> StoreHealth:
        busy = self._writer.busy_for()
        if busy > self._writer.timeout_s:
            return StoreHealth(
                "writer_wedged", f"{self._path}: the writer thread is stuck ({busy:.0f} s on a job)"
            )
        return StoreHealth()

    async def close(self) -> None:
        if self._purging is not None:
            self._purging.cancel()
            with contextlib.suppress(asyncio.CancelledError, StoreUnavailable):
                await self._purging
        for thread in (self._writer, self._reader, self._prober):
            await thread.close()


def _row(record: UsageRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "ts": record.ts,
        "period": record.period,
        "tenant": record.tenant,
        "plan": record.plan,
        "customer": record.customer,
        "conversation": record.conversation,
        "model": record.model,
        "route": record.route,
        "fresh_input_tokens": record.usage.fresh_input,
        "cached_input_tokens": record.usage.cached_input,
        "cache_write_tokens": record.usage.cache_write,
        "output_tokens": record.usage.output,
        "reasoning_tokens": record.usage.reasoning,
        "cost_units": record.cost_units,
        "estimated": int(record.usage.estimated),
    }


def _book_many(conn: sqlite3.Connection, records: Sequence[UsageRecord]) -> list[bool]:
    """One transaction for the whole batch: one commit, one trip to the disk."""
    booked = []
    with transaction(conn):
        for record in records:
            if record.reservation:  # settled even when the record was booked before
                conn.execute("DELETE FROM reservation WHERE id = ?", (record.reservation,))
            inserted = conn.execute(_INSERT_LEDGER, _row(record)).rowcount == 1
            if inserted:
                month = {"tenant": record.tenant, "period": record.period, "plan": record.plan}
                conn.execute(_UPSERT_MONTH, month | increments(record))
                for key in record.budgets:
                    conn.execute(
                        sqlite_budgets.ADD_SPENT,
                        (key, record.cost_units or 0, sqlite_budgets.expires(key)),
                    )
            booked.append(inserted)
    return booked


def _spend(conn: sqlite3.Connection, period: str | None) -> list[SpendRow]:
    sums = ", ".join(f"SUM({f})" for f in COUNTER_FIELDS)
    # The plan of a tenant's latest period stands for the whole.
    plan = (
        "(SELECT plan FROM tenant_month t2 WHERE t2.tenant = t.tenant ORDER BY period DESC LIMIT 1)"
    )
    where, args = ("WHERE period = ?", (period,)) if period else ("", ())
    rows = conn.execute(
        f"SELECT tenant, {plan}, {sums} FROM tenant_month t {where} "
        "GROUP BY tenant ORDER BY tenant",
        args,
    ).fetchall()
    return [SpendRow(r[0], r[1], *r[2:]) for r in rows]


def _page(
    conn: sqlite3.Connection,
    tenant: str | None,
    period: str | None,
    after: tuple[float, str] | None,
    limit: int,
) -> list[UsageRecord]:
    where: list[str] = ["1"]
    args: list[Any] = []
    for column, value in (("tenant", tenant), ("period", period)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if after is not None:
        where.append("(ts, id) < (?, ?)")
        args += after
    sql = f"SELECT * FROM ledger WHERE {' AND '.join(where)} ORDER BY ts DESC, id DESC LIMIT ?"
    return records_of(conn.execute(sql, (*args, limit)))


def _ledger(
    conn: sqlite3.Connection, period: str, tenant: str | None, limit: int
) -> list[UsageRecord]:
    sql = "SELECT * FROM ledger WHERE period = ?"
    args: tuple[Any, ...] = (period,)
    if tenant is not None:
        sql += " AND tenant = ?"
        args += (tenant,)
    return records_of(conn.execute(sql + " ORDER BY ts, rowid LIMIT ?", (*args, limit)))
