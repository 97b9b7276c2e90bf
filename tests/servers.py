"""Real servers on throwaway loopback ports: the simulated upstream, the gateway,
redis-server. Each is a subprocess, started and awaited like an operator would."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis
import yaml

from gateway.context.policy import DEFAULT_POLICY
from gateway.tenancy.keys import key_hash

REPO = Path(__file__).resolve().parents[1]
ADMIN_KEY = "test-admin-key"
PROVIDER_KEY = "sk-provider-secret"
TENANT_KEYS = {"acme": "gk-acme-test-key", "globex": "gk-globex-test-key"}
PLANS = {"acme": "pro", "globex": "basic"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, proc: subprocess.Popen[bytes] | None = None, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before answering {url}")
        try:
            httpx.get(url, timeout=0.5)
            return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise TimeoutError(url)


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_simulator(port: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    port = port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway", "simulate-upstream", "--port", str(port)],
        stdout=subprocess.DEVNULL,
    )
    wait_http(f"http://127.0.0.1:{port}/v1/models", proc)
    return proc, f"http://127.0.0.1:{port}/v1"


def start_redis(tmp: Path, port: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("no REDIS_URL and no redis-server on PATH")
    port = port or free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp),
        ],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    raise TimeoutError("redis-server did not start")


@dataclass
class GatewayProc:
    url: str
    root: Path
    proc: subprocess.Popen[bytes]
    argv: list[str]
    env: dict[str, str]
    log: Path
    keys: dict[str, str] = field(default_factory=lambda: dict(TENANT_KEYS))

    @property
    def v1(self) -> str:
        return f"{self.url}/v1"

    def admin(self, path: str, **params: Any) -> httpx.Response:
        return httpx.get(
            f"{self.url}{path}",
            params=params,
            headers={"Authorization": f"Bearer {ADMIN_KEY}"},
            timeout=10,
        )

    def restart(self) -> None:
        stop(self.proc)
        self.start()

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                self.argv, env=self.env, stdout=subprocess.DEVNULL, stderr=log
            )
        wait_http(f"{self.url}/healthz", self.proc)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        stop(self.proc, sig)

    def stderr(self) -> str:
        return self.log.read_text()


def write_config(root: Path, upstream_url: str, store_url: str, **extra: Any) -> Path:
    policies = root / "policies"
    policies.mkdir(parents=True, exist_ok=True)
    tenants = {
        name: {"plan": PLANS[name], "key_sha256": key_hash(key)}
        for name, key in TENANT_KEYS.items()
    }
    (policies / "tenants.yaml").write_text(yaml.safe_dump({"tenants": tenants}))
    # The packaged policy, copied as an operator would to customize it (edit_policy).
    (policies / "context.yaml").write_text(DEFAULT_POLICY.read_text())
    store_url, _, ledger = store_url.partition(" + ")  # tests.ledger_db.LEDGER_SEP
    config: dict[str, Any] = {
        "upstream": {"base_url": upstream_url, "api_key_env": "TEST_PROVIDER_KEY"},
        "store": store_url,
        "admin": {"key_env": "TEST_ADMIN_KEY"},
        "policies": "policies",
        "prices": {"local-llama": {"input_per_mtok": "0.05", "output_per_mtok": "0.10"}},
    }
    if ledger:
        config["ledger"] = ledger
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def start_gateway(
    root: Path,
    upstream_url: str,
    store_url: str,
    workers: int = 1,
    *,
    policies: dict[str, Any] | None = None,
    port: int | None = None,
    **extra: Any,
) -> GatewayProc:
    """`policies`: policy files ({"spend.yaml": {...}}) in place before the first start,
    rather than a start and a restart to apply them; `port`: a free one when None."""
    config = write_config(root, upstream_url, store_url, **extra)
    for name, doc in (policies or {}).items():
        (root / "policies" / name).write_text(yaml.safe_dump(doc))
    port = port or free_port()
    argv = [
        sys.executable,
        "-m",
        "gateway",
        "serve",
        "--config",
        str(config),
        "--port",
        str(port),
        "--workers",
        str(workers),
    ]
    env = {**os.environ, "TEST_PROVIDER_KEY": PROVIDER_KEY, "TEST_ADMIN_KEY": ADMIN_KEY}
    for name in (
        "GATEWAY_UPSTREAM_URL",
        "GATEWAY_STORE_URL",
        "GATEWAY_ADMIN_KEY",
        "GATEWAY_POLICIES",
    ):
        env.pop(name, None)
    gw = GatewayProc(f"http://127.0.0.1:{port}", root, None, argv, env, root / "gateway.log")  # type: ignore[arg-type]
    gw.start()
    return gw


def edit_policy(root: Path, change: dict[str, Any]) -> None:
    """Set dotted keys (`classes.support.low_water`) in the gateway's context.yaml."""
    path = root / "policies" / "context.yaml"
    policy = yaml.safe_load(path.read_text())
    for dotted, value in change.items():
        node = policy
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node[key]
        node[leaf] = value
    path.write_text(yaml.safe_dump(policy))


