"""The other /v1/* routes: forwarded untouched, still authenticated, booked where the
upstream reports usage (embeddings, completions, responses, ...).

Only stateless routes pass. Every tenant shares the gateway's provider key, so a route
that reads provider-side state (files, batches, stored completions, assistants, a stored
response by id, fine-tuning jobs) would show one tenant another's data: those get 404.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

import anyio
import orjson
from starlette.requests import Request
from starlette.types import ASGIApp

from gateway.errors import InvalidRequest, NotFound
from gateway.guard import Reservation
from gateway.identity import Caller, authenticate, identify
from gateway.request_body import read_body
from gateway.responses import RawResponse
from gateway.runtime import Gateway
from gateway.streaming import StreamRelay, UsageTap
from gateway.upstream import response_headers

# (method, path under /v1) of the stateless routes; a trailing "/*" allows one more segment.
ALLOWED = frozenset(
    {
        ("GET", "/models"),
        ("GET", "/models/*"),
        ("POST", "/embeddings"),
        ("POST", "/completions"),
        ("POST", "/moderations"),
        ("POST", "/responses"),
        ("POST", "/audio/speech"),
        ("POST", "/audio/transcriptions"),
        ("POST", "/audio/translations"),
        ("POST", "/images/generations"),
        ("POST", "/images/edits"),
        ("POST", "/images/variations"),
    }
)
_SUSPECT = re.compile(r"(^|/)(\.|%2e){1,2}(/|$)|%2f|%5c|\\|//", re.IGNORECASE)


def check_route(method: str, raw_path: str) -> None:
    """Refuse paths that could climb out of /v1 and routes that expose shared state."""
    if _SUSPECT.search(raw_path):
        raise InvalidRequest("The request path is not a plain /v1 path.", code="invalid_path")
    tail = raw_path.removeprefix("/v1")
    parent = tail.rsplit("/", 1)[0] + "/*"
    if (method, tail) not in ALLOWED and (method, parent) not in ALLOWED:
        raise NotFound(
            f"{method} /v1{tail} is not proxied: the gateway forwards only stateless routes, "
            "because provider-side objects would be shared by every tenant.",
            code="route_not_proxied",
        )


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


async def _book(
    gw: Gateway, caller: Caller, route: str, reported: Any, model: str | None, spend: Reservation
) -> None:
    usage = gw.accountant.usage(model or "unknown", reported, None)
    if usage is None:
        await gw.guard.release(spend)
        return
    await gw.accountant.book(
        caller, model or "unknown", usage, route, budgets=spend.budgets, reservation=spend.id
    )


async def passthrough(request: Request) -> ASGIApp:
    gw: Gateway = request.app.state.gateway
    caller = identify(request.headers, authenticate(request.headers, gw.settings.tenants_by_hash))
    check_route(request.method, request.scope.get("raw_path", b"").decode("latin-1").split("?")[0])
    body = await read_body(request, gw.settings.config.limits.max_body_bytes)
    await gw.guard_store()
    route = _route(request.url.path)
    requested_model = _requested_model(body)
    # The cost is unknown before the answer: only refuse a tenant already at its ceiling
    # (a reservation of the smallest amount), and book against its budgets after.
    spend = await gw.guard.reserve(caller, requested_model or "unknown", 1, 0)
    try:
        response = await gw.upstream.send(
            request.method,
            gw.upstream.url(request.url.path, request.scope["query_string"]),
            gw.upstream.headers(request.headers.raw),
            body,
        )
    except BaseException:
        with anyio.CancelScope(shield=True):
            await gw.guard.release(spend)
        raise
    if response.headers.get("content-type", "").startswith("text/event-stream"):

        async def on_done(tap: UsageTap) -> None:
            await _book(gw, caller, route, tap.usage, tap.model or requested_model, spend)

        return StreamRelay(
            response.status_code,
            response_headers(response.headers),
            gw.upstream.iter_bytes(response),
            response.aclose,
            UsageTap(hide_usage=False),
            on_done,
        )
    try:
        content = await gw.upstream.read(response)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await gw.guard.release(spend)
        raise
    reported, model = None, None
    if response.is_success and b'"usage"' in content:
        with contextlib.suppress(orjson.JSONDecodeError):
            reported, model = _usage_of(orjson.loads(content))
    await _book(gw, caller, route, reported, model or requested_model, spend)
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
