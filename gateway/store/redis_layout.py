"""The Redis store's earlier key layout: telling whether a Redis still holds it
(`legacy_keys`, read at each start), and moving it into today's (`migrate_layout`, run by
`gateway migrate`). A mixin of `RedisStore` (gateway.store.redis), whose client, scripts
and ledger readers it uses."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator
from typing import Any, cast

import orjson

from gateway.store import redis_keys as keys
from gateway.store.records import legacy_doc
from gateway.store.redis_keys import doc_key
from gateway.store.redis_keys import text as _s

# Set by `migrate_layout`, and by `legacy_keys(record=True)` on a Redis that holds none of
# an earlier version's keys: today's layout, read with one GET at each start.
LAYOUT_KEY = "gw:layout"
LAYOUT = "2"
# One SCAN pattern for the earlier prefixes of data (gw:doc:, gw:budget:, gw:ledger:,
# gw:month:, gw:resv:, gw:resvamt:), matching none of today's keys (gw:{tenant}:...,
# gw:d:..., gw:periods, gw:tenants:..., LAYOUT_KEY) nor the earlier booked markers
# (gw:boo...: see _LEGACY_DATA).
_LEGACY_SCAN = "gw:[bdlmr][aeou][cdns]*"
# The earlier layout's keys (ceddeca's RedisStore; keys.LEGACY_PATTERNS) by their exact
# names and types: a key under one of its prefixes of another shape or type (or holding
# what that layout never wrote, _legacy_readable) is another application's, sharing the
# database, and is neither counted by `legacy_keys` nor touched by `migrate_layout`.
_LEGACY_MONTH = r"\d{4}-(?:0[1-9]|1[0-2])"
_LEGACY_BUDGET = rf".+\|(?:month\|{_LEGACY_MONTH}|day\|{_LEGACY_MONTH}-(?:0[1-9]|[12]\d|3[01]))"
_LEGACY_SHAPES: dict[str, tuple[re.Pattern[str], str]] = {
    # gw:doc:<kind>:<tenant>, a hash: field = key, value = the JSON document
    "doc": (re.compile(r"gw:doc:(?:conversation|episodes|facts):.+", re.S), "hash"),
    "booked": (re.compile(r"gw:booked:.+", re.S), "string"),  # gw:booked:<id>
    "month": (re.compile(rf"gw:month:{_LEGACY_MONTH}:.+", re.S), "hash"),  # :<tenant>
    "ledger": (re.compile(rf"gw:ledger:{_LEGACY_MONTH}(?::.+)?", re.S), "list"),
    "budget": (re.compile(rf"gw:budget:{_LEGACY_BUDGET}", re.S), "hash"),
    "resv": (re.compile(rf"gw:resv:{_LEGACY_BUDGET}", re.S), "zset"),
    "resvamt": (re.compile(rf"gw:resvamt:{_LEGACY_BUDGET}", re.S), "hash"),
}
# The families of data this layout would read as missing. A booked marker is none: a
# completed migration (this one, or an earlier release's) leaves those it matched to no
# ledger row (beside a PostgreSQL ledger, every one) until they expire, on purpose.
_LEGACY_DATA = ("doc", "month", "ledger", "budget", "resv", "resvamt")
_WHOLE = re.compile(rb"-?\d+")
_NUMBER = re.compile(rb"-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?")  # a Lua number HSET (resvamt)

# `migrate_layout`: an earlier version's key moved to today's name without destroying what
# today's layout holds there (written by this version before the migration ran, or while
# replicas of the earlier one still served). Atomic, so a run cut short and run again
# never counts a key twice.
# KEYS[1] the earlier key  KEYS[2] today's  ARGV[1] how to merge when both exist:
# 'add' (a hash: whole numbers added, another field kept where today's has it: counters,
# a budget's spent and open), 'keep' (a hash: today's fields kept, the earlier's others
# added: reservation amounts), 'zset' (each member at its later score: reservations),
# 'first' (today's kept whole: a booked marker), 'list' (nothing done: the caller merges)
# Returns 0 when there is no earlier key, 1 renamed (today's had none, its expiry kept),
# 2 merged (the earlier key deleted), 3 both exist and the caller merges ('list').
MIGRATE_KEY = r"""
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('RENAME', KEYS[1], KEYS[2])
  return 1
end
local how = ARGV[1]
if how == 'list' then
  return 3
