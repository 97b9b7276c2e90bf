"""Tenants and keys as data (pure): the records the registry stores, and the rules an
operator's change must follow. No I/O; `now` is passed in."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from gateway.config import Tenant
from gateway.errors import GatewayError

KEY_PREFIX = "gk-"
TENANT_FIELD = "t:"  # the registry document holds a field per tenant ...
KEY_FIELD = "k:"  # ... and one per key, by id
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_KEY_NAME = re.compile(r"[^\x00-\x1f\x7f]{1,64}")


class RegistryRefused(GatewayError):
    """An operator's change the registry refuses (bad input 400, absent 404, a clash
    with what exists or with tenants.yaml 409)."""

    type = "invalid_request_error"

    def __init__(self, message: str, status: int = 400, code: str = "invalid_request") -> None:
        super().__init__(message, code=code)
        self.status = status


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def new_key_id() -> str:
    return "key_" + secrets.token_hex(8)


@dataclass(frozen=True)
class TenantRecord:
    name: str
    plan: str
    created: float = 0.0
    source: str = "api"  # "api" (the registry) or "file" (tenants.yaml)


@dataclass(frozen=True)
class KeyRecord:
    """A key as stored: never the key itself, only its sha256."""

    id: str
    tenant: str
    sha256: str
    name: str = ""
    created: float = 0.0
    expires: float | None = None  # unix time; None: never
    revoked: float | None = None  # unix time of the revocation
    rpm_limit: int | None = None
    tpm_limit: int | None = None

    def live(self, now: float) -> bool:
        return self.revoked is None and (self.expires is None or self.expires > now)

    def public(self, last_used: float | None) -> dict[str, Any]:
        """What the admin API shows: everything but the hash."""
        out = {k: v for k, v in asdict(self).items() if k != "sha256"}
        out["last_used"] = last_used
        return out


def check_tenant_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RegistryRefused(
            "'name' must be 1-64 characters: letters, digits, '.', '_' or '-', "
            "starting with a letter or digit."
        )
    return name


def check_key_name(name: Any) -> str:
    if name is None:
        return ""
    if not isinstance(name, str) or not _KEY_NAME.fullmatch(name):
        raise RegistryRefused("'name' must be a string of 1-64 printable characters.")
    return name


def check_plan(plan: Any, known: Iterable[str]) -> str:
    plans = sorted(known)
    if not isinstance(plan, str) or plan not in plans:
        raise RegistryRefused(
            f"Unknown plan {plan!r}: the plans are {', '.join(plans) or '(none defined)'} "
            "(policies/spend.yaml and context.yaml `plans`).",
            code="unknown_plan",
        )
    return plan


def check_limit(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 10**12:
        raise RegistryRefused(f"'{name}' must be a positive integer or null.")
    return value


@dataclass
class RegistryState:
    """The registry document, decoded: tenants and keys made through the API."""

    tenants: dict[str, TenantRecord]
    keys: dict[str, KeyRecord]

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any] | None) -> RegistryState:
        """Decoded leniently: a field this version does not know (written by a newer
        one during a rolling upgrade) is ignored; an entry that cannot be read is left
        out (its key does not authenticate) rather than stopping the registry."""
        tenants, keys = {}, {}
        for field, value in (doc or {}).items():
            if not isinstance(value, dict):
                continue
            if field.startswith(TENANT_FIELD):
                name = field.removeprefix(TENANT_FIELD)
                created = value.get("created")
                tenants[name] = TenantRecord(
                    name,
                    str(value.get("plan", "")),
                    float(created) if isinstance(created, int | float) else 0.0,
                )
            elif field.startswith(KEY_FIELD):
                known = {k: v for k, v in value.items() if k in _KEY_FIELDS}
                try:
                    record = KeyRecord(**known)
                except TypeError:  # a required field missing
                    continue
                if isinstance(record.id, str) and isinstance(record.sha256, str):
                    keys[record.id] = record
        return cls(tenants, keys)


_KEY_FIELDS = frozenset(f.name for f in fields(KeyRecord))


def tenant_field(record: TenantRecord) -> tuple[str, dict[str, Any]]:
    return TENANT_FIELD + record.name, {"plan": record.plan, "created": record.created}


def key_field(record: KeyRecord) -> tuple[str, dict[str, Any]]:
    return KEY_FIELD + record.id, asdict(record)


def revoked(record: KeyRecord, now: float) -> KeyRecord:
    if record.revoked is not None:
        return record
    return replace(record, revoked=now)


def by_hash(
    state: RegistryState, file_tenants: Mapping[str, Tenant], known_plans: Iterable[str], now: float
) -> dict[str, tuple[Tenant, float | None]]:
    """Every live key's sha256 -> (who it authenticates, when it expires). tenants.yaml
    declares its tenants' plans: for such a tenant the file's plan wins over the store.
    A key of a tenant whose plan the policies do not define does not authenticate: an
    unknown plan would mean no spend ceiling (`stranded` names such tenants)."""
    plans = {t.name: t.plan for t in file_tenants.values()}
    defined = frozenset(known_plans)
    out: dict[str, tuple[Tenant, float | None]] = {h: (t, None) for h, t in file_tenants.items()}
    for key in state.keys.values():
        tenant = state.tenants.get(key.tenant)
        plan = plans.get(key.tenant) or (tenant.plan if tenant else None)
        if plan not in defined or not key.live(now) or key.sha256 in out:
            continue
        out[key.sha256] = (
            Tenant(key.tenant, plan, key.id, key.rpm_limit, key.tpm_limit),
            key.expires,
        )
    return out


def stranded(state: RegistryState, known_plans: Iterable[str]) -> list[TenantRecord]:
    """The registry's tenants on a plan the policies do not define (their keys are
    refused until the plan is defined again or the tenant is moved)."""
    defined = frozenset(known_plans)
    return [t for t in state.tenants.values() if t.plan not in defined]
