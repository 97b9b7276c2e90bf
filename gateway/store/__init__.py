"""Durable state behind one Protocol (`base.Store`): bookings, budgets and reservations,
conversation documents. Backends, picked by URL: SQLite (`sqlite.py`, the default) and
Redis or Redis Cluster (`redis.py`: `redis://`, `rediss://`, `redis-cluster://`). A store
imports no config, HTTP or pricing: only its own records, options and `gateway.errors` /
`gateway.spend.money` (and `gateway.offload`, to decode a big document off the event
loop; `gateway.urls`, to name a URL without its password)."""

from __future__ import annotations

from gateway.store.base import Store, StoreHealth
from gateway.store.options import RedisConfig, SQLiteConfig
from gateway.store.records import SpendRow, UsageRecord
from gateway.urls import shown_url


def open_store(
    url: str, sqlite: SQLiteConfig | None = None, redis: RedisConfig | None = None
) -> Store:
    if url.startswith("sqlite:///"):
        from gateway.store.sqlite import SQLiteStore

        return SQLiteStore(url.removeprefix("sqlite:///"), sqlite or SQLiteConfig())
    if url.startswith(("redis://", "rediss://", "redis-cluster://")):
        from gateway.store.redis import RedisStore

        return RedisStore(url, redis or RedisConfig())
    raise ValueError(f"unknown store URL scheme: {shown_url(url)!r}")


__all__ = ["SpendRow", "Store", "StoreHealth", "UsageRecord", "open_store"]
