"""The SQLite store's rate-limit counters (gateway.spend.rate_limits): one row per
(tenant, counter, bucket), counted and checked in one `BEGIN IMMEDIATE` transaction,
so every process sharing the file sees the same window."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from gateway.store.base import RateUse
from gateway.store.sqlite_threads import transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS rate_bucket (
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    amount INTEGER NOT NULL,
    PRIMARY KEY (tenant, name, bucket)
) WITHOUT ROWID;
"""

_ADD = (
    "INSERT INTO rate_bucket VALUES (?, ?, ?, ?) ON CONFLICT (tenant, name, bucket) "
    "DO UPDATE SET amount = amount + excluded.amount"
)


def count(
    conn: sqlite3.Connection,
    tenant: str,
    counters: Sequence[tuple[str, int, int]],
    bucket_ms: int,
    span: int,
    settle_bucket: int | None,
    now_ms: int,
) -> RateUse:
    """`Store.count_rate` in one transaction: the tenant's buckets older than the span
    go (its keys' too), each counter is read, and every amount is added or none."""
    current = now_ms // bucket_ms
    oldest = current - span
    bucket = current if settle_bucket is None else settle_bucket
    with transaction(conn):
        conn.execute("DELETE FROM rate_bucket WHERE tenant = ? AND bucket < ?", (tenant, oldest))
        used = [
            dict(
                conn.execute(
                    "SELECT bucket, amount FROM rate_bucket WHERE tenant = ? AND name = ?",
                    (tenant, name),
                ).fetchall()
            )
            for name, _, _ in counters
        ]
        admitted = settle_bucket is not None or all(
            sum(live.values()) + amount <= limit
            for live, (_, limit, amount) in zip(used, counters, strict=True)
        )
        if admitted and bucket >= oldest:
            for live, (name, _, amount) in zip(used, counters, strict=True):
                if amount > 0:
                    conn.execute(_ADD, (tenant, name, bucket, amount))
                    live[bucket] = live.get(bucket, 0) + amount
    return RateUse(admitted, now_ms, bucket, tuple(tuple(sorted(u.items())) for u in used))
