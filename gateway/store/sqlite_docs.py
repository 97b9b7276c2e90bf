"""The SQLite store's documents: one row per top-level field (`doc_field`), so a patch
writes only the fields that changed, and an expiry per document (`doc_expiry`). An
expired document reads as absent at once; its rows are deleted a batch at a time by
later writes (`purge`).

Files written by earlier versions kept each document whole in a `docs` table: `setup`
moves them into fields once, in one transaction (`records.legacy_doc`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from gateway.store.records import legacy_doc
from gateway.store.sqlite_threads import rollback

SCHEMA = """
CREATE TABLE IF NOT EXISTS doc_field (
    kind TEXT NOT NULL,
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    field TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (kind, tenant, key, field)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS doc_expiry (
    kind TEXT NOT NULL,
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    expires REAL NOT NULL,
    PRIMARY KEY (kind, tenant, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS doc_expires ON doc_expiry (expires);
"""

PURGE_BATCH = 500  # expired documents deleted per purge
_WHERE = "kind = ? AND tenant = ? AND key = ?"


def setup(conn: sqlite3.Connection) -> None:
    """Once per file: a legacy `docs` table becomes fields, then is dropped."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'docs'").fetchone():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'docs'").fetchone():
            for kind, tenant, key, body in conn.execute("SELECT * FROM docs").fetchall():
                new_key, fields = legacy_doc(kind, key, dict(orjson.loads(body)))
                _set(conn, (kind, tenant, new_key), fields)
            conn.execute("DROP TABLE docs")
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def _expired(conn: sqlite3.Connection, ident: tuple[str, str, str], now: float) -> bool:
    row = conn.execute(f"SELECT expires FROM doc_expiry WHERE {_WHERE}", ident).fetchone()
    return row is not None and row[0] <= now


def read(
    conn: sqlite3.Connection, ident: tuple[str, str, str], now: float
) -> dict[str, Any] | None:
    if _expired(conn, ident, now):
        return None
    rows = conn.execute(f"SELECT field, body FROM doc_field WHERE {_WHERE}", ident).fetchall()
    return {field: orjson.loads(body) for field, body in rows} if rows else None


def _set(conn: sqlite3.Connection, ident: tuple[str, str, str], fields: Mapping[str, Any]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO doc_field VALUES (?, ?, ?, ?, ?)",
        [(*ident, name, orjson.dumps(value)) for name, value in fields.items()],
    )


def _drop(conn: sqlite3.Connection, ident: tuple[str, str, str]) -> int:
    conn.execute(f"DELETE FROM doc_expiry WHERE {_WHERE}", ident)
    return conn.execute(f"DELETE FROM doc_field WHERE {_WHERE}", ident).rowcount


def write(
    conn: sqlite3.Connection,
    ident: tuple[str, str, str],
    changed: Mapping[str, Any],
    removed: Sequence[str],
    ttl_s: float | None,
    now: float,
    *,
    replace: bool,
) -> None:
    """One transaction; an expired document is replaced, never patched."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if replace or _expired(conn, ident, now):
            _drop(conn, ident)
        conn.executemany(
            f"DELETE FROM doc_field WHERE {_WHERE} AND field = ?",
            [(*ident, name) for name in removed],
        )
        _set(conn, ident, changed)
        if ttl_s is None:
            conn.execute(f"DELETE FROM doc_expiry WHERE {_WHERE}", ident)
        else:
            conn.execute(
                "INSERT OR REPLACE INTO doc_expiry VALUES (?, ?, ?, ?)", (*ident, now + ttl_s)
            )
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def swap(
    conn: sqlite3.Connection,
    ident: tuple[str, str, str],
    changed: Mapping[str, Any],
    removed: Sequence[str],
    ttl_s: float | None,
    now: float,
    version: int,
) -> bool:
    """`write` while the document's `version` field is `version` (absent or expired: 0),
    setting it one higher; False, writing nothing, when another write came first."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        expired = _expired(conn, ident, now)
        row = (
            None
            if expired
            else conn.execute(
                f"SELECT body FROM doc_field WHERE {_WHERE} AND field = 'version'", ident
            ).fetchone()
        )
        if (int(orjson.loads(row[0])) if row else 0) != version:
            conn.execute("ROLLBACK")
            return False
        if expired:
            _drop(conn, ident)
        conn.executemany(
            f"DELETE FROM doc_field WHERE {_WHERE} AND field = ?",
            [(*ident, name) for name in removed],
        )
        _set(conn, ident, {**changed, "version": version + 1})
        if ttl_s is None:
            conn.execute(f"DELETE FROM doc_expiry WHERE {_WHERE}", ident)
        else:
            conn.execute(
                "INSERT OR REPLACE INTO doc_expiry VALUES (?, ?, ?, ?)", (*ident, now + ttl_s)
            )
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return True


def delete(conn: sqlite3.Connection, ident: tuple[str, str, str]) -> bool:
    conn.execute("BEGIN IMMEDIATE")
    try:
        deleted = _drop(conn, ident) > 0
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return deleted


def delete_many(conn: sqlite3.Connection, tenant: str, docs: Sequence[tuple[str, str]]) -> int:
    """Inside the caller's transaction: documents (not expired ones) deleted."""
    return sum(_drop(conn, (kind, tenant, key)) > 0 for kind, key in docs)


def listing(
    conn: sqlite3.Connection, kind: str, tenant: str, prefix: str, now: float
) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT key, field, body FROM doc_field WHERE kind = ? AND tenant = ? "
        "AND key >= ? AND key < ? ORDER BY key",
        (kind, tenant, prefix, prefix + "\U0010ffff"),
    ).fetchall()
    docs: dict[str, dict[str, Any]] = {}
    for key, field, body in rows:
        docs.setdefault(key, {})[field] = orjson.loads(body)
    return [doc for key, doc in docs.items() if not _expired(conn, (kind, tenant, key), now)]


def purge(conn: sqlite3.Connection, now: float) -> int:
    """Delete up to PURGE_BATCH expired documents; how many."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        gone = conn.execute(
            "SELECT kind, tenant, key FROM doc_expiry WHERE expires <= ? LIMIT ?",
            (now, PURGE_BATCH),
        ).fetchall()
        for ident in gone:
            _drop(conn, tuple(ident))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return len(gone)
