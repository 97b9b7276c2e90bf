"""Readiness (/healthz, /readyz) and liveness (/livez), through the in-process app."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest
import redis

from gateway.ledger.usage import TokenUsage
from gateway.ops import admin
from gateway.store.records import UsageRecord
from tests.inprocess import InProcessGateway, running, start_inprocess
from tests.servers import free_port, start_redis, stop


def _until(check: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


@pytest.mark.parametrize("mode", ["fail_open", "fail_closed"])
def test_an_unreachable_store_fails_readiness_not_liveness(tmp_path: Path, mode: str) -> None:
    for gw in running(tmp_path, "redis://127.0.0.1:1/0", store_failure=mode):
        for route in ("/healthz", "/readyz"):
            answer = gw.http.get(f"{gw.url}{route}")
            assert answer.status_code == 503, answer.text
            body = answer.json()
            assert body["status"] == "unavailable" and body["store"] == "unreachable"
            assert body["reason"].startswith("store unreachable")
        live = gw.http.get(f"{gw.url}/livez")
        assert live.status_code == 200 and live.json() == {"status": "ok"}


def test_a_healthy_gateway_is_ready(tmp_path: Path) -> None:
    for gw in running(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}"):
        for route in ("/healthz", "/readyz", "/livez"):
            answer = gw.http.get(f"{gw.url}{route}")
            assert answer.status_code == 200 and answer.json()["status"] == "ok"
            assert "reason" not in answer.json()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[str]:
    """A redis-server of this test alone: pausing its writes stalls no other test."""
    data = tmp_path / "redis-data"
    data.mkdir()
    proc, url = start_redis(data, free_port())
    yield url
    stop(proc)


def _spill_one_booking(root: Path) -> None:
    """A booking a previous run could not write: the next start queues it."""
    record = UsageRecord(
        "spilled-1", time.time(), "acme", "pro", "gpt-4o-mini", TokenUsage(10, 0, 0, 5), 100
    )
    (root / "gateway-pending-bookings.jsonl").write_bytes(orjson.dumps(record.to_json()) + b"\n")


def test_bookings_that_do_not_drain_while_the_store_answers_fail_readiness(
    tmp_path: Path, own_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis answers pings but holds every write (CLIENT PAUSE WRITE): the booking
    writer cannot drain, and readiness says so until the writes go through."""
    monkeypatch.setattr(admin, "BOOKINGS_STALLED_S", 0.3)
    _spill_one_booking(tmp_path)
    client = redis.Redis.from_url(own_redis)
    client.client_pause(2500, all=False)  # CLIENT PAUSE 2500 WRITE
    gw: InProcessGateway | None = None
    try:
        gw = start_inprocess(tmp_path, own_redis, redis={"socket_timeout_s": 0.5})
        http, url = gw.http, gw.url
        _until(lambda: http.get(f"{url}/readyz").status_code == 503)
        body = http.get(f"{url}/healthz").json()
        assert body["store"] == "ok" and body["pending_bookings"] == 1
        assert body["reason"].startswith("booking writer wedged")
        assert http.get(f"{url}/livez").status_code == 200
        _until(lambda: http.get(f"{url}/readyz").status_code == 200)  # the pause ends
        assert http.get(f"{url}/healthz").json()["pending_bookings"] == 0
    finally:
        client.client_unpause()
        client.close()
        if gw is not None:
            gw.stop()
