"""A hostile store: a busy Redis pool, another process holding SQLite's write lock, a
full disk, a store that drops while a reply is on its way, poison usage, huge replies.

The gateway runs in process (`create_app` under Starlette's TestClient) against the
simulated upstream and a real Redis or a real SQLite file, except where many
concurrent connections are the point."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import orjson
import pytest
import yaml
from openai.types.chat import ChatCompletionMessageParam
from starlette.testclient import TestClient

from gateway.config import load_settings
from gateway.proxy.app import create_app
from gateway.runtime import Gateway
from tests.servers import (
    ADMIN_KEY,
    PROVIDER_KEY,
    TENANT_KEYS,
    free_port,
    start_gateway,
    start_redis,
    stop,
    write_config,
)

SHORT: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Where is order ORD-1?"}]
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


CEILING = {"plans": {"pro": {"monthly_usd": "1000", "action": "block"}}}


@contextlib.contextmanager
def in_process(
    root: Path, upstream: str, store: str, spend: dict[str, Any] | None = None, **extra: Any
) -> Iterator[TestClient]:
    config = write_config(root, upstream, store, **extra)
    if spend is not None:
        (root / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    env = {"TEST_PROVIDER_KEY": PROVIDER_KEY, "TEST_ADMIN_KEY": ADMIN_KEY}
    with TestClient(create_app(load_settings(config, env))) as client:
        yield client


def sdk(client: TestClient, tenant: str = "acme") -> openai.OpenAI:
    return openai.OpenAI(
        base_url="http://testserver/v1",
        api_key=TENANT_KEYS[tenant],
        http_client=client,
        max_retries=0,
    )


def gateway_of(client: TestClient) -> Gateway:
    gw: Gateway = client.app.state.gateway  # type: ignore[attr-defined]
    return gw


def metric(client: TestClient, name: str) -> float:
    return gateway_of(client).metrics.registry.get_sample_value(name) or 0.0


def wait_for_ledger(client: TestClient, count: int, timeout_s: float = 20) -> list[dict[str, Any]]:
    """The ledger once it holds `count` records. Right after an outage a read may fail at
    once (503) for up to a second: the store is then not retried yet."""
    deadline = time.monotonic() + timeout_s
    records: list[dict[str, Any]] = []
    while len(records) < count:
        assert time.monotonic() < deadline, f"{len(records)} of {count} bookings in the store"
        time.sleep(0.05)
        response = client.get("/admin/ledger", headers=ADMIN)
        if response.status_code != 503:
            assert response.status_code == 200, response.text
            records = response.json()["records"]
    return records


def timed_healthz(client: TestClient) -> tuple[httpx2.Response, float]:
    started = time.monotonic()
    response = client.get("/healthz")
    return response, time.monotonic() - started


@contextlib.contextmanager
def write_lock(db: Path) -> Iterator[None]:
    """Another process's connection holding the file's write lock."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


# Item: SQLite work on one thread, a lock held elsewhere stopping everything.


@pytest.mark.parametrize("mode", ["fail_open", "fail_closed"])
def test_a_write_lock_held_elsewhere_stops_nothing_and_healthz_names_it(
    tmp_path: Path, simulator_url: str, mode: str
) -> None:
    db = tmp_path / "gateway.db"
    store = f"sqlite:///{db}"
    with in_process(
        tmp_path, simulator_url, store, store_failure=mode, sqlite={"busy_timeout_s": 1}
    ) as client:
        sdk(client).chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        with write_lock(db):
            health, elapsed = timed_healthz(client)
            assert elapsed < 1.5  # the acceptance: within a second (with slack)
            assert health.json()["store"] == "locked", health.json()
            assert "write lock" in health.json()["detail"]
            assert health.status_code == (200 if mode == "fail_open" else 503)
            assert health.json()["status"] == ("degraded" if mode == "fail_open" else "unavailable")
            # Reads do not queue behind writes waiting for the lock.
            assert client.get("/admin/spend", headers=ADMIN).status_code == 200
            reply = sdk(client).chat.completions.create(model="gpt-4o-mini", messages=SHORT)
            assert reply.choices[0].message.content  # answered while the file is locked
            if mode == "fail_closed":  # now it knows it cannot book: it refuses
                time.sleep(1.1)  # past the one second a good store check stands for
                with pytest.raises(openai.InternalServerError) as info:
                    sdk(client).chat.completions.create(model="gpt-4o-mini", messages=SHORT)
                assert info.value.status_code == 503
        wait_for_ledger(client, 2)  # the held booking is written once the lock is gone
        assert client.get("/healthz").json()["store"] == "ok"


