"""The PostgreSQL ledger against a real PostgreSQL: migrations, group-committed bookings,
pages, erasure, and what an outage or a restart looks like to a caller.

The server is `GATEWAY_TEST_POSTGRES_URL` (a database an admin may create databases
from); the module books into a database of its own, dropped at the end, and each test
into a schema of its own there."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from typing import Any, TypeVar

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from gateway.errors import ConfigError, StoreRejected, StoreUnavailable
from gateway.ledger.usage import TokenUsage
from gateway.store.options import PostgresConfig
from gateway.store.postgres import PostgresLedger
from gateway.store.records import COUNTER_FIELDS, SpendRow, UsageRecord, increments
from tests.servers import free_port

ADMIN_URL = os.environ.get("GATEWAY_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
NOV = 1_796_000_000.0  # 2026-11-30 UTC
DEC = NOV + 5 * 86400
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def admin() -> psycopg.Connection[tuple[Any, ...]]:
    return psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5)


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    name = f"gw_test_{uuid.uuid4().hex[:12]}"
    try:
        conn = admin()
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is unreachable at {ADMIN_URL}: start it, or point "
            f"GATEWAY_TEST_POSTGRES_URL at one ({exc})"
        )
    with conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(ADMIN_URL, dbname=name)
    finally:
        with admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def pg_url(database: str) -> str:
    """An empty schema of this test's own, first on the search path."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    return make_conninfo(database, options=f"-c search_path={schema}")


@contextlib.asynccontextmanager
async def migrated(url: str, **options: Any) -> AsyncIterator[PostgresLedger]:
    ledger = PostgresLedger(url, PostgresConfig(**options))
    await ledger.open()
    try:
        await ledger.migrate()
        yield ledger
    finally:
        await ledger.close()


def record(
    tenant: str = "acme",
    ts: float = NOV,
    cost: int | None = 1234,
    customer: str | None = "c1",
    budgets: tuple[str, ...] = (),
    **usage: Any,
) -> UsageRecord:
    counts: dict[str, Any] = {"fresh_input": 100, "cached_input": 50, "output": 10} | usage
    return UsageRecord(
        id=uuid.uuid4().hex,
        ts=ts,
        tenant=tenant,
        plan="pro",
        model="gpt-4o-mini",
        usage=TokenUsage(**counts),
        cost_units=cost,
        customer=customer,
        conversation="conv-1",
        budgets=budgets,
    )


def expected_spend(records: Sequence[UsageRecord]) -> list[tuple[Any, ...]]:
    """What the counters must say: the sum of each record's increments, per tenant."""
    totals: dict[str, SpendRow] = {}
    for r in records:
        totals.setdefault(r.tenant, SpendRow(r.tenant, r.plan)).add(
            SpendRow(r.tenant, r.plan, **increments(r))
        )
    return [counters(totals[t]) for t in sorted(totals)]


def counters(row: SpendRow) -> tuple[Any, ...]:
    return (row.tenant, *(getattr(row, f) for f in COUNTER_FIELDS))


def test_schema_is_refused_until_migrated_and_migrated_once(pg_url: str) -> None:
    async def scenario() -> None:
        ledgers = [PostgresLedger(pg_url, PostgresConfig()) for _ in range(2)]
        for ledger in ledgers:
            await ledger.open()
        try:
            with pytest.raises(ConfigError, match="run `gateway migrate`"):
                await ledgers[0].check_schema()
            assert (await ledgers[0].health()).state == "schema_outdated"
            # Two processes migrating at once: both succeed, the migration runs once.
            applied = await asyncio.gather(*(ledger.migrate() for ledger in ledgers))
            assert sorted(applied) == [[], [1]]
            assert await ledgers[1].migrate() == []
            await ledgers[0].check_schema()
            assert (await ledgers[0].health()).ok
        finally:
            for ledger in ledgers:
                await ledger.close()

    run(scenario())
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(1,)]


