"""The admin page, `/admin/ui`: tenants and their spend for a month (the figures of
`GET /admin/spend`, from the same function), the plots of `gateway report` as inline SVG,
the quota-hit alarms, the month's escalations and every tenant's keys. Server-rendered
HTML with inline CSS: no script, no external asset, no front-end build; works offline.

Login takes the admin key once (a form POST) and sets a cookie holding an HMAC keyed by
the admin key over the session's expiry, never the key: HttpOnly (no script reads it),
SameSite=Strict (no other site's form or link carries it), scoped to /admin/ui. Changing
the admin key ends every session. Every value shown is escaped (tenant names, classes and
conversation ids are user data), and the CSP forbids scripts altogether.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from html import escape
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request

from gateway.errors import GatewayError
from gateway.ops.admin import requested_period, spend_rows
from gateway.ops.report import Report, gather
from gateway.ops.report_svg import concentration_svg, turn_cost_svg
from gateway.proxy.http_responses import RawResponse
from gateway.runtime import Gateway
from gateway.spend.money import usd_text
from gateway.store.records import SpendRow
from gateway.tenancy.registry import Registry

PAGE = "/admin/ui"
LOGIN = "/admin/ui/login"
COOKIE = "gateway_admin_session"
SESSION_S = 8 * 3600  # a working day; log in again after
MAX_FORM_BYTES = 4096
HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        b"frame-ancestors 'none'; base-uri 'none'",
    ),
]
CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;border-bottom:1px solid #ccc;margin-top:2em}
table{border-collapse:collapse}td,th{padding:.2em .7em;border-bottom:1px solid #eee}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:flex;gap:1em;align-items:center;justify-content:space-between}
.alarm{color:#a40000;font-weight:bold}.muted{color:#666}.plots{display:flex;flex-wrap:wrap}
.error{color:#a40000}
"""


def session_token(admin_key: str, expires: int) -> str:
    """`{expires}.{HMAC-SHA256(admin key, expiry)}`: proves the admin key was given,
    without holding it; it stops working at `expires` or when the admin key changes."""
    mac = hmac.new(admin_key.encode(), f"admin-ui:{expires}".encode(), hashlib.sha256)
    return f"{expires}.{mac.hexdigest()}"


def session_valid(admin_key: str, token: str, now: float) -> bool:
    expires, _, _ = token.partition(".")
    if not (expires.isascii() and expires.isdigit()) or len(expires) > 12:
        return False
    fresh = int(expires) > now
    return fresh and hmac.compare_digest(session_token(admin_key, int(expires)), token)


def _html(status: int, title: str, body: str) -> RawResponse:
    doc = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>{body}</body></html>"
    )
    return RawResponse(status, HEADERS, doc.encode())


def _redirect(location: str, cookie: str | None = None) -> RawResponse:
    extra = [(b"location", location.encode())]
    if cookie is not None:
        extra.append((b"set-cookie", cookie.encode()))
    return RawResponse(303, [*HEADERS, *extra], b"")


def _login_page(status: int, message: str = "") -> RawResponse:
    note = f'<p class="error" role="alert">{escape(message)}</p>' if message else ""
    form = (
        f'<h1>Gateway admin</h1>{note}<form method="post" action="{LOGIN}">'
        '<label>Admin key <input type="password" name="key" autocomplete="current-password" '
        'required autofocus></label> <button type="submit">Log in</button></form>'
    )
    return _html(status, "Gateway admin: log in", form)


def _no_admin_key() -> RawResponse:
    return _html(
        403,
        "Gateway admin: off",
        "<h1>Gateway admin</h1><p>No admin key is configured (config.yaml "
        "<code>admin.key_env</code>), so the admin page is off.</p>",
    )


async def login_form(request: Request) -> RawResponse:
    gw: Gateway = request.app.state.gateway
    return _no_admin_key() if gw.settings.admin_key is None else _login_page(200)


