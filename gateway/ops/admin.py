"""Finance and operations endpoints: /admin/* (admin key), /metrics, /healthz."""

from __future__ import annotations

import asyncio
import csv
import io
import re
import time

import orjson
from starlette.requests import Request

from gateway.errors import InvalidRequest, StoreUnavailable
from gateway.ops.scrape import Scraped, tenant_ceilings
from gateway.proxy.http_responses import RawResponse, json_response
from gateway.proxy.identity import authenticate_admin
from gateway.runtime import Gateway
from gateway.spend.money import usd_text
from gateway.store import StoreHealth
from gateway.store.records import SpendRow, period_of

HEALTH_WAIT_S = 0.9  # /healthz answers within a second
# Bookings waiting this long with none written, while the store answers: not ready.
BOOKINGS_STALLED_S = 30.0
_PERIOD = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])")  # ASCII digits only (not \d: "²", "٣")
_LIMIT = re.compile(r"[0-9]{1,6}")
SPEND_COLUMNS = (
    "tenant",
    "plan",
    "requests",
    "fresh_input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cost_usd",
    "estimated_requests",
    "unpriced_requests",
)


def requested_period(request: Request) -> str:
    """The `period` query parameter, checked (YYYY-MM); this month when absent."""
    return checked_period(request.query_params.get("period"))


def checked_period(period: str | None) -> str:
    """A period as YYYY-MM (`gateway report --period` too); this month when not given."""
    period = period or period_of(time.time())
    if not _PERIOD.fullmatch(period):
        raise InvalidRequest("'period' must look like YYYY-MM.", param="period")
    return period


def wanted_format(request: Request, formats: tuple[str, ...] = ("json",)) -> str:
    """The `format` query parameter, one of `formats` (the first is the default): any
    other (`xml`) is a 400, never JSON silently."""
    wanted = request.query_params.get("format", formats[0])
    if wanted not in formats:
        raise InvalidRequest(f"'format' is one of {', '.join(formats)}.", param="format")
    return wanted


def spend_rows(gw: Gateway, booked: list[SpendRow]) -> list[SpendRow]:
    """Booked rows plus a zero row for every configured tenant that spent nothing."""
    seen = {row.tenant for row in booked}
    idle = [SpendRow(t.name, t.plan) for t in gw.registry.tenants() if t.name not in seen]
    return sorted(booked + idle, key=lambda r: r.tenant)


def spend_csv(rows: list[SpendRow]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SPEND_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row.to_json())
    return out.getvalue()


async def spend(request: Request) -> RawResponse:
    gw: Gateway = request.app.state.gateway
    authenticate_admin(request.headers, gw.settings.admin_key)
    period = requested_period(request)
    wanted = wanted_format(request, ("json", "csv"))
    rows = spend_rows(gw, await gw.store.spend(period))
    if wanted == "csv":
        return RawResponse(
            200, [(b"content-type", b"text/csv; charset=utf-8")], spend_csv(rows).encode()
        )
    return json_response(orjson.dumps({"period": period, "tenants": [r.to_json() for r in rows]}))


async def ledger(request: Request) -> RawResponse:
    """A period's records oldest first; with `cursor` (empty for the first page), pages
    newest first across periods (`period` then only filters) and `next_cursor`."""
    gw: Gateway = request.app.state.gateway
    authenticate_admin(request.headers, gw.settings.admin_key)
    wanted_format(request)
    limit_text = request.query_params.get("limit", "1000")
    if not _LIMIT.fullmatch(limit_text) or not 0 < int(limit_text) <= 100_000:
        raise InvalidRequest("'limit' must be an integer from 1 to 100000.", param="limit")
    tenant = request.query_params.get("tenant")
    cursor = request.query_params.get("cursor")
    if cursor is None:
        records = await gw.store.ledger(requested_period(request), tenant, int(limit_text))
        return json_response(orjson.dumps({"records": [r.to_json() for r in records]}))
    period = requested_period(request) if request.query_params.get("period") else None
    try:
        page, after = await gw.store.ledger_page(tenant, period, cursor or None, int(limit_text))
    except ValueError as exc:
        raise InvalidRequest(str(exc), param="cursor") from exc
    body = {"records": [r.to_json() for r in page], "next_cursor": after}
    return json_response(orjson.dumps(body))