def test_a_batch_is_booked_once_and_counted_exactly(pg_url: str) -> None:
    records = [
        record(
            tenant=("acme", "globex")[n % 2],
            ts=(NOV, DEC)[n % 3 == 0] + n,
            cost=None if n % 7 == 0 else 10**12 + n,
            fresh_input=n,
            cache_write=n % 5,
            reasoning=n % 3,
            estimated=n % 4 == 0,
        )
        for n in range(300)
    ]

    async def scenario() -> None:
        async with migrated(pg_url) as ledger:
            assert await ledger.append(records) == [True] * 300
            assert await ledger.append(records) == [False] * 300  # a replay books nothing
            nov = [r for r in records if r.period == "2026-11"]
            assert [counters(r) for r in await ledger.spend("2026-11")] == expected_spend(nov)
            assert [counters(r) for r in await ledger.spend(None)] == expected_spend(records)
            # Booked and new ids in one batch: only the new ones count.
            fresh = [record(), record(tenant="globex")]
            mixed = [records[0], fresh[0], records[1], fresh[1]]
            assert await ledger.append(mixed) == [False, True, False, True]
            totals = await ledger.spend(None)
            assert [counters(r) for r in totals] == expected_spend(records + fresh)
            assert await ledger.spend("2025-01") == []

    run(scenario())


def test_the_latest_plan_stands(pg_url: str) -> None:
    async def scenario() -> None:
        async with migrated(pg_url) as ledger:
            older = dataclasses.replace(record(ts=NOV), plan="basic")
            newer = dataclasses.replace(record(ts=DEC), plan="pro")
            assert await ledger.append([newer, older]) == [True, True]
            (row,) = await ledger.spend(None)
            assert (row.plan, row.requests) == ("pro", 2)

    run(scenario())


def test_an_id_twice_in_one_batch_is_booked_once(pg_url: str) -> None:
    first = record(output=1)
    again = dataclasses.replace(first, usage=TokenUsage(output=999), cost_units=1)

    async def scenario() -> None:
        async with migrated(pg_url) as ledger:
            assert await ledger.append([first, again, record()]) == [True, False, True]
            (row,) = await ledger.spend(None)
            assert (row.requests, row.cost_units) == (2, 2 * 1234)
            assert first in await ledger.ledger("2026-11")

    run(scenario())


def test_records_read_back_equal_what_was_written(pg_url: str) -> None:
    written = [
        record(cost=None, customer=None),
        record(ts=NOV + 0.1 + 0.2, estimated=True, reasoning=7, cache_write=3),
        dataclasses.replace(
            record(ts=1_796_001_234.567_891_2, budgets=("acme|customer:c1|day|2099-11-30",)),
            id="ünïcødé-🧾-\"'\\|%_*",
            route="embeddings",
            conversation=None,
            reservation="resv-1",
        ),
        record(ts=NOV + 2**-20, cost=0, budgets=("acme|month|2099-11", "acme|customer:c1|x")),
    ]

    async def scenario() -> None:
        async with migrated(pg_url) as ledger:
            await ledger.append(written)
            oldest_first = sorted(written, key=lambda r: r.ts)
            assert await ledger.ledger("2026-11", "acme") == oldest_first
            assert await ledger.ledger("2026-11", "acme", limit=2) == oldest_first[:2]
            (page, cursor) = await ledger.ledger_page("acme", "2026-11", None, 10)
            assert (page, cursor) == (oldest_first[::-1], None)
            named = [r for r in oldest_first if r.customer == "c1"]
            assert await ledger.customer_ledger("acme", "c1", 10) == named

    run(scenario())


