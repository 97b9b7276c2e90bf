"""Redis backend: many gateway replicas share one Redis; bookings are atomic Lua calls.

Keys (all under the `gw:` prefix):
  gw:booked:{id}               idempotency marker of a ledger record (expires after 40 days)
  gw:month:{period}:{tenant}   hash of the tenant-month counters, plus `plan`
  gw:tenants:{period}          set of tenants booked in the period
  gw:periods                   set of periods ever booked
  gw:ledger:{period}           list of JSON ledger records of the period
  gw:ledger:{period}:{tenant}  the same, for one tenant
  gw:doc:{kind}:{tenant}       hash of JSON documents (conversations, facts, ...) by key
  gw:budget:{key}, gw:resv:{key}, gw:resvamt:{key}   spend budgets (see redis_scripts)
Not for Redis Cluster: a booking touches keys of several hash slots.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from gateway.errors import StoreUnavailable
from gateway.store import redis_scripts as scripts
from gateway.store.records import COUNTER_FIELDS, SpendRow, UsageRecord, increments

_MARKER_TTL_S = 40 * 24 * 3600
_BUDGET_TTL_S = 400 * 24 * 3600
_GLOB_SPECIAL = re.compile(r"[*?\[\]\\]")


class RedisStore:
    def __init__(self, url: str) -> None:
        self._url = url
        self._redis = aioredis.Redis.from_url(
            url, socket_connect_timeout=1.0, socket_timeout=2.0, health_check_interval=30
        )
        self._book_script = self._redis.register_script(scripts.BOOK)
        self._reserve_script = self._redis.register_script(scripts.RESERVE)
        self._release_script = self._redis.register_script(scripts.RELEASE)

    def _unavailable(self, exc: Exception) -> StoreUnavailable:
        return StoreUnavailable(f"store (redis) unavailable: {type(exc).__name__}")

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
        try:
            blocked = int(await self._reserve_script(keys=keys, args=args))
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc
        return None if blocked == 0 else budgets[blocked - 1][0]

    async def release(self, reservation: str, budgets: Sequence[str]) -> None:
        keys = [k for key in budgets for k in scripts.budget_keys(key)]
        if not keys:
            return
        try:
            await self._release_script(keys=keys, args=[reservation])
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc

    async def budgets(self, keys: Sequence[str]) -> dict[str, tuple[int, int]]:
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.hmget(f"gw:budget:{key}", "spent", "open")
                rows = await pipe.execute()
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc
        return {k: (int(r[0] or 0), int(r[1] or 0)) for k, r in zip(keys, rows, strict=True)}

    async def book_many(self, records: Sequence[UsageRecord]) -> list[bool]:
        """One round trip for the batch; each record's script runs atomically."""
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for record in records:
                    keys, args = self._book_call(record)
                    await self._book_script(keys=keys, args=args, client=pipe)
                results = await pipe.execute()
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc
        return [bool(r) for r in results]

    async def spend(self, period: str | None) -> list[SpendRow]:
        try:
            periods = (
                [period]
                if period
                else sorted(_s(p) for p in await self._redis.smembers("gw:periods"))
            )
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
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc
        return [totals[t] for t in sorted(totals)]

    async def ledger(
        self, period: str, tenant: str | None = None, limit: int = 1000
    ) -> list[UsageRecord]:
        key = f"gw:ledger:{period}" + (f":{tenant}" if tenant else "")
        try:
            raw = await self._redis.lrange(key, 0, limit - 1)
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc
        return [UsageRecord.from_json(orjson.loads(item)) for item in raw]

    async def get_doc(self, kind: str, tenant: str, key: str) -> dict[str, Any] | None:
        try:
            raw = await self._redis.hget(f"gw:doc:{kind}:{tenant}", key)
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc
        return None if raw is None else dict(orjson.loads(raw))

    async def get_docs(
        self, tenant: str, wanted: Sequence[tuple[str, str]]
    ) -> list[dict[str, Any] | None]:
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for kind, key in wanted:
                    pipe.hget(f"gw:doc:{kind}:{tenant}", key)
                raw = await pipe.execute()
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc
        return [None if r is None else dict(orjson.loads(r)) for r in raw]

    async def put_doc(self, kind: str, tenant: str, key: str, doc: dict[str, Any]) -> None:
        try:
            await self._redis.hset(f"gw:doc:{kind}:{tenant}", key, orjson.dumps(doc))
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc

    async def delete_doc(self, kind: str, tenant: str, key: str) -> bool:
        try:
            return bool(await self._redis.hdel(f"gw:doc:{kind}:{tenant}", key))
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc

    async def list_docs(self, kind: str, tenant: str, prefix: str) -> list[dict[str, Any]]:
        pattern = _GLOB_SPECIAL.sub(r"\\\g<0>", prefix) + "*"
        found: dict[str, bytes] = {}
        try:
            async for key, value in self._redis.hscan_iter(
                f"gw:doc:{kind}:{tenant}", match=pattern, count=500
            ):
                found[_s(key)] = value
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc
        return [dict(orjson.loads(found[k])) for k in sorted(found)]

    async def ping(self) -> None:
        try:
            await self._redis.ping()
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc

    async def close(self) -> None:
        await self._redis.aclose()


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _row(tenant: str, h: dict[bytes, bytes]) -> SpendRow:
    values = {_s(k): _s(v) for k, v in h.items()}
    return SpendRow(
        tenant=tenant,
        plan=values.get("plan", ""),
        **{f: int(values.get(f, 0)) for f in COUNTER_FIELDS},
    )
