"""Fuzzing every surface of a running gateway (chat bodies, the app's headers, /v1 paths,
conversation and facts APIs, admin API) on both stores: never a 5xx, every 4xx in
OpenAI's error shape, and every answered chat call booked exactly once.

`FUZZ_EXAMPLES` sets the number of requests (bounded in CI; `bench/fuzz_long.py` runs
longer)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings

from tests.fuzz_requests import Call, calls, check, send
from tests.servers import TENANT_KEYS, GatewayProc, start_gateway

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
CHAT_ROUTES = ("chat", "handoff")


def _good_chat(stream: bool) -> Call:
    body = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "where is my order ORD-48213?"}],
        "stream": stream,
    }
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-conversation-id": "fuzz-ok"}
    return Call("chat", "POST", "/v1/chat/completions", headers, orjson.dumps(body))


# Drawn traffic is mostly refused (bad keys, bad bodies), and in an unlucky run none of
# its chat calls is answered; these two always are, so the booking check below always
# has calls to count.
GOOD_CHATS = (_good_chat(stream=False), _good_chat(stream=True))


@pytest.fixture
def fuzz_gateway(tmp_path: Path, simulator_url: str, store_url: str) -> Iterator[GatewayProc]:
    gw = start_gateway(tmp_path, simulator_url, store_url)
    yield gw
    gw.stop()


def chat_rows(gw: GatewayProc, periods: set[str]) -> int:
    rows = 0
    for period in periods:
        found = gw.admin("/admin/ledger", period=period, limit=100_000)
        assert found.status_code == 200, found.text
        rows += sum(r["route"] in CHAT_ROUTES for r in found.json()["records"])
    return rows


def test_fuzzed_traffic_never_fails_the_gateway(fuzz_gateway: GatewayProc) -> None:
    answered_chats = 0
    periods = {time.strftime("%Y-%m", time.gmtime())}

    with httpx.Client(base_url=fuzz_gateway.url, timeout=60) as client:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=False,
            suppress_health_check=list(HealthCheck),
        )
        @given(calls)
        @example(GOOD_CHATS[0])
        @example(GOOD_CHATS[1])
        def one(call: Call) -> None:
            nonlocal answered_chats
            response = send(client, call)
            check(call, response)
            if call.kind == "chat" and response.is_success:
                answered_chats += 1

        one()
        assert client.get("/healthz").status_code == 200
    periods.add(time.strftime("%Y-%m", time.gmtime()))
    # Bookings are group-committed: give the writer a moment to flush its last batch.
    deadline = time.monotonic() + 10
    while chat_rows(fuzz_gateway, periods) < answered_chats and time.monotonic() < deadline:
        time.sleep(0.1)
    assert answered_chats >= 2
    assert chat_rows(fuzz_gateway, periods) == answered_chats
    assert "Traceback" not in fuzz_gateway.stderr()
