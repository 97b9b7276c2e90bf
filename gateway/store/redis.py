"""Redis backend: many gateway replicas share one Redis; bookings are atomic Lua calls.

Keys (all under the `gw:` prefix):
  gw:booked:{id}               idempotency marker of a ledger record (expires after 40 days)
  gw:month:{period}:{tenant}   hash of the tenant-month counters, plus `plan`
  gw:tenants:{period}          set of tenants booked in the period
  gw:periods                   set of periods ever booked
  gw:ledger:{period}           list of JSON ledger records of the period
  gw:ledger:{period}:{tenant}  the same, for one tenant
  gw:d:{kind}:{tenant}:{key}   a JSON document (a conversation, a customer's facts, ...) as a
                               hash of its top-level fields (JSON each), with its own TTL
  gw:budget:{key}, gw:resv:{key}, gw:resvamt:{key}   spend budgets (see redis_scripts)
Not for Redis Cluster: a booking touches keys of several hash slots.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import orjson
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError

from gateway.errors import StoreRejected, StoreUnavailable
from gateway.store import redis_scripts as scripts
from gateway.store.base import Erased, StoreHealth
from gateway.store.options import RedisConfig
from gateway.store.records import (
    COUNTER_FIELDS,
    SpendRow,
    UsageRecord,
    customer_budget,
    increments,
)

_MARKER_TTL_S = 40 * 24 * 3600
_BUDGET_TTL_S = 400 * 24 * 3600
_GLOB_SPECIAL = re.compile(r"[*?\[\]\\]")
_ERASE_CHUNK = 2000  # ledger rows an erasure script reads and rewrites per call
_HEALTH_WAIT_S = 0.8  # /healthz answers within a second


class RedisStore:
    def __init__(self, url: str, config: RedisConfig) -> None:
        self._url = url
        self._config = config
        # A blocking pool: the call past `max_connections` waits (boundedly) for a free
        # connection instead of failing at once: a busy pool is load, not an outage.
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

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """redis-py's errors, translated in one place: a command Redis refuses (a counter
        would overflow) is the data's fault and retrying cannot help; anything else means
        the store cannot answer now."""
        try:
            yield
        except ResponseError as exc:
            if type(exc) is ResponseError and not str(exc).startswith("BUSY"):
                raise StoreRejected(f"store (redis) refused the command: {exc}") from exc
            raise _unavailable(exc) from exc
        except RedisConnectionError as exc:
            if isinstance(exc.__cause__, asyncio.TimeoutError):  # the pool's bounded wait
                wait = self._config.pool_timeout_s
                raise StoreUnavailable(
                    f"store (redis) busy: no connection free within {wait:g} s"
                ) from exc
            raise _unavailable(exc) from exc
        except (RedisError, OSError) as exc:
            raise _unavailable(exc) from exc

    def _book_call(self, record: UsageRecord) -> tuple[list[str], list[Any]]:
        period, tenant = record.period, record.tenant
        keys = [
            f"gw:booked:{record.id}",
            f"gw:month:{period}:{tenant}",
            f"gw:tenants:{period}",
            "gw:periods",
            f"gw:ledger:{period}",
            f"gw:ledger:{period}:{tenant}",
        ]
        for budget in record.budgets:
            keys += scripts.budget_keys(budget)
        args: list[Any] = [_MARKER_TTL_S, tenant, period, record.plan]
        args += [orjson.dumps(record.to_json()), record.reservation or ""]
        args += [record.cost_units or 0, _BUDGET_TTL_S]
        for name, value in increments(record).items():
            args += [name, value]
        return keys, args

    async def reserve(
        self, reservation: str, budgets: Sequence[tuple[str, int]], amount: int, ttl_s: float
    ) -> str | None:
        if not budgets:
            return None
        keys = [k for key, _ in budgets for k in scripts.budget_keys(key)]
        args: list[Any] = [reservation, amount, ttl_s, *(limit for _, limit in budgets)]
        with self._errors():
            blocked = int(await self._reserve_script(keys=keys, args=args))
        return None if blocked == 0 else budgets[blocked - 1][0]

    async def release(self, reservation: str, budgets: Sequence[str]) -> None:
        keys = [k for key in budgets for k in scripts.budget_keys(key)]
        if not keys:
            return
        with self._errors():
            await self._release_script(keys=keys, args=[reservation])

    async def renew(self, reservation: str, budgets: Sequence[str], ttl_s: float) -> bool:
        keys = [k for key in budgets for k in scripts.budget_keys(key)]
        if not keys:
            return False
        with self._errors():
            return bool(await self._renew_script(keys=keys, args=[reservation, ttl_s]))

    async def budgets(self, keys: Sequence[str]) -> dict[str, tuple[int, int]]:
        with self._errors():
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.hmget(f"gw:budget:{key}", "spent", "open")
                rows = await pipe.execute()
        return {k: (int(r[0] or 0), int(r[1] or 0)) for k, r in zip(keys, rows, strict=True)}

    async def book_many(self, records: Sequence[UsageRecord]) -> list[bool]:
        """One round trip for the batch; each record's script runs alone (nothing interleaves)."""
        with self._errors():
            async with self._redis.pipeline(transaction=False) as pipe:
                for record in records:
                    keys, args = self._book_call(record)
                    await self._book_script(keys=keys, args=args, client=pipe)
                results = await pipe.execute()
        return [bool(r) for r in results]

    async def spend(self, period: str | None) -> list[SpendRow]:
        with self._errors():
            periods = [period] if period else await self._periods()
            totals: dict[str, SpendRow] = {}
            for p in periods:
                tenants = sorted(_s(t) for t in await self._redis.smembers(f"gw:tenants:{p}"))
                async with self._redis.pipeline(transaction=False) as pipe:
                    for t in tenants:
                        pipe.hgetall(f"gw:month:{p}:{t}")
                    hashes = await pipe.execute()
                for t, h in zip(tenants, hashes, strict=True):
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
        key = f"gw:ledger:{period}" + (f":{tenant}" if tenant else "")
        with self._errors():
            raw = await self._redis.lrange(key, 0, limit - 1)
        return [UsageRecord.from_json(orjson.loads(item)) for item in raw]

    async def get_doc(self, kind: str, tenant: str, key: str) -> dict[str, Any] | None:
        with self._errors():
            return _doc(await self._redis.hgetall(doc_key(kind, tenant, key)))

    async def get_docs(
        self, tenant: str, wanted: Sequence[tuple[str, str]]
    ) -> list[dict[str, Any] | None]:
        with self._errors():
            async with self._redis.pipeline(transaction=False) as pipe:
                for kind, key in wanted:
                    pipe.hgetall(doc_key(kind, tenant, key))
                raw = await pipe.execute()
        return [_doc(h) for h in raw]

    async def put_doc(
        self, kind: str, tenant: str, key: str, doc: dict[str, Any], ttl_s: float | None = None
    ) -> None:
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
        await self._write_doc(doc_key(kind, tenant, key), changed, removed, ttl_s, replace=False)

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
        with self._errors():
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

    async def delete_doc(self, kind: str, tenant: str, key: str) -> bool:
        with self._errors():
            return bool(await self._redis.delete(doc_key(kind, tenant, key)))

    async def list_docs(self, kind: str, tenant: str, prefix: str) -> list[dict[str, Any]]:
        head = doc_key(kind, tenant, "")
        found: dict[str, dict[str, Any]] = {}
        with self._errors():
            async for raw in self._redis.scan_iter(match=_glob(head + prefix) + "*", count=1000):
                doc = _doc(await self._redis.hgetall(raw))
                if doc is not None:
                    found[_s(raw)] = doc
        return [found[k] for k in sorted(found)]

    async def customer_ledger(self, tenant: str, customer: str, limit: int) -> list[UsageRecord]:
        """Every period's list of the tenant, read a chunk at a time, rows matched as text
        first (the customer field as orjson writes it), then parsed."""
        needle = f'"customer":{_json(customer)}'.encode()
        found: list[UsageRecord] = []
        with self._errors():
            for period in await self._periods():
                key = f"gw:ledger:{period}:{tenant}"
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
        """Documents deleted, then each period's ledger lists rewritten atomically (a
        script per list), then the customer's budget keys renamed. A booking that lands
        during the erasure may still name the customer: erase once their traffic ends."""
        with self._errors():
            async with self._redis.pipeline(transaction=False) as pipe:
                for kind, key in docs:
                    pipe.delete(doc_key(kind, tenant, key))
                deleted = sum(await pipe.execute())
            named, renamed = _json(customer), _json(alias)
            args = [
                f'"customer":{named}',
                f'"customer":{renamed}',
                f'"tenant":{_json(tenant)}',
                f"|customer:{named[1:-1]}|",
                f"|customer:{renamed[1:-1]}|",
            ]
            rows = 0  # counted once: the all-tenants list holds the same rows
            for period in await self._periods():
                rows += await self._pseudonymize(f"gw:ledger:{period}:{tenant}", args)
                await self._pseudonymize(f"gw:ledger:{period}", args)
            budgets = await self._rename_budgets(tenant, customer, alias)
        return Erased(documents=int(deleted), ledger_rows=rows, budgets=budgets)

    async def _pseudonymize(self, key: str, args: list[str]) -> int:
        """One ledger list, a chunk per script call (scripts.PSEUDONYMIZE)."""
        changed = 0
        for first, last in await self._chunks(key):
            chunk = [*args, str(first), str(last)]
            changed += int(await self._pseudonymize_script(keys=[key], args=chunk))
        return changed

    async def _periods(self) -> list[str]:
        return sorted(_s(p) for p in await self._redis.smembers("gw:periods"))

    async def _chunks(self, key: str) -> list[tuple[int, int]]:
        """A list's index ranges, _ERASE_CHUNK rows each (lists only grow at the end)."""
        length = int(await self._redis.llen(key))
        return [(first, first + _ERASE_CHUNK - 1) for first in range(0, length, _ERASE_CHUNK)]

    async def _rename_budgets(self, tenant: str, customer: str, alias: str) -> int:
        """gw:budget / gw:resv / gw:resvamt keys of the customer, under the pseudonym."""
        renamed = 0
        for family in ("budget", "resv", "resvamt"):
            head = f"gw:{family}:"
            pattern = _glob(f"{head}{tenant}|customer:{customer}|") + "*"
            async for raw in self._redis.scan_iter(match=pattern, count=500):
                key = _s(raw)
                tail = customer_budget(key.removeprefix(head), tenant, customer)
                if tail is None:
                    continue
                try:
                    await self._redis.rename(key, f"{head}{tenant}|customer:{alias}|{tail}")
                except ResponseError as exc:  # expired meanwhile, or SCAN said it twice
                    if "no such key" not in str(exc).lower():
                        raise
                    continue
                renamed += family == "budget"
        return renamed

    async def ping(self) -> None:
        with self._errors():
            await self._redis.ping()

    async def health(self) -> StoreHealth:
        try:
            await asyncio.wait_for(self.ping(), _HEALTH_WAIT_S)
        except StoreUnavailable as exc:
            return StoreHealth("unreachable", exc.message)
        except TimeoutError:
            return StoreHealth("slow", f"redis did not answer a ping within {_HEALTH_WAIT_S} s")
        return StoreHealth()

    async def close(self) -> None:
        await self._redis.aclose()


def doc_key(kind: str, tenant: str, key: str) -> str:
    """A document's own key. The tenant is quoted (no ':'), so no tenant's keys can
    pose as another's."""
    return f"gw:d:{kind}:{quote(tenant, safe='')}:{key}"


def _doc(fields: Mapping[bytes | str, bytes | str]) -> dict[str, Any] | None:
    return {_s(k): orjson.loads(v) for k, v in fields.items()} if fields else None


def _glob(text: str) -> str:
    """`text` matched literally in a SCAN pattern."""
    return _GLOB_SPECIAL.sub(r"\\\g<0>", text)


def _json(text: str) -> str:
    """A string as orjson writes it inside a ledger row (quoted, escaped)."""
    return orjson.dumps(text).decode()


def _unavailable(exc: Exception) -> StoreUnavailable:
    return StoreUnavailable(f"store (redis) unavailable: {type(exc).__name__}")


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _row(tenant: str, h: dict[bytes, bytes]) -> SpendRow:
    values = {_s(k): _s(v) for k, v in h.items()}
    return SpendRow(
        tenant=tenant,
        plan=values.get("plan", ""),
        **{f: int(values.get(f, 0)) for f in COUNTER_FIELDS},
    )
