"""What erased or expired data leaves behind beside the rows a store reads back: SQLite's
write-ahead log after a retention purge, a Redis append-only file after an erasure, a
PostgreSQL ledger's dead row versions. Driven through the gateway (the openai SDK and
the HTTP API); the files on disk are then searched byte by byte."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis

from gateway.store import sqlite
from gateway.store.sqlite import SQLiteStore
from tests.inprocess import InProcessGateway, running, say
from tests.ledger_db import LEDGER_SEP, create_database, drop_database
from tests.servers import start_redis, stop

DAYS = 0.00002  # 1.7 s: every document expires that long after its last write
# What the customer said and what the app stored about them (the customer id and the
# conversation id stay in the ledger, which is not purged).
WORDS = [b"Quintela", b"98765-4321", b"marta.quintela", b"VIP-GOLD-889"]
ERASED = "cust-erase-6620"


def _talk(gw: InProcessGateway, customer: str, conversation: str) -> None:
    messages: list[Any] = [
        {"role": "system", "content": "You are the support agent of an online store."}
    ]
    for line in (
        "Hi, I'm Marta Quintela, my order ORD-55120 has not arrived.",
        "Call me on +55 11 98765-4321 or write to marta.quintela@example.com",
    ):
        say(gw, messages, line, **{"X-Customer-Id": customer, "X-Conversation-Id": conversation})
    put = gw.http.put(
        f"{gw.v1}/customers/{customer}/facts",
        json={"facts": [{"id": "tier", "text": "Loyalty tier VIP-GOLD-889", "value": "x"}]},
        headers={"Authorization": f"Bearer {gw.keys['acme']}"},
    )
    assert put.status_code == 200, put.text


def _found(root: Path, words: list[bytes]) -> dict[str, list[bytes]]:
    """Per SQLite file (the database, its write-ahead log), the words it holds."""
    files = {p.name: p.read_bytes() for p in sorted(root.glob("gateway.db*"))}
    return {name: [w for w in words if w in raw] for name, raw in files.items() if raw}


def test_a_sqlite_purge_leaves_nothing_expired_in_the_write_ahead_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The purge deleted the expired rows, but their text stayed in `gateway.db-wal`
    until some later checkpoint reset the log (with a steady trickle of writes: never)."""
    monkeypatch.setattr(sqlite, "_PURGE_EVERY_S", 0.0)  # a round at each write, not a minute
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "retention.yaml").write_text(
        f"conversation_idle_days: {DAYS}\nepisodes_days: {DAYS}\nfacts_days: {DAYS}\n"
    )
    for gw in running(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}"):
        _talk(gw, "cust-ret-5501", "conv-ret1")
        assert _found(tmp_path, WORDS)["gateway.db-wal"] == WORDS
        time.sleep(DAYS * 86_400 + 1)
        # another tenant's turn: its writes start a purge round
        gw.openai("globex").chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hello"}],
            extra_headers={"X-Conversation-Id": "g-1"},
        )
        store = gw.gateway.store
        assert isinstance(store, SQLiteStore) and gw.http.portal is not None
        gw.http.portal.call(store.purged)
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        assert gw.http.get(f"{gw.v1}/conversations/conv-ret1", headers=auth).status_code == 404
        assert {name: [] for name in _found(tmp_path, WORDS)} == _found(tmp_path, WORDS)


def _erase(gw: InProcessGateway, customer: str) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    erased = gw.http.delete(f"{gw.v1}/customers/{customer}", headers=auth)
    assert erased.status_code == 200, erased.text
    report: dict[str, Any] = erased.json()
    assert report["found"]
    return report


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[redis.Redis, Path]]:
    """A redis-server of this test (no persistence until the test sets it), its folder."""
    folder = tmp_path / "redis"
    folder.mkdir()
    proc, url = start_redis(folder)
    client = redis.Redis.from_url(url)
    yield client, folder
    client.close()
    stop(proc)