elseif how == 'zset' then
  local flat = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  for i = 1, #flat, 2 do
    local now = redis.call('ZSCORE', KEYS[2], flat[i])
    if not now or tonumber(now) < tonumber(flat[i + 1]) then
      redis.call('ZADD', KEYS[2], flat[i + 1], flat[i])
    end
  end
elseif how ~= 'first' then
  local flat = redis.call('HGETALL', KEYS[1])
  for i = 1, #flat, 2 do
    if how == 'add' and string.match(flat[i + 1], '^%-?%d+$') then
      redis.call('HINCRBY', KEYS[2], flat[i], flat[i + 1])
    else
      redis.call('HSETNX', KEYS[2], flat[i], flat[i + 1])
    end
  end
end
redis.call('DEL', KEYS[1])
return 2
"""

# `migrate_layout`: one document of an earlier version's per-tenant hash written as a key
# of its own, then its field deleted (atomic: a run cut short and run again neither loses
# nor repeats it). A document today's layout already holds is kept: the earlier fields
# are added beside it only when they are independent items (a customer's facts, a field
# per fact; an episode index, a field per conversation), else the earlier one is dropped.
# KEYS[1] the earlier hash  KEYS[2] today's document  ARGV[1] the earlier hash's field
# ARGV[2] '1' when the fields are independent items  ARGV[3..] field, JSON, field, JSON, ...
# Returns 0 when the field is gone, 1 written, 2 merged, 3 today's kept, the earlier dropped.
MIGRATE_DOC = r"""
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
local done = 3
if redis.call('EXISTS', KEYS[2]) == 0 then
  for i = 3, #ARGV, 2 do
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  end
  done = 1
elseif ARGV[2] == '1' then
  local added = 0
  for i = 3, #ARGV, 2 do
    added = added + redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
  end
  if added > 0 and redis.call('HEXISTS', KEYS[2], 'version') == 1 then
    redis.call('HINCRBY', KEYS[2], 'version', 1)  -- a swap read before fails (SWAP)
  end
  done = 2
