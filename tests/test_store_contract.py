"""One contract, every backend: SQLite and a real Redis."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import time
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from gateway.errors import StoreRejected, StoreUnavailable
from gateway.ledger.usage import TokenUsage
from gateway.store import open_store
from gateway.store.records import UsageRecord
from tests.ledger_db import EVERY_BACKEND, backend_url, open_test_store
from tests.servers import free_port

NOV = 1_796_000_000.0  # 2026-11-30 UTC
DEC = NOV + 5 * 86400


@pytest.fixture(params=EVERY_BACKEND)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every backend, and Redis with the PostgreSQL ledger beside it."""
    return backend_url(request, tmp_path)


def record(
    tenant: str = "acme", ts: float = NOV, cost: int | None = 1234, **usage: int
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
        customer="c1",
        conversation="conv-1",
    )


def poison() -> UsageRecord:
    """A record no store can count: its output overflows a 64-bit counter."""
    return record(output=2**63)


T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def test_book_is_atomic_idempotent_and_summed(store_url: str) -> None:
    async def scenario() -> None:
        store = open_test_store(store_url)
        try:
            one = record(ts=NOV - 1)  # oldest (equal times have no order across backends)
            assert await store.book_many([one]) == [True]
            assert await store.book_many([one]) == [False]  # a replay never books twice
            batch = [record(cost=None), record(tenant="globex", cache_write=7), record(ts=DEC)]
            assert await store.book_many(batch) == [True, True, True]
            (acme, globex) = await store.spend("2026-11")
            assert (acme.tenant, acme.requests, acme.fresh_input_tokens) == ("acme", 2, 200)
            assert (acme.cached_input_tokens, acme.output_tokens, acme.cost_units) == (
                100,
                20,
                1234,
            )
            assert acme.unpriced_requests == 1 and globex.cache_write_tokens == 7
            (acme_all, _) = await store.spend(None)
            assert acme_all.requests == 3 and acme_all.cost_units == 2468
            ledger = await store.ledger("2026-11", "acme")
            assert ledger[0].id == one.id and len(ledger) == 2
            assert ledger[0] == one
            assert len(await store.ledger("2026-11")) == 3
            assert await store.spend("2025-01") == []
        finally:
            await store.close()

    run(scenario())


def test_concurrent_bookings_lose_nothing(store_url: str) -> None:
    async def scenario() -> None:
        stores = [open_test_store(store_url) for _ in range(3)]  # three "replicas"
        try:
            records = [record(output=n) for n in range(300)]
            await asyncio.gather(*(stores[n % 3].book_many([r]) for n, r in enumerate(records)))
            (row,) = await stores[0].spend("2026-11")
            assert row.requests == 300
            assert row.output_tokens == sum(range(300))
            assert row.cost_units == 300 * 1234
        finally:
            for s in stores:
                await s.close()

    run(scenario())


def test_sqlite_survives_reopening(tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'g.db'}"

    async def book() -> None:
        store = open_store(url)
        await store.book_many([record()])
        await store.close()

    run(book())
    run(book())

    async def read() -> int:
        store = open_store(url)
        rows = await store.spend(None)
        await store.close()
        return rows[0].requests

    assert run(read()) == 2


def test_sqlite_writes_queued_together_share_a_commit_and_fail_alone(tmp_path: Path) -> None:
    """Writes waiting behind each other (here: behind another process's write lock) run
    in one transaction. A batch refused among them takes back its own rows only, a lost
    compare-and-set writes nothing, and what each caller is told is what a fresh reader
    finds committed."""
    path = tmp_path / "g.db"
    url = f"sqlite:///{path}"

    async def scenario() -> tuple[list[Any], list[UsageRecord], int]:
        store = open_store(url)
        await store.book_many([record()])  # the file exists, the writer has started
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another replica holds the write lock
        good = [record() for _ in range(12)]
        mixed = [record(), poison()]  # refused whole: its first row must not stay
        writes = [
            store.book_many(mixed),
            *(store.book_many([r]) for r in good),
            store.swap_doc("conversation", "acme", "k", {"n": 1}, (), None, 0),
            store.swap_doc("conversation", "acme", "k", {"n": 2}, (), None, 0),
            store.put_doc("facts", "acme", "f", {"x": 1}),
            store.delete_doc("facts", "acme", "nothing-here"),
        ]
        pending = asyncio.gather(*writes, return_exceptions=True)
        await asyncio.sleep(0.3)  # all queued behind the first, which waits for the lock
        other.execute("ROLLBACK")
        other.close()
        results = await pending
        together = store.writes_together  # type: ignore[attr-defined]
        await store.close()
        return results, [*good, *mixed], together

    results, (*good, refused_good, refused), together = run(scenario())
    assert together >= len(results) - 1  # all but the one taken first shared a COMMIT
    assert isinstance(results[0], StoreRejected)
    assert results[1:13] == [[True]] * 12
    assert sorted(results[13:15]) == [False, True]  # one compare-and-set won
    assert results[15:] == [None, False]

    async def read_back() -> tuple[set[str], Any, Any]:
        store = open_store(url)
        rows = await store.ledger("2026-11", limit=100)
        doc = await store.get_doc("conversation", "acme", "k")
        facts = await store.get_doc("facts", "acme", "f")
        await store.close()
        return {r.id for r in rows}, doc, facts

    ids, doc, facts = run(read_back())
    assert {r.id for r in good} <= ids
    assert refused_good.id not in ids and refused.id not in ids
    assert len(ids) == 13  # the first booking and the twelve
    assert doc is not None and doc["version"] == 1 and doc["n"] == (1 if results[13] else 2)
    assert facts == {"x": 1}


