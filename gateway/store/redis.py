"""Redis backend: many gateway replicas share one Redis (`redis://`, `rediss://`) or one
Redis Cluster (`redis-cluster://host:port[,host:port...]`); bookings are atomic Lua calls.

Key layout in redis_keys: a tenant's counters, budgets, reservations, bookings and ledger
share one hash slot (one shard of a cluster), so every script touches one slot; the
global indexes (periods, tenants of a period) are written by commands of their own, and
documents are one key each, spread over every shard.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import secrets
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import orjson
import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import (
    NoScriptError,
    RedisClusterException,
    RedisError,
    ResponseError,
)

from gateway import offload
from gateway.errors import StoreBusy, StoreRejected, StoreUnavailable
from gateway.store import redis_keys as keys
from gateway.store import redis_scripts as scripts
from gateway.store.base import (
    ERASED_CONVERSATION_PREFIX,
    FINGERPRINT_PREFIX,
    Erased,
    RateUse,
    StoreHealth,
)
from gateway.store.cursor import decode_cursor, encode_cursor
from gateway.store.fail_fast import FailFast
from gateway.store.options import RedisConfig
from gateway.store.records import (
    COUNTER_FIELDS,
    SpendRow,
    UsageRecord,
    budget_expires,
    customer_budget,
    increments,
    period_of,
)
from gateway.store.redis_keys import doc_key
from gateway.store.redis_keys import text as _s
from gateway.store.redis_layout import MIGRATE_DOC, MIGRATE_KEY, EarlierLayout

CLUSTER_SCHEME = "redis-cluster://"
_MARKER_TTL_S = 40 * 24 * 3600
# Beside a PostgreSQL ledger (idempotent on the id for good) a marker lives only until the
# ledger has the row (gateway.store.ledgered drops it then); this expiry bounds the ones
# a failure left behind.
_MARKER_TTL_LEDGERED_S = 2 * 24 * 3600
_BUDGET_TTL_S = 400 * 24 * 3600  # a budget key that names no period
_BUDGET_MIN_TTL_S = 3600  # a booking late for a period already gone: kept an hour
_GLOB_SPECIAL = re.compile(r"[*?\[\]\\]")
_ERASE_CHUNK = 2000  # ledger rows an erasure script reads and rewrites per call
_HEALTH_WAIT_S = 0.8  # /healthz answers within a second

__all__ = ["CLUSTER_SCHEME", "RedisStore", "doc_key"]


# An erasure's second step, on one chunk of a ledger list: in the rows now under the
# pseudonym, a conversation id the gateway made from the customer's id (base.
# FINGERPRINT_PREFIX) becomes ERASED_CONVERSATION_PREFIX and 24 hex digits of a digest of
# it under a key drawn for this erasure and never kept: random to whoever reads the
# ledger, the same for each row of one conversation. An id holding an escape (the app's,
# not the gateway's) is left.
# KEYS[1] the ledger list  ARGV[1] '"customer":' and the pseudonym, as a row holds them
# ARGV[2] '"conversation":"' and FINGERPRINT_PREFIX  ARGV[3] ERASED_CONVERSATION_PREFIX
# ARGV[4] the erasure's key  ARGV[5], ARGV[6] the chunk's first and last index
# Returns the rows changed.
_RENAME_FINGERPRINTS = r"""
local first = tonumber(ARGV[5])
local rows = redis.call('LRANGE', KEYS[1], first, tonumber(ARGV[6]))
local changed = 0
for i, row in ipairs(rows) do
  local s, e = string.find(row, ARGV[2], 1, true)
  local close = s and string.find(row, '"', e + 1, true)
  if close and string.find(row, ARGV[1], 1, true) then
    local id = string.sub(row, s + 16, close - 1)  -- 16: '"conversation":"'
    if not string.find(id, '\\', 1, true) and string.sub(id, 1, #ARGV[3]) ~= ARGV[3] then
      local digest = string.sub(redis.sha1hex(ARGV[4] .. id), 1, 24)
      local new = string.sub(row, 1, s + 15) .. ARGV[3] .. digest .. string.sub(row, close)
      redis.call('LSET', KEYS[1], first + i - 1, new)
      changed = changed + 1
    end
  end
end
return changed
"""


def _budget_ttls(budgets: Sequence[str]) -> str:
    """The scripts' budget ttls argument: seconds each budget's keys live from now, until
    records.budget_expires (a day's a few days after it ends, a month's some weeks)."""
    now = time.time()
    ttls = []
    for key in budgets:
        expires = budget_expires(key)
        ttl = _BUDGET_TTL_S if expires is None else max(expires - now, _BUDGET_MIN_TTL_S)
        ttls.append(str(int(ttl)))
    return " ".join(ttls)


def _marker(record: UsageRecord) -> bytes:
    """A booked marker beside another ledger: the record as booked, without the ids of
    its customer and conversation, nor its budgets, which name the customer (a replay
    of the same call carries them; an erasure does not look in markers)."""
    unnamed: dict[str, Any] = {"customer": None, "conversation": None, "budgets": []}
    return orjson.dumps(record.to_json() | unnamed)


def _booked_as(record: UsageRecord, marker: Any) -> UsageRecord:
    """`record` with the figures its booked `marker` holds, if it holds any."""
    if not marker or marker in (b"1", "1"):
        return record
    try:
        booked = UsageRecord.from_json(orjson.loads(marker))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ArithmeticError):
        return record
    if (booked.id, booked.tenant) != (record.id, record.tenant):
        return record
    return dataclasses.replace(
        booked, customer=record.customer, conversation=record.conversation, budgets=record.budgets
    )


class RedisStore(EarlierLayout):
    """`keep_ledger=False` keeps no ledger rows (another store holds them): counters,
    booked markers, budgets and settlement are unchanged, `ledger()` and
    `customer_ledger()` answer [] and an erasure renames budgets only."""

    def __init__(self, url: str, config: RedisConfig, keep_ledger: bool = True) -> None:
        self._config = config
        self._keep_ledger = keep_ledger
        self._redis: aioredis.Redis | RedisCluster
        # A busy pool is load, not an outage: the call past `max_connections` waits
        # (boundedly) for a free connection instead of failing at once. A standalone
        # Redis has a blocking pool for that; RedisCluster's node pools fail at once when
        # full, so a cluster store admits at most `max_connections` calls at a time.
        self._gate: asyncio.Semaphore | None = None
        # After a call failed, a single Redis fails the next ones at once for a second
        # instead of each waiting out `socket_timeout_s`. Not a cluster: one shard down
        # must not fail the calls the other shards answer.
        self._fail_fast: FailFast | None = None
        if url.startswith(CLUSTER_SCHEME):
            self._redis = _cluster_client(url, config)
            self._gate = asyncio.Semaphore(config.max_connections)
        else:
            self._fail_fast = FailFast()
            pool = aioredis.BlockingConnectionPool.from_url(
                url,
                max_connections=config.max_connections,
                timeout=config.pool_timeout_s,
                socket_connect_timeout=config.connect_timeout_s,
                socket_timeout=config.socket_timeout_s,
                health_check_interval=30,
            )
            self._redis = aioredis.Redis.from_pool(pool)
        self._book_script = self._redis.register_script(scripts.BOOK)
        self._reserve_script = self._redis.register_script(scripts.RESERVE)
        self._release_script = self._redis.register_script(scripts.RELEASE)
        self._renew_script = self._redis.register_script(scripts.RENEW)
        self._pseudonymize_script = self._redis.register_script(scripts.PSEUDONYMIZE)
        self._fingerprints_script = self._redis.register_script(_RENAME_FINGERPRINTS)
        self._move_spent_script = self._redis.register_script(scripts.MOVE_SPENT)
        self._swap_script = self._redis.register_script(scripts.SWAP)
        self._rate_script = self._redis.register_script(scripts.RATE)
        self._migrate_key_script = self._redis.register_script(MIGRATE_KEY)
        self._migrate_doc_script = self._redis.register_script(MIGRATE_DOC)

    @contextlib.asynccontextmanager
    async def _call(self, *, probe: bool = False) -> AsyncIterator[None]:
        """One store call: admitted (a cluster store: within its bound), with redis-py's
        errors translated. Helpers called inside one never open another. A `probe` (the
        health check) neither waits for the fail-fast state nor changes it."""
        fail_fast = self._fail_fast
        with (
            contextlib.nullcontext() if probe or fail_fast is None else fail_fast.guard(),
            self._errors(),
        ):
            if self._gate is None or isinstance(self._redis, aioredis.Redis):
                yield
                return
            try:
                async with asyncio.timeout(self._config.pool_timeout_s):
                    await self._gate.acquire()
            except TimeoutError:
                raise _busy(self._config.pool_timeout_s) from None
            try:
                # redis-py routes a command by its keys only once the client knows the
                # cluster (else to a random primary, answered MOVED; every fifth MOVED
                # drops every connection): learn it first (a no-op once known).
                await self._redis.initialize()
                yield
            finally:
                self._gate.release()

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """redis-py's errors, translated in one place: a command Redis refuses (a counter
        would overflow) is the data's fault and retrying cannot help; anything else means
        the store cannot answer now (on a cluster also: a shard down, slots moving)."""
        try:
            yield
        except ResponseError as exc:
            if type(exc) is ResponseError and not str(exc).startswith("BUSY"):
                raise StoreRejected(f"store (redis) refused the command: {exc}") from exc
            raise _unavailable(exc) from exc
        except RedisConnectionError as exc:
            if isinstance(exc.__cause__, asyncio.TimeoutError):  # the pool's bounded wait
                raise _busy(self._config.pool_timeout_s) from exc
            raise _unavailable(exc) from exc
        except (RedisError, RedisClusterException, OSError) as exc:
            raise _unavailable(exc) from exc

    async def _scripts(
        self, script: AsyncScript, calls: Sequence[tuple[list[str], list[Any]]]
    ) -> list[Any]:
        """Calls of one script in one round trip (a cluster: one per shard), not atomic
        together; each runs alone. The first error is raised once all have run."""
        if isinstance(self._redis, aioredis.Redis):
            async with self._redis.pipeline(transaction=False) as pipe:
                for call_keys, args in calls:
                    await script(keys=call_keys, args=args, client=pipe)
                return list(await pipe.execute())
        # redis-py takes no script objects in a cluster pipeline: plain EVALSHA, and a
        # call whose shard lacks the script (a new or restarted primary) runs again
        # through the script object, which loads it.
        async with self._redis.pipeline() as cpipe:
            for call_keys, args in calls:
                cpipe.execute_command("EVALSHA", script.sha, len(call_keys), *call_keys, *args)
            results = list(await cpipe.execute(raise_on_error=False))
        for n, result in enumerate(results):
            if isinstance(result, NoScriptError):
                results[n] = await script(keys=calls[n][0], args=calls[n][1])
        for result in results:
            if isinstance(result, Exception):
                raise result
        return results

    def _book_call(self, record: UsageRecord) -> tuple[list[str], list[Any]]:
        tenant, period = record.tenant, record.period
        call_keys = [
            keys.booked_key(tenant, record.id),
            keys.month_key(tenant, period),
            keys.ledger_key(tenant, period),
        ]
        for budget in record.budgets:
            call_keys += keys.budget_keys(budget)
        row = orjson.dumps(record.to_json()) if self._keep_ledger else b""
        marker_ttl = _MARKER_TTL_S if self._keep_ledger else _MARKER_TTL_LEDGERED_S
        args: list[Any] = [marker_ttl, record.plan, row, record.reservation or ""]
        args += [record.cost_units or 0, _budget_ttls(record.budgets)]
        args.append(b"1" if self._keep_ledger else _marker(record))
        for name, value in increments(record).items():
            args += [name, value]
        return call_keys, args

    async def reserve(
        self, reservation: str, budgets: Sequence[tuple[str, int]], amount: int, ttl_s: float
    ) -> str | None:
        if not budgets:
            return None
        call_keys = [k for key, _ in budgets for k in keys.budget_keys(key)]
        args: list[Any] = [reservation, amount, ttl_s, _budget_ttls([key for key, _ in budgets])]
        args += [limit for _, limit in budgets]
        async with self._call():
            blocked = int(await self._reserve_script(keys=call_keys, args=args))
        return None if blocked == 0 else budgets[blocked - 1][0]

    async def release(self, reservation: str, budgets: Sequence[str]) -> None:
        call_keys = [k for key in budgets for k in keys.budget_keys(key)]
        if not call_keys:
            return
        async with self._call():
            await self._release_script(keys=call_keys, args=[reservation])

    async def renew(self, reservation: str, budgets: Sequence[str], ttl_s: float) -> bool:
        call_keys = [k for key in budgets for k in keys.budget_keys(key)]
        if not call_keys:
            return False
        async with self._call():
            return bool(await self._renew_script(keys=call_keys, args=[reservation, ttl_s]))

    async def budgets(self, budget_keys: Sequence[str]) -> dict[str, tuple[int, int]]:
        async with self._call(), self._redis.pipeline(transaction=False) as pipe:
            for key in budget_keys:
                pipe.hmget(keys.budget_key("budget", key), "spent", "open")
            rows = await pipe.execute()
        return {k: (int(r[0] or 0), int(r[1] or 0)) for k, r in zip(budget_keys, rows, strict=True)}

    async def count_rate(
        self,
        tenant: str,
        counters: Sequence[tuple[str, int, int]],
        bucket_ms: int,
        span: int,
        settle_bucket: int | None = None,
    ) -> RateUse:
        call_keys = [keys.rate_key(tenant, name) for name, _, _ in counters]
        args: list[Any] = [bucket_ms, span, "" if settle_bucket is None else settle_bucket]
        for _, limit, amount in counters:
            args += [limit, amount]
        async with self._call():
            reply = await self._rate_script(keys=call_keys, args=args)
        return rate_use([int(v) for v in reply], len(counters))

    async def book_many(self, records: Sequence[UsageRecord]) -> list[bool]:
        """The indexes first (so they never miss a booked tenant), then one script per
        record, all in one round trip; each script runs alone (nothing interleaves)."""
        if not records:
            return []
        async with self._call():
            await self._index(records)
            results = await self._scripts(self._book_script, [self._book_call(r) for r in records])
        return [bool(r) for r in results]

    async def booked_records(self, records: Sequence[UsageRecord]) -> list[UsageRecord]:
        """Each record as this store booked it, for the ledger beside it
        (gateway.store.ledgered): a call booked here whose process died before the
        ledger had its row is replayed later under its id with other figures (the
        in-flight journal's estimate); its marker, kept until the ledger has the row,
        holds what was counted here, and that is what the ledger must get. A record
        whose marker holds nothing (gone, or written by an earlier version) as it is."""
        if not records:
            return []
        async with self._call(), self._redis.pipeline(transaction=False) as pipe:
            for record in records:
                pipe.get(keys.booked_key(record.tenant, record.id))
            markers = await pipe.execute()
        return [_booked_as(r, m) for r, m in zip(records, markers, strict=True)]

    async def forget_bookings(self, records: Sequence[UsageRecord]) -> None:
        """Drop the idempotency markers of records the durable ledger now holds (beside
        PostgreSQL: gateway.store.ledgered), one round trip."""
        if not records:
            return
        async with self._call(), self._redis.pipeline(transaction=False) as pipe:
            for record in records:
                pipe.delete(keys.booked_key(record.tenant, record.id))
            await pipe.execute()

    async def _index(self, records: Sequence[UsageRecord]) -> None:
        by_period: dict[str, set[str]] = {}
        for record in records:
            by_period.setdefault(record.period, set()).add(record.tenant)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.sadd(keys.PERIODS, *by_period)
            for period, tenants in by_period.items():
                pipe.sadd(keys.tenants_key(period), *tenants)
            await pipe.execute()

    async def spend(self, period: str | None) -> list[SpendRow]:
        totals: dict[str, SpendRow] = {}
        async with self._call():
            for p in [period] if period else await self._periods():
                tenants = await self._tenants(p)
                async with self._redis.pipeline(transaction=False) as pipe:
                    for t in tenants:
                        pipe.hgetall(keys.month_key(t, p))
                    hashes = await pipe.execute()
                for t, h in zip(tenants, hashes, strict=True):
                    if not h:  # indexed, but its booking was refused
                        continue
                    row = _row(t, h)
                    if t in totals:
                        totals[t].add(row)
                        totals[t].plan = row.plan  # periods ascend: the latest plan stands
                    else:
                        totals[t] = row
        return [totals[t] for t in sorted(totals)]

    async def ledger(
        self, period: str, tenant: str | None = None, limit: int = 1000
    ) -> list[UsageRecord]:
        """One tenant's list, or the first `limit` rows of every tenant's list of the
        period, merged oldest first."""
        if not self._keep_ledger:
            return []
        async with self._call():
            tenants = [tenant] if tenant else await self._tenants(period)
            rows = await self._lists(period, tenants, limit - 1)
        if len(tenants) > 1:
            rows.sort(key=lambda r: r.ts)
        return rows[:limit]

    async def ledger_page(
        self, tenant: str | None, period: str | None, before: str | None, limit: int
    ) -> tuple[list[UsageRecord], str | None]:
        """Newest period first, each read whole (its rows are all newer than an older
        period's) until the page is full: for the admin API, never on a request's path."""
        after = None if before is None else decode_cursor(before)
        if not self._keep_ledger:
            return [], None
        rows: list[UsageRecord] = []
        async with self._call():
            for p in sorted([period] if period else await self._periods(), reverse=True):
                if len(rows) > limit:
                    break
                if after is not None and p > period_of(after[0]):
                    continue  # every row of the period is newer than the cursor
                tenants = [tenant] if tenant is not None else await self._tenants(p)
                found = await self._lists(p, tenants, -1)
                found = [r for r in found if after is None or (r.ts, r.id) < after]
                rows += sorted(found, key=lambda r: (r.ts, r.id), reverse=True)
        if len(rows) <= limit:
            return rows, None
        return rows[:limit], encode_cursor(rows[limit - 1])

    async def _lists(self, period: str, tenants: list[str], last: int) -> list[UsageRecord]:
        """Rows 0..`last` of each tenant's ledger list of the period."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for t in tenants:
                pipe.lrange(keys.ledger_key(t, period), 0, last)
            lists = await pipe.execute()
        return [UsageRecord.from_json(orjson.loads(raw)) for items in lists for raw in items]

    async def get_doc(self, kind: str, tenant: str, key: str) -> dict[str, Any] | None:
        async with self._call():
            raw = await self._redis.hgetall(doc_key(kind, tenant, key))
        return await _decoded(raw)

    async def get_docs(
        self, tenant: str, wanted: Sequence[tuple[str, str]]
    ) -> list[dict[str, Any] | None]:
        async with self._call(), self._redis.pipeline(transaction=False) as pipe:
            for kind, key in wanted:
                pipe.hgetall(doc_key(kind, tenant, key))
            raw = await pipe.execute()
        return [await _decoded(h) for h in raw]

    async def put_doc(
        self, kind: str, tenant: str, key: str, doc: dict[str, Any], ttl_s: float | None = None
    ) -> None:
        async with self._call():
            await self._write_doc(doc_key(kind, tenant, key), doc, (), ttl_s, replace=True)

    async def patch_doc(
        self,
        kind: str,
        tenant: str,
        key: str,
        changed: Mapping[str, Any],
        removed: Sequence[str] = (),
        ttl_s: float | None = None,
    ) -> None:
        async with self._call():
            await self._write_doc(
                doc_key(kind, tenant, key), changed, removed, ttl_s, replace=False
            )

    async def swap_doc(
        self,
        kind: str,
        tenant: str,
        key: str,
        changed: Mapping[str, Any],
        removed: Sequence[str],
        ttl_s: float | None,
        version: int,
    ) -> bool:
        ttl = "" if ttl_s is None else str(max(1, int(ttl_s * 1000)))
        args: list[Any] = [version, ttl, len(removed), *removed]
        for name, value in changed.items():
            args += [name, orjson.dumps(value)]
        async with self._call():
            call = [([doc_key(kind, tenant, key)], args)]
            (done,) = await self._scripts(self._swap_script, call)
        return bool(done)

    async def _write_doc(
        self,
        name: str,
        changed: Mapping[str, Any],
        removed: Sequence[str],
        ttl_s: float | None,
        *,
        replace: bool,
    ) -> None:
        """One MULTI on one key: Redis Cluster keeps it on one slot."""
        async with self._redis.pipeline(transaction=True) as pipe:
            if replace:
                pipe.delete(name)
            if removed:
                pipe.hdel(name, *removed)
            if changed:
                pipe.hset(name, mapping={k: orjson.dumps(v) for k, v in changed.items()})
            if ttl_s is None:
                pipe.persist(name)
            else:
                pipe.pexpire(name, max(1, int(ttl_s * 1000)))
            await pipe.execute()

    async def renew_doc(self, kind: str, tenant: str, key: str, ttl_s: float) -> bool:
        async with self._call():
            ms = max(1, int(ttl_s * 1000))
            return bool(await self._redis.pexpire(doc_key(kind, tenant, key), ms))

    async def delete_doc(self, kind: str, tenant: str, key: str) -> bool:
        async with self._call():
            return bool(await self._redis.delete(doc_key(kind, tenant, key)))

    async def list_docs(self, kind: str, tenant: str, prefix: str) -> list[dict[str, Any]]:
        """A SCAN of every shard."""
        head = doc_key(kind, tenant, "")
        found: dict[str, dict[str, Any]] = {}
        async with self._call():
            async for raw in self._redis.scan_iter(match=_glob(head + prefix) + "*", count=1000):
                doc = _doc(await self._redis.hgetall(raw))
                if doc is not None:
                    found[_s(raw)] = doc
        return [found[k] for k in sorted(found)]

    async def customer_ledger(self, tenant: str, customer: str, limit: int) -> list[UsageRecord]:
        """Every period's list of the tenant, read a chunk at a time, rows matched as text
        first (the customer field as orjson writes it), then parsed."""
        if not self._keep_ledger:
            return []
        needle = f'"customer":{_json(customer)}'.encode()
        found: list[UsageRecord] = []
        async with self._call():
            for period in await self._periods():
                key = keys.ledger_key(tenant, period)
                for first, last in await self._chunks(key):
                    for raw in await self._redis.lrange(key, first, last):
                        if needle in raw:
                            found.append(UsageRecord.from_json(orjson.loads(raw)))
                            if len(found) >= limit:
                                return found
        return found

    async def erase_customer(
        self, tenant: str, customer: str, alias: str, docs: Sequence[tuple[str, str]]
    ) -> Erased:
        """Documents deleted, then each period's ledger list of the tenant rewritten
        atomically (a script per chunk: the customer, then the conversation ids made from
        their id, `_RENAME_FINGERPRINTS`), then the customer's settled spend moved. A
        booking that lands during the erasure may still name the customer: erase once
        their traffic ends. Never `scrubbed` beside a PostgreSQL ledger (keep_ledger
        False): its VACUUM frees the old row versions without zeroing them."""
        rows = 0
        async with self._call():
            async with self._redis.pipeline(transaction=False) as pipe:
                for kind, key in docs:
                    pipe.delete(doc_key(kind, tenant, key))
                deleted = sum(await pipe.execute())
            if self._keep_ledger:
                named, renamed = _json(customer), _json(alias)
                args = [
                    f'"customer":{named}',
                    f'"customer":{renamed}',
                    f'"tenant":{_json(tenant)}',
                    f"|customer:{named[1:-1]}|",
                    f"|customer:{renamed[1:-1]}|",
                ]
                fingerprinted = [args[1], f'"conversation":"{FINGERPRINT_PREFIX}']
                fingerprinted += [ERASED_CONVERSATION_PREFIX, secrets.token_hex(16)]
                for period in await self._periods():
                    key = keys.ledger_key(tenant, period)
                    rows += await self._pseudonymize(key, args)
                    await self._rename_fingerprints(key, fingerprinted)
            budgets = await self._rename_budgets(tenant, customer, alias)
            scrubbed = await self._scrubbed() and self._keep_ledger
        return Erased(int(deleted), rows, budgets, scrubbed=scrubbed)

    async def _pseudonymize(self, key: str, args: list[str]) -> int:
        """One ledger list, a chunk per script call (scripts.PSEUDONYMIZE)."""
        changed = 0
        for first, last in await self._chunks(key):
            chunk = [*args, str(first), str(last)]
            changed += int(await self._pseudonymize_script(keys=[key], args=chunk))
        return changed

    async def _rename_fingerprints(self, key: str, args: list[str]) -> None:
        """One ledger list, a chunk per script call (_RENAME_FINGERPRINTS)."""
        for first, last in await self._chunks(key):
            await self._fingerprints_script(keys=[key], args=[*args, str(first), str(last)])

    async def _periods(self) -> list[str]:
        return sorted(_s(p) for p in await self._redis.smembers(keys.PERIODS))

    async def _tenants(self, period: str) -> list[str]:
        return sorted(_s(t) for t in await self._redis.smembers(keys.tenants_key(period)))

    async def _chunks(self, key: str) -> list[tuple[int, int]]:
        """A list's index ranges, _ERASE_CHUNK rows each (lists only grow at the end)."""
        length = int(await self._redis.llen(key))
        return [(first, first + _ERASE_CHUNK - 1) for first in range(0, length, _ERASE_CHUNK)]

    async def _rename_budgets(self, tenant: str, customer: str, alias: str) -> int:
        """The customer's settled spend, under the pseudonym (scripts.MOVE_SPENT; a SCAN
        of every shard: during a resharding a slot's keys may be on two). Reservations of
        calls in flight stay under the id, where those calls book."""
        renamed, stem = 0, f"{tenant}|customer:{customer}|"
        pattern = keys.budget_key("budget", stem)
        head = pattern.removesuffix(stem)
        async for raw in self._redis.scan_iter(match=_glob(pattern) + "*", count=500):
            tail = customer_budget(_s(raw).removeprefix(head), tenant, customer)
            if tail is not None:
                new = keys.budget_key("budget", f"{tenant}|customer:{alias}|{tail}")
                renamed += int(await self._move_spent_script(keys=[_s(raw), new]))
        return renamed

    async def _scrubbed(self) -> bool:
        """After an erasure: True when no file of the Redis server (of any node of a
        cluster) can hold what it deleted (`_on_disk`). An append-only file holds the
        writes the deletes follow until it is rewritten: a rewrite is started, but it
        runs in the background (and the old file's blocks are not zeroed): still False."""
        scrubbed = True
        for target in self._servers():
            info, save = await self._persistence(target)
            if info.get("aof_enabled"):
                with contextlib.suppress(ResponseError):  # one under way, or not allowed
                    await self._redis.bgrewriteaof(**target)
            scrubbed = scrubbed and not _on_disk(info, save)
        return scrubbed

    def _servers(self) -> list[dict[str, Any]]:
        """How a server command reaches each Redis server: the one, or every node."""
        if isinstance(self._redis, RedisCluster):
            return [{"target_nodes": node} for node in self._redis.get_nodes()]
        return [{}]

    async def _persistence(self, target: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """A server's `INFO persistence` and `save` setting; ({}, None) for what it
        refuses to say (a managed Redis may disable CONFIG)."""
        try:
            info = dict(await self._redis.info("persistence", **target))
        except ResponseError:
            return {}, None
        try:
            save = (await self._redis.config_get("save", **target)).get("save")
        except ResponseError:
            return info, None
        return info, None if save is None else str(save)

    async def ping(self) -> None:
        await self._ping()

    async def _ping(self, *, probe: bool = False) -> None:
        async with self._call(probe=probe):
            if isinstance(self._redis, RedisCluster):
                await self._redis.ping(target_nodes=RedisCluster.PRIMARIES)
            else:
                await self._redis.ping()

    async def health(self) -> StoreHealth:
        try:
            await asyncio.wait_for(self._ping(probe=True), _HEALTH_WAIT_S)
        except StoreUnavailable as exc:
            return StoreHealth("unreachable", exc.message)
        except TimeoutError:
            return StoreHealth("slow", f"redis did not answer a ping within {_HEALTH_WAIT_S} s")
        return StoreHealth()

    async def close(self) -> None:
        await self._redis.aclose()


def _cluster_client(url: str, config: RedisConfig) -> RedisCluster:
    """`redis-cluster://[user:password@]host:port[,host:port...][?password=...]`: the
    startup nodes; the client finds the rest of the cluster from them."""
    split = urlsplit(url)
    userinfo, _, hosts = split.netloc.rpartition("@")
    username, _, password = userinfo.partition(":")
    query = dict(parse_qsl(split.query))
    nodes = []
    for node in hosts.split(","):
        host, _, port = node.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"redis-cluster URL: {node!r} is not host:port")
        nodes.append(ClusterNode(host.strip("[]"), int(port)))
    return RedisCluster(
        startup_nodes=nodes,
        username=unquote(username) or query.get("username"),
        password=unquote(password) or query.get("password"),
        max_connections=config.max_connections,
        socket_connect_timeout=config.connect_timeout_s,
        socket_timeout=config.socket_timeout_s,
        health_check_interval=30,
    )


def rate_use(flat: list[int], counters: int) -> RateUse:
    """scripts.RATE's flat reply, read back."""
    used, at = [], 3
    for _ in range(counters):
        n = flat[at]
        pairs = flat[at + 1 : at + 1 + 2 * n]
        used.append(tuple(zip(pairs[::2], pairs[1::2], strict=True)))
        at += 1 + 2 * n
    return RateUse(bool(flat[0]), flat[1], flat[2], tuple(used))


def _doc(fields: Mapping[bytes | str, bytes | str]) -> dict[str, Any] | None:
    return {_s(k): offload.loads(v) for k, v in fields.items()} if fields else None


async def _decoded(fields: Mapping[bytes | str, bytes | str]) -> dict[str, Any] | None:
    """`_doc`, off the event loop for a big document (a customer's facts stored before
    their limit: tens of MB took the loop a tenth of a second to decode)."""
    return await offload.sized(sum(len(v) for v in fields.values()), _doc, fields)


def _on_disk(info: Mapping[str, Any], save: str | None) -> bool:
    """Whether a Redis server's files may hold what was deleted from its memory, from its
    `INFO persistence` and `save` setting: an append-only file, a snapshot under way,
    made or loaded since it started, or snapshots configured (`save`: the last one may
    predate the deletes). What it did not say (a Redis before 7.0 has no `rdb_saves`)
    counts as on disk."""
    if save is None or save.strip():
        return True
    counted = ("aof_enabled", "rdb_bgsave_in_progress", "rdb_saves", "rdb_last_load_keys_loaded")
    return any(int(info.get(name, 1)) for name in counted)


def _glob(text: str) -> str:
    """`text` matched literally in a SCAN pattern."""
    return _GLOB_SPECIAL.sub(r"\\\g<0>", text)


def _json(text: str) -> str:
    """A string as orjson writes it inside a ledger row (quoted, escaped)."""
    return orjson.dumps(text).decode()


def _busy(wait: float) -> StoreBusy:
    return StoreBusy(f"store (redis) busy: no connection free within {wait:g} s")


def _unavailable(exc: Exception) -> StoreUnavailable:
    return StoreUnavailable(f"store (redis) unavailable: {type(exc).__name__}")


def _row(tenant: str, h: dict[bytes, bytes]) -> SpendRow:
    values = {_s(k): _s(v) for k, v in h.items()}
    return SpendRow(
        tenant=tenant,
        plan=values.get("plan", ""),
        **{f: int(values.get(f, 0)) for f in COUNTER_FIELDS},
    )
