"""What the SQLite store does for one customer (gateway.context.customers): read their
ledger rows (an export), and erase them: documents deleted, ledger rows and spend
counters under a pseudonym (the conversation ids made from their id random), no copy of
what was deleted left in the file (secure_delete zeroes freed content; the write-ahead
log is truncated). Also how a ledger row reads."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

from gateway.store.base import FINGERPRINT_PREFIX, Erased, erased_conversation
from gateway.store.records import UsageRecord, customer_budget, record_of_row
from gateway.store.sqlite_budgets import prefix_range
from gateway.store.sqlite_docs import delete_many
from gateway.store.sqlite_threads import rollback

_TRUNCATE_WAIT_MS = 50  # the WAL truncation waits this long per try for readers


def erase(
    conn: sqlite3.Connection,
    tenant: str,
    customer: str,
    alias: str,
    docs: Sequence[tuple[str, str]],
) -> Erased:
    """One transaction: documents deleted (zeroed: secure_delete), ledger rows and spend
    counters under the pseudonym, costs unchanged; reservations of calls in flight left."""
    named, renamed = f"{tenant}|customer:{customer}|", f"{tenant}|customer:{alias}|"
    conn.execute("BEGIN IMMEDIATE")
    try:
        deleted = delete_many(conn, tenant, docs)
        _rename_fingerprints(conn, tenant, customer)
        rows = conn.execute(
            "UPDATE ledger SET customer = ? WHERE tenant = ? AND customer = ?",
            (alias, tenant, customer),
        ).rowcount
        # The settled spend only: the reservations of calls in flight stay under the id,
        # where those calls book, so they count against its ceiling until they end.
        budgets = 0
        keys = conn.execute(
            "SELECT key FROM budget WHERE key >= ? AND key < ?", prefix_range(named)
        ).fetchall()
        for (key,) in keys:
            tail = customer_budget(key, tenant, customer)
            if tail is not None:
                conn.execute("UPDATE budget SET key = ? WHERE key = ?", (renamed + tail, key))
                budgets += 1
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return Erased(documents=deleted, ledger_rows=rows, budgets=budgets)


def _rename_fingerprints(conn: sqlite3.Connection, tenant: str, customer: str) -> None:
    """Each conversation id of the customer's ledger rows that the gateway made from
    their id (base.FINGERPRINT_PREFIX) gets a random one, the same for its every row."""
    found = conn.execute(
        "SELECT DISTINCT conversation FROM ledger WHERE tenant = ? AND customer = ? "
        "AND substr(conversation, 1, ?) = ?",
        (tenant, customer, len(FINGERPRINT_PREFIX), FINGERPRINT_PREFIX),
    ).fetchall()
    conn.executemany(
        "UPDATE ledger SET conversation = ? WHERE tenant = ? AND customer = ? AND conversation = ?",
        [(erased_conversation(), tenant, customer, old) for (old,) in found],
    )


def truncate_wal(conn: sqlite3.Connection) -> bool:
    """Old page images of erased rows stay in the write-ahead log until it is reset;
    checkpoint and truncate it now. A reader in the middle of a read holds it back: a
    short wait (never the writer's whole busy timeout), then False; the WAL is reset and
    cut to nothing at a later checkpoint (`journal_size_limit` 0)."""
    busy_ms = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute(f"PRAGMA busy_timeout = {_TRUNCATE_WAIT_MS}")
    try:
        for attempt in range(3):
            if conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0:
                return True
            time.sleep(0.02 * (attempt + 1))
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")


def customer_rows(
    conn: sqlite3.Connection, tenant: str, customer: str, limit: int
) -> list[UsageRecord]:
    sql = "SELECT * FROM ledger WHERE tenant = ? AND customer = ? ORDER BY ts, rowid LIMIT ?"
    return records_of(conn.execute(sql, (tenant, customer, limit)))


def records_of(rows: Iterable[Any]) -> list[UsageRecord]:
    return [record_of_row(r) for r in rows]
