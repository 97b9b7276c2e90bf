"""POST /v1/chat/completions: the request chain, top to bottom.

authenticate -> identify -> read body -> guard the store -> count input -> forward ->
relay (JSON or stream) -> account and book.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import Any

import httpx
import orjson
from starlette.requests import Request
from starlette.types import ASGIApp

from gateway.errors import InvalidRequest
from gateway.identity import Caller, authenticate, identify
from gateway.request_body import json_object, read_body
from gateway.responses import RawResponse
from gateway.runtime import Gateway
from gateway.streaming import StreamRelay, UsageTap
from gateway.upstream import response_headers

ROUTE = "chat"


@dataclass(slots=True)
class ChatCall:
    body: dict[str, Any]
    model: str
    messages: list[Any]
    stream: bool
    client_wants_usage: bool


def parse_chat(body: dict[str, Any]) -> ChatCall:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("'model' is required and must be a string.", param="model")
    messages = body.get("messages")
    if "messages" not in body:
        raise InvalidRequest("'messages' is required.", param="messages")
    if not isinstance(messages, list):
        raise InvalidRequest("'messages' must be a list of message objects.", param="messages")
    stream = body.get("stream") is True
    options = body.get("stream_options")
    wants_usage = isinstance(options, dict) and options.get("include_usage") is True
    return ChatCall(body, model, messages, stream, wants_usage)


def upstream_payload(call: ChatCall, raw: bytes) -> bytes:
    """The body to forward: the client's bytes, unless the gateway had to change it."""
    if not call.stream or call.client_wants_usage:
        return raw
    options = call.body.get("stream_options")
    call.body["stream_options"] = {
        **(options if isinstance(options, dict) else {}),
        "include_usage": True,
    }
    return orjson.dumps(call.body)


async def chat_completions(request: Request) -> ASGIApp:
    gw: Gateway = request.app.state.gateway
    started = perf_counter()
    caller = identify(request.headers, authenticate(request.headers, gw.settings.tenants_by_hash))
    raw = await read_body(request, gw.settings.config.limits.max_body_bytes)
    call = parse_chat(json_object(raw))
    await gw.guard_store()
    input_estimate = gw.tokens.raw_message_tokens(call.model, call.messages)
    response = await gw.upstream.send(
        "POST",
        gw.upstream.url(request.url.path, request.scope["query_string"]),
        gw.upstream.headers(request.headers.raw),
        upstream_payload(call, raw),
    )
    before_upstream = perf_counter() - started
    if call.stream and response.headers.get("content-type", "").startswith("text/event-stream"):
        return _stream(gw, caller, call, response, input_estimate, before_upstream)
    return await _json(gw, caller, call, response, input_estimate, before_upstream)


async def _json(
    gw: Gateway,
    caller: Caller,
    call: ChatCall,
    response: httpx.Response,
    input_estimate: int,
    before_upstream: float,
) -> RawResponse:
    body = await gw.upstream.read(response)
    after = perf_counter()
    if response.is_success:
        reported, model = _usage_and_model(body, call.model)
        usage = gw.accountant.usage(model, reported, input_estimate)
        if usage is not None:
            await gw.accountant.book(caller, model, usage, ROUTE)
    gw.metrics.overhead.labels(ROUTE, "false").observe(before_upstream + perf_counter() - after)
    return RawResponse(response.status_code, response_headers(response.headers), body)


def _usage_and_model(body: bytes, requested: str) -> tuple[Any, str]:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None, requested
    if not isinstance(obj, dict):
        return None, requested
    model = obj.get("model")
    return obj.get("usage"), model if isinstance(model, str) and model else requested


def _stream(
    gw: Gateway,
    caller: Caller,
    call: ChatCall,
    response: httpx.Response,
    input_estimate: int,
    before_upstream: float,
) -> StreamRelay:
    gw.metrics.overhead.labels(ROUTE, "true").observe(before_upstream)

    async def on_done(tap: UsageTap) -> None:
        model = tap.model or call.model
        usage = gw.accountant.usage(model, tap.usage, input_estimate, tap.streamed_text)
        if usage is not None:
            await gw.accountant.book(caller, model, usage, ROUTE)

    return StreamRelay(
        response.status_code,
        response_headers(response.headers),
        gw.upstream.iter_bytes(response),
        response.aclose,
        UsageTap(hide_usage=not call.client_wants_usage),
        on_done,
    )
