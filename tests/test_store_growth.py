"""What a long-running gateway's store keeps must not grow without end (soak findings)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from gateway.ledger.usage import TokenUsage
from gateway.store import open_store, sqlite_docs
from gateway.store.options import SQLiteConfig
from gateway.store.records import UsageRecord
from gateway.store.redis_keys import budget_keys
from gateway.store.sqlite import SQLiteStore
from gateway.store.sqlite_customers import erase

BUDGET_DAY_KEPT_S = 3 * 86400  # gateway.store.records: as the README states them
BUDGET_MONTH_KEPT_S = 40 * 86400


def _count(path: Path, sql: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


async def _purged(store: SQLiteStore) -> None:
    """The purge round a write started, done (run inline before it had a task)."""
    wait = getattr(store, "purged", None)
    if wait is not None:
        await wait()


def test_an_expired_backlog_larger_than_a_batch_is_purged_in_one_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_docs, "PURGE_BATCH", 4)
    path = tmp_path / "gw.db"

    async def main() -> None:
        store = SQLiteStore(str(path), SQLiteConfig())
        for i in range(23):  # expired at once: almost six batches
            await store.put_doc("conversation", "acme", f"old-{i}", {"n": i}, ttl_s=-1)
        await _purged(store)
        await store.close()
        store = SQLiteStore(str(path), SQLiteConfig())  # a process started later
        await store.put_doc("conversation", "acme", "new", {"n": 0}, ttl_s=3600)
        await _purged(store)
        await store.close()

    asyncio.run(main())
    assert _count(path, "SELECT COUNT(*) FROM doc_expiry") == 1
    assert _count(path, "SELECT COUNT(DISTINCT key) FROM doc_field") == 1


def _booking(ts: float, budgets: tuple[str, ...], customer: str = "c1") -> UsageRecord:
    return UsageRecord(
        id=uuid.uuid4().hex,
        ts=ts,
        tenant="acme",
        plan="pro",
        model="gpt-4o-mini",
        usage=TokenUsage(fresh_input=100, output=10),
        cost_units=1000,
        customer=customer,
        conversation="conv-1",
        budgets=budgets,
    )


def _day(at: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(at))


def _month(at: float) -> str:
    return time.strftime("%Y-%m", time.gmtime(at))


def test_sqlite_deletes_the_budget_counters_of_ended_periods(tmp_path: Path) -> None:
    now = time.time()
    old, recent = now - 90 * 86400, now - 86400  # three months ago; yesterday
    ended = (f"acme|day|{_day(old)}", f"acme|customer:c1|month|{_month(old)}")
    kept = (f"acme|day|{_day(recent)}", f"acme|day|{_day(now)}", f"acme|month|{_month(now)}")
    path = tmp_path / "gw.db"

    async def main() -> None:
        store = SQLiteStore(str(path), SQLiteConfig())
        await store.book_many([_booking(old, ended), _booking(now, kept)])
        await _purged(store)
        await store.close()
        # A row as an earlier version wrote it (no expiry), of a day long gone.
        conn = sqlite3.connect(path)
        conn.execute("INSERT INTO budget (key, spent_units) VALUES ('acme|day|2020-01-01', 5)")
        conn.commit()
        conn.close()
        store = SQLiteStore(str(path), SQLiteConfig())  # a process started later
        await store.put_doc("conversation", "acme", "c", {"n": 1}, ttl_s=3600)
        await _purged(store)
        assert await store.budgets([*kept]) == {key: (1000, 0) for key in kept}
        await store.close()

    asyncio.run(main())
    conn = sqlite3.connect(path)
    left = {key for (key,) in conn.execute("SELECT key FROM budget")}
    conn.close()
    assert left == set(kept)


def test_a_sqlite_erasure_finds_the_customer_budgets_by_key_range(tmp_path: Path) -> None:
    path = tmp_path / "gw.db"
    now = time.time()
    mine = (f"acme|customer:c1|day|{_day(now)}", f"acme|customer:c1|month|{_month(now)}")
    theirs = (f"acme|customer:c10|day|{_day(now)}",)

    async def main() -> None:
        store = SQLiteStore(str(path), SQLiteConfig())
        await store.book_many([_booking(now, mine), _booking(now, theirs, customer="c10")])
        await store.close()

    asyncio.run(main())
    conn = sqlite3.connect(path, isolation_level=None)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    erased = erase(conn, "acme", "c1", "anon-1", [])
    conn.set_trace_callback(None)
    assert erased.budgets == 2
    keys = {key for (key,) in conn.execute("SELECT key FROM budget")}
    assert keys == {k.replace("customer:c1|", "customer:anon-1|") for k in mine} | set(theirs)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT") and "budget" in s]
    assert reads
    for sql in reads:  # the primary key's index, never a scan of every budget
        plan = " ".join(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "SEARCH" in plan and "SCAN" not in plan, (sql, plan)
    conn.close()


def test_redis_budget_keys_live_until_a_little_after_their_period(redis_url: str) -> None:
    now = time.time()
    day, month = f"acme|customer:c1|day|{_day(now)}", f"acme|customer:c1|month|{_month(now)}"

    async def main() -> dict[str, int]:
        store = open_store(redis_url)
        try:
            assert await store.reserve("r1", [(day, 10**9), (month, 10**9)], 10, 60) is None
            await store.book_many([_booking(now, (day, month))])
        finally:
            await store.close()
        client = aioredis.Redis.from_url(redis_url)
        try:
            return {
                name: int(await client.ttl(name))
                for key in (day, month)
                for name in budget_keys(key)
                if await client.exists(name)
            }
        finally:
            await client.aclose()

    ttls = asyncio.run(main())
    day_left = 86400 + BUDGET_DAY_KEPT_S  # at most: its day has at most a day to go
    month_left = 31 * 86400 + BUDGET_MONTH_KEPT_S
    assert ttls[budget_keys(day)[0]] <= day_left
    assert day_left < ttls[budget_keys(month)[0]] <= month_left
    assert all(0 < ttl <= month_left for ttl in ttls.values())