def test_unreachable_redis_raises_store_unavailable() -> None:
    async def scenario() -> None:
        store = open_store(f"redis://127.0.0.1:{free_port()}/0")
        for call in (
            store.ping(),
            store.book_many([record()]),
            store.spend(None),
            store.ledger("2026-11"),
        ):
            with pytest.raises(StoreUnavailable):
                await call
        await store.close()

    run(scenario())


def test_reservations_hold_a_ceiling_and_settle_at_booking(store_url: str) -> None:
    key = "acme|month|2099-11"

    async def scenario() -> None:
        store = open_test_store(store_url)
        try:
            assert await store.reserve("r1", [(key, 1000)], 600, 60) is None
            assert await store.reserve("r2", [(key, 1000)], 600, 60) == key  # would pass it
            assert await store.reserve("r3", [(key, 1000)], 400, 60) is None
            assert await store.budgets([key]) == {key: (0, 1000)}
            settled = dataclasses.replace(
                record(cost=500), id="r1", reservation="r1", budgets=(key,)
            )
            assert await store.book_many([settled]) == [True]
            assert await store.budgets([key]) == {key: (500, 400)}
            assert await store.book_many([settled]) == [False]  # a replay settles nothing twice
            assert await store.budgets([key]) == {key: (500, 400)}
            await store.release("r3", [key])
            assert await store.budgets([key]) == {key: (500, 0)}
            assert await store.reserve("r5", [(key, 1000)], 300, 0.3) is None
            assert await store.reserve("r6", [(key, 1000)], 400, 60) == key
            await asyncio.sleep(0.5)  # r5's replica died: its reservation expires
            assert await store.reserve("r6", [(key, 1000)], 400, 60) is None
            two = [(key, 1000), ("acme|day|2099-11-30", 10_000)]
            assert await store.reserve("r7", two, 200, 60) == key  # all or nothing
            assert (await store.budgets(["acme|day|2099-11-30"]))["acme|day|2099-11-30"] == (0, 0)
        finally:
            await store.close()

    run(scenario())


def test_concurrent_reservations_from_many_replicas_never_overshoot(store_url: str) -> None:
    key = "globex|day|2099-11-30"

    async def scenario() -> list[str | None]:
        stores = [open_test_store(store_url) for _ in range(3)]
        try:
            return await asyncio.gather(
                *(stores[n % 3].reserve(f"c{n}", [(key, 1000)], 70, 60) for n in range(60))
            )
        finally:
            for s in stores:
                await s.close()

    results = run(scenario())
    assert sum(r is None for r in results) == 14  # 14 x 70 = 980 <= 1000 < 15 x 70