end
redis.call('HDEL', KEYS[1], ARGV[1])
return done
"""


class EarlierLayout:
    """What `RedisStore` is to this mixin: its client and these scripts (registered in
    its __init__), `_call` (errors translated) and the ledger's readers."""

    _redis: Any
    _migrate_key_script: Any
    _migrate_doc_script: Any

    def _call(self, *, probe: bool = False) -> contextlib.AbstractAsyncContextManager[None]:
        raise NotImplementedError

    async def _chunks(self, key: str) -> list[tuple[int, int]]:
        raise NotImplementedError

    async def _periods(self) -> list[str]:
        raise NotImplementedError

    async def _tenants(self, period: str) -> list[str]:
        raise NotImplementedError

    async def legacy_keys(self, *, record: bool = False) -> list[str]:
        """The patterns (keys.LEGACY_PATTERNS: no key's name, which may hold a customer's
        id) of an earlier version's keys of data (_LEGACY_DATA) that `migrate_layout` has
        not moved, [] when there are none. One GET when LAYOUT_KEY is set; else a SCAN
        (once per deployment on a Redis of today's layout), stopped at the first such key
        found; a key of another shape or content (_legacy_family, _legacy_readable) is
        not one. `record`: set LAYOUT_KEY when none is found (a new store)."""
        found: list[str] = []
        async with self._call():
            if await self._redis.get(LAYOUT_KEY) is not None:
                return []
            scan = cast(
                AsyncGenerator[Any, None], self._redis.scan_iter(match=_LEGACY_SCAN, count=1000)
            )
            async with contextlib.aclosing(scan) as names:
                async for raw in names:
                    family = _legacy_family(raw)
                    if family in _LEGACY_DATA and await self._legacy_readable(family, raw):
                        found.append(keys.LEGACY_PATTERNS[family])
                        break
            if record and not found:
                await self._redis.set(LAYOUT_KEY, LAYOUT)
        return found

    async def _legacy_readable(self, family: str, name: bytes | str) -> bool | None:
        """Whether a key of the earlier layout's name (_LEGACY_SHAPES) holds what that
        layout wrote there: its type, whole numbers in its counters, budgets and
        reservation amounts (a month's `plan` aside), ledger rows (its first and last)
        and JSON documents (its first). None when the key is gone (expired)."""
        kind = _s(await self._redis.type(name))
        if kind == "none":
            return None
        if kind != _LEGACY_SHAPES[family][1]:
            return False
        if family in ("month", "budget", "resvamt"):
            fields = await self._redis.hgetall(name)
            return all(_legacy_count(family, k, v) for k, v in fields.items())
        if family == "ledger":
            ends = [await self._redis.lindex(name, 0), await self._redis.lindex(name, -1)]
            return all(raw is None or _ledger_id(raw) is not None for raw in ends)
        if family == "doc":
            return await self._holds_a_document(name)
        return True

    async def _holds_a_document(self, name: bytes | str) -> bool | None:
        """Whether a hash's first field (HSCAN) holds a JSON object; None: no field."""
        fields = cast(AsyncGenerator[Any, None], self._redis.hscan_iter(name, count=100))
        async with contextlib.aclosing(fields) as pairs:
            async for _, body in pairs:
                return _json_object(body) is not None
        return None

    async def migrate_layout(self) -> dict[str, int]:
        """Move what earlier versions wrote on a standalone Redis into today's layout:
        each `gw:doc:<kind>:<tenant>` hash into documents of their own (records.
        legacy_doc), the untagged markers, counters, ledger lists and budgets renamed
        (the old all-tenants ledger list dropped: the tenants' lists hold its rows), then
        LAYOUT_KEY set. What today's layout already holds is never overwritten
        (MIGRATE_KEY, MIGRATE_DOC): counters and spent budgets are added, reservations
        and ledger rows joined (a row once, by id), a document kept (an earlier one's
        independent fields added, else the earlier one dropped): `merged` and
        `documents_kept` count those, present only when not 0. A key under the earlier
        prefixes that is not of that layout (_LEGACY_SHAPES, _legacy_readable: another
        application's, in a database shared with it) is left as it is: `skipped` counts
        them (a hash of documents some of whose fields are no JSON object, once), present
        only when not 0. Idempotent. Counts per kind of key."""
        counts: dict[str, int] = {"merged": 0, "skipped": 0}
        async with self._call():
            (
                counts["documents"],
                counts["doc"],
                counts["documents_kept"],
            ) = await self._migrate_docs(counts)
            for family in ("month", "ledger", *keys.BUDGET_FAMILIES):
                moved, merged = await self._migrate_family(family, counts)
                counts[family] = moved
                counts["merged"] += merged
            counts["booked"], counts["booked_unmatched"] = await self._migrate_markers(counts)
            await self._redis.set(LAYOUT_KEY, LAYOUT)
        optional = ("merged", "documents_kept", "skipped")
        return {k: n for k, n in counts.items() if n or k not in optional}

    async def _legacy(self, family: str, counts: dict[str, int]) -> list[str]:
        """The keys of the earlier layout's name (_LEGACY_SHAPES) under the family's
        prefix; the others found there are counted `skipped`."""
        pattern = keys.LEGACY_PATTERNS[family]
        found = {raw async for raw in self._redis.scan_iter(match=pattern, count=1000)}
        named = {raw for raw in found if _legacy_family(raw) == family}
        counts["skipped"] += len(found - named)
        return sorted(_s(raw) for raw in named)

    async def _migrate_docs(self, counts: dict[str, int]) -> tuple[int, int, int]:
        """(documents written or merged, earlier hashes emptied, documents kept as today's
        layout had them, the earlier one dropped). A field that is no JSON object (or no
        document legacy_doc reads) stays, and its hash is counted `skipped`."""
        documents = hashes = kept = 0
        for name in await self._legacy("doc", counts):
            readable = await self._legacy_readable("doc", name)
            if not readable:
                counts["skipped"] += readable is not None
                continue
            kind, tenant = keys.legacy_doc_hash(name)
            for field, body in (await self._redis.hgetall(name)).items():
                found = _legacy_document(kind, field, body)
                if found is None:
                    continue
                key, fields, items = found
                args: list[Any] = [field, "1" if items else "0"]
                for k, v in fields.items():
                    args += [k, orjson.dumps(v)]
                done = int(
                    await self._migrate_doc_script(
                        keys=[name, doc_key(kind, tenant, key)], args=args
                    )
                )
                documents += done in (1, 2)
                kept += done == 3
            if await self._redis.exists(name):
                counts["skipped"] += 1
            else:
                hashes += 1
        return documents, hashes, kept

    async def _migrate_family(self, family: str, counts: dict[str, int]) -> tuple[int, int]:
        """(keys moved, of them merged into today's)."""
        how = {"month": "add", "ledger": "list", "budget": "add", "resv": "zset"}
        moved = merged = 0
        for name in await self._legacy(family, counts):
            readable = await self._legacy_readable(family, name)
            if not readable:
                counts["skipped"] += readable is not None
                continue
            new = keys.legacy_renamed(family, name)
            if new is None:
                counts["ledger_all"] = counts.get("ledger_all", 0) + await self._redis.delete(name)
                continue
            done = int(
                await self._migrate_key_script(keys=[name, new], args=[how.get(family, "keep")])
            )
            if done == 3:
                done = await self._join_lists(name, new)
            moved += done > 0
            merged += done == 2
        if family == "ledger":
            counts.setdefault("ledger_all", 0)
        return moved, merged

    async def _join_lists(self, old: str, new: str) -> int:
        """An earlier ledger list's rows appended to today's, each whose id today's does
        not hold (so a run cut short and run again adds none twice), then the earlier list
        deleted. 2 (merged)."""
        ids: set[str] = set()
        for first, last in await self._chunks(new):
            ids.update(
                orjson.loads(raw)["id"] for raw in await self._redis.lrange(new, first, last)
            )
        for first, last in await self._chunks(old):
            rows = []
            for raw in await self._redis.lrange(old, first, last):
                record_id = orjson.loads(raw)["id"]
                if record_id not in ids:
                    ids.add(record_id)
                    rows.append(raw)
            if rows:
                await self._redis.rpush(new, *rows)
        await self._redis.delete(old)
        return 2

    async def _migrate_markers(self, counts: dict[str, int]) -> tuple[int, int]:
        """A marker names no tenant: each is matched to its ledger row (already moved
        to the tenant's list), newest period first. One without a row stays and expires.
        A marker today's layout holds for the id is kept (MIGRATE_KEY 'first'); a key of
        a matched name that is no marker (not a string) is left, counted `skipped`."""
        named = await self._legacy("booked", counts)
        ids = {name.removeprefix("gw:booked:") for name in named}
        moved = 0
        for period in reversed(await self._periods()):
            if not ids:
                break
            for tenant in await self._tenants(period):
                for raw in await self._redis.lrange(keys.ledger_key(tenant, period), 0, -1):
                    record_id = orjson.loads(raw)["id"]
                    if record_id in ids:
                        ids.discard(record_id)
                        old = f"gw:booked:{record_id}"
                        readable = await self._legacy_readable("booked", old)
                        if not readable:
                            counts["skipped"] += readable is not None
                            continue
                        new = keys.booked_key(tenant, record_id)
                        done = await self._migrate_key_script(keys=[old, new], args=["first"])
                        moved += int(done) > 0
        return moved, len(ids)


