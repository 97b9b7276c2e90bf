"""`gateway tenants add`: mint a tenant key, print it once, store only its hash."""

from __future__ import annotations

import secrets
from pathlib import Path

import yaml

from gateway.config import tenants_path
from gateway.proxy.identity import key_hash

KEY_PREFIX = "gk-"
SCHEMA_LINE = "$schema: ./schema/tenants.schema.json"


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def add_tenant(policies_dir: Path, name: str, plan: str) -> str:
    """Write the tenant's key hash into tenants.yaml and return the key (shown once)."""
    path = tenants_path(policies_dir)
    data = yaml.safe_load(path.read_text()) if path.exists() else None
    data = data if isinstance(data, dict) else {}
    tenants = data.setdefault("tenants", {}) or {}
    data["tenants"] = tenants
    if name in tenants:
        raise ValueError(f"tenant {name!r} already exists in {path}")
    key = new_key()
    tenants[name] = {"plan": plan, "key_sha256": key_hash(key)}
    data.pop("$schema", None)
    body = yaml.safe_dump({"tenants": tenants}, sort_keys=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(f"{SCHEMA_LINE}\n{body}")
    tmp.replace(path)
    return key
