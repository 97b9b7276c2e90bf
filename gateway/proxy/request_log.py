"""The request id and the access log: the outermost ASGI layer.

Every request gets an id: the client's `x-request-id` when it is printable ASCII of at
most 128 characters, else a new one. It is returned on every response (errors
included), sent upstream, and set on every log record the request causes (through a
context variable, which the tasks a request starts inherit; `RequestIdFilter` puts it on
the record as `request_id`).

Each request ends in one line on the `gateway.access` logger: JSON by default (the
message is the JSON object; `PlainAccessFormatter` writes key=value instead). The route
handlers fill the request's `AccessRecord` where the values are known (`note`); never
with prompt or message text. A stream's line is written when the stream has ended.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.ids import new_id
from gateway.ledger.usage import TokenUsage
from gateway.ops import tracing
from gateway.spend.money import usd_text

access_log = logging.getLogger("gateway.access")
HEADER = b"x-request-id"
UPSTREAM_HEADER = b"x-upstream-request-id"  # the provider's own id, when it sent one
_VALID_ID = re.compile(rb"[\x21-\x7e]{1,128}")
REQUEST_ID: ContextVar[str] = ContextVar("request_id", default="-")


@dataclass(slots=True)
class AccessRecord:
    """One request's access line. Values only: ids, names, counts, money; no text."""

    request_id: str
    method: str
    route: str
    status: int = 0
    latency_ms: float = 0.0
    tenant: str | None = None
    key_id: str | None = None
    model: str | None = None
    served_model: str | None = None
    degraded_to: str | None = None
    conversation_class: str | None = None
    window_tokens: int | None = None
    fresh_input_tokens: int | None = None
    cached_input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: str | None = None
    escalation: str | None = None

    def fields(self) -> dict[str, Any]:
        # The slots in field order (`asdict` copies each value deeply: ~20 µs a line).
        out = {k: v for k in self.__slots__ if (v := getattr(self, k)) is not None}
        if "conversation_class" in out:
            out["class"] = out.pop("conversation_class")
        return out


_RECORD: ContextVar[AccessRecord | None] = ContextVar("access_record", default=None)


def note(**values: Any) -> None:
    """Fill in the current request's access record (no-op outside a request, or with
    the access log off). Keys are `AccessRecord` fields."""
    record = _RECORD.get()
    if record is not None:
        for key, value in values.items():
            setattr(record, key, value)


def note_usage(served_model: str, usage: TokenUsage, cost_units: int | None) -> None:
    """What a call was booked as: the served model, its token split and its cost."""
    note(
        served_model=served_model,
        fresh_input_tokens=usage.fresh_input,
        cached_input_tokens=usage.cached_input,
        output_tokens=usage.output,
        cost_usd=None if cost_units is None else usd_text(cost_units),
    )


def request_id_of(headers: list[tuple[bytes, bytes]]) -> str:
    """The client's id when it is acceptable, else a new one."""
    for key, value in headers:
        if key.lower() == HEADER:
            if _VALID_ID.fullmatch(value):
                return value.decode("ascii")
            break
    return new_id()


class RequestIdFilter(logging.Filter):
    """Sets `record.request_id` ("-" outside a request), for formats that show it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class PlainAccessFormatter(logging.Formatter):
    """The access line as `key=value` pairs instead of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "access", None)
        if not isinstance(fields, dict):
            return super().format(record)
        pairs = " ".join(f"{k}={_plain_value(v)}" for k, v in fields.items())
        return f"{self.formatTime(record)} access {pairs}"


def _plain_value(value: Any) -> str:
    """A value as is when it is one printable word; else JSON-quoted, so a client's
    model name holding a newline, a space or `key=` cannot forge a line or a field."""
    text = str(value)
    if text and all(c.isprintable() and not c.isspace() and c not in '"=' for c in text):
        return text
    return json.dumps(text)


class RequestLog:
    """Outermost ASGI layer: the request id, the request's span and its access line."""

    def __init__(
        self,
        app: ASGIApp,
        route_label: Callable[[str], str],
        access: str = "json",
        tracer: Any = None,
    ) -> None:
        self.app = app
        self._label = route_label
        self._access = access != "off"
        self._tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id_of(scope["headers"])
        record = AccessRecord(rid, scope["method"], self._label(scope["path"]))
        id_token = REQUEST_ID.set(rid)
        record_token = _RECORD.set(record if self._access else None)
        started = time.perf_counter()

        async def with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status = message["status"]
                message["headers"] = _with_request_id(message.get("headers", []), rid)
            await send(message)

        try:
            with tracing.request_span(self._tracer, scope["method"], record.route, rid) as span:
                await self.app(scope, receive, with_id)
                tracing.set_status(span, record.status)
        finally:
            if self._access:
                record.latency_ms = round((time.perf_counter() - started) * 1000, 1)
                record.status = record.status or 499  # the client left before an answer
                fields = record.fields()
                access_log.info(orjson.dumps(fields).decode(), extra={"access": fields})
            _RECORD.reset(record_token)
            REQUEST_ID.reset(id_token)


def _with_request_id(headers: Any, rid: str) -> list[tuple[bytes, bytes]]:
    """Ours on every response; a provider's id relayed by the handler is renamed."""
    out = [(UPSTREAM_HEADER if k.lower() == HEADER else k, v) for k, v in headers]
    out.append((HEADER, rid.encode()))
    return out


def logging_config(access: str) -> dict[str, Any]:
    """`logging.config.dictConfig` for `gateway serve` (uvicorn applies it in every
    worker): the request id on each line, the access line on its own (`off`: none)."""
    access_formatter = {"()": f"{__name__}.PlainAccessFormatter"} if access == "plain" else {}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": f"{__name__}.RequestIdFilter"}},
        "formatters": {
            "default": {
                "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"
            },
            "access": access_formatter or {"format": "%(message)s"},
        },
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "formatter": "default",
                "filters": ["request_id"],
                "stream": "ext://sys.stderr",
            },
            "access": {
                "class": "logging.StreamHandler",
                "formatter": "access",
                "stream": "ext://sys.stderr",
            },
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": "INFO", "propagate": False},
            "uvicorn.access": {"handlers": [], "propagate": False},  # ours replaces it
            "gateway.access": {
                "handlers": ["access"],
                "level": "WARNING" if access == "off" else "INFO",
                "propagate": False,
            },
            # httpx logs every request at INFO: too chatty for a proxy.
            "httpx": {"level": "WARNING"},
            "httpx2": {"level": "WARNING"},
        },
        "root": {"handlers": ["default"], "level": "INFO"},
    }
