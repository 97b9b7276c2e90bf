"""PostgreSQL ledger: the durable system of record of every upstream call (psycopg 3,
async, one connection pool).

Tables (see `pg_migrations/`): `ledger`, one typed row per call; `spend_month`, the
counters per (period, tenant) a booking adds to in the same transaction; and
`schema_version`, the migrations applied. The schema changes only through `migrate`
(`gateway migrate`); a serving process only checks it (`check_schema`).

Every call waits at most `pool_timeout_s` for a connection, then `statement_timeout_s`
for its work (set on the server for each statement, and kept on the client, plus a
second, for a server that stops answering at all). psycopg's errors are translated in
one place, `_errors`. Error texts name the error, never a row's contents.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from importlib import resources
from typing import Any

import orjson
import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from gateway.errors import ConfigError, StoreRejected, StoreUnavailable
from gateway.store.base import FINGERPRINT_PREFIX, StoreHealth, erased_conversation
from gateway.store.cursor import decode_cursor, encode_cursor
from gateway.store.options import PostgresConfig
from gateway.store.records import (
    COUNTER_FIELDS,
    SpendRow,
    UsageRecord,
    customer_budget,
    increments,
    record_of_row,
)

Connection = psycopg.AsyncConnection[TupleRow]

_HEALTH_WAIT_S = 0.8  # /healthz answers within a second
_HEALTH_POOL_WAIT_S = 0.5  # of which this long for a connection
_CLIENT_GRACE_S = 1.0  # past the statement timeout, the client stops waiting too
# After failing this long, the pool stops retrying a lost connection in the background
# (its retries back off: 1, 2, 4 s...); the next call starts a new attempt at once. Kept
# short so that a server back from an outage is used again within seconds.
_RECONNECT_WINDOW_S = 10.0
_MIGRATION_LOCK = 0x67775F6D69677261  # pg_advisory_xact_lock key: b"gw_migra"
_MIGRATION_FILE = re.compile(r"(\d{4})_\w+\.sql")
_SCHEMA_VERSION = """
CREATE TABLE IF NOT EXISTS schema_version (
    version integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""

# The ledger's columns in table order, each with the SQL type a batch sends it as.
_LEDGER = (
    ("id", "text"),
    ("ts", "float8"),
    ("period", "text"),
    ("tenant", "text"),
    ("plan", "text"),
    ("customer", "text"),
    ("conversation", "text"),
    ("model", "text"),
    ("route", "text"),
    ("fresh_input_tokens", "int8"),
    ("cached_input_tokens", "int8"),
    ("cache_write_tokens", "int8"),
    ("output_tokens", "int8"),
    ("reasoning_tokens", "int8"),
    ("cost_units", "int8"),
    ("estimated", "bool"),
    ("budgets", "text"),  # as JSON text: an array of arrays must be rectangular
    ("reservation", "text"),
)
_COLUMNS = ", ".join(name for name, _ in _LEDGER)


def _append_sql() -> str:
    """One statement books a batch: the rows (the first of each id), and the counters
    of the rows newly inserted; it returns their ids. Rows and counters are written in
    key order, so that two concurrent batches take their locks in the same order and
    never deadlock."""
    adds = [f"add_{name}" for name in COUNTER_FIELDS]
    types = [t for _, t in _LEDGER] + ["int8"] * len(adds)
    arrays = ", ".join(f"%s::{t}[]" for t in types)
    values = ", ".join(
        "ARRAY(SELECT jsonb_array_elements_text(budgets::jsonb))" if name == "budgets" else name
        for name, _ in _LEDGER
    )
    counters = ", ".join(COUNTER_FIELDS)
    sums = ", ".join(f"sum({add})" for add in adds)
    added = ", ".join(f"{f} = spend_month.{f} + excluded.{f}" for f in COUNTER_FIELDS)
    return f"""
WITH batch AS (
    SELECT DISTINCT ON (id) *
    FROM unnest({arrays}) WITH ORDINALITY AS b({_COLUMNS}, {", ".join(adds)}, ord)
    ORDER BY id, ord
), booked AS (
    INSERT INTO ledger ({_COLUMNS}) SELECT {values} FROM batch ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING id
), counted AS (
    INSERT INTO spend_month (period, tenant, plan, {counters})
    SELECT period, tenant, (array_agg(plan ORDER BY ord DESC))[1], {sums}
    FROM batch JOIN booked ON batch.id = booked.id COLLATE "C"
    GROUP BY period, tenant
    ORDER BY period, tenant
    ON CONFLICT (period, tenant) DO UPDATE SET plan = excluded.plan, {added}
)
SELECT id FROM booked
"""


_APPEND = _append_sql()
# The plan of a tenant's latest period stands for the whole (as the SQLite store).
_SPEND = (
    "SELECT tenant, (SELECT plan FROM spend_month latest WHERE latest.tenant = m.tenant "
    "ORDER BY period DESC LIMIT 1), "
    + ", ".join(f"sum({f})" for f in COUNTER_FIELDS)
    + " FROM spend_month m {where} GROUP BY tenant ORDER BY tenant"
)


@functools.cache
def migrations() -> tuple[tuple[int, str], ...]:
    """(version, SQL) of every shipped migration, in order."""
    found = []
    for entry in resources.files("gateway.store.pg_migrations").iterdir():
        match = _MIGRATION_FILE.fullmatch(entry.name)
        if match:
            found.append((int(match[1]), entry.read_text(encoding="utf-8")))
    return tuple(sorted(found))


def latest_version() -> int:
    return migrations()[-1][0]


class PostgresLedger:
    def __init__(self, url: str, config: PostgresConfig) -> None:
        self._config = config
        self._where = _where(url)
        self._work_s = config.statement_timeout_s + _CLIENT_GRACE_S
        self._in_use = 0  # connections lent out: a pool that times out while full is busy
        self._sweeper: asyncio.Task[None] | None = None
        self._pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
            url,
            kwargs={
                "autocommit": True,  # transactions are explicit: `conn.transaction()`
                "connect_timeout": max(2, math.ceil(config.connect_timeout_s)),
                # A host gone silent (no reset, no answer): the kernel drops the
                # connection once sent data waits this long for an acknowledgement.
                "tcp_user_timeout": round(config.pool_timeout_s * 1000),
            },
            min_size=config.min_size,
            max_size=config.max_size,
            timeout=config.pool_timeout_s,
            reconnect_timeout=_RECONNECT_WINDOW_S,
            configure=self._configure,
            check=self._check,
            name="gateway-ledger",
            open=False,
        )

    async def open(self) -> None:
        """Start the pool; connections come in the background (a down server is no error
        here: calls fail with `StoreUnavailable` until it answers)."""
        await self._pool.open(wait=False)

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self._pool.close(timeout=self._config.pool_timeout_s)

    async def _configure(self, conn: Connection) -> None:
        ms = round(self._config.statement_timeout_s * 1000)
        await conn.execute("SELECT set_config('statement_timeout', %s, false)", [f"{ms}ms"])

    async def _check(self, conn: Connection) -> None:
        """Run on each connection the pool lends. One that fails usually means the
        server restarted and every idle one is dead too: test those now, rather than one
        per step of the pool's backoff while the caller waits."""
        try:
            await AsyncConnectionPool.check_connection(conn)
        except psycopg.Error:
            if self._sweeper is None or self._sweeper.done():
                self._sweeper = asyncio.create_task(self._sweep())
            raise

    async def _sweep(self) -> None:
        with contextlib.suppress(psycopg.Error):  # the pool closed meanwhile
            await self._pool.check()

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """psycopg's errors, translated in one place: data the server refuses (a counter
        past 64 bits, a NUL in a text) is the data's fault and retrying cannot help;
        anything else means the store cannot answer now."""
        try:
            yield
        except PoolTimeout as exc:
            wait = self._config.pool_timeout_s
            raise StoreUnavailable(
                f"store (postgresql) unavailable: no connection within {wait:g} s"
            ) from exc
        except (psycopg.DataError, psycopg.IntegrityError) as exc:
            raise StoreRejected(f"store (postgresql) refused the data: {_what(exc)}") from exc
        except psycopg.Error as exc:
            raise StoreUnavailable(f"store (postgresql) unavailable: {_what(exc)}") from exc
        except TimeoutError as exc:
            raise StoreUnavailable(
                f"store (postgresql) unavailable: no answer within {self._work_s:g} s"
            ) from exc

    @contextlib.asynccontextmanager
    async def _connection(self, wait_s: float | None = None) -> AsyncIterator[Connection]:
        """A pooled connection (waiting at most `wait_s`, else `pool_timeout_s`), for at
        most the statement timeout and the grace."""
        with self._errors():
            async with self._pool.connection(timeout=wait_s) as conn:
                self._in_use += 1
                try:
                    async with asyncio.timeout(self._work_s):
                        yield conn
                finally:
                    self._in_use -= 1

    async def check_schema(self) -> None:
        """Raise `ConfigError` unless the database holds the code's latest migration."""
        async with self._connection() as conn:
            version = await _schema_version(conn)
        problem = _outdated(version)
        if problem is not None:
            raise ConfigError([(self._where, "schema", problem)])

    async def migrate(self) -> list[int]:
        """Apply the pending migrations in order, each in its own transaction, under a
        lock that serializes concurrent migrators. No statement timeout: building an
        index on a large ledger takes what it takes."""
        applied: list[int] = []
        with self._errors():
            async with self._pool.connection() as conn:
                while (version := await _migrate_next(conn)) is not None:
                    applied.append(version)
        return applied

    async def append(self, records: Sequence[UsageRecord]) -> list[bool]:
        """Book a batch in one transaction (one commit), idempotent on `record.id`: True
        for a row newly booked, False for an id booked before (or earlier in the batch)."""
        if not records:
            return []
        columns = list(zip(*(_values(r) for r in records), strict=True))
        async with self._connection() as conn:
            cursor = await conn.execute(_APPEND, [list(c) for c in columns])
            booked = {row[0] for row in await cursor.fetchall()}
        first = []
        for record in records:
            first.append(record.id in booked)
            booked.discard(record.id)
        return first

    async def existing(self, ids: Sequence[str]) -> set[str]:
        """Which of these ids the ledger holds already."""
        if not ids:
            return set()
        async with self._connection() as conn:
            cursor = await conn.execute("SELECT id FROM ledger WHERE id = ANY(%s)", [list(ids)])
            return {row[0] for row in await cursor.fetchall()}

    async def spend(self, period: str | None) -> list[SpendRow]:
        """Counters per tenant for a 'YYYY-MM' period, or all periods summed when None."""
        where, args = ("WHERE period = %s", [period]) if period else ("", [])
        async with self._connection() as conn:
            cursor = await conn.execute(_SPEND.format(where=where), args)
            rows = await cursor.fetchall()
        return [SpendRow(r[0], r[1], *(int(v) for v in r[2:])) for r in rows]

    async def ledger(
        self, period: str, tenant: str | None = None, limit: int = 1000
    ) -> list[UsageRecord]:
        """Ledger records of a period, oldest first."""
        sql = f"SELECT {_COLUMNS} FROM ledger WHERE period = %s"
        args: list[Any] = [period]
        if tenant is not None:
            sql += " AND tenant = %s"
            args.append(tenant)
        return await self._records(sql + " ORDER BY ts, id LIMIT %s", [*args, limit])

    async def ledger_page(
        self, tenant: str | None, period: str | None, before: str | None, limit: int
    ) -> tuple[list[UsageRecord], str | None]:
        """A page of the ledger, newest first, and the cursor of the next page (None at
        the end). `before` is the cursor a previous page returned (None: the newest).
        Pages are keyed on (ts, id): rows booked meanwhile never shift them."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        where: list[str] = ["TRUE"]
        args: list[Any] = []
        for column, value in (("tenant", tenant), ("period", period)):
            if value is not None:
                where.append(f"{column} = %s")
                args.append(value)
        if before is not None:
            where.append("(ts, id) < (%s, %s)")
            args.extend(decode_cursor(before))
        sql = (
            f"SELECT {_COLUMNS} FROM ledger WHERE {' AND '.join(where)} "
            "ORDER BY ts DESC, id DESC LIMIT %s"
        )
        rows = await self._records(sql, [*args, limit + 1])
        if len(rows) <= limit:
            return rows, None
        return rows[:limit], encode_cursor(rows[limit - 1])

    async def customer_ledger(self, tenant: str, customer: str, limit: int) -> list[UsageRecord]:
        """The tenant's ledger rows naming the customer, oldest first, at most `limit`."""
        sql = (
            f"SELECT {_COLUMNS} FROM ledger WHERE tenant = %s AND customer = %s "
            "ORDER BY ts, id LIMIT %s"
        )
        return await self._records(sql, [tenant, customer, limit])

    async def pseudonymize(self, tenant: str, customer: str, alias: str) -> int:
        """Privacy erasure, in one transaction: the tenant's rows naming the customer name
        `alias` instead, in `customer` and in the customer's budget keys, and each
        conversation id the gateway made from their id (FINGERPRINT_PREFIX) a random one
        (the same for its every row); costs stay. Then a VACUUM of the ledger
        (`_vacuum`). Returns the rows changed."""
        rows = await self._pseudonymize(tenant, customer, alias)
        await self._vacuum()
        return rows

    async def _vacuum(self) -> None:
        """An UPDATE leaves the old row versions (naming the customer) in the table and
        its indexes until a VACUUM removes them: one now, outside the erasure's
        transaction. It frees their space without zeroing it (nor the server's WAL,
        replicas and backups), so the erasure is never `scrubbed` here. A VACUUM cut off
        by the statement timeout (a large ledger) or refused leaves the rest to
        autovacuum: the rows are pseudonymized already, the erasure stands."""
        with contextlib.suppress(StoreUnavailable, StoreRejected):
            async with self._connection() as conn:
                await conn.execute("VACUUM ledger")

    async def _pseudonymize(self, tenant: str, customer: str, alias: str) -> int:
        prefix = f"{tenant}|customer:{customer}|"
        async with self._connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "SELECT id, budgets FROM ledger WHERE tenant = %s AND customer = %s "
                "AND EXISTS (SELECT FROM unnest(budgets) AS key WHERE starts_with(key, %s)) "
                "FOR UPDATE",
                [tenant, customer, prefix],
            )
            renamed = []
            for row_id, budgets in await cursor.fetchall():
                new = [_pseudonymized(key, tenant, customer, alias) for key in budgets]
                if new != budgets:
                    renamed.append((new, row_id))
            cursor = await conn.execute(
                "SELECT DISTINCT conversation FROM ledger WHERE tenant = %s AND customer = %s "
                "AND starts_with(conversation, %s)",
                [tenant, customer, FINGERPRINT_PREFIX],
            )
            fingerprints = [
                (erased_conversation(), tenant, customer, old) for (old,) in await cursor.fetchall()
            ]
            async with conn.cursor() as many:
                await many.executemany("UPDATE ledger SET budgets = %s WHERE id = %s", renamed)
                await many.executemany(
                    "UPDATE ledger SET conversation = %s "
                    "WHERE tenant = %s AND customer = %s AND conversation = %s",
                    fingerprints,
                )
            cursor = await conn.execute(
                "UPDATE ledger SET customer = %s WHERE tenant = %s AND customer = %s",
                [alias, tenant, customer],
            )
            return cursor.rowcount

    async def ping(self) -> None:
        async with self._connection() as conn:
            await conn.execute("SELECT 1")

    async def health(self) -> StoreHealth:
        """ok, unreachable, slow or schema_outdated; never raises, answers within about a
        second."""
        try:
            async with asyncio.timeout(_HEALTH_WAIT_S):
                async with self._connection(_HEALTH_POOL_WAIT_S) as conn:
                    version = await _schema_version(conn)
        except TimeoutError:
            return StoreHealth("slow", f"{self._where}: no answer within {_HEALTH_WAIT_S:g} s")
        except StoreUnavailable as exc:
            return self._unhealthy(exc)
        problem = _outdated(version)
        if problem is not None:
            return StoreHealth("schema_outdated", f"{self._where}: {problem}")
        return StoreHealth()

    def _unhealthy(self, exc: StoreUnavailable) -> StoreHealth:
        """A server that answers late (a statement timed out, every connection is lent
        out) is slow; one that gives no connection is unreachable."""
        if isinstance(exc.__cause__, pg_errors.QueryCanceled | TimeoutError):
            return StoreHealth("slow", f"{self._where}: {exc.message}")
        if isinstance(exc.__cause__, PoolTimeout) and self._in_use >= self._config.max_size:
            busy = f"all {self._in_use} connections busy"
            return StoreHealth("slow", f"{self._where}: {busy} for {_HEALTH_POOL_WAIT_S:g} s")
        return StoreHealth("unreachable", f"{self._where}: {exc.message}")

    async def _records(self, sql: str, args: Sequence[Any]) -> list[UsageRecord]:
        async with self._connection() as conn:
            cursor = await conn.execute(sql, args)
            return [_record(row) for row in await cursor.fetchall()]


