"""The admin API for tenants, keys and reloads (admin key):

GET    /admin/tenants                     every tenant (tenants.yaml's and the API's)
POST   /admin/tenants                     {"name", "plan"} -> the tenant
PATCH  /admin/tenants/{name}              {"plan"}
POST   /admin/tenants/{name}/keys         {"name"?, "expires_at"?, "rpm_limit"?,
                                           "tpm_limit"?} -> {"id", "key", ...}, once
GET    /admin/tenants/{name}/keys         the tenant's keys (never the key or hash)
DELETE /admin/keys/{id}                   revoke (every replica within a second)
POST   /admin/keys/{id}/rotate            {"grace_s"?} -> a new key; the old one
                                           revoked now or after the grace period
POST   /admin/reload                      re-read the policies and tenants.yaml
"""

from __future__ import annotations

import math
import time
from typing import Any

import orjson
from starlette.requests import Request

from gateway.context.types import LATEST_TIME
from gateway.errors import InvalidRequest, NotFound
from gateway.ops.admin import wanted_format
from gateway.ops.reload import reload_gateway
from gateway.proxy.http_responses import RawResponse, json_response
from gateway.proxy.identity import authenticate_admin
from gateway.proxy.request_body import json_object
from gateway.runtime import Gateway
from gateway.tenancy.keys import KeyRecord, TenantRecord

BODY_LIMIT = 16 * 1024


def _admin(request: Request) -> Gateway:
    """Every route here: the admin key, and JSON the only `format` (another is a 400)."""
    gw: Gateway = request.app.state.gateway
    authenticate_admin(request.headers, gw.settings.admin_key)
    wanted_format(request)
    return gw


async def _body(request: Request, allowed: frozenset[str]) -> dict[str, Any]:
    gw: Gateway = request.app.state.gateway
    raw = await gw.read_body(request, None, BODY_LIMIT)
    body = json_object(raw, gw.settings.config.limits.max_body_containers) if raw.strip() else {}
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise InvalidRequest(
            f"Unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}.",
            param=unknown[0],
        )
    return body


def _tenant_json(gw: Gateway, record: TenantRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "plan": record.plan,
        "source": record.source,
        "created": record.created or None,
        "keys": gw.registry.live_keys(record.name),
    }


def _key_json(record: KeyRecord, key: str | None = None) -> dict[str, Any]:
    out = record.public(None)
    if key is not None:
        out["key"] = key  # shown this once; only its sha256 is stored
    return out


def _number(body: dict[str, Any], name: str, most: float = math.inf) -> float | None:
    """A non-negative number of `body`, no more than `most`: a key's expiry ends by the
    year 9999 (a JavaScript millisecond timestamp would be the year ~58,000)."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InvalidRequest(f"'{name}' must be a non-negative number.", param=name)
    if value > most:
        raise InvalidRequest(
            f"'{name}' must be at most {most:.0f}: seconds, ending by 9999-12-31.", param=name
        )
    return float(value)


async def list_tenants(request: Request) -> RawResponse:
    gw = _admin(request)
    tenants = [_tenant_json(gw, t) for t in gw.registry.tenants()]
    return json_response(orjson.dumps({"tenants": tenants}))


async def create_tenant(request: Request) -> RawResponse:
    gw = _admin(request)
    body = await _body(request, frozenset({"name", "plan"}))
    record = await gw.registry.add_tenant(body.get("name"), body.get("plan"))
    return json_response(orjson.dumps(_tenant_json(gw, record)), 201)


async def patch_tenant(request: Request) -> RawResponse:
    gw = _admin(request)
    body = await _body(request, frozenset({"plan"}))
    if "plan" not in body:
        raise InvalidRequest("Send {'plan': NAME}.", param="plan")
    record = await gw.registry.set_plan(request.path_params["name"], body["plan"])
    return json_response(orjson.dumps(_tenant_json(gw, record)))


async def create_key(request: Request) -> RawResponse:
    gw = _admin(request)
    body = await _body(request, frozenset({"name", "expires_at", "rpm_limit", "tpm_limit"}))
    record, key = await gw.registry.create_key(
        request.path_params["name"],
        body.get("name"),
        _number(body, "expires_at", LATEST_TIME),
        body.get("rpm_limit"),
        body.get("tpm_limit"),
    )
    return json_response(orjson.dumps(_key_json(record, key)), 201)


async def list_keys(request: Request) -> RawResponse:
    gw = _admin(request)
    name = request.path_params["name"]
    keys = gw.registry.keys(name)  # a removed tenants.yaml tenant's too: to revoke them
    if gw.registry.tenant(name) is None and not keys:
        raise NotFound(f"No tenant {name!r}.")
    return json_response(orjson.dumps({"tenant": name, "keys": keys}))


async def revoke_key(request: Request) -> RawResponse:
    gw = _admin(request)
    record = await gw.registry.revoke(request.path_params["key"])
    return json_response(orjson.dumps(_key_json(record)))


async def rotate_key(request: Request) -> RawResponse:
    gw = _admin(request)
    body = await _body(request, frozenset({"grace_s"}))
    new, key, old = await gw.registry.rotate(
        request.path_params["key"], _number(body, "grace_s", LATEST_TIME - time.time()) or 0.0
    )
    out = _key_json(new, key)
    out["replaces"] = {"id": old.id, "revoked": old.revoked, "expires": old.expires}
    return json_response(orjson.dumps(out), 201)


async def reload(request: Request) -> RawResponse:
    _admin(request)
    return json_response(orjson.dumps(await reload_gateway(request.app)))