@dataclass
class RedisCluster:
    """A Redis Cluster of masters only, each a `redis-server` on a loopback port."""

    procs: list[subprocess.Popen[bytes]]
    ports: list[int]

    @property
    def url(self) -> str:
        return "redis-cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def stop(self) -> None:
        for proc in self.procs:
            stop(proc)


def redis_client(url: str) -> redis.Redis | redis.RedisCluster:
    """A synchronous client of a store's Redis URL, to read back what the store wrote: a
    plain Redis, or a whole cluster (`redis-cluster://`; its SCAN visits every master)."""
    if not url.startswith("redis-cluster://"):
        return redis.Redis.from_url(url)
    host, _, port = url.removeprefix("redis-cluster://").split(",")[0].rpartition(":")
    return redis.RedisCluster(host=host, port=int(port))


def start_redis_cluster(tmp: Path, masters: int = 3) -> RedisCluster:
    """`masters` nodes with `--cluster-enabled yes`, joined by `redis-cli --cluster
    create`; returns once every node says `cluster_state:ok`."""
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if server is None or cli is None:
        raise RuntimeError("a Redis Cluster needs redis-server and redis-cli on PATH")
    ports = [free_port() for _ in range(masters)]
    cluster = RedisCluster([], ports)
    try:
        for port in ports:
            cluster.procs.append(_cluster_node(server, tmp, port))
        for port, proc in zip(ports, cluster.procs, strict=True):
            _wait_port(port, proc)
        nodes = [f"127.0.0.1:{p}" for p in ports]
        subprocess.run(
            [cli, "--cluster", "create", *nodes, "--cluster-replicas", "0", "--cluster-yes"],
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=30,
        )
        for port in ports:
            _wait_cluster_ok(cli, port)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _cluster_node(server: str, tmp: Path, port: int) -> subprocess.Popen[bytes]:
    # The bus port defaults to port + 10000, past 65535 for a high ephemeral port.
    return subprocess.Popen(
        [
            server,
            "--port",
            str(port),
            "--cluster-enabled",
            "yes",
            "--cluster-port",
            str(free_port()),
            "--cluster-config-file",
            str(tmp / f"nodes-{port}.conf"),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp),
            "--bind",
            "127.0.0.1",
            "--daemonize",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"redis-server on port {port} exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise TimeoutError(f"redis-server on port {port} did not start")


def _wait_cluster_ok(cli: str, port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = subprocess.run(
            [cli, "-p", str(port), "cluster", "info"], check=False, capture_output=True, timeout=5
        ).stdout
        if b"cluster_state:ok" in info:
            return
        time.sleep(0.05)
    raise TimeoutError(f"the cluster node on port {port} never reached cluster_state:ok")
