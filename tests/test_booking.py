"""The bookkeeper against real stores: outages release callers, spills survive restarts."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import orjson
from prometheus_client import CollectorRegistry

from gateway.ledger.booking import Bookkeeper
from gateway.ops.metrics import GatewayMetrics
from gateway.store import SpendRow, Store, open_store
from gateway.store.options import SQLiteConfig
from tests.servers import free_port
from tests.test_store_contract import poison, record


def test_an_outage_releases_every_caller_and_spills_on_close(tmp_path: Path) -> None:
    spill = tmp_path / "pending.jsonl"
    records = [record(output=n) for n in range(300)]

    async def outage() -> None:
        store = open_store(f"redis://127.0.0.1:{free_port()}/0")
        keeper = Bookkeeper(
            store, GatewayMetrics(CollectorRegistry()), spill, max_pending=1000, retry_s=0.05
        )
        writer = asyncio.create_task(keeper.run())
        await asyncio.gather(*(keeper.book(r) for r in records))  # none waits for the store
        assert keeper.pending == 300
        writer.cancel()
        await keeper.close(timeout_s=0.2)
        await store.close()

    asyncio.run(outage())
    lines = spill.read_bytes().splitlines()
    assert len(lines) == 300
    spill.write_bytes(b"\n".join(lines) + b'\n{"cut short by a cra')  # a torn last line

    async def restart() -> int:
        store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
        keeper = Bookkeeper(store, GatewayMetrics(CollectorRegistry()), spill, max_pending=1000)
        keeper.load_spill()
        writer = asyncio.create_task(keeper.run())
        while keeper.pending:
            await asyncio.sleep(0.01)
        writer.cancel()
        (row,) = await store.spend(None)
        await store.close()
        return row.requests

    assert asyncio.run(restart()) == 300
    assert list(tmp_path.glob("pending*")) == []  # replayed files are gone once stored


def _keeper(
    store_url: str, spill: Path, max_pending: int = 1000
) -> tuple[Bookkeeper, Store, GatewayMetrics]:
    metrics = GatewayMetrics(CollectorRegistry())
    store = open_store(store_url, SQLiteConfig(busy_timeout_s=0.5))
    keeper = Bookkeeper(store, metrics, spill, max_pending=max_pending, retry_s=0.05)
    return keeper, store, metrics


def test_a_poison_record_is_set_aside_and_the_rest_booked(store_url: str, tmp_path: Path) -> None:
    """A booking the store refuses (its counts overflow 64 bits) does not stop every later
    booking: the others are written, it goes to the rejected file, counted; shutdown works."""
    good = [record(output=n) for n in range(6)]
    bad = poison()

    async def scenario() -> None:
        keeper, store, metrics = _keeper(store_url, tmp_path / "pending.jsonl")
        writer = asyncio.create_task(keeper.run())
        await asyncio.wait_for(asyncio.gather(*(keeper.book(r) for r in [bad, *good])), 10)
        assert keeper.pending == 0
        (row,) = await store.spend("2026-11")
        assert row.requests == 6 and row.output_tokens == sum(range(6))
        await asyncio.wait_for(keeper.book(record(tenant="globex")), 10)  # later ones go too
        writer.cancel()
        await keeper.close(timeout_s=1)
        await store.close()
        assert metrics.registry.get_sample_value("gateway_bookings_rejected_total") == 1

    asyncio.run(scenario())
    (line,) = (tmp_path / "pending-rejected.jsonl").read_bytes().splitlines()
    assert orjson.loads(line)["id"] == bad.id
    assert not (tmp_path / "pending.jsonl").exists()


def test_shutdown_with_a_poison_record_queued_books_the_rest(tmp_path: Path) -> None:
    """At SIGTERM the writer task is stopped and close() drains the queue: a poison
    record among the queued ones must not make it fail and lose the others."""
    good = [record(output=n) for n in range(6)]

    async def scenario() -> int:
        keeper, store, _ = _keeper(f"sqlite:///{tmp_path / 'g.db'}", tmp_path / "pending.jsonl")
        callers = [asyncio.create_task(keeper.book(r)) for r in [poison(), *good]]
        await asyncio.sleep(0)  # all queued; no writer task runs
        await keeper.close(timeout_s=2)
        await asyncio.wait_for(asyncio.gather(*callers), 5)
        rows = await store.spend(None)
        await store.close()
        return rows[0].requests

    assert asyncio.run(scenario()) == 6


def test_bookings_held_in_memory_are_capped_and_spill_over(tmp_path: Path) -> None:
    """While the store is down at most `max_pending` bookings are held in memory; the
    rest go to the spill file (counted), and all are booked once the store answers."""
    db = tmp_path / "g.db"
    records = [record(output=n) for n in range(50)]

    async def scenario(lock: sqlite3.Connection) -> None:
        keeper, store, metrics = _keeper(f"sqlite:///{db}", tmp_path / "pending.jsonl", 10)
        await store.ping()  # the file and its tables exist
        lock.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        writer = asyncio.create_task(keeper.run())
        await asyncio.wait_for(asyncio.gather(*(keeper.book(r) for r in records)), 30)
        assert keeper.pending == 10
        assert metrics.registry.get_sample_value("gateway_bookings_spilled_total") == 40
        assert len((tmp_path / "pending.jsonl").read_bytes().splitlines()) == 40
        lock.execute("ROLLBACK")
        rows = await _spent_when(store, lambda rows: bool(rows) and rows[0].requests == 50)
        writer.cancel()
        await keeper.close()
        await store.close()
        assert rows[0].output_tokens == sum(range(50))

    lock = sqlite3.connect(db, isolation_level=None)
    try:
        asyncio.run(scenario(lock))
    finally:
        lock.close()
    assert list(tmp_path.glob("pending*")) == []


async def _spent_when(
    store: Store, done: Callable[[list[SpendRow]], bool], timeout_s: float = 30
) -> list[SpendRow]:
    for _ in range(int(timeout_s / 0.05)):
        rows = await store.spend(None)
        if done(rows):
            return rows
        await asyncio.sleep(0.05)
    raise AssertionError(f"the store never got there: {rows}")