def test_pages_walk_every_row_once_newest_first(pg_url: str) -> None:
    # 250 rows over two tenants and two periods; several share a timestamp.
    records = [
        record(tenant=("acme", "globex")[n % 5 == 0], ts=(NOV, DEC)[n % 2] + n // 3)
        for n in range(250)
    ]

    async def walk(ledger: PostgresLedger, tenant: str | None, period: str | None) -> list[str]:
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page, cursor = await ledger.ledger_page(tenant, period, cursor, 40)
            seen += [r.id for r in page]
            # Bookings made meanwhile are newer: they never shift the pages still to come.
            await ledger.append([record(tenant="acme", ts=DEC + 10**6 + len(seen))])
            if cursor is None:
                return seen

    def newest_first(rows: Sequence[UsageRecord]) -> list[str]:
        return [r.id for r in sorted(rows, key=lambda r: (r.ts, r.id), reverse=True)]

    async def scenario() -> None:
        async with migrated(pg_url) as ledger:
            await ledger.append(records)
            acme = [r for r in records if r.tenant == "acme"]
            assert await walk(ledger, "acme", None) == newest_first(acme)
            nov = [r for r in records if r.period == "2026-11"]
            assert await walk(ledger, None, "2026-11") == newest_first(nov)
            assert await ledger.append([]) == []
            with pytest.raises(ValueError, match="limit"):
                await ledger.ledger_page("acme", None, None, 0)
            (_, cursor) = await ledger.ledger_page("acme", None, None, 1)
            assert cursor is not None and len(cursor) < 80
            for bad in ("", "!!", "not a cursor", "AAAA", cursor[:-1] + "*", "A" + cursor):
                with pytest.raises(ValueError, match="malformed ledger cursor"):
                    await ledger.ledger_page("acme", None, bad, 40)

    run(scenario())


WEIRD = 'c*1?[x]|"q"\\é'


def customer_rows(tenant: str, customer: str) -> list[UsageRecord]:
    """A customer's rows: with a day, a month and look-alike budget keys."""
    own = f"{tenant}|customer:{customer}|"
    budgets = (
        own + "day|2099-11-30",
        own + "month|2099-11",
        own + "week|2026-48",  # not a customer budget tail
        own + "day|2099-11-30|x",
        f"{tenant}|month|2099-11",
    )
    return [record(tenant, NOV + n, budgets=budgets, customer=customer) for n in range(3)]


@pytest.mark.parametrize("customer", ["c1", WEIRD])
def test_pseudonymize_renames_only_that_customer_of_that_tenant(pg_url: str, customer: str) -> None:
    erased = customer_rows("acme", customer)
    untouched = [
        *customer_rows("globex", customer),  # the same customer id, another tenant
        *customer_rows("acme", customer + "|day"),  # an id extending the erased one
        *customer_rows("acme", "c%1_"),
        record(customer=None),
    ]

    async def scenario() -> None:
        async with migrated(pg_url) as ledger:
            await ledger.append(erased + untouched)
            spend_before = await ledger.spend(None)
            assert await ledger.customer_ledger("acme", customer, 100) == erased
            assert await ledger.pseudonymize("acme", customer, "anon-7") == 3
            assert await ledger.customer_ledger("acme", customer, 100) == []
            renamed = await ledger.customer_ledger("acme", "anon-7", 100)
            assert [r.cost_units for r in renamed] == [r.cost_units for r in erased]
            assert renamed[0].budgets == (
                "acme|customer:anon-7|day|2099-11-30",
                "acme|customer:anon-7|month|2099-11",
                f"acme|customer:{customer}|week|2026-48",
                f"acme|customer:{customer}|day|2099-11-30|x",
                "acme|month|2099-11",
            )
            assert renamed == [
                dataclasses.replace(r, customer="anon-7", budgets=renamed[0].budgets)
                for r in erased
            ]
            everything = await ledger.ledger("2026-11", limit=1000)
            assert [r for r in everything if r.id in {u.id for u in untouched}] == sorted(
                untouched, key=lambda r: (r.ts, r.id)
            )
            assert await ledger.spend(None) == spend_before
            assert await ledger.pseudonymize("acme", customer, "anon-8") == 0

    run(scenario())


def test_data_the_store_cannot_hold_is_rejected_and_nothing_of_its_batch_booked(
    pg_url: str,
) -> None:
    async def scenario() -> None:
        async with migrated(pg_url) as ledger:
            good = record()
            for bad in (
                [good, record(output=2**63)],  # past a 64-bit column
                [good, record(output=2**62), record(output=2**62)],  # their sum is
                [good, record(tenant="ac\x00me")],  # PostgreSQL text holds no NUL
            ):
                with pytest.raises(StoreRejected):
                    await ledger.append(bad)
            assert await ledger.spend(None) == []
            assert await ledger.append([good]) == [True]

    run(scenario())


def test_a_down_server_fails_calls_fast_and_health_says_unreachable() -> None:
    async def scenario() -> None:
        url = f"postgresql://postgres@127.0.0.1:{free_port()}/test"
        ledger = PostgresLedger(url, PostgresConfig(pool_timeout_s=0.5))
        await ledger.open()
        try:
            for call in (ledger.append([record()]), ledger.spend(None), ledger.ping()):
                with pytest.raises(StoreUnavailable, match="postgresql"):
                    await asyncio.wait_for(call, 0.5 + 1)  # fails, never hangs
            health = await asyncio.wait_for(ledger.health(), 1.2)
            assert health.state == "unreachable"
        finally:
            await ledger.close()

    run(scenario())


def test_a_lock_held_elsewhere_times_out_instead_of_hanging(pg_url: str) -> None:
    async def scenario() -> None:
        async with migrated(pg_url, statement_timeout_s=1.0, max_size=1) as ledger:
            with psycopg.connect(pg_url) as locker:
                locker.execute("LOCK TABLE spend_month, schema_version IN ACCESS EXCLUSIVE MODE")
                with pytest.raises(StoreUnavailable, match="QueryCanceled"):
                    await asyncio.wait_for(ledger.append([record()]), 1.0 + 2)
                assert (await asyncio.wait_for(ledger.health(), 1.2)).state == "slow"
                # The only connection waits on the lock: the pool is busy, not down.
                waiting = asyncio.create_task(ledger.append([record()]))
                await asyncio.sleep(0.1)
                health = await asyncio.wait_for(ledger.health(), 1.2)
                assert health.state == "slow" and "busy" in health.detail
                with pytest.raises(StoreUnavailable):
                    await waiting
            assert await ledger.append([record()]) == [True]  # released: books again

    run(scenario())


def test_the_pool_recovers_by_itself_when_its_connections_are_killed(pg_url: str) -> None:
    """As a server restart looks to the pool: every backend it holds is terminated."""
    dbname = conninfo_to_dict(pg_url)["dbname"]

    async def scenario() -> None:
        async with migrated(pg_url, max_size=4) as ledger:
            # Four at once: the pool holds several connections, all about to die.
            await asyncio.gather(*(ledger.append([record()]) for _ in range(4)))
            with admin() as conn:
                killed = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    [dbname],
                ).fetchone()
            assert killed is not None and killed[0] >= 1
            after = record(tenant="globex")
            failures = 0
            async with asyncio.timeout(10):
                while True:
                    try:
                        assert await ledger.append([after]) == [True]
                        break
                    except StoreUnavailable:
                        failures += 1
                        await asyncio.sleep(0.2)
            assert failures <= 1
            rows = {r.tenant: r.requests for r in await ledger.spend(None)}
            assert rows == {"acme": 4, "globex": 1}

    run(scenario())