async def login(request: Request) -> RawResponse:
    """POST /admin/ui/login with `key`: a session cookie and on to the page, or 401."""
    gw: Gateway = request.app.state.gateway
    admin_key = gw.settings.admin_key
    if admin_key is None:
        return _no_admin_key()
    try:
        form = parse_qs(
            (await gw.read_body(request, None, MAX_FORM_BYTES)).decode("utf-8", "replace")
        )
    except GatewayError as exc:
        return _login_page(exc.status, exc.message)
    given = (form.get("key") or [""])[0]
    if not hmac.compare_digest(given.encode(), admin_key.encode()):
        return _login_page(401, "Wrong admin key.")
    expires = int(time.time()) + SESSION_S
    secure = "; Secure" if request.url.scheme == "https" else ""
    cookie = (
        f"{COOKIE}={session_token(admin_key, expires)}; Path={PAGE}; Max-Age={SESSION_S}; "
        f"HttpOnly; SameSite=Strict{secure}"
    )
    return _redirect(PAGE, cookie)


async def logout(request: Request) -> RawResponse:
    cookie = f"{COOKIE}=; Path={PAGE}; Max-Age=0; HttpOnly; SameSite=Strict"
    return _redirect(LOGIN, cookie)


async def page(request: Request) -> RawResponse:
    """GET /admin/ui[?period=YYYY-MM]: the page, or on to the login form."""
    gw: Gateway = request.app.state.gateway
    admin_key = gw.settings.admin_key
    if admin_key is None:
        return _no_admin_key()
    if not session_valid(admin_key, request.cookies.get(COOKIE, ""), time.time()):
        return _redirect(LOGIN)
    try:
        period = requested_period(request)
        rows = spend_rows(gw, await gw.store.spend(period))
        tenants = [t.name for t in gw.registry.tenants()]
        report = await gather(gw.store, tenants, period)
    except GatewayError as exc:
        body = f'<h1>Gateway admin</h1><p class="error">{escape(exc.message)}</p>'
        return _html(exc.status, "Gateway admin: error", body + f'<p><a href="{PAGE}">back</a></p>')
    sections = (
        _header(period),
        _spend_section(rows),
        _keys_section(gw.registry, time.time()),
        _plots_section(report),
        _alarms_section(report),
        _escalations_section(report),
    )
    return _html(200, f"Gateway admin: {period}", "".join(sections))


def _header(period: str) -> str:
    return (
        '<div class="bar"><h1>Gateway admin</h1>'
        f'<form method="get" action="{PAGE}"><label>Month <input type="month" name="period" '
        f'value="{escape(period)}" required></label> <button type="submit">Show</button></form>'
        f'<form method="post" action="/admin/ui/logout"><button type="submit">Log out</button>'
        "</form></div>"
    )


def _spend_section(rows: list[SpendRow]) -> str:
    head = (
        "<tr><th>tenant</th><th>plan</th><th class=n>requests</th><th class=n>input tokens "
        "(fresh / cached / cache write)</th><th class=n>output tokens</th>"
        "<th class=n>cost USD</th></tr>"
    )
    body = "".join(
        f'<tr class="tenant" data-tenant="{escape(r.tenant)}"><td class="name">'
        f'{escape(r.tenant)}</td><td class="plan">{escape(r.plan)}</td>'
        f"<td class=n>{r.requests}</td><td class=n>{r.fresh_input_tokens} / "
        f"{r.cached_input_tokens} / {r.cache_write_tokens}</td><td class=n>{r.output_tokens}"
        f'</td><td class="n cost">{usd_text(r.cost_units)}</td></tr>'
        for r in rows
    )
    total = usd_text(sum(r.cost_units for r in rows))
    foot = f'<tr><th colspan=5>all tenants</th><th class="n total">{total}</th></tr>'
    return (
        '<section id="spend"><h2>Tenants and spend</h2><p class="muted">As '
        "<code>GET /admin/spend</code> for this month.</p>"
        f"<table>{head}{body}{foot}</table></section>"
    )