def _legacy_family(name: bytes | str) -> str | None:
    """The family of the earlier layout (_LEGACY_SHAPES) a key's name has, if any."""
    try:
        text = _s(name)
    except UnicodeDecodeError:
        return None
    for family, (shape, _) in _LEGACY_SHAPES.items():
        if shape.fullmatch(text):
            return family
    return None


def _legacy_count(family: str, field: bytes | str, value: bytes | str) -> bool:
    """A field of an earlier month, budget or reservation-amount hash: a whole number
    (a month's `plan` aside; a budget holds `spent` and `open` alone; an amount, set by
    a script from a Lua number, may read 1e+14)."""
    name = field.encode() if isinstance(field, str) else field
    number = value.encode() if isinstance(value, str) else value
    if family == "month" and name == b"plan":
        return True
    if family == "budget" and name not in (b"spent", b"open"):
        return False
    return (_NUMBER if family == "resvamt" else _WHOLE).fullmatch(number) is not None


def _json_object(raw: bytes | str) -> dict[str, Any] | None:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _ledger_id(raw: bytes | str) -> str | None:
    """A ledger row's id (None: no ledger row)."""
    row = _json_object(raw)
    record_id = None if row is None else row.get("id")
    return record_id if isinstance(record_id, str) else None


def _legacy_document(
    kind: str, field: bytes | str, body: bytes | str
) -> tuple[str, dict[str, Any], bool] | None:
    """A field of an earlier `gw:doc:` hash as today's document (records.legacy_doc):
    (key, fields, whether they are independent items); None for a field that is no
    JSON object or no document of the kind."""
    doc = _json_object(body)
    if doc is None:
        return None
    try:
        key, fields = legacy_doc(kind, _s(field), doc)
    except (TypeError, ValueError):  # an episode's times that are no numbers
        return None
    return key, fields, fields is not doc
