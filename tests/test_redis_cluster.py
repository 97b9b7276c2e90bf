"""The Redis store on a real 3-master Redis Cluster (the session's `redis_cluster`), what
only Redis has (a ledger kept elsewhere, moving an earlier version's keys), and the key
layout that makes every script touch one slot. The contract suite runs on the cluster
too (tests/test_store_contract.py, `store_url`)."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import Coroutine
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import openai
import orjson
import pytest
import redis
from redis.crc import key_slot

from gateway.errors import StoreUnavailable
from gateway.store import open_store
from gateway.store import redis_keys as keys
from gateway.store.options import RedisConfig
from gateway.store.records import UsageRecord, increments
from gateway.store.redis import RedisStore
from tests.conftest import UpstreamLog
from tests.servers import RedisCluster, free_port, redis_client, start_gateway
from tests.test_spend import spent
from tests.test_store_contract import DEC, record

T = TypeVar("T")
ODD_TENANTS = ["a}b{c:d", "a", "a}b{c", "x|y", "x", "", "%7B"]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def tenant_keys(tenant: str) -> list[str]:
    """Every key a booking or a reservation of the tenant and its customer c1 touches."""
    budgets = [
        f"{tenant}|month|2099-11",
        f"{tenant}|day|2099-11-30",
        f"{tenant}|customer:c1|month|2099-11",
        f"{tenant}|customer:c1|day|2099-11-30",
    ]
    return [
        keys.booked_key(tenant, "r1"),
        keys.month_key(tenant, "2026-11"),
        keys.ledger_key(tenant, "2026-11"),
        *(k for b in budgets for k in keys.budget_keys(b)),
    ]


def test_a_tenants_keys_hash_to_one_slot_and_never_pose_as_anothers() -> None:
    seen: set[str] = set()
    for tenant in ODD_TENANTS:
        names = tenant_keys(tenant)
        assert len({key_slot(k.encode()) for k in names}) == 1, tenant
        assert not seen & set(names), tenant
        seen |= set(names)


# Budgets of the running period: an ended period's budget expires days after it ends.
MONTH, DAY = time.strftime("%Y-%m", time.gmtime()), time.strftime("%Y-%m-%d", time.gmtime())


def _booked(tenant: str, n: int) -> UsageRecord:
    budgets = (f"{tenant}|month|{MONTH}", f"{tenant}|customer:c{n}|day|{DAY}")
    return dataclasses.replace(record(tenant), customer=f"c{n}", budgets=budgets)


def test_tenants_spread_over_the_shards_and_each_stays_on_one(
    redis_cluster_url: str, redis_cluster: RedisCluster
) -> None:
    tenants = [f"tenant-{n}" for n in range(12)] + ODD_TENANTS
    for port in redis_cluster.ports:  # a batch's scripts reach shards that lack them
        with redis.Redis(port=port) as node:
            node.script_flush()

    async def scenario() -> None:
        store = open_store(redis_cluster_url)
        try:
            for n, tenant in enumerate(tenants):
                budgets = [(f"{tenant}|month|2099-11", 10**6)]
                assert await store.reserve(f"r{n}", budgets, 5, 60) is None
                assert await store.book_many([_booked(tenant, n) for n in range(3)]) == [True] * 3
        finally:
            await store.close()

    run(scenario())
    shards: dict[str, set[int]] = {}  # a tenant's hash tag -> the nodes holding its keys
    for port in redis_cluster.ports:
        node = redis.Redis(port=port)
        for raw in node.scan_iter(match="gw:{*", count=1000):
            name = raw.decode()
            shards.setdefault(name[: name.index("}") + 1], set()).add(port)
        node.close()
    prefixes = [keys.tenant_prefix(t) for t in tenants]  # "x" and "x|y" share a tag
    assert set(shards) == {p[: p.index("}") + 1] for p in prefixes}
    assert all(len(ports) == 1 for ports in shards.values()), shards
    assert len(set.union(*shards.values())) == 3  # 18 tags over three masters


def test_a_tenant_named_with_braces_colons_and_bars_works(store_url: str) -> None:
    """Bookings, reservations, reads and an erasure of "a}b{c:d" leave its neighbours
    "a", "a}b{c" and "a}b{c:d|x" alone."""
    tenant, neighbours = "a}b{c:d", ["a", "a}b{c", "a}b{c:d|x"]

    async def scenario() -> None:
        store = open_store(store_url)
        try:
            for name in [tenant, *neighbours]:
                assert await store.book_many([_booked(name, 1), _booked(name, 2)]) == [True] * 2
            month, mine = f"{tenant}|month|{MONTH}", f"{tenant}|customer:c1|day|{DAY}"
            assert await store.reserve("r1", [(month, 10_000), (mine, 2000)], 500, 60) is None
            assert await store.reserve("r2", [(month, 10_000), (mine, 2000)], 500, 60) == mine
            held = dataclasses.replace(_booked(tenant, 1), reservation="r1", cost_units=100)
            assert await store.book_many([held]) == [True]
            assert await store.budgets([month, mine]) == {month: (2568, 0), mine: (1334, 0)}
            rows = {r.tenant: r for r in await store.spend("2026-11")}
            assert set(rows) == {tenant, *neighbours}
            assert rows[tenant].requests == 3 and rows["a"].requests == 2
            assert len(await store.ledger("2026-11", tenant)) == 3
            assert len(await store.ledger("2026-11")) == 9
            assert len(await store.customer_ledger(tenant, "c1", 10)) == 2
            erased = await store.erase_customer(tenant, "c1", "erased-1", [])
            assert (erased.ledger_rows, erased.budgets) == (2, 1)
            assert await store.customer_ledger("a", "c1", 10) != []  # another tenant's c1
            renamed = f"{tenant}|customer:erased-1|day|{DAY}"
            assert (await store.budgets([renamed]))[renamed] == (1334, 0)
        finally:
            await store.close()

    run(scenario())


def test_200_calls_from_three_replicas_on_the_cluster_reserve_settle_and_never_overshoot(
    redis_cluster_url: str,
) -> None:
    """Each call reserves its worst case against the tenant's month and its customer's
    day, then books a real cost at most that (settling the hold) or releases it."""
    month, ceiling, worst = "globex|month|2099-11", 5000, 70

    async def call(store: RedisStore, n: int) -> int | None:
        """The cost booked (0: released), or None when the ceiling refused the call."""
        customer = f"globex|customer:c{n % 7}|day|2099-11-30"
        budgets = [(month, ceiling), (customer, 10**9)]
        if await store.reserve(f"call-{n}", budgets, worst, 60) is not None:
            return None
        await asyncio.sleep(random.random() / 50)  # the upstream answers
        if n % 10 == 0:  # the call failed before the upstream
            await store.release(f"call-{n}", [month, customer])
            return 0
        cost = random.randint(30, worst)
        booked = dataclasses.replace(
            record("globex", cost=cost),
            customer=f"c{n % 7}",
            budgets=(month, customer),
            reservation=f"call-{n}",
        )
        assert await store.book_many([booked]) == [True]
        return cost

    async def scenario() -> list[int | None]:
        stores = [RedisStore(redis_cluster_url, RedisConfig()) for _ in range(3)]
        try:
            results = await asyncio.gather(*(call(stores[n % 3], n) for n in range(200)))
            costs = [c for c in results if c]
            assert await stores[0].budgets([month]) == {month: (sum(costs), 0)}
            (row,) = await stores[1].spend("2026-11")
            assert (row.cost_units, row.requests) == (sum(costs), len(costs))
            return list(results)
        finally:
            for s in stores:
                await s.close()

    results = run(scenario())
    assert None in results  # the ceiling was reached...
    assert sum(c or 0 for c in results) <= ceiling  # ...and never passed: overshoot 0


async def _race(urls: list[str], key: str, calls: int) -> list[str]:
    clients = [openai.AsyncOpenAI(base_url=u, api_key=key, max_retries=0) for u in urls]

    async def one(n: int) -> str:
        try:
            await clients[n % len(clients)].chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": f"question {n}"}],
                max_tokens=30,
                extra_headers={"X-Simulator-Tag": "cluster-race"},
            )
            return "ok"
        except openai.RateLimitError:
            return "429"

    try:
        return list(await asyncio.gather(*(one(n) for n in range(calls))))
    finally:
        for c in clients:
            await c.close()


def test_three_gateway_replicas_on_the_cluster_never_pass_the_ceiling(
    tmp_path: Path, simulator_url: str, redis_cluster_url: str, upstream_log: UpstreamLog
) -> None:
    ceiling = Decimal("0.002")
    spend = {"plans": {"basic": {"monthly_usd": str(ceiling), "action": "block"}}}
    replicas = []
    try:
        for n in range(3):
            root, policies = tmp_path / f"r{n}", {"spend.yaml": spend}
            replicas.append(
                start_gateway(root, simulator_url, redis_cluster_url, policies=policies)
            )
        results = asyncio.run(_race([g.v1 for g in replicas], replicas[0].keys["globex"], 200))
        assert results.count("ok") > 0 and results.count("429") > 0
        assert spent(replicas[0], "globex") <= ceiling  # overshoot: $0
        billed = [e for e in upstream_log.since() if e["headers"].get("x-simulator-tag")]
        assert len(billed) == results.count("ok")  # every answered call booked, no other
        (row,) = [
            r
            for r in replicas[1].admin("/admin/spend").json()["tenants"]
            if r["tenant"] == "globex"
        ]
        assert row["requests"] == len(billed)
    finally:
        for gw in replicas:
            gw.stop()


def test_documents_spread_over_the_shards_and_list_docs_finds_them_all(
    redis_cluster_url: str,
) -> None:
    async def scenario() -> None:
        store = open_store(redis_cluster_url)
        try:
            for n in range(40):
                await store.put_doc("conversation", "acme", f"c/{n:02d}", {"n": n})
            await store.put_doc("conversation", "acme", "d/1", {"n": -1})
            await store.put_doc("conversation", "globex", "c/01", {"n": -2})
            found = await store.list_docs("conversation", "acme", "c/")
            assert [d["n"] for d in found] == list(range(40))
            docs = await store.get_docs("acme", [("conversation", f"c/{n:02d}") for n in range(40)])
            assert [d and d["n"] for d in docs] == list(range(40))
        finally:
            await store.close()

    run(scenario())
    client = redis_client(redis_cluster_url)
    slots = {key_slot(k) for k in client.scan_iter(match="gw:d:*")}
    client.close()
    assert len(slots) == 42


@pytest.fixture(params=["redis", "redis-cluster"])
def any_redis_url(request: pytest.FixtureRequest) -> str:
    name = "redis_url" if request.param == "redis" else "redis_cluster_url"
    return str(request.getfixturevalue(name))


def test_a_store_without_ledger_rows_still_counts_settles_and_erases(any_redis_url: str) -> None:
    """`keep_ledger=False` (the rows live in PostgreSQL): no ledger list is written; the
    counters, budgets, settlement and idempotency stay."""
    budget = "acme|customer:c1|day|2099-11-30"

    async def scenario() -> None:
        store = RedisStore(any_redis_url, RedisConfig(), keep_ledger=False)
        try:
            assert await store.reserve("r1", [(budget, 10_000)], 5000, 60) is None
            one = dataclasses.replace(record(), id="r1", reservation="r1", budgets=(budget,))
            assert await store.book_many([one, record(ts=DEC)]) == [True, True]
            assert await store.book_many([one]) == [False]
            assert await store.budgets([budget]) == {budget: (1234, 0)}
            assert [r.requests for r in await store.spend(None)] == [2]
            assert await store.ledger("2026-11") == await store.ledger("2026-11", "acme") == []
            assert await store.ledger_page("acme", None, None, 10) == ([], None)
            assert await store.customer_ledger("acme", "c1", 10) == []
            erased = await store.erase_customer("acme", "c1", "erased-1", [])
            assert (erased.ledger_rows, erased.budgets) == (0, 1)
        finally:
            await store.close()

    run(scenario())
    client = redis_client(any_redis_url)
    assert list(client.scan_iter(match="*:ledger:*")) == []
    client.close()


def test_an_unreachable_cluster_raises_store_unavailable() -> None:
    async def scenario() -> None:
        store = open_store(f"redis-cluster://127.0.0.1:{free_port()},127.0.0.1:{free_port()}")
        for call in (store.ping(), store.book_many([record()]), store.spend(None)):
            with pytest.raises(StoreUnavailable):
                await call
        assert (await store.health()).state == "unreachable"
        await store.close()

    run(scenario())
    with pytest.raises(ValueError, match="not host:port"):
        open_store("redis-cluster://127.0.0.1:7000,127.0.0.1")


def test_more_concurrent_calls_than_cluster_connections_wait_their_turn(
    redis_cluster_url: str,
) -> None:
    """RedisCluster refuses a command past its pool at once; the store makes it wait."""
    key = "acme|month|2099-11"

    async def scenario() -> list[str | None]:
        store = RedisStore(redis_cluster_url, RedisConfig(max_connections=4))
        try:
            return await asyncio.gather(
                *(store.reserve(f"r{n}", [(key, 10**9)], 1, 60) for n in range(200))
            )
        finally:
            await store.close()

    assert run(scenario()) == [None] * 200
    assert health(redis_cluster_url) == "ok"


def health(url: str) -> str:
    async def read() -> str:
        store = open_store(url)
        try:
            return (await store.health()).state
        finally:
            await store.close()

    return run(read())


# --- an earlier version's keys, on a standalone Redis --------------------------------


def old_booking(client: redis.Redis, r: UsageRecord, marker: bool = True) -> None:
    """What the earlier BOOK script wrote for a record."""
    p, t = r.period, r.tenant
    for name, value in increments(r).items():
        client.hincrby(f"gw:month:{p}:{t}", name, value)
    client.hset(f"gw:month:{p}:{t}", "plan", r.plan)
    client.sadd(f"gw:tenants:{p}", t)
    client.sadd("gw:periods", p)
    for key in (f"gw:ledger:{p}", f"gw:ledger:{p}:{t}"):
        client.rpush(key, orjson.dumps(r.to_json()))
    for budget in r.budgets:
        client.hincrby(f"gw:budget:{budget}", "spent", r.cost_units or 0)
    if marker:
        client.set(f"gw:booked:{r.id}", "1", ex=40 * 86400)


def _old_layout(client: redis.Redis) -> list[UsageRecord]:
    month = "a:b|month|2099-11"
    mine = dataclasses.replace(record("a:b"), budgets=(month, "a:b|customer:c1|day|2099-11-30"))
    rows = [mine, record("globex"), record("a:b", ts=DEC)]
    for r in rows:
        old_booking(client, r)
    old_booking(client, record("globex"), marker=False)  # its marker expired
    client.zadd(f"gw:resv:{month}", {"r-open": time.time() + 600})
    client.hset(f"gw:resvamt:{month}", "r-open", 500)
    client.hincrby(f"gw:budget:{month}", "open", 500)
    client.hset("gw:doc:facts:a:b", "customer:c1", orjson.dumps({"facts": [1]}))
    episode = {"conversation": "conv-1", "summary": "s", "ended_at": 5.0, "summarized_at": 7.0}
    for conversation in ("conv-1", "conv-2"):
        body = orjson.dumps({**episode, "conversation": conversation})
        client.hset("gw:doc:episodes:globex", f"marta/{conversation}", body)
    client.hset("gw:doc:conversation:globex", "c/1", orjson.dumps({"turns": [1, 2], "n": None}))
    return rows


def test_migrate_layout_moves_an_earlier_versions_keys(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    mine, theirs, later = _old_layout(client)
    month = "a:b|month|2099-11"

    async def scenario() -> None:
        store = RedisStore(redis_url, RedisConfig())
        try:
            counts = await store.migrate_layout()
            assert counts == {
                "documents": 4,
                "doc": 3,
                "month": 3,
                "ledger": 3,
                "ledger_all": 2,
                "budget": 2,
                "resv": 1,
                "resvamt": 1,
                "booked": 3,
                "booked_unmatched": 0,
            }
            assert set((await store.migrate_layout()).values()) == {0}  # a second run
            rows = {r.tenant: r for r in await store.spend("2026-11")}
            assert (rows["a:b"].requests, rows["globex"].requests) == (1, 2)
            assert (await store.spend(None))[0].requests == 2
            assert await store.ledger("2026-11", "a:b") == [mine]
            assert len(await store.ledger("2026-11")) == 3
            assert await store.ledger("2026-12", "a:b") == [later]
            assert await store.book_many([mine, theirs]) == [False, False]  # markers moved
            assert await store.budgets([month]) == {month: (1234, 500)}
            await store.release("r-open", [month])
            assert await store.budgets([month]) == {month: (1234, 0)}
            assert await store.get_doc("facts", "a:b", "customer:c1") == {"facts": [1]}
            index = await store.get_doc("episodes", "globex", "marta")
            assert index is not None and sorted(index) == ["conv-1", "conv-2"]
            assert index["conv-2"]["at"] == 7.0 and index["conv-2"]["conversation"] == "conv-2"
            doc = await store.get_doc("conversation", "globex", "c/1")
            assert doc == {"turns": [1, 2], "n": None}
        finally:
            await store.close()

    run(scenario())
    old = [k for p in keys.LEGACY_PATTERNS.values() for k in client.scan_iter(match=p)]
    assert old == []
    assert 0 < client.ttl(keys.booked_key("a:b", mine.id)) <= 40 * 86400  # expiry kept
    client.close()
