"""Every other /v1/* route: forwarded untouched, still authenticated, booked where the
upstream reports usage (embeddings, completions, responses, ...)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.types import ASGIApp

from gateway.identity import Caller, authenticate, identify
from gateway.request_body import read_body
from gateway.responses import RawResponse
from gateway.runtime import Gateway
from gateway.streaming import StreamRelay, UsageTap
from gateway.upstream import response_headers


def _route(path: str) -> str:
    return path.removeprefix("/v1/").split("/", 1)[0][:40] or "v1"


def _usage_of(obj: Any) -> tuple[Any, str | None]:
    if not isinstance(obj, dict):
        return None, None
    usage = obj.get("usage")
    if usage is None and isinstance(obj.get("response"), dict):  # Responses API events
        obj = obj["response"]
        usage = obj.get("usage")
    model = obj.get("model")
    return usage, model if isinstance(model, str) else None


async def _book(gw: Gateway, caller: Caller, route: str, reported: Any, model: str | None) -> None:
    usage = gw.accountant.usage(model or "unknown", reported, None)
    if usage is not None:
        await gw.accountant.book(caller, model or "unknown", usage, route)


async def passthrough(request: Request) -> ASGIApp:
    gw: Gateway = request.app.state.gateway
    caller = identify(request.headers, authenticate(request.headers, gw.settings.tenants_by_hash))
    body = await read_body(request, gw.settings.config.limits.max_body_bytes)
    await gw.guard_store()
    route = _route(request.url.path)
    requested_model = _requested_model(body)
    response = await gw.upstream.send(
        request.method,
        gw.upstream.url(request.url.path, request.scope["query_string"]),
        gw.upstream.headers(request.headers.raw),
        body,
    )
    if response.headers.get("content-type", "").startswith("text/event-stream"):

        async def on_done(tap: UsageTap) -> None:
            await _book(gw, caller, route, tap.usage, tap.model or requested_model)

        return StreamRelay(
            response.status_code,
            response_headers(response.headers),
            gw.upstream.iter_bytes(response),
            response.aclose,
            UsageTap(hide_usage=False),
            on_done,
        )
    content = await gw.upstream.read(response)
    if response.is_success and b'"usage"' in content:
        try:
            reported, model = _usage_of(orjson.loads(content))
        except orjson.JSONDecodeError:
            reported, model = None, None
        await _book(gw, caller, route, reported, model or requested_model)
    return RawResponse(response.status_code, response_headers(response.headers), content)


def _requested_model(body: bytes) -> str | None:
    if not body or b'"model"' not in body:
        return None
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    model = obj.get("model") if isinstance(obj, dict) else None
    return model if isinstance(model, str) else None