def test_beside_the_ledger_redis_keeps_no_marker_per_call_and_counts_each_call_once(
    pg_url: str, redis_url: str
) -> None:
    """Nothing in Redis grows per call but counters: a booking's idempotency marker is
    dropped once the ledger has its row. A replay afterwards (a spill file replayed
    after a crash) is found in the ledger and counted nowhere again; one replayed while
    its marker still stands (Redis took it, the ledger did not yet) is kept out by it."""
    from gateway.store.ledgered import LedgeredStore
    from gateway.store.options import RedisConfig
    from gateway.store.redis import RedisStore
    from tests.servers import redis_client

    async def go() -> tuple[list[SpendRow], list[SpendRow], list[Any]]:
        hot = RedisStore(redis_url, RedisConfig(), keep_ledger=False)
        async with migrated(pg_url) as ledger:
            store = LedgeredStore(hot, ledger)
            first = [record() for _ in range(20)]
            await store.book_many(first)
            once = await hot.spend("2026-11")
            await store.book_many(first)  # replayed after its markers are gone
            half = [record() for _ in range(5)]
            await hot.book_many(half)  # Redis took them, then the process died
            await store.book_many(half)  # the spill replayed: markers keep them out
            again = await hot.spend("2026-11")
            rows = await ledger.ledger("2026-11", limit=100)
            await hot.close()
            return once, again, rows

    once, again, rows = run(go())
    client = redis_client(redis_url)
    assert list(client.scan_iter(match="*:booked:*")) == []  # no marker left
    assert len(rows) == 25
    assert once[0].requests == 20 and again[0].requests == 25  # each call counted once
    assert again[0].cost_units == 25 * 1234


