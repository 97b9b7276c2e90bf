"""PostgreSQL for the tests: databases of their own on the machine's server
(`GATEWAY_TEST_POSTGRES_URL`, default the local trust-auth `postgres` user), and the
store that pairs a Redis store with the PostgreSQL ledger as `gateway serve` builds it
(`ledger:`), named in tests by a store URL of the form `redis://... + postgresql://...`."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from gateway.config import Config, UpstreamConfig
from gateway.runtime import open_configured_store
from gateway.store import Store, open_store
from gateway.store.options import PostgresConfig
from gateway.store.postgres import PostgresLedger

# Every store backend, and Redis with the PostgreSQL ledger beside it: a module's
# `store_url` fixture parametrized by these gets its URL from `backend_url`.
EVERY_BACKEND = ["sqlite", "redis", "redis-cluster", "redis+postgresql"]


def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The store URL of the backend `request.param` (of EVERY_BACKEND)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'gateway.db'}"
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    if request.param == "redis-cluster":
        return str(request.getfixturevalue("redis_cluster_url"))
    hot = request.getfixturevalue("redis_url")
    return f"{hot}{LEDGER_SEP}{request.getfixturevalue('postgres_ledger_url')}"


ADMIN_URL = os.environ.get("GATEWAY_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
LEDGER_SEP = " + "


def _admin() -> psycopg.Connection[tuple[object, ...]]:
    try:
        return psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL unreachable at {ADMIN_URL} (GATEWAY_TEST_POSTGRES_URL): {exc}")


def create_database(prefix: str, migrated: bool = True) -> str:
    """A new database (migrated unless told not to); its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with _admin() as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = f"{ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    if not migrated:
        return url

    async def migrate() -> None:
        ledger = PostgresLedger(url, PostgresConfig())
        await ledger.open()
        try:
            await ledger.migrate()
        finally:
            await ledger.close()

    asyncio.run(migrate())
    return url


def drop_database(url: str) -> None:
    with _admin() as conn:
        name = url.rsplit("/", 1)[1]
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def empty_ledger(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE ledger, spend_month")


def open_test_store(url: str) -> Store:
    """`open_store`, and `redis://... + postgresql://...` as serve builds it."""
    if LEDGER_SEP not in url:
        return open_store(url)
    hot, ledger = url.split(LEDGER_SEP)
    config = Config(upstream=UpstreamConfig(base_url="simulator"), store=hot, ledger=ledger)
    return open_configured_store(config)