async def _migrate_next(conn: Connection) -> int | None:
    """Apply the first pending migration; None when there is none."""
    async with conn.transaction():
        await conn.execute("SET LOCAL statement_timeout = 0")
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATION_LOCK])
        await conn.execute(_SCHEMA_VERSION)
        cursor = await conn.execute("SELECT version FROM schema_version")
        done = {row[0] for row in await cursor.fetchall()}
        for version, sql in migrations():
            if version not in done:
                await conn.execute(sql.encode())  # several statements: no parameters
                await conn.execute("INSERT INTO schema_version (version) VALUES (%s)", [version])
                return version
    return None


async def _schema_version(conn: Connection) -> int:
    try:
        cursor = await conn.execute("SELECT COALESCE(max(version), 0) FROM schema_version")
    except pg_errors.UndefinedTable:
        return 0
    row = await cursor.fetchone()
    return 0 if row is None else int(row[0])


def _outdated(version: int) -> str | None:
    latest = latest_version()
    if version >= latest:  # a newer schema is the next release's, rolling out
        return None
    found = "no gateway schema" if version == 0 else f"schema version {version}"
    return f"{found}, this gateway needs version {latest}: run `gateway migrate`"


def _where(url: str) -> str:
    """The database, for messages: host, port and name, never the password."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        raise ValueError("not a valid PostgreSQL connection URL") from None
    host, port = params.get("host", "localhost"), params.get("port", 5432)
    return f"postgresql://{host}:{port}/{params.get('dbname', '')}"


def _what(exc: psycopg.Error) -> str:
    """An error's kind, without its text when the server wrote it (it may quote data)."""
    if exc.sqlstate:
        return f"{type(exc).__name__} (SQLSTATE {exc.sqlstate})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _values(record: UsageRecord) -> tuple[Any, ...]:
    """A record's ledger columns (`_LEDGER`), then how it moves each counter."""
    u = record.usage
    row = (
        record.id,
        record.ts,
        record.period,
        record.tenant,
        record.plan,
        record.customer,
        record.conversation,
        record.model,
        record.route,
        u.fresh_input,
        u.cached_input,
        u.cache_write,
        u.output,
        u.reasoning,
        record.cost_units,
        u.estimated,
        orjson.dumps(list(record.budgets)).decode(),
        record.reservation,
    )
    moves = increments(record)
    return row + tuple(moves[name] for name in COUNTER_FIELDS)


def _record(r: Sequence[Any]) -> UsageRecord:
    return record_of_row(r, tuple(r[16]), r[17])


def _pseudonymized(key: str, tenant: str, customer: str, alias: str) -> str:
    tail = customer_budget(key, tenant, customer)
    return key if tail is None else f"{tenant}|customer:{alias}|{tail}"
