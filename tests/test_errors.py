"""Bad input and failing neighbours: a clear OpenAI-style error, nothing booked twice."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest

from tests.servers import (
    GatewayProc,
    free_port,
    start_gateway,
    start_redis,
    stop,
    write_config,
)

SHORT = [{"role": "user", "content": "hi"}]


def _error(response: httpx.Response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert set(body) >= {"message", "type", "code"} and body["message"]
    assert "Traceback" not in response.text
    if code is not None:
        assert body["code"] == code
    return body


def _post(
    gw: GatewayProc, content: bytes | str, key: str | None = "acme", **headers: str
) -> httpx.Response:
    if key:
        headers["Authorization"] = f"Bearer {gw.keys[key]}"
    return httpx.post(f"{gw.v1}/chat/completions", content=content, headers=headers)


def _booked(gw: GatewayProc) -> int:
    return len(gw.admin("/admin/ledger").json()["records"])


def test_keys(sqlite_gateway: GatewayProc) -> None:
    gw = sqlite_gateway
    _error(_post(gw, b"{}", key=None), 401, "invalid_api_key")
    _error(_post(gw, b"{}", key=None, Authorization="Bearer nope"), 401, "invalid_api_key")
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=gw.v1, api_key="wrong", max_retries=0).models.list()
    _error(httpx.get(f"{gw.url}/admin/spend"), 401, "invalid_api_key")
    _error(httpx.get(f"{gw.url}/admin/spend", headers={"Authorization": "Bearer acme"}), 401)
    _error(httpx.get(f"{gw.v1}/models"), 401, "invalid_api_key")
    assert _booked(gw) == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"not json", None),
        (b"[1, 2]", None),
        (b'{"model": "gpt-4o-mini"}', "messages"),
        (b'{"model": "gpt-4o-mini", "messages": "hello"}', "messages"),
        (b'{"messages": []}', "model"),
    ],
)
def test_malformed_bodies_name_the_field(
    sqlite_gateway: GatewayProc, body: bytes, field: str | None
) -> None:
    err = _error(_post(sqlite_gateway, body), 400)
    if field:
        assert err["param"] == field and f"'{field}'" in err["message"]
    else:
        assert "JSON" in err["message"]
    assert _booked(sqlite_gateway) == 0


def test_body_over_the_limit(tmp_path: Path, simulator_url: str) -> None:
    gw = start_gateway(
        tmp_path, simulator_url, f"sqlite:///{tmp_path}/g.db", limits={"max_body_bytes": 2000}
    )
    try:
        big = (
            '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "'
            + "x" * 5000
            + '"}]}'
        )
        _error(_post(gw, big), 413, "request_too_large")
        with pytest.raises(openai.APIStatusError) as info:
            openai.OpenAI(
                base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0
            ).chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "y" * 5000}]
            )
        assert info.value.status_code == 413
        assert _booked(gw) == 0
    finally:
        gw.stop()


def test_unknown_route_and_method(sqlite_gateway: GatewayProc) -> None:
    _error(httpx.get(f"{sqlite_gateway.url}/nowhere"), 404, "not_found")
    _error(httpx.delete(f"{sqlite_gateway.url}/healthz"), 405)
    auth = {"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"}
    # Provider-side state would be shared by every tenant: not proxied.
    for path in ("/chat/completions", "/files", "/batches", "/responses/resp_1"):
        _error(httpx.get(f"{sqlite_gateway.v1}{path}", headers=auth), 404, "route_not_proxied")
    port = int(sqlite_gateway.url.rsplit(":", 1)[1])
    for path in ("/v1/../v1/files", "/v1/%2e%2e/admin/spend", "/v1/models/..%2fx"):
        # A raw request: HTTP clients normalize dot segments before sending.
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {auth['Authorization']}"
                "\r\nConnection: close\r\n\r\n".encode()
            )
            answer = b"".join(iter(lambda: sock.recv(65536), b""))
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
        assert b'"invalid_path"' in answer


def test_upstream_errors_are_relayed_and_not_booked(
    sqlite_gateway: GatewayProc, simulator_url: str
) -> None:
    c = openai.OpenAI(
        base_url=sqlite_gateway.v1, api_key=sqlite_gateway.keys["acme"], max_retries=0
    )
    with pytest.raises(openai.RateLimitError) as info:
        c.chat.completions.create(
            model="gpt-4o-mini", messages=SHORT, extra_headers={"x-simulator-status": "429"}
        )
    assert info.value.message.endswith("simulated upstream error 429")
    with pytest.raises(openai.InternalServerError) as info5:
        c.chat.completions.create(
            model="gpt-4o-mini",
            messages=SHORT,
            stream=True,
            extra_headers={"x-simulator-status": "503"},
        )
    assert info5.value.status_code == 503
    direct = httpx.post(
        f"{simulator_url}/chat/completions",
        json={"model": "m", "messages": SHORT},
        headers={"x-simulator-status": "400"},
    )
    through = _post(
        sqlite_gateway,
        b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}',
        **{"x-simulator-status": "400"},
    )
    assert (through.status_code, through.content) == (direct.status_code, direct.content)
    assert _booked(sqlite_gateway) == 0


def test_upstream_unreachable_and_timing_out(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    gw = start_gateway(tmp_path, dead, f"sqlite:///{tmp_path}/g.db")
    try:
        err = _error(
            _post(gw, b'{"model": "gpt-4o-mini", "messages": []}'), 502, "upstream_unreachable"
        )
        assert dead.removesuffix("/v1") in err["message"]  # the host, never the path
        with pytest.raises(openai.InternalServerError):
            openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0).models.list()
    finally:
        gw.stop()


def test_upstream_timeout(tmp_path: Path, simulator_url: str) -> None:
    gw = start_gateway(
        tmp_path, simulator_url, f"sqlite:///{tmp_path}/g.db", upstream={"timeout_s": 0.3}
    )
    try:
        err = _error(
            _post(
                gw, b'{"model": "gpt-4o-mini", "messages": []}', **{"x-simulator-delay-ms": "1500"}
            ),
            504,
            "upstream_timeout",
        )
        assert simulator_url.removesuffix("/v1") in err["message"]
        # The request was sent: the upstream may have done (and billed) the work.
        (record,) = gw.admin("/admin/ledger").json()["records"]
        assert record["estimated"] and record["fresh_input_tokens"] > 0
    finally:
        gw.stop()


def _wait(predicate, timeout: float = 15) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.1)


def test_store_down_fail_open_keeps_bookings_until_it_is_back(
    tmp_path: Path, simulator_url: str
) -> None:
    port = free_port()
    gw = start_gateway(tmp_path, simulator_url, f"redis://127.0.0.1:{port}/0")
    redis_proc = None
    try:
        c = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0)
        for _ in range(3):
            c.chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        _error(gw.admin("/admin/spend"), 503, "store_unavailable")
        health = httpx.get(f"{gw.url}/healthz").json()
        assert health["store"] == "unreachable" and health["pending_bookings"] == 3
        redis_proc, _ = start_redis(tmp_path, port=port)
        _wait(lambda: httpx.get(f"{gw.url}/healthz").json()["pending_bookings"] == 0)
        (row,) = [r for r in gw.admin("/admin/spend").json()["tenants"] if r["tenant"] == "acme"]
        assert row["requests"] == 3
    finally:
        gw.stop()
        if redis_proc:
            stop(redis_proc)


def test_store_down_fail_closed_refuses(tmp_path: Path, simulator_url: str, upstream_log) -> None:  # type: ignore[no-untyped-def]
    gw = start_gateway(
        tmp_path, simulator_url, f"redis://127.0.0.1:{free_port()}/0", store_failure="fail_closed"
    )
    try:
        with pytest.raises(openai.InternalServerError) as info:
            openai.OpenAI(
                base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0
            ).chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        assert info.value.status_code == 503
        assert upstream_log.since() == []  # refused before anything reached the upstream
        assert httpx.get(f"{gw.url}/healthz").status_code == 503
    finally:
        gw.stop()


def test_invalid_config_is_refused_naming_file_and_key(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, "http://127.0.0.1:1/v1", "sqlite:///x.db", store_failure="maybe", colour="blue"
    )
    (tmp_path / "policies" / "tenants.yaml").write_text(
        "tenants:\n  a: {plan: p, key_sha256: nothex}\n"
    )
    for command in ("check-config", "serve"):
        run = subprocess.run(  # noqa: PLW1510 - the exit code is asserted
            [sys.executable, "-m", "gateway", command, "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 1
        assert f"{config}: colour: unknown key" in run.stderr
        assert f"{config}: store_failure:" in run.stderr
        assert "tenants.yaml: tenants.a.key_sha256: " in run.stderr
        assert "Traceback" not in run.stderr
