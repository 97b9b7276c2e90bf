"""The stores' own settings (`redis:` and `sqlite:` in config.yaml): how long a call
may wait for the backend before the store counts as unavailable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


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


class PostgresConfig(_Options):
    """The PostgreSQL ledger's connection pool. A call waits up to `pool_timeout_s` for a
    connection (a busy pool is not a down store), then up to `statement_timeout_s` for
    its work. libpq counts `connect_timeout_s` in whole seconds, at least 2."""

    min_size: int = Field(default=1, ge=0)
    max_size: int = Field(default=10, gt=0)
    pool_timeout_s: float = Field(default=5.0, gt=0)
    connect_timeout_s: float = Field(default=2.0, gt=0)
    statement_timeout_s: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _sizes(self) -> PostgresConfig:
        if self.min_size > self.max_size:
            raise ValueError(f"min_size {self.min_size} is over max_size {self.max_size}")
        return self