def test_rate_counters_count_all_or_nothing_and_settle_into_the_calls_bucket(
    store_url: str,
) -> None:
    """Store.count_rate (gateway.spend.rate_limits): 10 s buckets, the 6 before the
    current one count too, so nothing here leaves the window while the test runs."""
    size, span = 10_000, 6

    def total(use: Any, n: int) -> int:
        return sum(amount for _, amount in use.used[n])

    async def scenario() -> list[bool]:
        store = open_test_store(store_url)
        try:
            both = [("tenant:requests", 3, 1), ("key:k1:tokens", 100, 40)]
            first = await store.count_rate("acme", both, size, span)
            assert first.admitted and (total(first, 0), total(first, 1)) == (1, 40)
            second = await store.count_rate("acme", both, size, span)
            assert second.admitted and (total(second, 0), total(second, 1)) == (2, 80)
            third = await store.count_rate("acme", both, size, span)  # 120 tokens > 100
            assert not third.admitted and (total(third, 0), total(third, 1)) == (2, 80)
            assert third.now_ms // size == third.bucket  # the store's clock and bucket
            # a reply's output settles into its call's bucket without a check
            output = [("key:k1:tokens", 100, 30)]
            settled = await store.count_rate("acme", output, size, span, first.bucket)
            assert settled.admitted and total(settled, 0) == 110
            nothing = await store.count_rate("acme", [("key:k1:tokens", 100, 0)], size, span)
            assert not nothing.admitted  # over the limit until the window moves on
            other = await store.count_rate("globex", both, size, span)
            assert other.admitted and total(other, 1) == 40  # each tenant its own
        finally:
            await store.close()
        stores = [open_test_store(store_url) for _ in range(3)]
        try:
            seven = [("tenant:requests", 7, 1)]
            uses = await asyncio.gather(
                *(stores[n % 3].count_rate("initech", seven, size, span) for n in range(20))
            )
            return [u.admitted for u in uses]
        finally:
            for s in stores:
                await s.close()

    assert sum(run(scenario())) == 7  # concurrent replicas never pass the limit


def test_a_record_the_store_cannot_count_is_refused_and_never_taken_for_booked(
    store_url: str,
) -> None:
    async def scenario() -> None:
        store = open_test_store(store_url)
        try:
            bad = poison()
            for _ in range(2):  # a retry is refused again, not answered "booked before"
                with pytest.raises(StoreRejected):
                    await store.book_many([bad])
            assert await store.book_many([record()]) == [True]
            (row,) = await store.spend("2026-11")
            assert (row.requests, row.output_tokens) == (1, 10)  # nothing of the refused one
            assert [r.id for r in await store.ledger("2026-11")] != [bad.id]
            assert len(await store.ledger("2026-11")) == 1
        finally:
            await store.close()

    run(scenario())


@pytest.mark.parametrize("customer", ['c*1?[x]|"q"\\é', "plain-7"])
def test_erasure_deletes_documents_and_pseudonymizes_rows_and_budgets(
    store_url: str, customer: str
) -> None:
    """Ids with glob characters, the budget-key separator, quotes and accents erase only
    their own rows; another customer and another tenant keep theirs."""

    async def scenario() -> None:
        store = open_test_store(store_url)
        # A day that has not ended: an ended period's budget is soon purged.
        day = time.strftime("%Y-%m-%d", time.gmtime())
        try:
            budget = f"acme|customer:{customer}|day|{day}"
            other = f"acme|customer:c1|day|{day}"
            mine = [
                dataclasses.replace(record(ts=ts), customer=customer, budgets=(budget,))
                for ts in (NOV, DEC)
            ]
            # A customer whose id extends this one's past the separator keeps their counter.
            longer = f"acme|customer:{customer}|day|x|day|{day}"
            theirs = [
                dataclasses.replace(record(), budgets=(other, longer)),
                dataclasses.replace(record(tenant="globex"), customer=customer),
            ]
            assert await store.book_many(mine + theirs) == [True] * 4
            assert await store.reserve("r1", [(budget, 10_000)], 5, 60) is None
            await store.put_doc("facts", "acme", f"customer:{customer}", {"facts": [1]})
            await store.put_doc("facts", "acme", "customer:c1", {"facts": [2]})
            erased = await store.erase_customer(
                "acme", customer, "erased-00", [("facts", f"customer:{customer}"), ("facts", "x")]
            )
            assert (erased.documents, erased.ledger_rows, erased.budgets) == (1, 2, 1)
            assert await store.get_doc("facts", "acme", f"customer:{customer}") is None
            assert await store.get_doc("facts", "acme", "customer:c1") == {"facts": [2]}
            rows = [r for p in ("2026-11", "2026-12") for r in await store.ledger(p, "acme", 100)]
            assert sorted(str(r.customer) for r in rows) == ["c1", "erased-00", "erased-00"]
            assert {r.cost_units for r in rows if r.customer == "erased-00"} == {1234}
            assert all(customer not in str(r.to_json()) for r in rows if r.customer != "c1")
            (globex,) = await store.ledger("2026-11", "globex", 100)
            assert globex.customer == customer  # another tenant's customer of the same id
            renamed = f"acme|customer:erased-00|day|{day}"
            spent = await store.budgets([budget, renamed, other, longer])
            # the spend moves to the pseudonym; the reservation of the call in flight stays
            # with the id, where that call books (it counts against its ceiling till then)
            assert spent[budget] == (0, 5) and spent[renamed] == (2468, 0)
            assert spent[other] == spent[longer] == (1234, 0)
        finally:
            await store.close()

    run(scenario())
