"""The ASGI app factory: routes, the outermost error layer and the lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from time import perf_counter
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.config import SIMULATOR, Settings, load_settings
from gateway.errors import ConfigError, GatewayError, NotFound
from gateway.ops import admin, admin_page, tracing
from gateway.ops import tenant_routes as tenants
from gateway.ops.reload import reload_on_signal
from gateway.proxy import conversation_routes as conv
from gateway.proxy.chat import chat_completions
from gateway.proxy.http_responses import RawResponse, error_response
from gateway.proxy.passthrough import passthrough
from gateway.proxy.request_log import RequestLog
from gateway.runtime import build_gateway

log = logging.getLogger("gateway")
CONFIG_ENV = "GATEWAY_CONFIG"
CHAT_PATH = "/v1/chat/completions"


def _route_label(path: str) -> str:
    if path == CHAT_PATH:
        return "chat"
    if path.startswith("/v1/"):
        return "passthrough"
    if path.startswith("/admin/"):
        return "admin"
    return "ops"


class ErrorLayer:
    """Outermost layer: gateway errors become OpenAI-style bodies, anything unexpected a
    plain 500 (no traceback to the client or the log); counts every answer by status."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status, started = 0, perf_counter()

        async def tracked(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except GatewayError as exc:
            if not status:
                await error_response(exc)(scope, receive, tracked)
        except Exception as exc:  # noqa: BLE001 - the one catch-all, at the outermost layer
            log.error("unexpected error on %s: %s: %s", scope["path"], type(exc).__name__, exc)
            if not status:
                await error_response(GatewayError("The gateway failed unexpectedly."))(
                    scope, receive, tracked
                )
        finally:
            gw = getattr(scope["app"].state, "gateway", None)
            if gw is not None:
                gw.metrics.observe_request(
                    _route_label(scope["path"]), status, perf_counter() - started
                )


async def _http_error(request: Request, exc: Exception) -> RawResponse:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return error_response(NotFound(f"No route {request.method} {request.url.path}."))
    err = GatewayError(
        f"{exc.detail} ({request.method} {request.url.path})", code="method_not_allowed"
    )
    err.status, err.type = exc.status_code, "invalid_request_error"
    return error_response(err)


def _endpoint(handler: Callable[[Request], Any]) -> ASGIApp:
    """A request handler as a plain ASGI app: what Starlette's route wraps it in, less the
    exception handlers (a gateway error reaches `ErrorLayer` either way)."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        response = await handler(Request(scope, receive, send))
        await response(scope, receive, send)

    return app


class GatewayApp(Starlette):
    """Starlette with one shortcut: `POST /v1/chat/completions`, nearly every request a
    gateway serves, goes through the request log and the error layer straight to its
    handler, past Starlette's server-error and exception layers and router (four
    wrappers of its own round every call, and round each chunk of a stream). Every
    other request takes the whole stack."""

    def __init__(self, chat: ASGIApp, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._chat = chat

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == CHAT_PATH and scope["method"] == "POST":
            scope["app"] = self
            await self._chat(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def _on_hangup(app: Starlette) -> Callable[[], object]:
    """SIGHUP reloads the policies and tenants (where the loop may take signals: the
    main thread); returns what undoes it."""
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task[None]] = set()

    def hangup() -> None:
        task = loop.create_task(reload_on_signal(app))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    try:
        loop.add_signal_handler(signal.SIGHUP, hangup)
    except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
        return lambda: None
    return functools.partial(loop.remove_signal_handler, signal.SIGHUP)


def create_app(settings: Settings) -> GatewayApp:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            upstream_url = settings.config.upstream.base_url
            if upstream_url == SIMULATOR:
                # A dev tool, loaded only when asked for (`base_url: simulator`).
                from gateway.dev.simulator import serve_simulator_in_background

                upstream_url, _ = await stack.enter_async_context(serve_simulator_in_background())
            gateway = await build_gateway(settings, upstream_url)
            stack.push_async_callback(gateway.close)
            app.state.gateway = gateway
            app.state.reload_lock = asyncio.Lock()
            stack.callback(_on_hangup(app))
            yield

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    routes = [
        Route(CHAT_PATH, chat_completions, methods=["POST"]),
        # `:path`: a conversation id may hold "/", as a customer id may (chat takes any)
        Route("/v1/conversations/{conversation:path}/state", conv.put_state, methods=["PUT"]),
        Route(
            "/v1/conversations/{conversation:path}/close",
            conv.close_conversation,
            methods=["POST"],
        ),
        Route("/v1/conversations/{conversation:path}/events", conv.post_event, methods=["POST"]),
        Route("/v1/conversations/{conversation:path}", conv.get_conversation, methods=["GET"]),
        # An id may hold "/" (sent as %2F, or as is): the facts and export routes come
        # before the erasure route, which would take ".../facts" for an id.
        Route("/v1/customers/{customer:path}/facts", conv.get_facts, methods=["GET"]),
        Route("/v1/customers/{customer:path}/facts", conv.put_facts, methods=["PUT"]),
        Route("/v1/customers/{customer:path}/facts", conv.delete_facts, methods=["DELETE"]),
        Route("/v1/customers/{customer:path}/export", conv.export_customer, methods=["GET"]),
        Route("/v1/customers/{customer:path}", conv.erase_customer, methods=["DELETE"]),
        Route("/v1/{rest:path}", passthrough, methods=methods),
        Route("/admin/spend", admin.spend, methods=["GET"]),
        Route("/admin/ledger", admin.ledger, methods=["GET"]),
        Route("/admin/budgets", admin.budgets, methods=["GET"]),
        Route("/admin/report", admin.report, methods=["GET"]),
        Route(admin_page.PAGE, admin_page.page, methods=["GET"]),
        Route(admin_page.LOGIN, admin_page.login_form, methods=["GET"]),
        Route(admin_page.LOGIN, admin_page.login, methods=["POST"]),
        Route("/admin/ui/logout", admin_page.logout, methods=["POST"]),
        Route("/admin/tenants", tenants.list_tenants, methods=["GET"]),
        Route("/admin/tenants", tenants.create_tenant, methods=["POST"]),
        Route("/admin/tenants/{name}", tenants.patch_tenant, methods=["PATCH"]),
        Route("/admin/tenants/{name}/keys", tenants.create_key, methods=["POST"]),
        Route("/admin/tenants/{name}/keys", tenants.list_keys, methods=["GET"]),
        Route("/admin/keys/{key}", tenants.revoke_key, methods=["DELETE"]),
        Route("/admin/keys/{key}/rotate", tenants.rotate_key, methods=["POST"]),
        Route("/admin/reload", tenants.reload, methods=["POST"]),
        Route("/metrics", admin.metrics, methods=["GET"]),
        Route("/healthz", admin.healthz, methods=["GET"]),
        Route("/readyz", admin.healthz, methods=["GET"]),
        Route("/livez", admin.livez, methods=["GET"]),
    ]
    handlers: dict[Any, Any] = {HTTPException: _http_error}
    layers = {
        "route_label": _route_label,
        "access": settings.config.logging.access_log,
        "tracer": tracing.make_tracer(settings.config.logging.traces, os.environ),
    }
    return GatewayApp(
        RequestLog(ErrorLayer(_endpoint(chat_completions)), **layers),
        routes=routes,
        middleware=[Middleware(RequestLog, **layers), Middleware(ErrorLayer)],
        exception_handlers=handlers,
        lifespan=lifespan,
    )


def create_app_from_env() -> GatewayApp:
    """uvicorn factory (`--factory`): the config path comes from $GATEWAY_CONFIG. A
    config with problems ends the process with them listed, not with a traceback (a
    worker that `--workers N` restarts on edited files, the master keeping the old)."""
    try:
        settings = load_settings(Path(os.environ.get(CONFIG_ENV, "config.yaml")))
    except ConfigError as exc:
        for line in exc.lines():
            log.error("config: %s", line)
        raise SystemExit(1) from None
    return create_app(settings)
