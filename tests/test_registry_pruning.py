"""The tenant registry forgets keys long dead: rotations must not grow it for good."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

from gateway.store import open_store
from gateway.tenancy.keys import key_field
from gateway.tenancy.registry import KIND, MAIN, SCOPE, USED, Registry

DAY = 86400.0


def test_keys_revoked_or_expired_a_month_ago_leave_the_registry_at_its_next_change(
    tmp_path: Path,
) -> None:
    async def main() -> tuple[set[str], set[str], dict[str, str]]:
        store = open_store(f"sqlite:///{tmp_path / 'gw.db'}")
        try:
            registry = Registry(store, {}, ["pro"])
            await registry.add_tenant("rot", "pro")
            old, _ = await registry.create_key("rot", name="old")
            lapsed, _ = await registry.create_key("rot", name="lapsed")
            recent, _ = await registry.create_key("rot", name="recent")
            live, _ = await registry.create_key("rot", name="live")
            now = time.time()
            # As rotations long ago left them (written straight to the document).
            fields = dict(
                [
                    key_field(replace(old, revoked=now - 31 * DAY)),
                    key_field(replace(lapsed, expires=now - 31 * DAY)),
                    key_field(replace(recent, revoked=now - 1 * DAY)),
                ]
            )
            await store.patch_doc(KIND, SCOPE, MAIN, fields)
            await store.patch_doc(KIND, SCOPE, USED, {old.id: now - 40 * DAY, live.id: now})
            rotated, _, _ = await registry.rotate(live.id)  # any change
            doc = await store.get_doc(KIND, SCOPE, MAIN) or {}
            used = await store.get_doc(KIND, SCOPE, USED) or {}
            ids = {k["id"] for k in registry.keys("rot")}
            names = {"old": old.id, "lapsed": lapsed.id, "recent": recent.id, "live": live.id}
            names["rotated"] = rotated.id
            return {f.removeprefix("k:") for f in doc if f.startswith("k:")} | ids, set(used), names
        finally:
            await store.close()

    kept, used, names = asyncio.run(main())
    assert kept == {names["recent"], names["live"], names["rotated"]}
    assert names["old"] not in used and names["live"] in used
