"""The request id and the access log, through the real app: the openai SDK against the
in-process gateway (caplog), and `gateway serve` as an operator runs it (its stderr)."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from gateway.proxy.request_log import RequestIdFilter
from tests.inprocess import InProcessGateway, SimulatorLog, running
from tests.servers import TENANT_KEYS, start_gateway

SECRET_PROMPT = "my passport number is X1234567, please remember it"
MESSAGES: Any = [{"role": "user", "content": SECRET_PROMPT}]


@pytest.fixture
def gw(tmp_path: Path) -> Iterator[InProcessGateway]:
    yield from running(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}")


@pytest.fixture
def access(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="gateway")
    caplog.handler.addFilter(RequestIdFilter())
    return caplog


def lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "gateway.access"]


def test_the_clients_request_id_is_returned_and_sent_upstream(gw: InProcessGateway) -> None:
    upstream = SimulatorLog(gw)
    reply = gw.openai().chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=MESSAGES, extra_headers={"x-request-id": "req-abc.123"}
    )
    assert reply.headers["x-request-id"] == "req-abc.123"
    (seen,) = upstream.since()
    assert seen["headers"]["x-request-id"] == "req-abc.123"


@pytest.mark.parametrize("sent", [None, "x" * 129, "has space", "caf\u00e9".encode()])
def test_a_missing_or_unfit_request_id_is_replaced(
    gw: InProcessGateway, sent: str | bytes | None
) -> None:
    headers = [(b"authorization", f"Bearer {gw.keys['acme']}".encode())]
    if sent is not None:
        headers.append((b"x-request-id", sent if isinstance(sent, bytes) else sent.encode()))
    answer = gw.http.get(f"{gw.v1}/models", headers=headers)
    assert answer.status_code == 200
    rid = answer.headers["x-request-id"]
    assert rid != sent and rid.isalnum() and len(rid) == 32
    assert len(answer.headers.get_list("x-request-id")) == 1


def test_errors_carry_the_request_id(gw: InProcessGateway) -> None:
    unauthenticated = gw.http.post(
        f"{gw.v1}/chat/completions", json={}, headers={"x-request-id": "r-401"}
    )
    assert unauthenticated.status_code == 401
    assert unauthenticated.headers["x-request-id"] == "r-401"
    with pytest.raises(openai.APIStatusError) as info:
        gw.openai().chat.completions.create(
            model="fail-model", messages=MESSAGES, extra_headers={"x-request-id": "r-500"}
        )
    assert info.value.response.headers["x-request-id"] == "r-500"
    missing = gw.http.get(f"{gw.url}/no/such/route")
    assert missing.status_code == 404 and missing.headers["x-request-id"]


def test_one_access_line_per_chat_call_with_its_figures(
    gw: InProcessGateway, access: pytest.LogCaptureFixture
) -> None:
    reply = gw.openai().chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=MESSAGES, extra_headers={"x-request-id": "chat-1"}
    )
    (line,) = [entry for entry in lines(access) if entry["request_id"] == "chat-1"]
    usage = reply.parse().usage
    assert usage is not None
    spent = gw.admin("/admin/spend").json()["tenants"]
    assert line["method"] == "POST" and line["route"] == "chat" and line["status"] == 200
    assert line["tenant"] == "acme" and line["key_id"] == "file:acme"
    assert line["model"] == "gpt-4o-mini" and line["served_model"] == "gpt-4o-mini"
    assert line["class"] == reply.headers["x-gateway-class"]
    assert line["window_tokens"] == int(reply.headers["x-gateway-window-tokens"])
    assert line["fresh_input_tokens"] + line["cached_input_tokens"] == usage.prompt_tokens
    assert line["output_tokens"] == usage.completion_tokens
    assert line["cost_usd"] == next(r["cost_usd"] for r in spent if r["tenant"] == "acme")
    assert line["latency_ms"] >= 0
    assert "escalation" not in line and "degraded_to" not in line
    assert "X1234567" not in access.text  # never the prompt


def test_a_streams_line_is_written_when_it_ends(
    gw: InProcessGateway, access: pytest.LogCaptureFixture
) -> None:
    stream = gw.openai().chat.completions.create(
        model="gpt-4o-mini",
        messages=MESSAGES,
        stream=True,
        stream_options={"include_usage": True},
        extra_headers={"x-request-id": "stream-1"},
    )
    output = [c.usage.completion_tokens for c in stream if c.usage is not None]
    (line,) = [entry for entry in lines(access) if entry["request_id"] == "stream-1"]
    assert line["status"] == 200 and line["output_tokens"] == output[0]
    assert "X1234567" not in access.text


def test_log_lines_a_request_causes_carry_its_id(
    gw: InProcessGateway, access: pytest.LogCaptureFixture
) -> None:
    """The upstream breaks off mid-stream: the warning it logs names the request."""
    with contextlib.suppress(openai.APIError):  # as the transport reports the cut
        stream = gw.openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=MESSAGES,
            stream=True,
            extra_headers={"x-request-id": "broken-1", "x-simulator-break-after": "2"},
        )
        for _ in stream:
            pass
    caused = [r for r in access.records if r.name != "gateway.access" and "broke" in r.message]
    assert caused and all(getattr(r, "request_id", None) == "broken-1" for r in caused)


def test_pass_through_calls_and_errors_get_a_line(
    gw: InProcessGateway, access: pytest.LogCaptureFixture
) -> None:
    gw.openai().embeddings.create(
        model="text-embedding-3-small", input="hello", extra_headers={"x-request-id": "emb-1"}
    )
    gw.http.get(f"{gw.v1}/models", headers={"x-request-id": "anon-1"})
    found = {entry["request_id"]: entry for entry in lines(access)}
    assert found["emb-1"]["route"] == "passthrough" and found["emb-1"]["tenant"] == "acme"
    assert found["emb-1"]["fresh_input_tokens"] > 0 and found["emb-1"]["output_tokens"] == 0
    assert found["anon-1"]["status"] == 401 and "tenant" not in found["anon-1"]


def test_listing_models_warns_of_nothing(
    gw: InProcessGateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="gateway")
    assert gw.openai().models.list().data
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_the_access_log_can_be_off(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gateway")
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    for gw in running(tmp_path, store, logging={"access_log": "off"}):
        reply = gw.openai().chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=MESSAGES
        )
        assert reply.headers["x-request-id"]
    assert lines(caplog) == []


def test_serve_says_where_it_listens_and_writes_plain_access_lines(tmp_path: Path) -> None:
    """With the built-in simulator too (its start-up used to silence uvicorn's line)."""
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    gw = start_gateway(tmp_path, "simulator", store, logging={"access_log": "plain"})
    try:
        auth = {"Authorization": f"Bearer {TENANT_KEYS['acme']}", "x-request-id": "plain-1"}
        body = {"model": "gpt-4o-mini", "messages": MESSAGES}
        assert httpx.post(f"{gw.v1}/chat/completions", json=body, headers=auth).is_success
    finally:
        gw.stop()
    log = gw.stderr()
    assert f"Uvicorn running on {gw.url}" in log
    (line,) = [row for row in log.splitlines() if "request_id=plain-1" in row]
    assert " access " in line and "tenant=acme" in line and "route=chat" in line
    assert "X1234567" not in log


def test_a_plain_access_line_cannot_be_forged_by_a_model_name(tmp_path: Path) -> None:
    """A model name is the client's: one holding a newline wrote a whole forged access
    line (tenant=admin) into the plain log. Values that are not one word are quoted."""
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    gw = start_gateway(tmp_path, "simulator", store, logging={"access_log": "plain"})
    forged = "gpt-4o-mini\n2026-12-06 17:00:00,000 access request_id=forged tenant=admin"
    try:
        auth = {"Authorization": f"Bearer {TENANT_KEYS['acme']}", "x-request-id": "plain-2"}
        body = {"model": forged, "messages": MESSAGES}
        httpx.post(f"{gw.v1}/chat/completions", json=body, headers=auth)
    finally:
        gw.stop()
    log = gw.stderr()
    (line,) = [row for row in log.splitlines() if "request_id=plain-2" in row]
    assert "tenant=acme" in line and "\\n2026-12-06" in line  # quoted, its newline escaped
    assert not [row for row in log.splitlines() if row.startswith("2026-12-06 17:00:00,000")]


def test_traces_have_a_span_per_step_of_the_chain(tmp_path: Path) -> None:
    """With the otel extra installed and traces on: the SDK's in-memory exporter (as the
    process's tracer provider, which the gateway uses) collects the request's spans."""
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    for gw in running(tmp_path, store, logging={"traces": True}):
        gw.openai().chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGES, extra_headers={"x-request-id": "traced-1"}
        )
    spans = [s for s in exporter.get_finished_spans() if s.context is not None]
    (root,) = [s for s in spans if s.name == "gateway.request" and s.attributes is not None
               and s.attributes.get("request_id") == "traced-1"]  # fmt: skip
    assert root.context is not None
    children = {
        s.name for s in spans if s.parent is not None and s.parent.span_id == root.context.span_id
    }
    assert {"window.build", "spend.guard", "upstream", "booking"} <= children
    assert root.attributes is not None and root.attributes["http.response.status_code"] == 200