async def report(request: Request) -> RawResponse:
    """GET /admin/report?period=YYYY-MM[&tenant=T][&format=json|csv]: what `gateway
    report` prints."""
    from gateway.ops.report import as_csv, gather

    gw: Gateway = request.app.state.gateway
    authenticate_admin(request.headers, gw.settings.admin_key)
    wanted = wanted_format(request, ("json", "csv"))
    tenants = [t.name for t in gw.registry.tenants()]
    period, tenant = requested_period(request), request.query_params.get("tenant")
    found = await gather(gw.store, tenants, period, tenant)
    if wanted == "csv":
        return RawResponse(
            200, [(b"content-type", b"text/csv; charset=utf-8")], as_csv(found).encode()
        )
    return json_response(orjson.dumps(found.to_json()))


async def budgets(request: Request) -> RawResponse:
    """GET /admin/budgets?tenant=T[&customer=C]: spent, held and ceiling per budget."""
    gw: Gateway = request.app.state.gateway
    authenticate_admin(request.headers, gw.settings.admin_key)
    wanted_format(request)
    name = request.query_params.get("tenant")
    tenant = gw.registry.tenant(name) if name else None
    if tenant is None:
        raise InvalidRequest("'tenant' must name a configured tenant.", param="tenant")
    policy = gw.settings.spend.policy(
        tenant.name, tenant.plan, request.query_params.get("customer"), time.time()
    )
    counters = await gw.store.budgets(policy.keys)
    rows = [
        {
            "budget": b.key,
            "scope": b.scope,
            "period": b.period,
            "spent_usd": usd_text(counters[b.key][0]),
            "reserved_usd": usd_text(counters[b.key][1]),
            "ceiling_usd": None if b.limit_units is None else usd_text(b.limit_units),
            "resets_at": b.resets_at,
        }
        for b in policy.budgets
    ]
    action = policy.ceiling.action
    return json_response(orjson.dumps({"tenant": tenant.name, "action": action, "budgets": rows}))


async def metrics(request: Request) -> RawResponse:
    """Prometheus text; it names every tenant, its plan and spend, so it takes the admin
    key like /admin/* (Prometheus: `authorization: {credentials: <admin key>}`)."""
    gw: Gateway = request.app.state.gateway
    authenticate_admin(request.headers, gw.settings.admin_key)

    async def read() -> Scraped:
        try:
            booked = await gw.store.spend(None)
            # Tenants that booked something, on their current plan where it is configured.
            plans = {r.tenant: r.plan for r in booked}
            plans |= {t.name: t.plan for t in gw.registry.tenants() if t.name in plans}
            ceilings = await tenant_ceilings(gw.store, gw.settings.spend, plans, time.time())
        except StoreUnavailable:
            return None, []
        return booked, ceilings

    # Rendered off the event loop, and shared by the scrapes of a few seconds (ScrapeCache).
    body = await gw.metrics.scrapes.body(gw.metrics.render, read)
    return RawResponse(200, [(b"content-type", b"text/plain; version=0.0.4; charset=utf-8")], body)


async def healthz(request: Request) -> RawResponse:
    """Readiness (/healthz, /readyz): answers within a second, whatever the store does,
    and names what is wrong. 503 when the store is unreachable, when bookings wait
    without any being written for `BOOKINGS_STALLED_S` (the booking writer is wedged),
    or, under `fail_closed`, when the store is not ok; other store trouble under
    `fail_open` still serves: 200 with status `degraded`."""
    gw: Gateway = request.app.state.gateway
    try:
        health = await asyncio.wait_for(gw.store.health(), HEALTH_WAIT_S)
    except TimeoutError:
        health = StoreHealth("slow", f"the store did not answer within {HEALTH_WAIT_S} s")
    reason = _not_ready(gw, health)
    serving = reason is None and (health.ok or gw.settings.config.store_failure == "fail_open")
    body = {
        "status": "ok" if health.ok and serving else "degraded" if serving else "unavailable",
        "store": health.state,
        "detail": health.detail,
        "pending_bookings": gw.bookkeeper.pending,
        "config": gw.settings.sha,
    }
    if not serving:
        body["reason"] = reason or f"store {health.state} under fail_closed"
    return json_response(orjson.dumps(body), 200 if serving else 503)


def _not_ready(gw: Gateway, health: StoreHealth) -> str | None:
    if health.state in ("unreachable", "writer_wedged"):
        return f"store {health.state}: {health.detail}"
    stalled = gw.bookkeeper.stalled_for(time.monotonic())
    if stalled > BOOKINGS_STALLED_S:
        return (
            f"booking writer wedged: {gw.bookkeeper.pending} bookings pending, none written "
            f"for {stalled:.0f} s"
        )
    return None


async def livez(request: Request) -> RawResponse:
    """Liveness: 200 while the process serves requests; it checks nothing else."""
    return json_response(b'{"status":"ok"}')
