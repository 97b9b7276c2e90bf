"""The multi-replica deployment: Redis for counters, budgets and documents, the ledger in
PostgreSQL (`ledger: postgresql://...`), through running gateways and the openai SDK.

One test stops a PostgreSQL server of its own (initdb in a temporary folder, run as the
`postgres` user) for 30 seconds during traffic, then starts it again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import psycopg
import pytest
import redis

from tests.ledger_db import create_database, drop_database
from tests.servers import GatewayProc, free_port, start_gateway, write_config

PG_BIN = Path("/usr/lib/postgresql/15/bin")


@pytest.fixture
def ledger_url() -> Iterator[str]:
    """A fresh database on the machine's PostgreSQL."""
    url = create_database("gw_deploy", migrated=False)
    try:
        yield url
    finally:
        drop_database(url)


def _cli(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    return subprocess.run(
        [sys.executable, "-m", "gateway", *argv, "--config", str(root / "config.yaml")],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _rows(url: str) -> tuple[int, int]:
    with psycopg.connect(url, connect_timeout=5) as conn:
        count, distinct = conn.execute("SELECT count(*), count(DISTINCT id) FROM ledger").fetchone()  # type: ignore[misc]
    return int(count), int(distinct)


def _call(gw: GatewayProc, text: str) -> None:
    # Closed after each call: a client left to the garbage collector leaves its socket
    # open, and pytest fails the test on the ResourceWarning wherever the GC runs.
    with openai.OpenAI(
        base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0, timeout=30
    ) as client:
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": text}],
            extra_headers={"X-Customer-Id": "ana", "X-Conversation-Id": f"c-{text}"},
        )


def test_the_ledger_lives_in_postgresql_and_redis_keeps_no_rows(
    tmp_path: Path, simulator_url: str, redis_url: str, ledger_url: str
) -> None:
    write_config(tmp_path, simulator_url, redis_url, ledger=ledger_url)
    refused = subprocess.run(
        [sys.executable, "-m", "gateway", "serve", "--config", str(tmp_path / "config.yaml")],
        env={k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")},
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1 and "gateway migrate" in refused.stderr
    migrated = _cli(tmp_path, "migrate")
    assert migrated.returncode == 0 and "schema applied 1" in migrated.stdout, migrated.stderr
    assert "already up to date" in _cli(tmp_path, "migrate").stdout

    gw = start_gateway(tmp_path, simulator_url, redis_url, ledger=ledger_url)
    try:
        for n in range(5):
            _call(gw, f"where is order {n}?")
        time.sleep(0.5)  # the bookkeeper's batch
        assert _rows(ledger_url) == (5, 5)
        period = time.strftime("%Y-%m", time.gmtime())
        spend = gw.admin("/admin/spend", period=period).json()
        acme = next(r for r in spend["tenants"] if r["tenant"] == "acme")
        assert acme["requests"] == 5
        ledger = gw.admin("/admin/ledger", period=period, tenant="acme").json()
        assert len(ledger["records"]) == 5
        client = redis.Redis.from_url(redis_url)
        assert not [k for k in client.scan_iter(match="*ledger*")]  # counters only
        client.close()
        report = _cli(tmp_path, "report", "--format", "json")
        assert report.returncode == 0 and '"requests": 5' in report.stdout, report.stderr
    finally:
        gw.stop()


@pytest.fixture
def own_postgres(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A PostgreSQL server this test may stop: (its URL, its data folder)."""
    if shutil.which("runuser") is None or not (PG_BIN / "initdb").exists():
        pytest.fail(f"needs runuser and PostgreSQL 15's initdb in {PG_BIN}")
    # pytest's own folders are private to root: the server's user needs a way in
    home = Path(tempfile.mkdtemp(prefix="gw-pg-"))
    home.chmod(0o755)
    data = home / "pgdata"
    data.mkdir()
    shutil.chown(data, "postgres")
    port = free_port()
    as_pg = ["runuser", "-u", "postgres", "--"]
    subprocess.run(
        [*as_pg, str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    opts = f"-p {port} -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off"
    ctl = [*as_pg, str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(data / "log")]
    subprocess.run([*ctl, "-w", "start"], check=True, capture_output=True, timeout=60)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres", data
    finally:
        subprocess.run([*ctl, "-m", "immediate", "stop"], check=False, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def test_postgresql_down_for_30_seconds_loses_no_booking_and_books_none_twice(
    tmp_path: Path, simulator_url: str, redis_url: str, own_postgres: tuple[str, Path]
) -> None:
    url, data = own_postgres
    ctl = ["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(data)]
    write_config(tmp_path, simulator_url, redis_url, ledger=url)
    assert _cli(tmp_path, "migrate").returncode == 0
    gw = start_gateway(tmp_path, simulator_url, redis_url, ledger=url)
    calls: list[str] = []
    failures: list[str] = []
    stop = threading.Event()

    def traffic() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                _call(gw, f"call {n}")
                calls.append(f"call {n}")
            except openai.OpenAIError as exc:
                failures.append(f"call {n}: {exc}")
            time.sleep(0.1)

    thread = threading.Thread(target=traffic)
    thread.start()
    try:
        time.sleep(3)
        subprocess.run([*ctl, "-m", "fast", "stop"], check=True, capture_output=True, timeout=60)
        down_at = len(calls)
        time.sleep(30)
        during = len(calls) - down_at
        opts = f"-p {url.rsplit(':', 1)[1].split('/')[0]} -k /tmp -c listen_addresses=127.0.0.1"
        subprocess.run(
            [*ctl, "-o", opts, "-l", str(data / "log"), "-w", "start"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        time.sleep(3)
    finally:
        stop.set()
        thread.join()
    try:
        print(f"calls: {len(calls)}, during the outage: {during}")
        assert not failures, failures[:3]  # fail_open: the outage never reached a caller
        assert during > 50, during  # traffic went on while PostgreSQL was down
        deadline = time.time() + 60
        while _rows(url)[0] < len(calls) and time.time() < deadline:
            time.sleep(0.5)
        assert _rows(url) == (len(calls), len(calls))  # every call, once
        period = time.strftime("%Y-%m", time.gmtime())
        spend = gw.admin("/admin/spend", period=period).json()
        assert next(r for r in spend["tenants"] if r["tenant"] == "acme")["requests"] == len(calls)
    finally:
        gw.stop()
