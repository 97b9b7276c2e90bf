"""Nothing that reached the upstream goes unbooked: killed gateways, vanished clients,
upstreams that break off mid-stream."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.ledger.inflight import InFlight, left_behind
from tests.conftest import UpstreamLog
from tests.servers import GatewayProc, start_gateway

SHORT: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Where is order ORD-1?"}]


def _ledger(gw: GatewayProc) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = gw.admin("/admin/ledger").json()["records"]
    return records


def _wait_for(gw: GatewayProc, count: int, timeout: float = 10) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        records = _ledger(gw)
        if len(records) >= count or time.monotonic() > deadline:
            return records
        time.sleep(0.05)


def test_sigkill_mid_traffic_loses_no_completed_call(tmp_path: Path, simulator_url: str) -> None:
    gw = start_gateway(tmp_path, simulator_url, f"sqlite:///{tmp_path / 'gateway.db'}")
    completed: list[str] = []
    stop = threading.Event()

    def traffic(worker: int) -> None:
        with openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0) as c:
            calls(c, worker)

    def calls(c: openai.OpenAI, worker: int) -> None:
        n = 0
        while not stop.is_set():
            conv = f"kill-{worker}-{n}"
            try:
                if n % 2:
                    # A stream is complete for the client once it has seen a finish_reason.
                    with c.chat.completions.create(
                        model="gpt-4o-mini",
                        messages=SHORT,
                        stream=True,
                        extra_headers={"X-Conversation-Id": conv},
                    ) as chunks:
                        finished = any(ch.finish_reason for chunk in chunks for ch in chunk.choices)
                    if not finished:
                        return
                else:
                    c.chat.completions.create(
                        model="gpt-4o-mini",
                        messages=SHORT,
                        extra_headers={"X-Conversation-Id": conv},
                    )
            except (openai.APIError, httpx.HTTPError):
                return
            completed.append(conv)
            n += 1

    threads = [threading.Thread(target=traffic, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30  # mid-traffic: once more than 20 calls completed
    while len(completed) <= 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    gw.stop(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(timeout=10)
    assert len(completed) > 20
    gw.start()  # same config, same SQLite file
    booked = {r["conversation"] for r in _ledger(gw) if r["conversation"]}
    gw.stop()
    assert set(completed) <= booked
    assert len(booked) - len(completed) <= 4  # at most the calls in flight at the kill


def test_client_gone_mid_stream_is_booked_and_upstream_closed(
    sqlite_gateway: GatewayProc, simulator_url: str, upstream_log: UpstreamLog
) -> None:
    stats = simulator_url.removesuffix("/v1") + "/sim/stats"
    aborted_before = httpx.get(stats).json()["streams_aborted"]
    body = {"model": "gpt-4o-mini", "messages": SHORT, "stream": True}
    headers = {
        "Authorization": f"Bearer {sqlite_gateway.keys['acme']}",
        "x-simulator-chunk-delay-ms": "100",
    }
    with httpx.stream(
        "POST", f"{sqlite_gateway.v1}/chat/completions", json=body, headers=headers
    ) as response:
        received = []
        for chunk in response.iter_raw():
            received.append(chunk)
            if len(received) == 3:
                break  # the client goes away mid-stream
    (record,) = _wait_for(sqlite_gateway, 1)
    assert record["estimated"] is True
    assert record["output_tokens"] > 0 and record["fresh_input_tokens"] > 0
    assert len(upstream_log.since()) == 1
    deadline = time.monotonic() + 5
    while httpx.get(stats).json()["streams_aborted"] == aborted_before:
        assert time.monotonic() < deadline, "the upstream stream was not closed"
        time.sleep(0.05)


def test_upstream_breaking_off_mid_stream_is_booked_as_estimate(
    sqlite_gateway: GatewayProc, upstream_log: UpstreamLog
) -> None:
    c = openai.OpenAI(
        base_url=sqlite_gateway.v1, api_key=sqlite_gateway.keys["acme"], max_retries=0
    )
    text: list[str] = []
    try:
        for chunk in c.chat.completions.create(
            model="gpt-4o-mini",
            messages=SHORT,
            stream=True,
            extra_headers={"x-simulator-break-after": "4"},
        ):
            text.extend(ch.delta.content or "" for ch in chunk.choices)
    except openai.APIError:
        pass  # the stream ends early; what matters is the booking
    (record,) = _wait_for(sqlite_gateway, 1)
    billed = upstream_log.since()[0]["usage"]
    assert record["estimated"] is True
    assert record["fresh_input_tokens"] == billed["prompt_tokens"]
    assert 0 < record["output_tokens"] < billed["completion_tokens"]


def test_missing_usage_is_estimated_and_flagged(
    sqlite_gateway: GatewayProc, upstream_log: UpstreamLog
) -> None:
    c = openai.OpenAI(
        base_url=sqlite_gateway.v1, api_key=sqlite_gateway.keys["acme"], max_retries=0
    )
    reply = c.chat.completions.create(
        model="gpt-4o-mini", messages=SHORT, extra_headers={"x-simulator-drop-usage": "1"}
    )
    assert reply.usage is None
    (record,) = _wait_for(sqlite_gateway, 1)
    billed = upstream_log.since()[0]["usage"]
    assert record["estimated"] is True
    assert record["fresh_input_tokens"] == billed["prompt_tokens"]
    spend = [
        r for r in sqlite_gateway.admin("/admin/spend").json()["tenants"] if r["tenant"] == "acme"
    ]
    assert spend[0]["estimated_requests"] == 1


def test_calls_in_flight_at_a_kill_are_booked_at_the_next_start(
    tmp_path: Path, simulator_url: str
) -> None:
    """A gateway killed outright (kill -9, the OOM killer) while calls were upstream:
    the provider billed them, nobody booked them (a red-team read lost 5 of 2,464 calls
    killing one of two workers). They are journaled in flight now, and the next start
    books each, estimated, at its input and its whole output ceiling; a call booked
    before the kill is not booked again."""
    gw = start_gateway(tmp_path, simulator_url, f"sqlite:///{tmp_path / 'gateway.db'}")
    stats = simulator_url.removesuffix("/v1") + "/sim/stats"
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0)
    client.chat.completions.create(
        model="gpt-4o-mini", messages=SHORT, extra_headers={"X-Conversation-Id": "done-1"}
    )
    received = httpx.get(stats).json()["delayed_received"]

    def slow(n: int) -> None:
        with contextlib.suppress(openai.APIError, httpx.HTTPError):  # died under it
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=SHORT,
                max_tokens=300,
                stream=n == 1,
                extra_headers={"X-Conversation-Id": f"flying-{n}", "x-simulator-delay-ms": "8000"},
            )

    threads = [threading.Thread(target=slow, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 20
    while httpx.get(stats).json()["delayed_received"] < received + 3:  # all three upstream
        assert time.monotonic() < deadline
        time.sleep(0.05)
    gw.stop(signal.SIGKILL)
    for t in threads:
        t.join(timeout=20)
    assert list(tmp_path.glob("gateway-inflight-*.jsonl"))  # left behind by the kill
    gw.start()  # same config, same SQLite file
    records = _wait_for(gw, 4)
    gw.stop()
    by_conversation = {r["conversation"]: r for r in records}
    assert len(records) == 4 and set(by_conversation) == {
        "done-1",
        *(f"flying-{n}" for n in range(3)),
    }
    assert by_conversation["done-1"]["estimated"] is False
    for n in range(3):
        record = by_conversation[f"flying-{n}"]
        assert record["estimated"] is True and record["output_tokens"] == 300
        assert record["fresh_input_tokens"] > 0 and float(record["cost_usd"]) > 0
    assert not list(tmp_path.glob("gateway-inflight-*"))  # taken, and a clean stop's gone


def test_a_journal_is_read_once_its_process_is_gone(tmp_path: Path) -> None:
    """What `left_behind` takes: the calls begun and never ended in journals no live
    process holds locked (a line a kill cut short skipped), each journal once; a live
    process's journal (this one's) is never taken, whatever its name says."""
    own = InFlight(tmp_path)
    first = own.begin({"tenant": "acme", "input": 10, "output": 20})
    assert left_behind(tmp_path) == ([], [])  # ours: locked while we live
    gone = tmp_path / "gateway-inflight-999999999-dead.jsonl"
    lines = [
        {"begun": "a", "tenant": "acme"},
        {"begun": "b", "tenant": "acme"},
        {"ended": "a"},
        {"begun": "c", "tenant": "acme"},
    ]
    gone.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines) + b'{"begun": "d", "ten')
    entries, journals = left_behind(tmp_path)
    assert sorted(e["begun"] for e in entries) == ["b", "c"] and len(journals) == 1
    assert left_behind(tmp_path) == ([], [])  # held by its taker meanwhile
    journals[0].keep()  # its calls could not be spilled: the next start takes it again
    entries, journals = left_behind(tmp_path)
    assert len(entries) == 2
    journals[0].remove()
    assert not gone.exists() and left_behind(tmp_path) == ([], [])
    own.end(first)
    own.close()
    assert not own.path.exists()  # a clean stop with nothing open leaves no journal


def test_a_journal_stays_as_small_as_the_calls_open_in_it(tmp_path: Path) -> None:
    """Cut back only when no call was open, a busy worker's journal grew without end
    (50,000 calls, five always open: 25 MB, a review); it is written again with the
    open calls past COMPACT_LINES lines, and a starter still finds each of them."""
    journal = InFlight(tmp_path)
    waiting = [journal.begin({"tenant": "acme", "input": 1, "output": 2}) for _ in range(5)]
    for _ in range(12_000):
        journal.end(journal.begin({"tenant": "acme", "input": 1, "output": 2}))
        waiting.append(journal.begin({"tenant": "acme", "input": 1, "output": 2}))
        journal.end(waiting.pop(0))
    size = journal.path.stat().st_size
    assert size < 10_000 * 200, size  # 24,000 calls and 48,000 lines written
    assert journal._fd is not None
    os.close(journal._fd)  # as if killed: the lock goes with the descriptor
    entries, taken = left_behind(tmp_path)
    assert sorted(e["begun"] for e in entries) == sorted(waiting)
    taken[0].remove()


def test_a_journal_the_disk_refuses_never_breaks_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewrite the disk refused (no file descriptor left, a full disk) raised out of
    the hold's end: its reservation never released, its renewer left running (a third
    review). The journal never raises now; the lines skipped while the disk refused
    are written whole at the next write it takes."""
    from gateway.ledger import inflight

    folder = tmp_path / "journals"
    folder.mkdir()
    journal = InFlight(folder)
    monkeypatch.setattr(inflight, "COMPACT_LINES", 3)
    monkeypatch.setattr(inflight, "RETRY_S", 0.0)
    first = journal.begin({"tenant": "acme", "input": 1, "output": 2})
    shutil.rmtree(folder)  # the next rewrite cannot make its file: refused
    calls = [journal.begin({"tenant": "acme", "input": 1, "output": 2}) for _ in range(4)]
    journal.end(first)  # no exception, however often the disk refuses
    journal.end(calls.pop(0))
    folder.mkdir()  # the disk takes writes again: the open calls, whole
    calls.append(journal.begin({"tenant": "acme", "input": 1, "output": 2}))
    assert journal._fd is not None
    os.close(journal._fd)  # as if killed
    entries, taken = left_behind(folder)
    assert sorted(e["begun"] for e in entries) == sorted(calls)
    taken[0].remove()
