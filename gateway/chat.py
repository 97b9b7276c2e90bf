"""POST /v1/chat/completions: the request chain, top to bottom.

authenticate -> identify -> read body -> guard the store -> build the window
(classify, summarize before evict) -> forward -> relay (JSON or stream) -> account and
book -> persist the conversation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from time import perf_counter
from typing import Any

import httpx
import orjson
from starlette.requests import Request
from starlette.types import ASGIApp

from gateway.errors import GatewayError, InvalidRequest
from gateway.identity import Caller, authenticate, identify
from gateway.request_body import json_object, read_body
from gateway.responses import RawResponse
from gateway.runtime import Gateway
from gateway.streaming import StreamRelay, UsageTap
from gateway.upstream import response_headers
from gateway.windowing import Turn

ROUTE = "chat"


@dataclass(slots=True)
class ChatCall:
    body: dict[str, Any]
    model: str
    messages: list[Any]
    stream: bool
    client_wants_usage: bool

    @property
    def client_max_tokens(self) -> int | None:
        for key in ("max_completion_tokens", "max_tokens"):
            value = self.body.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        return None


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


def upstream_payload(call: ChatCall, turn: Turn) -> bytes:
    """The client's body with the budgeted window, the reply ceiling and, for a stream,
    a request for the usage chunk."""
    body = dict(call.body)
    body["messages"] = turn.window.messages
    ceiling_key = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    body[ceiling_key] = turn.window.report.max_tokens
    if call.stream and not call.client_wants_usage:
        options = body.get("stream_options")
        body["stream_options"] = {
            **(options if isinstance(options, dict) else {}),
            "include_usage": True,
        }
    return orjson.dumps(body)


def window_headers(turn: Turn) -> list[tuple[bytes, bytes]]:
    return [
        (b"x-gateway-conversation-id", turn.record.id.encode()),
        (b"x-gateway-class", (turn.record.conversation_class or "").encode()),
        (b"x-gateway-window-tokens", str(turn.window.report.history_tokens).encode()),
        (b"x-gateway-evicted-turns", str(turn.window.report.evicted_messages).encode()),
    ]


async def chat_completions(request: Request) -> ASGIApp:
    gw: Gateway = request.app.state.gateway
    started = perf_counter()
    caller = identify(request.headers, authenticate(request.headers, gw.settings.tenants_by_hash))
    raw = await read_body(request, gw.settings.config.limits.max_body_bytes)
    call = parse_chat(json_object(raw))
    await gw.guard_store()
    turn = await gw.windows.build(
        caller,
        call.model,
        call.messages,
        call.client_max_tokens,
        request.headers.get("x-operational-state"),
        time.time(),
    )
    input_estimate = gw.tokens.raw_message_tokens(call.model, turn.window.messages)
    try:
        response = await gw.upstream.send(
            "POST",
            gw.upstream.url(request.url.path, request.scope["query_string"]),
            gw.upstream.headers(request.headers.raw),
            upstream_payload(call, turn),
        )
    except GatewayError as exc:
        if exc.reached_upstream:  # it may have been processed (and billed): book an estimate
            await _settle(gw, caller, call, turn, call.model, None, input_estimate)
        raise
    before_upstream = perf_counter() - started
    is_sse = response.headers.get("content-type", "").startswith("text/event-stream")
    if call.stream and is_sse and response.is_success:
        return _stream(gw, caller, call, turn, response, input_estimate, before_upstream)
    return await _json(gw, caller, call, turn, response, input_estimate, before_upstream)


async def _settle(
    gw: Gateway,
    caller: Caller,
    call: ChatCall,
    turn: Turn,
    model: str,
    reported: Any,
    input_estimate: int,
    output_text: Any = None,
) -> None:
    # Token counts learn and estimate under the requested model; prices use the served one.
    usage = gw.accountant.usage(call.model, reported, input_estimate, output_text)
    cost = None
    if usage is not None:
        cost = (await gw.accountant.book(caller, model, usage, ROUTE)).cost_units
    await gw.windows.finish(turn, call.messages, cost, time.time())


async def _json(
    gw: Gateway,
    caller: Caller,
    call: ChatCall,
    turn: Turn,
    response: httpx.Response,
    input_estimate: int,
    before_upstream: float,
) -> RawResponse:
    try:
        body = await gw.upstream.read(response)
    except GatewayError:
        if response.is_success:
            await _settle(gw, caller, call, turn, call.model, None, input_estimate)
        raise
    after = perf_counter()
    if response.is_success:
        obj = _json_object(body)
        model = obj.get("model") if isinstance(obj.get("model"), str) else call.model
        await _settle(
            gw,
            caller,
            call,
            turn,
            model or call.model,
            obj.get("usage"),
            input_estimate,
            lambda: _reply_text(obj),
        )
    gw.metrics.overhead.labels(ROUTE, "false").observe(before_upstream + perf_counter() - after)
    headers = [*response_headers(response.headers), *window_headers(turn)]
    return RawResponse(response.status_code, headers, body)


def _json_object(body: bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    return obj if isinstance(obj, dict) else {}


def _reply_text(obj: dict[str, Any]) -> str:
    """The reply's text, to estimate output tokens when the upstream reported none."""
    parts = []
    for choice in obj.get("choices") or ():
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict):
            parts += [v for k in ("content", "refusal") if isinstance(v := message.get(k), str)]
            for call in message.get("tool_calls") or ():
                if isinstance(call, dict) and isinstance(call.get("function"), dict):
                    parts.append(str(call["function"].get("arguments", "")))
    return "".join(parts)


def _stream(
    gw: Gateway,
    caller: Caller,
    call: ChatCall,
    turn: Turn,
    response: httpx.Response,
    input_estimate: int,
    before_upstream: float,
) -> StreamRelay:
    gw.metrics.overhead.labels(ROUTE, "true").observe(before_upstream)

    async def on_done(tap: UsageTap) -> None:
        await _settle(
            gw,
            caller,
            call,
            turn,
            tap.model or call.model,
            tap.usage,
            input_estimate,
            tap.streamed_text,
        )

    return StreamRelay(
        response.status_code,
        [*response_headers(response.headers), *window_headers(turn)],
        gw.upstream.iter_bytes(response),
        response.aclose,
        UsageTap(
            hide_usage=not call.client_wants_usage,
            hold_on_finish=call.body.get("n") in (None, 1),
        ),
        on_done,
    )
