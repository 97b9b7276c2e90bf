"""Bodies that would hold the gateway rather than ask it anything: JSON of millions of
tiny arrays (parsed and walked with the event loop held), and bodies announced and never
finished (held in memory with no end). Each is refused with an OpenAI-style error."""

from __future__ import annotations

import gc
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import orjson
import pytest

from gateway import offload
from tests.hostile import NESTED_ROUTES, nested_arrays_body, short_messages_body
from tests.inprocess import InProcessGateway, running
from tests.servers import TENANT_KEYS, GatewayProc, start_gateway

# -- JSON of too many arrays and objects, refused before it is parsed ---------------------


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessGateway]:
    root = tmp_path_factory.mktemp("hostile-bodies")
    yield from running(root, f"sqlite:///{root / 'g.db'}")


def _post(gw: InProcessGateway, path: str, body: bytes) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {gw.keys['acme']}", "Content-Type": "application/json"}
    return gw.http.post(path, content=body, headers=headers)


@pytest.mark.parametrize("route", list(NESTED_ROUTES))
def test_a_body_of_millions_of_small_arrays_is_refused_before_it_is_parsed(
    gw: InProcessGateway, route: str
) -> None:
    body = nested_arrays_body(route, 450_000)  # the red team's 9.9 MB: 4.5 million arrays
    response = _post(gw, NESTED_ROUTES[route], body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "too_many_json_containers"
    assert error["type"] == "invalid_request_error"
    assert "200000" in error["message"]  # names the limit (limits.max_body_containers)


def test_a_history_of_150000_short_messages_stays_within_the_limit(
    gw: InProcessGateway,
) -> None:
    response = _post(gw, "/v1/chat/completions", short_messages_body(150_000))
    assert response.status_code == 200, response.text


def test_a_flat_array_of_millions_of_numbers_is_refused_before_it_is_parsed(
    gw: InProcessGateway,
) -> None:
    """4.9 million numbers in one array (4 arrays and objects in all) were parsed and
    walked with the event loop held (/livez waited 0.9 s): values are bounded too."""
    part = {"type": "text", "text": "hi", "x": [1] * 4_900_000}
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": [part]}]}
    response = _post(gw, "/v1/chat/completions", orjson.dumps(body))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "too_many_json_containers"


def test_a_json_export_pasted_into_a_message_is_not_counted_as_containers(
    gw: InProcessGateway,
) -> None:
    """A customer pasting a JSON export (here 210,000 brackets, all inside one string)
    was refused as too many arrays and objects: brackets inside strings were counted."""
    # ~113,000 tokens, within the model's window; over 400 KB, so the brackets are counted
    pasted = "my export was cut: " + "[" * 210_000 + " " * 250_000
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": pasted}]}
    raw = orjson.dumps(body)
    assert raw.count(b"[") + raw.count(b"{") > 200_000
    response = _post(gw, "/v1/chat/completions", raw)
    assert response.status_code == 200, response.text


def test_the_limit_is_the_configured_one_and_counts_arrays_and_objects(
    tmp_path: Path,
) -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}] * 300
    body = orjson.dumps({"model": "gpt-4o-mini", "messages": messages})
    held = body.count(b"[") + body.count(b"{")  # 902: no bracket sits in a string
    for most, status in ((held, 200), (held - 1, 400)):
        root = tmp_path / str(most)
        for gw in running(root, f"sqlite:///{root / 'g.db'}", limits={"max_body_containers": most}):
            assert _post(gw, "/v1/chat/completions", body).status_code == status


# -- bodies announced and never finished ----------------------------------------------------

MB = 1024 * 1024


def _gateway(root: Path, upstream: str, timeout_s: float) -> GatewayProc:
    limits = {"max_body_bytes": MB, "max_tenant_body_bytes": MB, "body_timeout_s": timeout_s}
    return start_gateway(root, upstream, f"sqlite:///{root / 'g.db'}", limits=limits)


@pytest.fixture
def quick_gw(tmp_path: Path, simulator_url: str) -> Iterator[GatewayProc]:
    proc = _gateway(tmp_path, simulator_url, 1)
    yield proc
    proc.stop()


@pytest.fixture
def patient_gw(tmp_path: Path, simulator_url: str) -> Iterator[GatewayProc]:
    proc = _gateway(tmp_path, simulator_url, 600)
    yield proc
    proc.stop()


def _unfinished(gw: GatewayProc, tenant: str, sent: int, declared: int = MB) -> socket.socket:
    """A chat request announcing `declared` bytes of body, of which `sent` are sent."""
    host, port = gw.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Bearer {TENANT_KEYS[tenant]}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {declared}\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"model": "gpt-4o-mini", "x": "' + b"a" * sent)
    return sock


def _answer(sock: socket.socket) -> bytes:
    """Everything the gateway sends until it closes the connection."""
    sock.settimeout(30)
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_a_body_not_finished_in_time_is_answered_408_and_the_connection_closed(
    quick_gw: GatewayProc,
) -> None:
    with _unfinished(quick_gw, "acme", 1000) as sock:
        answer = _answer(sock)  # returns only once the gateway closed the connection
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    error = orjson.loads(body)["error"]
    assert error["code"] == "request_timeout"
    assert error["type"] == "invalid_request_error"


def _small_chat(gw: GatewayProc, tenant: str) -> httpx.Response:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "a" * 300_000}]}
    headers = {"Authorization": f"Bearer {TENANT_KEYS[tenant]}"}
    return httpx.post(f"{gw.v1}/chat/completions", json=body, headers=headers, timeout=30)


def _until(gw: GatewayProc, tenant: str, wanted: int) -> httpx.Response:
    """The tenant's call, repeated until it answers `wanted` (the gateway reads another
    connection's body as it arrives: there is no moment to wait for), at most 50 times."""
    for _ in range(50):
        response = _small_chat(gw, tenant)
        if response.status_code == wanted:
            break
    return response


def test_a_tenants_unfinished_bodies_are_bounded_and_released(patient_gw: GatewayProc) -> None:
    with _unfinished(patient_gw, "acme", 900 * 1024) as held:
        refused = _until(patient_gw, "acme", 429)  # 900 KB held + 300 KB > 1 MB
        assert refused.status_code == 429
        error = refused.json()["error"]
        assert error["code"] == "too_many_body_bytes_in_flight"
        assert str(MB) in error["message"]
        assert _small_chat(patient_gw, "globex").status_code == 200  # another tenant's own
        held.close()  # the client gives up: its bytes are released
        assert _until(patient_gw, "acme", 200).status_code == 200


def test_parsing_in_several_threads_at_once_leaves_the_collector_on() -> None:
    """Bodies and stored documents are parsed with the cyclic collector paused, on the
    event loop and in worker threads at once: each thread toggling it could leave it
    off for the rest of the process's life (memory of cycles never freed)."""
    assert gc.isenabled()
    long = b"[" + b"0," * (offload.PAUSE_FROM_BYTES // 2) + b"0]"  # long enough to pause
    bodies = [b"[1]"] * 2000 + [long] * 200
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can
    try:
        for _ in range(20):
            threads = [
                threading.Thread(target=lambda: [offload.loads(b) for b in bodies])
                for _ in range(3)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert gc.isenabled()
    finally:
        sys.setswitchinterval(interval)
        gc.enable()
