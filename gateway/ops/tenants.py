"""Write a tenant into tenants.yaml (the declarative source): for the dev tools that
build a fresh policy folder (demo, replay). Operators use the registry instead:
`gateway tenants add` and the admin API (gateway.tenancy)."""

from __future__ import annotations

from pathlib import Path

import yaml

from gateway.config import tenants_path
from gateway.tenancy.keys import key_hash, new_key

SCHEMA_LINE = "$schema: ./schema/tenants.schema.json"


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
