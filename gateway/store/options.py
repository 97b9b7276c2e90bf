"""The stores' own settings (`redis:` and `sqlite:` in config.yaml): how long a call
may wait for the backend before the store counts as unavailable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RedisConfig(_Options):
    """The Redis store's connection pool: a call waits up to `pool_timeout_s` for a free
    connection (a busy pool is not a down store)."""

    max_connections: int = Field(default=50, gt=0)
    pool_timeout_s: float = Field(default=5.0, gt=0)
    socket_timeout_s: float = Field(default=5.0, gt=0)
    connect_timeout_s: float = Field(default=2.0, gt=0)


class SQLiteConfig(_Options):
    # How long a read or write waits (for another process's lock, for the store's thread)
    # before the store counts as unavailable.
    busy_timeout_s: float = Field(default=5.0, gt=0)