def test_a_call_replayed_after_a_kill_between_redis_and_the_ledger_is_ledgered_as_counted(
    pg_url: str, redis_url: str
) -> None:
    """kill -9 after Redis booked a call and before PostgreSQL committed its row: the
    next start books the in-flight journal's estimate of the call (its input and its
    whole output ceiling) under the same id. Redis answered "booked before" and kept
    the actual cost, while PostgreSQL took the estimate: the ledger and the spend report
    said $0.0024615 where the ceilings had counted $0.0000072. The ledger gets what Redis
    counted; the marker that keeps it names neither the customer nor the conversation."""
    from gateway.store.ledgered import LedgeredStore
    from gateway.store.options import RedisConfig
    from gateway.store.redis import RedisStore
    from tests.servers import redis_client

    budgets = ("acme|month|2026-11", "acme|customer:c-77|day|2026-11-30")
    actual = record(customer="c-77", budgets=budgets, fresh_input=20, cached_input=0, output=7)
    actual = dataclasses.replace(actual, cost_units=72_000)
    estimate = dataclasses.replace(
        actual, usage=TokenUsage(fresh_input=26, output=4096, estimated=True), cost_units=24_615_000
    )
    client = redis_client(redis_url)

    async def go() -> tuple[list[SpendRow], list[UsageRecord], dict[str, tuple[int, int]]]:
        hot = RedisStore(redis_url, RedisConfig(), keep_ledger=False)
        async with migrated(pg_url) as ledger:
            store = LedgeredStore(hot, ledger)
            await hot.book_many([actual])  # LedgeredStore.book_many's first step; killed here
            [marker] = [str(client.get(k)) for k in client.scan_iter(match="*:booked:*")]
            assert "c-77" not in marker and "conv-1" not in marker
            await store.book_many([estimate])  # the next start replays the journal
            await store.book_many([estimate])  # and once more (a spill file): nothing moves
            counted = await hot.budgets(list(budgets))
            result = await ledger.spend("2026-11"), await ledger.ledger("2026-11"), counted
            await hot.close()
            return result

    spend, [row], counted = run(go())
    assert row.id == actual.id and (row.customer, row.conversation) == ("c-77", "conv-1")
    assert (row.usage, row.cost_units) == (actual.usage, 72_000)
    assert counters(spend[0]) == expected_spend([actual])[0]
    assert counted == {b: (72_000, 0) for b in budgets}  # the ceilings counted the same
    assert list(client.scan_iter(match="*:booked:*")) == []  # the marker went with the row
