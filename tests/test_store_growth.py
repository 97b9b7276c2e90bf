"""What a long-running gateway's store keeps must not grow without end (soak findings)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from gateway.store import sqlite_docs
from gateway.store.options import SQLiteConfig
from gateway.store.sqlite import SQLiteStore


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