def _when(ts: float | None) -> str:
    return "" if ts is None else time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts))


def _key_state(key: dict[str, Any], now: float) -> str:
    if key.get("source") == "file":
        return "tenants.yaml"
    if key.get("revoked") is not None:
        return f"revoked {_when(key['revoked'])}"
    expires = key.get("expires")
    return "expired" if expires is not None and expires <= now else "live"


def _keys_section(registry: Registry, now: float) -> str:
    """Every tenant's keys as `GET /admin/tenants/{name}/keys` lists them (never a key
    or its hash); read-only: keys are made and revoked through the API or the CLI."""
    rows = []
    for tenant in registry.tenants():
        for key in registry.keys(tenant.name) or [{"id": "(no key)"}]:
            limits = "/".join(str(key.get(k) or "plan") for k in ("rpm_limit", "tpm_limit"))
            rows.append(
                f"<tr><td>{escape(tenant.name)}</td><td>{escape(tenant.plan)}</td>"
                f"<td><code>{escape(str(key['id']))}</code></td>"
                f"<td>{escape(str(key.get('name') or ''))}</td>"
                f"<td>{escape(_key_state(key, now))}</td><td>{_when(key.get('created'))}</td>"
                f"<td>{_when(key.get('last_used'))}</td><td>{escape(limits)}</td></tr>"
            )
    return (
        '<section id="keys"><h2>Keys</h2><p class="muted">Made, rotated and revoked with '
        "<code>/admin/tenants</code> and <code>gateway keys</code>.</p><table><tr>"
        "<th>tenant</th><th>plan</th><th>key id</th><th>name</th><th>state</th>"
        "<th>created</th><th>last used</th><th>rpm/tpm</th></tr>"
        f"{''.join(rows)}</table></section>"
    )


def _plots_section(report: Report) -> str:
    return (
        '<section id="plots"><h2>Cost report</h2><div class="plots">'
        f"{concentration_svg(report)}{turn_cost_svg(report)}</div>"
        f'<p class="muted">{report.conversations} conversations; cached share of input '
        f"{report.cached_share:.1%}.</p></section>"
    )


def _alarms_section(report: Report) -> str:
    alarms = "".join(f'<li class="alarm">{escape(a)}</li>' for a in report.alarms)
    listing = f"<ul>{alarms}</ul>" if alarms else "<p>No class over its quota-hit alarm.</p>"
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td class=n>{int(q['at_ceiling'])}</td>"
        f"<td class=n>{int(q['conversations'])}</td><td class=n>{q['share']:.1%}</td></tr>"
        for name, q in report.quota_ceiling.items()
    )
    table = (
        "<table><tr><th>class</th><th class=n>at the quota ceiling</th>"
        f"<th class=n>conversations</th><th class=n>share</th></tr>{rows}</table>"
    )
    return f'<section id="alarms"><h2>Alarms</h2>{listing}{table}</section>'


def _escalations_section(report: Report) -> str:
    if not report.escalations:
        return '<section id="escalations"><h2>Escalations</h2><p>None this month.</p></section>'
    rows = "".join(
        f"<tr><td>{escape(e['tenant'])}</td><td>{escape(e['conversation'])}</td>"
        f"<td>{escape(e['class'])}</td><td>{escape(str(e['reason']))}</td>"
        f"<td class=n>{int(e['escalations'])}</td><td class=n>{int(e['turns'])}</td>"
        f"<td>{_when(e['last_seen'])}</td></tr>"
        for e in report.escalations
    )
    return (
        '<section id="escalations"><h2>Escalations</h2><p class="muted">The most recent '
        "escalated conversations of this month.</p><table><tr><th>tenant</th>"
        "<th>conversation</th><th>class</th><th>latest reason</th><th class=n>escalations</th>"
        f"<th class=n>turns</th><th>last seen</th></tr>{rows}</table></section>"
    )
