"""The SQLite store's budget counters (gateway.spend.ceilings): one row per budget and
period, with the time it may go (records.budget_expires: a few days after its day, some
weeks after its month). The purge deletes ended periods' rows a batch at a time.

Files written by earlier versions have no `expires` column: `setup` adds it, and the
purge fills it in, a batch at a time, for the rows that lack it (rows an earlier version
still running beside this one writes lack it too)."""

from __future__ import annotations

import sqlite3

from gateway.store.records import budget_expires
from gateway.store.sqlite_threads import transaction

BATCH = 500  # rows deleted (or given their expiry) per purge job
_NEVER = float("inf")  # a key naming no period is kept

ADD_SPENT = (
    "INSERT INTO budget (key, spent_units, expires) VALUES (?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET spent_units = spent_units + excluded.spent_units, "
    "expires = COALESCE(expires, excluded.expires)"
)


def expires(key: str) -> float:
    found = budget_expires(key)
    return _NEVER if found is None else found


def setup(conn: sqlite3.Connection) -> None:
    """The `expires` column and its index (a file of an earlier version has neither)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(budget)")}
    if "expires" not in columns:
        try:
            conn.execute("ALTER TABLE budget ADD COLUMN expires REAL")
        except sqlite3.OperationalError as exc:  # another process added it meanwhile
            if "duplicate column" not in str(exc):
                raise
    conn.execute("CREATE INDEX IF NOT EXISTS budget_expires ON budget (expires)")


def purge(conn: sqlite3.Connection, now: float) -> int:
    """One transaction: up to BATCH rows without an expiry given theirs, and up to BATCH
    rows of ended periods deleted. How many rows it touched (BATCH or more: call again)."""
    with transaction(conn):
        unset = conn.execute(
            "SELECT key FROM budget WHERE expires IS NULL LIMIT ?", (BATCH,)
        ).fetchall()
        conn.executemany(
            "UPDATE budget SET expires = ? WHERE key = ?", [(expires(k), k) for (k,) in unset]
        )
        gone = conn.execute(
            "DELETE FROM budget WHERE key IN (SELECT key FROM budget WHERE expires <= ? LIMIT ?)",
            (now, BATCH),
        ).rowcount
    return max(len(unset), gone)


def prefix_range(prefix: str) -> tuple[str, str]:
    """(low, high): `low <= key < high` holds for exactly the keys starting with `prefix`
    (a range of the primary key, where substr() would read every row)."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)
