from __future__ import annotations

import functools
import importlib
import os
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import redis

from tests.inprocess import InProcessGateway, SimulatorLog, running
from tests.ledger_db import create_database, drop_database, empty_ledger
from tests.servers import (
    GatewayProc,
    RedisCluster,
    start_gateway,
    start_redis,
    start_redis_cluster,
    start_simulator,
    stop,
)

# This machine sets PYTHONDONTWRITEBYTECODE: each of the hundreds of gateways and
# simulators the tests start compiled the whole package again (~0.6 s of a ~2 s start).
# They write the bytecode cache once and read it after.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def _share_default_ssl_context(transports: str) -> None:
    """Every httpx client (the openai SDK makes one per `OpenAI()` through its `httpx2`,
    `httpx.get` one per call) loads the CA bundle into a new SSL context: ~50 ms of CPU
    each, thousands of times over a suite that talks plain HTTP to loopback servers. Here
    the default context is made once per CA setting and shared; any other setting is made
    as the library would. Only this test process's clients: the gateway under test runs
    in its own process or builds its own."""
    module = importlib.import_module(transports)
    create: Callable[..., ssl.SSLContext] = module.create_ssl_context
    default = functools.cache(lambda _cafile, _capath: create())

    def shared(verify: Any = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
        if verify is True and cert is None and trust_env:
            return default(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        return create(verify=verify, cert=cert, trust_env=trust_env)

    setattr(module, "create_ssl_context", shared)  # noqa: B010 (mypy cannot see the attribute)


for _transports in ("httpx._transports.default", "httpx2._transports.default"):
    _share_default_ssl_context(_transports)


@pytest.fixture(scope="session")
def simulator_url() -> Iterator[str]:
    proc, url = start_simulator()
    yield url
    stop(proc)


class UpstreamLog:
    """What the simulated upstream saw and billed, from a given moment on."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.start = len(self.all())

    def all(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = httpx.get(
            self.base.removesuffix("/v1") + "/sim/usage"
        ).json()
        return entries

    def since(self) -> list[dict[str, Any]]:
        return self.all()[self.start :]


@pytest.fixture
def upstream_log(simulator_url: str) -> UpstreamLog:
    return UpstreamLog(simulator_url)


def worker_number() -> int:
    """This pytest-xdist worker's number (gw0 -> 0, gw1 -> 1, ...); 0 without xdist."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))


def worker_redis_url(url: str) -> str:
    """REDIS_URL's database for this xdist worker: the one given plus the worker's number
    (the tests empty the database they get, so no two workers may share one)."""
    parts = urlsplit(url)
    db = int(parts.path.strip("/") or 0) + worker_number()
    url = parts._replace(path=f"/{db}").geturl()
    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.ResponseError as exc:  # e.g. past the server's `databases`
        pytest.fail(f"REDIS_URL plus the worker number gives {url}: {exc}")
    finally:
        client.close()
    return url


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis database of this session (of this xdist worker): REDIS_URL's, moved up by
    the worker's number, else a `redis-server` of its own."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield worker_redis_url(url)
        return
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    yield url
    stop(proc)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """A Redis database emptied for this test."""
    client = redis.Redis.from_url(redis_server)
    client.flushdb()
    client.close()
    return redis_server


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    """A Redis Cluster of three masters on loopback ports, for the whole session."""
    cluster = start_redis_cluster(tmp_path_factory.mktemp("redis-cluster"))
    yield cluster
    cluster.stop()


@pytest.fixture
def redis_cluster_url(redis_cluster: RedisCluster) -> str:
    """The cluster, emptied for this test (each of its nodes; no other Redis)."""
    for port in redis_cluster.ports:
        client = redis.Redis(port=port)
        client.flushall()
        client.close()
    return redis_cluster.url


@pytest.fixture(params=["sqlite", "redis", "redis-cluster"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'gateway.db'}"
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    return str(request.getfixturevalue("redis_cluster_url"))


@pytest.fixture
def gateway(tmp_path: Path, simulator_url: str, store_url: str) -> Iterator[GatewayProc]:
    gw = start_gateway(tmp_path, simulator_url, store_url)
    yield gw
    gw.stop()


@pytest.fixture
def sqlite_gateway(tmp_path: Path, simulator_url: str) -> Iterator[GatewayProc]:
    gw = start_gateway(tmp_path, simulator_url, f"sqlite:///{tmp_path / 'gateway.db'}")
    yield gw
    gw.stop()


@pytest.fixture
def sqlite_gateway_with(
    tmp_path: Path, simulator_url: str
) -> Iterator[Callable[[dict[str, Any]], GatewayProc]]:
    """Start the SQLite gateway with these policy files in place ({"spend.yaml": {...}}):
    one start, rather than a start and a restart to apply them."""
    started: list[GatewayProc] = []

    def start(policies: dict[str, Any]) -> GatewayProc:
        store = f"sqlite:///{tmp_path / 'gateway.db'}"
        started.append(start_gateway(tmp_path, simulator_url, store, policies=policies))
        return started[-1]

    yield start
    for gw in started:
        gw.stop()


@pytest.fixture
def app_gateway(tmp_path: Path, store_url: str) -> Iterator[InProcessGateway]:
    """The gateway in this process (tests/inprocess.py), on each store backend."""
    yield from running(tmp_path, store_url)


@pytest.fixture
def sqlite_app_gateway(tmp_path: Path) -> Iterator[InProcessGateway]:
    """The gateway in this process on the embedded SQLite store."""
    yield from running(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}")


@pytest.fixture
def app_log(request: pytest.FixtureRequest) -> SimulatorLog:
    """What the in-process simulator of this test's in-process gateway saw, from now on."""
    for name in ("sqlite_app_gateway", "app_gateway"):
        if name in request.fixturenames:
            return SimulatorLog(request.getfixturevalue(name))
    raise LookupError("app_log needs app_gateway or sqlite_app_gateway")


@pytest.fixture(scope="session")
def postgres_ledger_db() -> Iterator[str]:
    """A PostgreSQL database of this session, migrated (GATEWAY_TEST_POSTGRES_URL's server)."""
    url = create_database("gw_session")
    yield url
    drop_database(url)


@pytest.fixture
def postgres_ledger_url(postgres_ledger_db: str) -> str:
    """The session's ledger database, emptied for this test."""
    empty_ledger(postgres_ledger_db)
    return postgres_ledger_db
