"""Bad input and failing neighbours: a clear OpenAI-style error, nothing booked twice.
The gateway runs in this process (tests/inprocess.py) except where the socket is the point."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.ops.cli import cli_logic
from tests.inprocess import InProcessGateway, SimulatorLog, start_inprocess
from tests.servers import GatewayProc, free_port, start_redis, stop, write_config

SHORT: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]

ONE_MESSAGE = b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'


def _error(response: httpx2.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()["error"]
    assert set(body) >= {"message", "type", "code"} and body["message"]
    assert "Traceback" not in response.text
    if code is not None:
        assert body["code"] == code
    return body


def _post(
    gw: InProcessGateway, content: bytes | str, key: str | None = "acme", **headers: str
) -> httpx2.Response:
    if key:
        headers["Authorization"] = f"Bearer {gw.keys[key]}"
    return gw.http.post(f"{gw.v1}/chat/completions", content=content, headers=headers)


def _booked(gw: InProcessGateway) -> int:
    return len(gw.admin("/admin/ledger").json()["records"])


def test_keys(sqlite_app_gateway: InProcessGateway) -> None:
    gw = sqlite_app_gateway
    _error(_post(gw, b"{}", key=None), 401, "invalid_api_key")
    _error(_post(gw, b"{}", key=None, Authorization="Bearer nope"), 401, "invalid_api_key")
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(
            base_url=gw.v1, api_key="wrong", max_retries=0, http_client=gw.http
        ).models.list()
    _error(gw.http.get(f"{gw.url}/admin/spend"), 401, "invalid_api_key")
    _error(gw.http.get(f"{gw.url}/admin/spend", headers={"Authorization": "Bearer acme"}), 401)
    _error(gw.http.get(f"{gw.v1}/models"), 401, "invalid_api_key")
    assert _booked(gw) == 0


def test_an_unknown_report_format_is_refused_not_answered_in_json(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    gw = sqlite_app_gateway
    body = _error(gw.admin("/admin/spend", format="xml"), 400, "invalid_request")
    assert body["param"] == "format"
    assert gw.admin("/admin/spend", format="csv").headers["content-type"].startswith("text/csv")
    assert "tenants" in gw.admin("/admin/spend", format="json").json()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"not json", None),
        (b"[1, 2]", None),
        (b'{"model": "gpt-4o-mini"}', "messages"),
        (b'{"model": "gpt-4o-mini", "messages": "hello"}', "messages"),
        (b'{"messages": []}', "model"),
        (b'{"model": "gpt-4o-mini", "messages": []}', "messages"),
        (b'{"model": "gpt-4o-mini", "messages": [null]}', "messages[0]"),
        (b'{"model": "m", "messages": [{"role": "user", "content": "a"}, 5]}', "messages[1]"),
        (b'{"model": "gpt-4o-mini", "messages": [{"content": "no role"}]}', "messages[0]"),
        (b'{"model": "gpt-4o-mini", "messages": [{"role": 7, "content": "a"}]}', "messages[0]"),
    ],
)
def test_malformed_bodies_name_the_field(
    sqlite_app_gateway: InProcessGateway, body: bytes, field: str | None
) -> None:
    err = _error(_post(sqlite_app_gateway, body), 400)
    if field:
        assert err["param"] == field and f"'{field}'" in err["message"]
    else:
        assert "JSON" in err["message"]
    assert _booked(sqlite_app_gateway) == 0


def test_body_over_the_limit(tmp_path: Path) -> None:
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path}/g.db", limits={"max_body_bytes": 2000})
    try:
        big = (
            '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "'
            + "x" * 5000
            + '"}]}'
        )
        _error(_post(gw, big), 413, "request_too_large")
        with pytest.raises(openai.APIStatusError) as info:
            gw.openai().chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "y" * 5000}]
            )
        assert info.value.status_code == 413
        assert _booked(gw) == 0
    finally:
        gw.stop()


def test_unknown_route_and_method(sqlite_app_gateway: InProcessGateway) -> None:
    gw = sqlite_app_gateway
    _error(gw.http.get(f"{gw.url}/nowhere"), 404, "not_found")
    _error(gw.http.delete(f"{gw.url}/healthz"), 405)
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    # Provider-side state would be shared by every tenant: not proxied.
    for path in ("/chat/completions", "/files", "/batches", "/responses/resp_1"):
        _error(gw.http.get(f"{gw.v1}{path}", headers=auth), 404, "route_not_proxied")


@pytest.mark.parametrize(
    ("route", "body", "param"),
    [
        ("responses", {"input": "and now?", "previous_response_id": "resp_other"}, None),
        ("responses", {"input": "and now?", "conversation": "conv_other"}, None),
        ("responses", {"input": "hi", "prompt": {"id": "pmpt_other"}}, "prompt"),
        (
            "responses",
            {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]},
            "input[0].content[0].file_id",
        ),
        ("responses", {"input": [{"type": "item_reference", "id": "msg_other"}]}, "input[0]"),
        ("responses", {"input": [{"id": "msg_other"}]}, "input[0]"),  # `type` left out
        (
            "responses",
            {
                "input": [
                    {
                        "type": "function_call_output",
                        "call_id": "c",
                        "output": [{"type": "input_file", "file_id": "f"}],
                    }
                ]
            },
            "input[0].output[0].file_id",
        ),
        (
            "responses",
            {
                "input": "hi",
                "tools": [
                    {"type": "code_interpreter", "container": {"type": "auto", "file_ids": ["f"]}}
                ],
            },
            "tools[0].container.file_ids",
        ),
        (
            "responses",
            {
                "input": "hi",
                "tools": [{"type": "image_generation", "input_image_mask": {"file_id": "f"}}],
            },
            "tools[0].input_image_mask.file_id",
        ),
        ("responses", {"input": "hi", "tools": [{"type": "file_search"}]}, "tools[0]"),
        (
            "responses",
            {"input": "hi", "tools": [{"type": "code_interpreter", "container": "cntr_other"}]},
            "tools[0].container",
        ),
        (
            "chat/completions",
            {
                "messages": [
                    {"role": "user", "content": [{"type": "file", "file": {"file_id": "f"}}]}
                ]
            },
            "messages[0].content[0].file.file_id",
        ),
    ],
)
def test_a_reference_to_an_object_stored_with_the_provider_is_refused(
    sqlite_app_gateway: InProcessGateway, route: str, body: dict[str, Any], param: str | None
) -> None:
    """Every tenant shares the provider key: a stored response, conversation, prompt,
    file, item, vector store or container named by id may be another tenant's. Refused
    before anything is forwarded or booked, naming the field."""
    gw = sqlite_app_gateway
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    response = gw.http.post(f"{gw.v1}/{route}", json={"model": "gpt-4o-mini", **body}, headers=auth)
    error = _error(response, 400, "provider_state_not_proxied")
    assert error["param"] == (param or next(k for k in body if k != "input"))
    assert _booked(gw) == 0


def test_the_sdk_sees_a_stored_response_refused(sqlite_app_gateway: InProcessGateway) -> None:
    client = sqlite_app_gateway.openai()
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(model="gpt-4o-mini", input="hi", previous_response_id="resp_x")
    assert info.value.code == "provider_state_not_proxied"
    assert "previous_response_id" in info.value.message
    client.responses.create(model="gpt-4o-mini", input="hi")  # the stateless call passes
    assert _booked(sqlite_app_gateway) == 1


def test_dot_segments_on_the_wire_are_refused(sqlite_gateway: GatewayProc) -> None:
    auth = {"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"}
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


def test_upstream_errors_are_relayed_and_not_booked(sqlite_app_gateway: InProcessGateway) -> None:
    c = sqlite_app_gateway.openai()
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
        f"{sqlite_app_gateway.upstream_url}/chat/completions",
        json={"model": "m", "messages": SHORT},
        headers={"x-simulator-status": "400"},
    )
    through = _post(
        sqlite_app_gateway,
        b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}',
        **{"x-simulator-status": "400"},
    )
    assert (through.status_code, through.content) == (direct.status_code, direct.content)
    assert _booked(sqlite_app_gateway) == 0


def test_upstream_unreachable_and_timing_out(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path}/g.db", upstream_url=dead)
    try:
        err = _error(_post(gw, ONE_MESSAGE), 502, "upstream_unreachable")
        assert dead.removesuffix("/v1") in err["message"]  # the host, never the path
        with pytest.raises(openai.InternalServerError):
            gw.openai().models.list()
    finally:
        gw.stop()


def test_upstream_timeout(tmp_path: Path) -> None:
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path}/g.db", upstream={"timeout_s": 0.3})
    try:
        err = _error(
            _post(gw, ONE_MESSAGE, **{"x-simulator-delay-ms": "1500"}),
            504,
            "upstream_timeout",
        )
        assert gw.upstream_url.removesuffix("/v1") in err["message"]
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


def test_store_down_fail_open_keeps_bookings_until_it_is_back(tmp_path: Path) -> None:
    port = free_port()
    gw = start_inprocess(tmp_path, f"redis://127.0.0.1:{port}/0")
    redis_proc = None
    try:
        c = gw.openai()
        for _ in range(3):
            c.chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        _error(gw.admin("/admin/spend"), 503, "store_unavailable")
        health = gw.http.get(f"{gw.url}/healthz").json()
        assert health["store"] == "unreachable" and health["pending_bookings"] == 3
        redis_proc, _ = start_redis(tmp_path, port=port)
        _wait(lambda: gw.http.get(f"{gw.url}/healthz").json()["pending_bookings"] == 0)
        (row,) = [r for r in gw.admin("/admin/spend").json()["tenants"] if r["tenant"] == "acme"]
        assert row["requests"] == 3
    finally:
        gw.stop()
        if redis_proc:
            stop(redis_proc)


def test_store_down_fail_closed_refuses(tmp_path: Path) -> None:
    gw = start_inprocess(
        tmp_path, f"redis://127.0.0.1:{free_port()}/0", store_failure="fail_closed"
    )
    upstream_log = SimulatorLog(gw)
    try:
        with pytest.raises(openai.InternalServerError) as info:
            gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        assert info.value.status_code == 503
        assert upstream_log.since() == []  # refused before anything reached the upstream
        assert gw.http.get(f"{gw.url}/healthz").status_code == 503
    finally:
        gw.stop()


def test_invalid_config_is_refused_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(
        tmp_path, "http://127.0.0.1:1/v1", "sqlite:///x.db", store_failure="maybe", colour="blue"
    )
    (tmp_path / "policies" / "tenants.yaml").write_text(
        "tenants:\n  a: {plan: p, key_sha256: nothex}\n"
    )
    for command in ("check-config", "serve"):
        # the command's logic in process: `main` only passes its return to sys.exit
        assert cli_logic([command, "--config", str(config)]) == 1
        stderr = capsys.readouterr().err
        assert f"{config}: colour: unknown key" in stderr
        assert f"{config}: store_failure:" in stderr
        assert "tenants.yaml: tenants.a.key_sha256: " in stderr
        assert "Traceback" not in stderr
