"""`gateway tenants list|add|set-plan` and `gateway keys create|list|revoke|rotate`: the
admin API's changes, made on the configured store directly (no running gateway needed;
running replicas pick them up within a second)."""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from gateway.config import Settings
from gateway.context.types import LATEST_TIME
from gateway.errors import GatewayError, StoreRejected, StoreUnavailable
from gateway.tenancy.keys import RegistryRefused

if TYPE_CHECKING:
    from gateway.tenancy.registry import Registry


def add_parsers(sub: Any) -> None:
    tenants = sub.add_parser("tenants", help="list, add and re-plan tenants (in the store)")
    tsub = tenants.add_subparsers(dest="tenants_command", required=True)
    listing = tsub.add_parser("list", help="every tenant: tenants.yaml's and the store's")
    add = tsub.add_parser("add", help="create a tenant and its first key (printed once)")
    add.add_argument("name")
    add.add_argument("--plan", required=True)
    set_plan = tsub.add_parser("set-plan", help="move a tenant to another plan")
    set_plan.add_argument("name")
    set_plan.add_argument("plan")

    keys = sub.add_parser("keys", help="create, list, revoke and rotate tenant keys")
    ksub = keys.add_subparsers(dest="keys_command", required=True)
    create = ksub.add_parser("create", help="a new key for a tenant (printed once)")
    create.add_argument("tenant")
    create.add_argument("--name", help="a label for the key")
    create.add_argument("--expires-in-days", type=float)
    create.add_argument("--rpm", type=int, help="requests per minute for this key")
    create.add_argument("--tpm", type=int, help="tokens per minute for this key")
    klist = ksub.add_parser("list", help="a tenant's keys (never the keys themselves)")
    klist.add_argument("tenant")
    revoke = ksub.add_parser("revoke", help="revoke a key now, on every replica")
    revoke.add_argument("key_id")
    rotate = ksub.add_parser("rotate", help="a new key replacing KEY_ID (printed once)")
    rotate.add_argument("key_id")
    rotate.add_argument("--grace-s", type=float, default=0.0, help="keep the old key this long")
    for parser in (listing, add, set_plan, create, klist, revoke, rotate):
        parser.add_argument("--config", default="config.yaml")


async def _tenants(registry: Registry, args: argparse.Namespace) -> Any:
    if args.tenants_command == "list":
        return [
            {"name": t.name, "plan": t.plan, "source": t.source, "keys": registry.live_keys(t.name)}
            for t in registry.tenants()
        ]
    if args.tenants_command == "add":
        tenant = await registry.add_tenant(args.name, args.plan)
        record, key = await registry.create_key(tenant.name, "first")
        print(f"tenant {tenant.name!r} (plan {tenant.plan}) added", file=sys.stderr)
        return {"tenant": tenant.name, "key_id": record.id, "key": key}
    tenant = await registry.set_plan(args.name, args.plan)
    return {"tenant": tenant.name, "plan": tenant.plan}


async def _keys(registry: Registry, args: argparse.Namespace) -> Any:
    if args.keys_command == "create":
        days, most = args.expires_in_days, (LATEST_TIME - time.time()) / 86400
        if days is not None and not (math.isfinite(days) and 0 < days <= most):
            raise RegistryRefused(
                f"--expires-in-days must be a positive number, at most {most:.0f}."
            )
        expires = time.time() + days * 86400 if days is not None else None
        record, key = await registry.create_key(args.tenant, args.name, expires, args.rpm, args.tpm)
        return {"id": record.id, "tenant": record.tenant, "key": key}
    if args.keys_command == "list":
        keys = registry.keys(args.tenant)  # a removed tenants.yaml tenant's too
        if registry.tenant(args.tenant) is None and not keys:
            raise GatewayError(f"No tenant {args.tenant!r}.")
        return keys
    if args.keys_command == "revoke":
        return (await registry.revoke(args.key_id)).public(None)
    most = LATEST_TIME - time.time()  # as the admin API: inf was stored as no expiry
    if not (math.isfinite(args.grace_s) and 0 <= args.grace_s <= most):
        raise RegistryRefused(f"--grace-s must be a number of seconds, 0 to {most:.0f}.")
    new, key, old = await registry.rotate(args.key_id, args.grace_s)
    return {"id": new.id, "key": key, "replaces": old.id, "old_expires": old.expires}


def run(settings: Settings, args: argparse.Namespace) -> int:
    """0 done (the result as JSON on stdout; a key is shown this once), 1 the store
    failed, 2 refused (unknown plan or tenant, a tenants.yaml tenant, ...)."""
    from gateway.runtime import open_configured_store
    from gateway.tenancy.registry import Registry

    action: Callable[[Registry, argparse.Namespace], Awaitable[Any]] = (
        _tenants if args.command == "tenants" else _keys
    )

    async def go() -> Any:
        store = open_configured_store(settings.config)
        try:
            return await action(await Registry.read(store, settings), args)
        finally:
            await store.close()

    try:
        result = asyncio.run(go())
    except (StoreUnavailable, StoreRejected) as exc:  # the store's trouble, not a refusal
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    except GatewayError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    return 0


def tenant_plans(settings: Settings) -> tuple[dict[str, str], str | None]:
    """Every tenant's plan, tenants.yaml's and the store's (for check-config's warnings).
    When the store cannot be read: tenants.yaml's, and why. A SQLite file not made yet
    holds no tenant, and is not made here."""
    from gateway.store import open_store
    from gateway.tenancy.registry import Registry

    config = settings.config
    plans = {t.name: t.plan for t in settings.tenants_by_hash.values()}
    sqlite_path = config.store.removeprefix("sqlite:///")
    if sqlite_path != config.store and not Path(sqlite_path).exists():
        return plans, None

    async def read() -> dict[str, str]:
        store = open_store(config.store, config.sqlite, config.redis)
        try:
            return {t.name: t.plan for t in (await Registry.read(store, settings)).tenants()}
        finally:
            await store.close()

    try:
        return asyncio.run(read()), None
    except StoreUnavailable as exc:  # a store that refuses (StoreRejected) is raised
        return plans, exc.message
