"""`gateway migrate`: prepare the configured stores for this version of the gateway, and
the start-up check that they were.

- PostgreSQL ledger (`ledger:`): versioned migrations (gateway/store/pg_migrations),
  recorded in its `schema_version` table; `serve` refuses to start on an older schema.
- Redis: moves what earlier versions wrote (documents as fields of one hash per tenant,
  untagged counter and budget keys) into today's layout (RedisStore.migrate_layout).
- SQLite: migrates itself when opened; this only opens it.
Each step is idempotent: running it twice changes nothing the second time.
"""

from __future__ import annotations

from gateway.config import Config
from gateway.errors import ConfigError


async def migrate(config: Config) -> list[str]:
    """What was done, a line per store."""
    lines: list[str] = []
    if config.ledger is not None:
        from gateway.store.postgres import PostgresLedger

        ledger = PostgresLedger(config.ledger, config.postgres)
        await ledger.open()
        try:
            applied = await ledger.migrate()
        finally:
            await ledger.close()
        done = f"applied {', '.join(map(str, applied))}" if applied else "already up to date"
        lines.append(f"postgresql ledger: schema {done}")
    if config.store.startswith(("redis://", "rediss://", "redis-cluster://")):
        from gateway.store.redis import RedisStore

        redis = RedisStore(config.store, config.redis)
        try:
            moved = await redis.migrate_layout()
        finally:
            await redis.close()
        counts = ", ".join(f"{kind} {n}" for kind, n in sorted(moved.items()))
        lines.append(f"redis: earlier layout moved ({counts or 'nothing to move'})")
    else:
        from gateway.store import open_store

        store = open_store(config.store, config.sqlite, config.redis)
        try:
            await store.ping()
        finally:
            await store.close()
        lines.append("sqlite: schema current")
    return lines


async def schema_problem(config: Config) -> ConfigError | None:
    """Why `serve` must not start on this ledger database (None: it may). A server that
    does not answer is no reason: the gateway starts and books once it does."""
    if config.ledger is None:
        return None
    from gateway.errors import StoreUnavailable
    from gateway.store.postgres import PostgresLedger

    ledger = PostgresLedger(config.ledger, config.postgres)
    await ledger.open()
    try:
        await ledger.check_schema()
    except ConfigError as exc:
        return exc
    except StoreUnavailable:
        return None
    finally:
        await ledger.close()
    return None