# Item: a full disk, invisible to /healthz, its SQLITE_FULL hidden in the log.


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    mount_it = ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)]
    done = subprocess.run(mount_it, check=False, capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with filler.open("wb") as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
            fh.flush()
    return filler


def test_a_full_disk_shows_in_healthz_and_the_log_names_sqlite_full(
    tmp_path: Path, simulator_url: str, tiny_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = f"sqlite:///{tiny_disk / 'gateway.db'}"
    with in_process(tmp_path, simulator_url, store, sqlite={"busy_timeout_s": 1}) as client:
        sdk(client).chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        filler = fill(tiny_disk)
        with caplog.at_level(logging.WARNING, logger="gateway"):
            reply = sdk(client).chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "x " * 3000}]
            )
            assert reply.choices[0].message.content  # fail_open: still served
        health = client.get("/healthz").json()
        assert health["store"] == "disk_full", health
        assert "SQLITE_FULL" in health["detail"]
        assert "SQLITE_FULL" in caplog.text
        filler.unlink()
        wait_for_ledger(client, 2)
        assert client.get("/healthz").json()["store"] == "ok"


# Item: fail_closed answered 503 for a call the upstream had answered.


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_fail_closed_still_answers_a_call_the_upstream_answered(
    tmp_path: Path, simulator_url: str, backend: str
) -> None:
    """The store drops while the reply is on its way (SQLite: another process takes the
    write lock; Redis: the server stops): the client gets the answer, as a 503 would make
    the SDK retry a call that was answered. It is booked once the store is back."""
    with _droppable_store(tmp_path, backend) as (store, drop, restore):
        config: dict[str, Any] = {"store_failure": "fail_closed", "sqlite": {"busy_timeout_s": 0.5}}
        with in_process(tmp_path, simulator_url, store, **config) as client:
            client.get("/admin/spend", headers=ADMIN)  # the store is up, its tables exist
            dropper = threading.Timer(0.8, drop)  # the call is at the upstream for 2 s
            dropper.start()
            try:
                reply = sdk(client).chat.completions.create(
                    model="gpt-4o-mini",
                    messages=SHORT,
                    extra_headers={"x-simulator-delay-ms": "2000", "X-Conversation-Id": "mid"},
                )
            finally:
                dropper.join()
                restore()
            assert reply.choices[0].message.content
            (record,) = wait_for_ledger(client, 1)
            assert record["conversation"] == "mid"


@contextlib.contextmanager
def _droppable_store(
    root: Path, backend: str
) -> Iterator[tuple[str, Callable[[], None], Callable[[], None]]]:
    """A store URL, a function that takes the store away and one that brings it back."""
    if backend == "sqlite":
        db = root / "gateway.db"
        held: list[sqlite3.Connection] = []

        def lock() -> None:  # runs on a timer thread; unlock on the test's
            conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
            conn.execute("BEGIN IMMEDIATE")
            held.append(conn)

        def unlock() -> None:
            for conn in held:
                conn.execute("ROLLBACK")
                conn.close()

        yield f"sqlite:///{db}", lock, unlock
        return
    port = free_port()
    procs = [start_redis(root, port)[0]]

    def restart() -> None:
        procs.append(start_redis(root, port)[0])

    try:
        yield f"redis://127.0.0.1:{port}/0", lambda: stop(procs[-1]), restart
    finally:
        stop(procs[-1])


# Item: poison usage stopping all booking.


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_absurd_usage_is_booked_as_an_estimate_and_booking_goes_on(
    tmp_path: Path, simulator_url: str, store_url: str, shape: str
) -> None:
    absurd = {"prompt_tokens": 10**17, "completion_tokens": 10**17}
    if shape == "anthropic":
        absurd = {"input_tokens": 10**17, "output_tokens": 10**17}
    with in_process(tmp_path, simulator_url, store_url) as client:
        model = "gpt-4o-mini" if shape == "openai" else "claude-3-5-haiku"
        reply = sdk(client).chat.completions.create(
            model=model,
            messages=SHORT,
            extra_headers={"x-simulator-usage": orjson.dumps(absurd).decode()},
        )
        assert reply.choices[0].message.content
        for tenant in ("acme", "globex"):  # every later booking of every tenant goes through
            sdk(client, tenant).chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        records = wait_for_ledger(client, 3)
        assert metric(client, "gateway_implausible_usage_total") == 1
        assert client.get("/healthz").json()["status"] == "ok"
    first = records[0]
    assert first["estimated"] is True
    assert 0 < first["fresh_input_tokens"] < 1000 and first["output_tokens"] < 1000


# Item: unbounded growth: huge replies, a warning per request during an outage.


