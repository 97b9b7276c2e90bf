"""Documents read back exactly as written, whatever the sequence of puts, patches, swaps
and deletes and whatever their fields' sizes (on SQLite a field moves between the shared
row of small fields and a row of its own as it grows and shrinks); a SQLite file written
a row per field, before the shared row, reads and patches as before."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.store import open_store
from gateway.store.sqlite_docs import SMALL_BYTES

NAMES = ["version", "turns", "recent", "summary", "a", "b", "c", "d"]
VALUES = st.one_of(
    st.integers(-(2**40), 2**40),
    st.text(max_size=40),
    # either side of the pack's bound, so that fields often cross it; a character JSON
    # can carry (a lone surrogate never arrives: request bodies are UTF-8, st.text's too)
    st.builds(
        str.__mul__, st.characters(codec="utf-8"), st.integers(SMALL_BYTES - 20, SMALL_BYTES + 20)
    ),
    st.lists(st.text(max_size=60), max_size=6),
    st.none(),
    st.booleans(),
)
FIELDS = st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=len(NAMES))
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), FIELDS),
        st.tuples(st.just("patch"), st.tuples(FIELDS, st.lists(st.sampled_from(NAMES)))),
        st.tuples(
            st.just("swap"),
            st.tuples(FIELDS, st.lists(st.sampled_from(NAMES)), st.integers(-1, 1)),
        ),
        st.tuples(st.just("delete"), st.none()),
    ),
    min_size=1,
    max_size=12,
)


def _version(doc: dict[str, Any] | None) -> int:
    value = (doc or {}).get("version")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


async def _play(url: str, ops: list[tuple[str, Any]]) -> None:
    key = uuid.uuid4().hex  # a prefix of no other key
    model: dict[str, Any] | None = None
    store = open_store(url)
    try:
        for op, arg in ops:
            if op == "put":
                await store.put_doc("conversation", "acme", key, dict(arg), 600)
                model = dict(arg)
            elif op == "patch":
                changed, removed = arg
                await store.patch_doc("conversation", "acme", key, changed, removed, 600)
                model = {k: v for k, v in (model or {}).items() if k not in removed}
                model.update(changed)
            elif op == "swap":
                changed, removed, off = arg
                changed = {k: v for k, v in changed.items() if k != "version"}
                current = _version(model)
                done = await store.swap_doc(
                    "conversation", "acme", key, changed, removed, 600, current + off
                )
                assert done == (off == 0), (current, off)
                if done:
                    model = {k: v for k, v in (model or {}).items() if k not in removed}
                    model.update(changed, version=current + 1)
            else:
                await store.delete_doc("conversation", "acme", key)
                model = None
            doc = await store.get_doc("conversation", "acme", key)
            assert doc == (model or None), (op, arg)
            listed = await store.list_docs("conversation", "acme", key)
            assert listed == ([model] if model else [])
    finally:
        await store.close()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=OPS)
def test_documents_read_back_as_written_whatever_the_writes(
    store_url: str, ops: list[tuple[str, Any]]
) -> None:
    # swap_doc only takes an integer version: keep the model's "version" an int or absent
    ops = [(op, _int_version(arg) if op in ("put", "patch", "swap") else arg) for op, arg in ops]
    asyncio.run(_play(store_url, ops))


def _int_version(arg: Any) -> Any:
    fields = arg if isinstance(arg, dict) else arg[0]
    if "version" in fields and not isinstance(fields["version"], int):
        fields = {**fields, "version": 7}
    if fields.get("version") is True or fields.get("version") is False:
        fields = {**fields, "version": 3}
    return fields if isinstance(arg, dict) else (fields, *arg[1:])


def _rows(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT field FROM doc_field ORDER BY field")]
    finally:
        conn.close()


def test_a_record_of_small_fields_is_one_row_and_a_big_field_has_its_own(
    tmp_path: Path,
) -> None:
    path = tmp_path / "gateway.db"

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}")
        try:
            record = {f"n{i}": i for i in range(30)} | {"recent": ["hi"], "version": 1}
            await store.put_doc("conversation", "acme", "c1", record)
            assert _rows(path) == [""]  # thirty-two fields, one row
            long = "x" * (SMALL_BYTES + 1)
            await store.patch_doc("conversation", "acme", "c1", {"recent": [long]})
            assert _rows(path) == ["", "recent"]
            doc = await store.get_doc("conversation", "acme", "c1")
            assert doc == record | {"recent": [long]}
            # shrinking back moves it into the shared row and drops its own
            assert await store.swap_doc("conversation", "acme", "c1", {"recent": []}, [], None, 1)
            assert _rows(path) == [""]
            assert await store.get_doc("conversation", "acme", "c1") == record | {
                "recent": [],
                "version": 2,
            }
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_document_written_a_row_per_field_reads_and_patches_as_before(
    tmp_path: Path,
) -> None:
    path = tmp_path / "gateway.db"
    asyncio.run(_create(path))
    conn = sqlite3.connect(path)  # as a version before the shared row wrote it
    old = {"version": 4, "turns": 9, "recent": ["a" * 300], "summary": "short"}
    conn.executemany(
        "INSERT INTO doc_field VALUES (?, ?, ?, ?, ?)",
        [("conversation", "acme", "c1", k, orjson.dumps(v)) for k, v in old.items()],
    )
    conn.commit()
    conn.close()

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}")
        try:
            assert await store.get_doc("conversation", "acme", "c1") == old
            assert not await store.swap_doc("conversation", "acme", "c1", {"turns": 1}, [], None, 3)
            assert await store.swap_doc(
                "conversation", "acme", "c1", {"turns": 10}, ["summary"], None, 4
            )
            expected = {"version": 5, "turns": 10, "recent": ["a" * 300]}
            assert await store.get_doc("conversation", "acme", "c1") == expected
            await store.patch_doc("conversation", "acme", "c1", {"recent": []})
            assert await store.get_doc("conversation", "acme", "c1") == expected | {"recent": []}
            assert await store.list_docs("conversation", "acme", "c") == [expected | {"recent": []}]
        finally:
            await store.close()

    asyncio.run(scenario())
    assert _rows(path) == ["", ""]  # every field acme's wrote since moved into the shared row


async def _create(path: Path) -> None:
    store = open_store(f"sqlite:///{path}")  # the tables, and another tenant's document
    try:
        await store.put_doc("conversation", "globex", "c1", {"turns": 1})
    finally:
        await store.close()