def _settled(client: redis.Redis) -> dict[str, Any]:
    """INFO persistence once no snapshot or append-only file rewrite is under way."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info: dict[str, Any] = client.info("persistence")
        busy = info["rdb_bgsave_in_progress"] or info["aof_rewrite_in_progress"]
        if not busy and not info["aof_rewrite_scheduled"]:
            return info
        time.sleep(0.05)
    raise TimeoutError("redis-server kept writing its files")


def _on_disk(folder: Path, words: list[bytes]) -> list[bytes]:
    files = [p.read_bytes() for p in folder.rglob("*") if p.is_file()]
    return [w for w in words if any(w in raw for raw in files)]


def test_a_redis_erasure_rewrites_the_append_only_file_and_is_not_scrubbed(
    tmp_path: Path, own_redis: tuple[redis.Redis, Path]
) -> None:
    """Redis as deploy/compose.yaml runs it (`--appendonly yes`): the erasure answered
    `scrubbed: true` while the append-only file kept every word it deleted."""
    client, folder = own_redis
    client.config_set("appendonly", "yes")
    rewrites = _settled(client)["aof_rewrites"]  # turning it on writes the first base
    url = f"redis://127.0.0.1:{client.connection_pool.connection_kwargs['port']}/0"
    (tmp_path / "gw").mkdir()
    for gw in running(tmp_path / "gw", url):
        _talk(gw, ERASED, "conv-aof")
        time.sleep(1.2)  # appendfsync everysec
        assert _on_disk(folder, WORDS) == WORDS
        assert _erase(gw, ERASED)["scrubbed"] is False
    assert _settled(client)["aof_rewrites"] == rewrites + 1  # the erasure started one
    assert _on_disk(folder, [*WORDS, ERASED.encode()]) == []


def test_a_redis_erasure_after_a_snapshot_is_not_scrubbed(
    tmp_path: Path, own_redis: tuple[redis.Redis, Path]
) -> None:
    """No append-only file, no `save` schedule: an erasure is scrubbed until a snapshot
    (BGSAVE, an operator's backup) has written the data to disk."""
    client, folder = own_redis
    client.config_set("rdbcompression", "no")  # the words are then found as written
    url = f"redis://127.0.0.1:{client.connection_pool.connection_kwargs['port']}/0"
    (tmp_path / "gw").mkdir()
    for gw in running(tmp_path / "gw", url):
        _talk(gw, "cust-memory-only", "conv-mem")
        assert _erase(gw, "cust-memory-only")["scrubbed"] is True
        _talk(gw, ERASED, "conv-rdb")
        client.bgsave()
        _settled(client)
        assert _on_disk(folder, WORDS) == WORDS
        assert _erase(gw, ERASED)["scrubbed"] is False
        assert not list(folder.glob("appendonly*"))  # no append-only file was made


@pytest.fixture
def ledger_db() -> Iterator[str]:
    """A PostgreSQL ledger database of this test, migrated."""
    url = create_database("h1_erasure")
    yield url
    drop_database(url)


# Per page of the ledger table: its row versions (the line pointers that still hold a
# tuple, live or dead) holding the bytes %s; then per page of the (tenant, customer)
# index, its entries holding them (bt_page_items shows an entry's bytes as hex).
_PAGES = "(SELECT pg_relation_size('{0}') / current_setting('block_size')::int)"
_HEAP_VERSIONS = f"""
SELECT count(*) FROM generate_series(0, {_PAGES.format("ledger")} - 1) AS page,
    heap_page_items(get_raw_page('ledger', page::int)) AS item
WHERE position(%s::bytea in item.t_data) > 0
"""
_INDEX_ENTRIES = f"""
SELECT count(*) FROM generate_series(1, {_PAGES.format("ledger_customer")} - 1) AS page,
    bt_page_items('ledger_customer', page::int) AS item
WHERE position(encode(%s::bytea, 'hex') in replace(item.data, ' ', '')) > 0
"""


def test_a_postgresql_ledger_erasure_leaves_no_row_version_naming_the_customer(
    tmp_path: Path, redis_url: str, ledger_db: str
) -> None:
    """The erasure's UPDATE left the rows as they were (naming the customer) in the
    table and its index, as dead versions, until some VACUUM; and it answered
    `scrubbed: true`, which a VACUUM (it frees their space without zeroing it) cannot
    make true either."""
    for gw in running(tmp_path, f"{redis_url}{LEDGER_SEP}{ledger_db}"):
        _talk(gw, ERASED, "conv-pg")
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        deadline = time.monotonic() + 30  # the bookings reach PostgreSQL in batches
        while time.monotonic() < deadline:
            export = gw.http.get(f"{gw.v1}/customers/{ERASED}/export", headers=auth).json()
            if len(export["ledger"]) == 2:
                break
            time.sleep(0.1)
        report = _erase(gw, ERASED)
        assert report["ledger_rows_pseudonymized"] == 2 and report["scrubbed"] is False
    with psycopg.connect(ledger_db, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        named = ERASED.encode()
        alias = report["pseudonym"].encode()
        assert conn.execute(_HEAP_VERSIONS, [alias]).fetchone() == (2,)  # the search finds
        assert conn.execute(_HEAP_VERSIONS, [named]).fetchone() == (0,)
        assert conn.execute(_INDEX_ENTRIES, [alias]).fetchone() == (2,)
        assert conn.execute(_INDEX_ENTRIES, [named]).fetchone() == (0,)