def test_a_reply_over_the_limit_answers_502_and_is_booked_as_an_estimate(
    tmp_path: Path, simulator_url: str
) -> None:
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    with in_process(tmp_path, simulator_url, store, limits={"max_reply_bytes": 300}) as client:
        with pytest.raises(openai.APIStatusError) as info:
            sdk(client).chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        assert info.value.status_code == 502
        error = info.value.body
        assert isinstance(error, dict) and error["code"] == "upstream_reply_too_large"
        assert "limits.max_reply_bytes" in error["message"]
        (record,) = wait_for_ledger(client, 1)
    assert record["estimated"] is True and record["fresh_input_tokens"] > 0


def test_a_store_outage_logs_a_few_warnings_not_one_per_request(
    tmp_path: Path, simulator_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens: the store is down
    with (
        in_process(tmp_path, simulator_url, store, spend=CEILING) as client,
        caplog.at_level(logging.WARNING),
    ):
        for n in range(30):
            sdk(client).chat.completions.create(
                model="gpt-4o-mini", messages=SHORT, extra_headers={"X-Conversation-Id": f"c{n}"}
            )
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) <= 6, [r.getMessage() for r in warnings]


def test_a_paused_redis_fails_the_next_calls_at_once_then_is_used_again(
    tmp_path: Path, simulator_url: str
) -> None:
    """Redis stopped (SIGSTOP): a call waits `socket_timeout_s` once; the store calls
    after it fail at once for a second instead of each waiting it out, so the next turn
    (fail_open) is answered without waiting on the store. Resumed, the store is used
    again: the turn after is saved and every call is booked."""
    data = tmp_path / "redis-data"
    data.mkdir()
    proc, url = start_redis(data, free_port())
    timeout_s = 2.0
    try:
        with in_process(
            tmp_path, simulator_url, url, redis={"socket_timeout_s": timeout_s}
        ) as client:

            def turn(n: int) -> float:
                started = time.monotonic()
                reply = sdk(client).chat.completions.create(
                    model="gpt-4o-mini",
                    messages=SHORT,
                    extra_headers={"X-Conversation-Id": f"p{n}"},
                )
                assert reply.choices[0].message.content
                return time.monotonic() - started

            turn(0)
            proc.send_signal(signal.SIGSTOP)
            try:
                turn(1)  # the store is found down (one wait of the timeout)
                during = turn(2)
            finally:
                proc.send_signal(signal.SIGCONT)
            # Its store calls (conversation, facts, save: each a whole timeout before)
            # failed at once.
            assert during < timeout_s / 2, during
            time.sleep(1.2)  # past the second in which calls fail at once
            turn(3)
            saved = client.get(
                "/v1/conversations/p3", headers={"Authorization": f"Bearer {TENANT_KEYS['acme']}"}
            )
            assert saved.status_code == 200 and saved.json()["turns"] == 1, saved.text
            wait_for_ledger(client, 4)
    finally:
        stop(proc)


# Item: Redis pool exhaustion taken for an outage.


def test_more_concurrent_calls_than_redis_connections_all_reserve_and_book(
    tmp_path: Path, simulator_url: str, redis_url: str
) -> None:
    """200 concurrent calls against a pool of 8 connections with `fail_closed` and a
    spend ceiling: a busy pool is load, not an outage, so none gets 503 and every call
    is reserved and booked."""
    gw = start_gateway(
        tmp_path,
        simulator_url,
        redis_url,
        store_failure="fail_closed",
        redis={"max_connections": 8},
    )
    try:
        (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(CEILING))
        gw.restart()
        statuses = asyncio.run(_concurrent_calls(gw.v1, TENANT_KEYS["acme"], 200))
        assert statuses == {200: 200}
        records = gw.admin("/admin/ledger").json()["records"]
        assert len(records) == 200
        rows = gw.admin("/admin/budgets", tenant="acme").json()["budgets"]
        budget = next(b for b in rows if b["ceiling_usd"] is not None)
        booked = sum(float(r["cost_usd"]) for r in records)
        assert float(budget["spent_usd"]) == pytest.approx(booked)
        assert float(budget["reserved_usd"]) == 0  # every reservation settled
    finally:
        gw.stop()


async def _concurrent_calls(base: str, key: str, count: int) -> dict[int, int]:
    limits = httpx.Limits(max_connections=count)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(limits=limits, timeout=60, headers=headers) as client:
        responses = await asyncio.gather(
            *(
                client.post(
                    f"{base}/chat/completions",
                    json={"model": "gpt-4o-mini", "messages": SHORT},
                    headers={"X-Conversation-Id": f"pool-{n}"},
                )
                for n in range(count)
            )
        )
    counts: dict[int, int] = {}
    for response in responses:
        counts[response.status_code] = counts.get(response.status_code, 0) + 1
    return counts
