"""The SQLite store's documents: a document's small fields share one row (`PACK`, a JSON
object), and each bigger field has a row of its own (`doc_field`), so a patch writes the
pack and only the big fields that changed; an expiry per document (`doc_expiry`). An
expired document reads as absent at once; its rows are deleted a batch at a time by
later writes (`purge`).

Why the pack: a row costs SQLite a B-tree insert whatever its size, and a conversation
record is some thirty fields, most of them a number; one row for them all costs a new
record a tenth of the inserts. The pack lists the fields kept in rows of their own
(`_OWN`), so a field that grows past `SMALL_BYTES` moves out of it, and one that shrinks
moves back, without a read of the document. A document written before the pack (a row
per field) reads as it is, and its fields move into the pack as they are written.

Files written by earlier versions kept each document whole in a `docs` table: `setup`
moves them into fields once, in one transaction (`records.legacy_doc`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from gateway import offload
from gateway.store.records import legacy_doc
from gateway.store.sqlite_threads import rollback, transaction

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
PACK = ""  # the field name of the row that holds a document's small fields
_OWN = "\x00own"  # in the pack: the names of the fields kept in rows of their own
SMALL_BYTES = 200  # a field this long or shorter (as JSON) goes in the pack


def setup(conn: sqlite3.Connection) -> None:
    """Once per file: a legacy `docs` table becomes fields, then is dropped. Every process
    of the earlier release must be stopped first (README: Upgrading): one still serving
    on the file fails its document reads and writes from then on. Dropped, not renamed
    aside: a copy of the customers' text there would outlive their erasure."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'docs'").fetchone():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'docs'").fetchone():
            for kind, tenant, key, body in conn.execute("SELECT * FROM docs").fetchall():
                new_key, fields = legacy_doc(kind, key, dict(offload.loads(body)))
                ident = (kind, tenant, new_key)  # several may become one document
                _apply(conn, ident, _layout(conn, ident), fields, ())
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
    return _document(rows)


def _document(rows: Sequence[tuple[str, bytes]]) -> dict[str, Any] | None:
    """A document's rows, its pack's fields among them, by field name as before the pack."""
    doc: dict[str, Any] = {}
    for field, body in rows:
        if field == PACK:
            doc.update(offload.loads(body))
            doc.pop(_OWN, None)
        else:
            doc[field] = offload.loads(body)
    return dict(sorted(doc.items())) if doc else None


@dataclass
class _Layout:
    """Where a stored document's fields are: its pack's, and the names with rows of their own."""

    pack: dict[str, Any]
    own: set[str]
    stored: bytes | None = None  # the pack's row as read (None: no pack row)

    def value(self, conn: sqlite3.Connection, ident: tuple[str, str, str], name: str) -> Any:
        if name not in self.own:
            return self.pack.get(name)
        row = conn.execute(
            f"SELECT body FROM doc_field WHERE {_WHERE} AND field = ?", (*ident, name)
        ).fetchone()
        return None if row is None else offload.loads(row[0])


def _layout(conn: sqlite3.Connection, ident: tuple[str, str, str]) -> _Layout:
    row = conn.execute(
        f"SELECT body FROM doc_field WHERE {_WHERE} AND field = ?", (*ident, PACK)
    ).fetchone()
    if row is not None:
        pack = offload.loads(row[0])
        return _Layout(pack, set(pack.pop(_OWN, ())), row[0])
    # No pack: a new document, or one written a row per field (before the pack).
    names = conn.execute(f"SELECT field FROM doc_field WHERE {_WHERE}", ident).fetchall()
    return _Layout({}, {name for (name,) in names})


def _apply(
    conn: sqlite3.Connection,
    ident: tuple[str, str, str],
    layout: _Layout,
    changed: Mapping[str, Any],
    removed: Sequence[str],
) -> None:
    """Write `changed` and delete `removed` (inside the caller's transaction): the small
    fields into the pack, written once and only when it changed, the others a row each."""
    pack, own = layout.pack, layout.own
    gone, rows = [], []
    for name in removed:
        if name in own:
            own.discard(name)
            gone.append(name)
        else:
            pack.pop(name, None)
    for name, value in changed.items():
        body = orjson.dumps(value)
        if len(body) <= SMALL_BYTES:
            pack[name] = value
            if name in own:
                own.discard(name)
                gone.append(name)
        else:
            rows.append((*ident, name, body))
            own.add(name)
            pack.pop(name, None)
    if gone:
        conn.executemany(
            f"DELETE FROM doc_field WHERE {_WHERE} AND field = ?", [(*ident, n) for n in gone]
        )
    body = orjson.dumps({**pack, _OWN: sorted(own)} if own else pack)
    if body != layout.stored:
        rows.append((*ident, PACK, body))
    conn.executemany("INSERT OR REPLACE INTO doc_field VALUES (?, ?, ?, ?, ?)", rows)


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
    with transaction(conn):
        if replace or _expired(conn, ident, now):
            _drop(conn, ident)
            layout = _Layout({}, set())
        else:
            layout = _layout(conn, ident)
        _apply(conn, ident, layout, changed, removed)
        _expires(conn, ident, ttl_s, now)


def _expires(
    conn: sqlite3.Connection, ident: tuple[str, str, str], ttl_s: float | None, now: float
) -> None:
    if ttl_s is None:
        conn.execute(f"DELETE FROM doc_expiry WHERE {_WHERE}", ident)
    else:
        conn.execute("INSERT OR REPLACE INTO doc_expiry VALUES (?, ?, ?, ?)", (*ident, now + ttl_s))


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
    with transaction(conn):
        expired = _expired(conn, ident, now)
        layout = _Layout({}, set()) if expired else _layout(conn, ident)
        if int(layout.value(conn, ident, "version") or 0) != version:
            return False  # nothing written: the transaction ends empty
        if expired:
            _drop(conn, ident)
        _apply(conn, ident, layout, {**changed, "version": version + 1}, removed)
        _expires(conn, ident, ttl_s, now)
    return True


def renew(conn: sqlite3.Connection, ident: tuple[str, str, str], ttl_s: float, now: float) -> bool:
    """The live document expires `ttl_s` from `now`; False when absent or expired."""
    with transaction(conn):
        held = conn.execute(f"SELECT 1 FROM doc_field WHERE {_WHERE} LIMIT 1", ident).fetchone()
        if held is None or _expired(conn, ident, now):
            return False
        _expires(conn, ident, ttl_s, now)
    return True


def delete(conn: sqlite3.Connection, ident: tuple[str, str, str]) -> bool:
    with transaction(conn):
        return _drop(conn, ident) > 0


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
    by_key: dict[str, list[tuple[str, bytes]]] = {}
    for key, field, body in rows:
        by_key.setdefault(key, []).append((field, body))
    docs = [
        (key, _document(fields))
        for key, fields in by_key.items()
        if not _expired(conn, (kind, tenant, key), now)
    ]
    return [doc for _, doc in docs if doc is not None]


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
