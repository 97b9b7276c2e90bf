"""OpenTelemetry traces: an optional extra (`pip install '.[otel]'`).

On when `logging.traces: true` in config.yaml or OTEL_EXPORTER_OTLP_ENDPOINT is set, and
the extra is installed: a span per request (`gateway.request`) with children for the
chain's steps (`window.build`, `spend.guard`, `upstream`, `booking`). The process's
tracer provider is used when one is installed already (`opentelemetry-instrument`, a
host application); else the gateway installs one exporting over OTLP/HTTP, configured
by the standard OTEL_* variables.

Off, or without the extra, nothing of OpenTelemetry is imported and a span costs one
context-variable read.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

log = logging.getLogger("gateway.ops.tracing")
ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
SERVICE_NAME = "context-quota-gateway"
_TRACER: ContextVar[Any] = ContextVar("tracer", default=None)


def wanted(enabled: bool, env: Mapping[str, str]) -> bool:
    return enabled or bool(env.get(ENDPOINT_ENV))


def installed() -> bool:
    return importlib.util.find_spec("opentelemetry.sdk") is not None


def make_tracer(enabled: bool, env: Mapping[str, str]) -> Any:
    """The tracer requests are traced with, or None (off, or the extra is missing)."""
    if not wanted(enabled, env):
        return None
    if not installed():
        log.warning("traces are on but the otel extra is not installed: pip install '.[otel]'")
        return None
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
    return trace.get_tracer("gateway")


@contextlib.contextmanager
def request_span(tracer: Any, method: str, route: str, request_id: str) -> Iterator[Any]:
    """The request's span, the parent of the steps' spans (None when not traced)."""
    if tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    attributes = {"http.request.method": method, "gateway.route": route, "request_id": request_id}
    token = _TRACER.set(tracer)
    try:
        with tracer.start_as_current_span(
            "gateway.request", kind=SpanKind.SERVER, attributes=attributes
        ) as current:
            yield current
    finally:
        _TRACER.reset(token)


def set_status(current: Any, status: int) -> None:
    if current is not None:
        current.set_attribute("http.response.status_code", status)


@contextlib.contextmanager
def span(name: str, **attributes: Any) -> Iterator[None]:
    """A step of the request's chain, as a child span (nothing when not traced)."""
    tracer = _TRACER.get()
    if tracer is None:
        yield
        return
    with tracer.start_as_current_span(name, attributes=attributes):
        yield
