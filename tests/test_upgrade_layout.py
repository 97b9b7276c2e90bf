"""Upgrading a deployment in place from a release of the earlier Redis key layout
(red-team read 25; the earlier release: ceddeca). The earlier layout is written here
the way that release wrote it (its BOOK script's keys, its `gw:doc:<kind>:<tenant>`
hashes). F1: `serve` and `check-config` refuse a Redis not yet migrated (it read as
empty, ceilings from $0). F2/F3: `gateway migrate` run after this version wrote (it
served first, or replicas of the earlier one still served during the migration) merges
and never overwrites what this version wrote."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
import redis

from gateway.config import load_settings
from gateway.ops.migrate import layout_problem, schema_problem
from gateway.store import redis_keys as keys
from gateway.store.options import RedisConfig
from gateway.store.records import UsageRecord
from gateway.store.redis import RedisStore
from tests.test_red_team_cli import CONFIG, _deployment, _gateway
from tests.test_redis_cluster import old_booking
from tests.test_store_contract import NOV, record

T = TypeVar("T")
BUDGET = "acme|month|2026-11"
CUSTOMER_BUDGET = "acme|customer:c1|month|2026-11"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    """The test's Redis database (REDIS_URL's, e.g. db 11), emptied before and after."""
    conn = redis.Redis.from_url(redis_url)
    conn.flushdb()
    yield conn
    conn.flushdb()
    conn.close()


def _old_doc(client: redis.Redis, kind: str, tenant: str, key: str, doc: Any) -> None:
    client.hset(f"gw:doc:{kind}:{tenant}", key, orjson.dumps(doc))


def _booked(n: int) -> list[UsageRecord]:
    budgets = (BUDGET, CUSTOMER_BUDGET)
    return [dataclasses.replace(record(ts=NOV - 100 + i), budgets=budgets) for i in range(n)]


def _fact(fact_id: str, value: str) -> dict[str, Any]:
    return {"id": fact_id, "value": value, "created_at": 1.0}


def _earlier_release_served(client: redis.Redis) -> list[UsageRecord]:
    """Three calls booked, a conversation, a customer's facts and episodes, a reservation
    in flight: the earlier layout."""
    rows = _booked(3)
    for r in rows:
        old_booking(client, r)
    client.zadd(f"gw:resv:{BUDGET}", {"r-old": time.time() + 600})
    client.hset(f"gw:resvamt:{BUDGET}", "r-old", 500)
    client.hincrby(f"gw:budget:{BUDGET}", "open", 500)
    _old_doc(client, "conversation", "acme", "conv-1", {"turns": 3, "summary": "old"})
    _old_doc(client, "facts", "acme", "customer:c1", {"facts": [_fact("f1", "likes tea")]})
    episode = {"conversation": "conv-0", "summary": "s0", "ended_at": 5.0}
    _old_doc(client, "episodes", "acme", "c1/conv-0", episode)
    return rows


# --- F1: a Redis of the earlier layout is not served as if it were empty ---------------


def test_serve_and_check_config_refuse_a_redis_of_the_earlier_layout(
    tmp_path: Path, client: redis.Redis, redis_url: str
) -> None:
    """Served as it was, every conversation, fact, counter and budget read as empty, and
    check-config, /healthz said ok: one line naming `gateway migrate`, exit 1; after the
    migration both go on."""
    _earlier_release_served(client)
    _deployment(tmp_path, CONFIG.replace("sqlite:///gw.db", redis_url))
    check = _gateway("check-config", cwd=tmp_path, timeout=60)
    assert check.returncode == 1, check.stderr
    assert "gateway migrate" in check.stderr and "earlier version" in check.stderr
    assert "Traceback" not in check.stderr
    serve = _gateway("serve", "--port", "0", cwd=tmp_path, timeout=60)
    assert serve.returncode == 1, serve.stderr
    errors = [line for line in serve.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "gateway migrate" in errors[0], serve.stderr
    assert "customer:c1" not in serve.stderr  # patterns, never a key naming a customer
    assert "Traceback" not in serve.stderr

    migrated = _gateway("migrate", cwd=tmp_path, timeout=60)
    assert migrated.returncode == 0, migrated.stderr
    check = _gateway("check-config", cwd=tmp_path, timeout=60)
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith("ok:")


def test_a_new_redis_is_marked_once_and_then_read_with_one_get(
    tmp_path: Path, client: redis.Redis, redis_url: str
) -> None:
    """A Redis holding no earlier key: `serve`'s check marks it (check-config does not),
    and a later start reads the mark alone (no SCAN of a big Redis)."""
    config = load_settings(_deployment(tmp_path, CONFIG.replace("sqlite:///gw.db", redis_url)))
    client.set("gw:{acme}:month:2026-11", "x")  # today's layout
    assert _gateway("check-config", cwd=tmp_path, timeout=60).returncode == 0
    assert client.get("gw:layout") is None
    assert run(schema_problem(config.config)) is None
    assert client.get("gw:layout") is not None
    client.set("gw:month:2026-11:acme", "x")  # not looked for again
    assert run(schema_problem(config.config)) is None


def test_booked_markers_an_earlier_migration_left_do_not_make_serve_refuse(
    tmp_path: Path, client: redis.Redis, redis_url: str
) -> None:
    """The earlier release's own `gateway migrate` (abd6019: no layout marker) left the
    booked markers it matched to no ledger row (beside a PostgreSQL ledger, every one)
    to expire: no data this version would read as missing. Before, a rolling upgrade
    from it had every new pod exit 1 saying the Redis would read as empty."""

    async def this_version_booked() -> None:
        store = RedisStore(redis_url, RedisConfig())
        try:
            assert await store.book_many(_booked(1)) == [True]  # today's layout
        finally:
            await store.close()

    run(this_version_booked())
    client.set("gw:booked:rec-without-row", "1", ex=40 * 86400)
    assert client.get("gw:layout") is None
    config = load_settings(_deployment(tmp_path, CONFIG.replace("sqlite:///gw.db", redis_url)))
    check = _gateway("check-config", cwd=tmp_path, timeout=60)
    assert check.returncode == 0, check.stderr
    assert run(schema_problem(config.config)) is None  # what `serve` asks
    assert client.get("gw:layout") is not None
    assert client.exists("gw:booked:rec-without-row")  # left to expire
    client.delete("gw:layout")
    assert _gateway("migrate", cwd=tmp_path, timeout=60).returncode == 0
    assert client.exists("gw:booked:rec-without-row")  # still unmatched: stays
    assert run(schema_problem(config.config)) is None


# Another application's keys in the same database under the earlier layout's prefixes:
# other names, or the names of that layout holding other types or contents.
FOREIGN: dict[str, Any] = {
    "gw:month:report-cache": "some other app's value",
    "gw:ledger:jobs": ["job1", "job2"],
    "gw:doc:readme": {"title": "x"},
    "gw:budget:quota": {"limit": "10"},
    "gw:month:2026-10:reports": "a string, no counters",
    "gw:ledger:2026-10": ["a job, no ledger row"],
    "gw:doc:conversation:wiki": {"page": "no JSON document"},
    "gw:budget:wiki|month|2026-11": {"spent": "a lot"},
    "gw:resvamt:wiki|day|2026-11-30": "a string",
}


def _foreign(client: redis.Redis) -> dict[str, Any]:
    for name, value in FOREIGN.items():
        if isinstance(value, str):
            client.set(name, value)
        elif isinstance(value, list):
            client.rpush(name, *value)
        else:
            client.hset(name, mapping=value)
    return {name: client.dump(name) for name in FOREIGN}


def test_another_applications_keys_under_the_earlier_prefixes_are_left_alone(
    tmp_path: Path, client: redis.Redis, redis_url: str
) -> None:
    """Before: any key under gw:month:, gw:ledger:, gw:doc:, ... made `serve` refuse the
    Redis, and `gateway migrate` then raised (JSONDecodeError) or renamed the other
    application's key (gw:month:report-cache -> gw:{ache}:month:report-). Now the earlier
    layout's keys are known by their exact names, types and contents: the others are
    neither counted nor touched, and `migrate` says how many it left."""
    before = _foreign(client)
    config = load_settings(_deployment(tmp_path, CONFIG.replace("sqlite:///gw.db", redis_url)))
    assert run(layout_problem(config.config)) is None
    check = _gateway("check-config", cwd=tmp_path, timeout=60)
    assert check.returncode == 0, check.stderr

    rows = _earlier_release_served(client)  # the earlier layout beside them
    marker = f"gw:booked:{rows[0].id}"  # a marker's name, matched to a row, no marker
    client.delete(marker)
    client.hset(marker, "a", "hash")
    before[marker] = client.dump(marker)
    assert run(layout_problem(config.config)) is not None
    migrated = _gateway("migrate", cwd=tmp_path, timeout=60)
    assert migrated.returncode == 0, migrated.stderr
    assert f"{len(before)} key(s)" in migrated.stdout and "of its own" in migrated.stdout
    assert {name: client.dump(name) for name in before} == before
    left = {k.decode() for p in keys.LEGACY_PATTERNS.values() for k in client.scan_iter(match=p)}
    assert left == set(before)

    async def read() -> None:
        store = RedisStore(redis_url, RedisConfig())
        try:
            (row,) = await store.spend("2026-11")
            assert row.requests == 3
            assert len(await store.ledger("2026-11", "acme")) == 3
            assert await store.get_doc("conversation", "acme", "conv-1") is not None
        finally:
            await store.close()

    run(read())
    check = _gateway("check-config", cwd=tmp_path, timeout=60)
    assert check.returncode == 0, check.stderr


# --- F2: a migration after this version wrote merges, never overwrites ------------------


async def _this_version_served(store: RedisStore) -> list[UsageRecord]:
    """What this version wrote on the same Redis before `gateway migrate` ran: two calls
    booked (counters, ledger rows, both budgets), a reservation in flight, the
    conversation started again, a fact put, an episode."""
    rows = _booked(2)
    assert await store.book_many(rows) == [True, True]
    assert await store.reserve("r-new", [(BUDGET, 10**12)], 700, 600) is None
    await store.put_doc("conversation", "acme", "conv-1", {"turns": 2, "summary": "new"})
    await store.put_doc("facts", "acme", "customer:c1", {"f:f2": _fact("f2", "owns a cat")})
    await store.put_doc("episodes", "acme", "c1", {"conv-9": {"conversation": "conv-9"}})
    return rows


def test_migrate_after_this_version_served_merges_what_both_wrote(
    client: redis.Redis, redis_url: str
) -> None:
    """Before: RENAME over today's keys and the earlier documents' fields written over
    today's: the calls booked by this version vanished from the counters, the budgets
    and the ledger, a conversation went back to its earlier state."""
    old = _earlier_release_served(client)

    async def scenario() -> None:
        store = RedisStore(redis_url, RedisConfig())
        try:
            new = await _this_version_served(store)
            counts = await store.migrate_layout()
            (row,) = await store.spend("2026-11")
            assert row.requests == 5 and row.cost_units == 5 * 1234
            ledger = await store.ledger("2026-11", "acme")
            assert sorted(r.id for r in ledger) == sorted(r.id for r in old + new)
            assert len(await store.ledger("2026-11")) == 5
            spent = await store.budgets([BUDGET, CUSTOMER_BUDGET])
            assert spent == {BUDGET: (5 * 1234, 1200), CUSTOMER_BUDGET: (5 * 1234, 0)}
            await store.release("r-old", [BUDGET])
            await store.release("r-new", [BUDGET])
            assert await store.budgets([BUDGET]) == {BUDGET: (5 * 1234, 0)}
            conversation = await store.get_doc("conversation", "acme", "conv-1")
            assert conversation == {"summary": "new", "turns": 2}  # this version's kept
            facts = await store.get_doc("facts", "acme", "customer:c1")
            assert facts is not None and sorted(facts) == ["f:f1", "f:f2"]
            episodes = await store.get_doc("episodes", "acme", "c1")
            assert episodes is not None and sorted(episodes) == ["conv-0", "conv-9"]
            assert await store.book_many([*old, *new]) == [False] * 5  # markers kept
            assert counts["merged"] == 6  # month, ledger, 2 budgets, resv, resvamt
            assert counts["documents_kept"] == 1  # the conversation
            again = await store.migrate_layout()
            assert set(again.values()) == {0} and "merged" not in again  # idempotent
            (row,) = await store.spend("2026-11")
            assert row.requests == 5
        finally:
            await store.close()

    run(scenario())
    left = [k for p in keys.LEGACY_PATTERNS.values() for k in client.scan_iter(match=p)]
    assert left == []


def test_a_second_migrate_after_a_rolling_upgrade_keeps_both_halves(
    tmp_path: Path, client: redis.Redis, redis_url: str
) -> None:
    """The migrate Job ran while replicas of the earlier release still served (a layout
    change is no rolling upgrade: the README says to stop them first): those wrote the
    earlier layout again, this version's replicas today's. Run again, `gateway migrate`
    joins the two halves; it renamed the earlier half over the newer one before."""
    _earlier_release_served(client)
    _deployment(tmp_path, CONFIG.replace("sqlite:///gw.db", redis_url))
    assert _gateway("migrate", cwd=tmp_path, timeout=60).returncode == 0
    late = _booked(2)  # the earlier release's replicas, after the migration
    for r in late:
        old_booking(client, r)
    _old_doc(client, "facts", "acme", "customer:c1", {"facts": [_fact("f3", "in Oslo")]})

    async def new_replicas() -> list[UsageRecord]:
        store = RedisStore(redis_url, RedisConfig())
        try:
            rows = _booked(1)
            assert await store.book_many(rows) == [True]
            return rows
        finally:
            await store.close()

    run(new_replicas())
    again = _gateway("migrate", cwd=tmp_path, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "this version had written some of those keys already" in again.stdout

    async def read() -> None:
        store = RedisStore(redis_url, RedisConfig())
        try:
            (row,) = await store.spend("2026-11")
            assert row.requests == 6
            assert len(await store.ledger("2026-11", "acme")) == 6
            assert await store.budgets([BUDGET]) == {BUDGET: (6 * 1234, 500)}
            facts = await store.get_doc("facts", "acme", "customer:c1")
            assert facts is not None and sorted(facts) == ["f:f1", "f:f3"]
        finally:
            await store.close()

    run(read())


def test_an_interrupted_join_of_ledger_lists_adds_no_row_twice(
    client: redis.Redis, redis_url: str
) -> None:
    """A run cut short after appending the earlier rows (the earlier list still there):
    the next run appends none of them again."""
    old = _booked(2)
    for r in old:
        old_booking(client, r)

    async def scenario() -> None:
        store = RedisStore(redis_url, RedisConfig())
        try:
            new = _booked(1)
            await store.book_many(new)
            ledger = keys.ledger_key("acme", "2026-11")
            client.rpush(ledger, orjson.dumps(old[0].to_json()))  # half a join
            await store.migrate_layout()
            rows = await store.ledger("2026-11", "acme")
            assert sorted(r.id for r in rows) == sorted(r.id for r in old + new)
        finally:
            await store.close()

    run(scenario())
