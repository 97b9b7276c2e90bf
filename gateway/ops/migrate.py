"""`gateway migrate`: prepare the configured stores for this version of the gateway, and
the start-up check that they were.

- PostgreSQL ledger (`ledger:`): versioned migrations (gateway/store/pg_migrations),
  recorded in its `schema_version` table; `serve` refuses to start on an older schema.
- Redis: moves what earlier versions wrote (documents as fields of one hash per tenant,
  untagged counter and budget keys) into today's layout (RedisStore.migrate_layout),
  merged into what this version wrote there (never overwriting it), and marks the layout
  done; `serve` (and `check-config`) refuse a Redis that still holds the earlier one's
  data (not the booked markers a migration leaves to expire, nor another application's
  keys of other shapes under its prefixes: those are left as they are).
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
        if moved.get("merged") or moved.get("documents_kept"):
            lines.append(
                "redis: this version had written some of those keys already (it served "
                "before the migration, or replicas of the earlier version served after "
                "one): counters and budgets were added, reservations and ledger rows "
                "joined; of a document both held, this version's was kept (a customer's "
                "facts and episodes joined)"
            )
        if moved.get("skipped"):
            lines.append(
                f"redis: {moved['skipped']} key(s) under the earlier layout's prefixes "
                "were left as they are: not of its shape (another application's? the "
                "gateway wants a Redis database of its own)"
            )
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
    """Why `serve` must not start on this ledger database or Redis (None: it may). A
    server that does not answer is no reason: the gateway starts and books once it does.
    A Redis found to hold no earlier layout is marked so (one GET at the next start)."""
    problem = await layout_problem(config, record=True)
    if problem is not None or config.ledger is None:
        return problem
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


async def layout_problem(config: Config, *, record: bool = False) -> ConfigError | None:
    """A Redis store that still holds an earlier version's key layout (RedisStore.
    legacy_keys): served as it is, every conversation, fact, counter and budget would
    read as empty. None for another store, a Redis that does not answer, or one that
    refuses (check-config says so). `record`: mark a Redis found clean."""
    if not config.store.startswith(("redis://", "rediss://", "redis-cluster://")):
        return None
    from gateway.errors import StoreRejected, StoreUnavailable
    from gateway.store.redis import RedisStore
    from gateway.urls import shown_url

    redis = RedisStore(config.store, config.redis)
    try:
        found = await redis.legacy_keys(record=record)
    except (StoreUnavailable, StoreRejected):
        return None
    finally:
        await redis.close()
    if not found:
        return None
    reason = (
        f"holds the key layout of an earlier version ({', '.join(found)}): this "
        "version would read its conversations, facts, spend and budgets as empty; stop "
        "the earlier version's replicas, then run `gateway migrate`"
    )
    return ConfigError([(shown_url(config.store), "store", reason)])
