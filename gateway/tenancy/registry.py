"""The tenant and key registry every replica shares: tenants and keys made through the
admin API or the CLI live in the store (one document, written by compare-and-set), the
keys of `tenants.yaml` beside them. Each replica keeps the live keys in memory and looks
for a change every `REFRESH_S` (one small read), so a revoked key stops working on every
replica within a second; the request path never waits on the store to authenticate."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from gateway.config import Settings, Tenant
from gateway.errors import StoreUnavailable
from gateway.store import Store
from gateway.tenancy.keys import (
    KEY_FIELD,
    KeyRecord,
    RegistryRefused,
    RegistryState,
    TenantRecord,
    by_hash,
    check_key_name,
    check_limit,
    check_plan,
    check_tenant_name,
    key_field,
    key_hash,
    new_key,
    new_key_id,
    revoked,
    stranded,
    tenant_field,
)
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway")

KIND = "registry"
SCOPE = "_gateway"  # the registry is the gateway's, not a tenant's
MAIN, REV, USED = "main", "rev", "used"
REFRESH_S = 0.25
MISS_REFRESH_S = 0.1  # an unknown key looks in the store at most this often per replica
USED_FLUSH_S = 5.0
_TRIES = 16
FILE_KEY = "file:"  # the id of a tenants.yaml key (gateway.config.load_tenants)
# A key revoked or expired this long ago leaves the registry (and its last use with it)
# at the next change: rotations would otherwise grow the document every replica reads.
DEAD_KEPT_S = 30 * 86400
DECODE_INLINE_FIELDS = 500  # a registry document with more fields is decoded in a thread


class Registry:
    def __init__(
        self, store: Store, file_tenants: Mapping[str, Tenant], known_plans: Iterable[str]
    ) -> None:
        self._store = store
        self._file = dict(file_tenants)
        self._plans = frozenset(known_plans)
        self._state = RegistryState({}, {})
        self._live: dict[str, tuple[Tenant, float | None]] = by_hash(
            self._state, self._file, self._plans, 0
        )
        self._rev: Any = None
        self._used: dict[str, float] = {}
        self._flushed: dict[str, float] = {}
        self._missed_at = -1e9
        self._stopped = False
        self._refreshing: asyncio.Task[None] | None = None

    @classmethod
    async def read(cls, store: Store, settings: Settings) -> Registry:
        """The registry as the store holds it now, with no follower (the CLI's)."""
        registry = cls(store, settings.tenants_by_hash, settings.known_plans)
        await registry.refresh(force=True)
        return registry

    # -- the request path ---------------------------------------------------------

    def lookup(self, digest: str) -> Tenant | None:
        """The tenant a key's sha256 authenticates, if the key is live; notes its use."""
        hit = self._live.get(digest)
        if hit is None:
            return None
        tenant, expires = hit
        now = time.time()
        if expires is not None and expires <= now:
            return None
        if not tenant.key_id.startswith(FILE_KEY):  # the registry's keys: last used
            self._used[tenant.key_id] = now
        return tenant

    async def find(self, digest: str) -> Tenant | None:
        """`lookup`, and for a key not known here a look at the store first (a key just
        made on another replica works at once). Unknown keys cause at most one small
        store read per MISS_REFRESH_S, shared by every request waiting on it."""
        tenant = self.lookup(digest)
        if tenant is not None:
            return tenant
        if self._refreshing is None:
            now = time.monotonic()
            if now - self._missed_at < MISS_REFRESH_S:
                return None
            self._missed_at = now
            self._refreshing = asyncio.create_task(self._refresh_quietly())
        await asyncio.shield(self._refreshing)
        return self.lookup(digest)

    async def _refresh_quietly(self) -> None:
        try:
            with contextlib.suppress(StoreUnavailable):
                await self.refresh()
        finally:
            self._refreshing = None

    # -- what the replica holds ---------------------------------------------------

    def configure(self, file_tenants: Mapping[str, Tenant], known_plans: Iterable[str]) -> None:
        """A reload: the new tenants.yaml and policies' plans."""
        self._file = dict(file_tenants)
        self._plans = frozenset(known_plans)
        self._live = by_hash(self._state, self._file, self._plans, time.time())

    def tenants(self) -> list[TenantRecord]:
        """Every tenant, tenants.yaml's first (its plan wins for a name in both)."""
        out = {t.name: TenantRecord(t.name, t.plan, 0.0, "file") for t in self._file.values()}
        for record in self._state.tenants.values():
            out.setdefault(record.name, record)
        return sorted(out.values(), key=lambda t: t.name)

    def tenant(self, name: str) -> TenantRecord | None:
        return next((t for t in self.tenants() if t.name == name), None)

    def live_keys(self, tenant: str) -> int:
        now = time.time()
        mine = sum(1 for k in self._state.keys.values() if k.tenant == tenant and k.live(now))
        return mine + sum(1 for t in self._file.values() if t.name == tenant)

    def keys(self, tenant: str) -> list[dict[str, Any]]:
        found = [k for k in self._state.keys.values() if k.tenant == tenant]
        out = [
            k.public(max(self._used.get(k.id, 0), self._flushed.get(k.id, 0)) or None)
            for k in found
        ]
        for t in self._file.values():
            if t.name == tenant:  # a tenants.yaml key: managed in the file
                out.append({"id": t.key_id, "tenant": tenant, "source": "file", "name": ""})
        return sorted(out, key=lambda k: (k.get("created") or 0, k["id"]))

    # -- keeping up with the other replicas ----------------------------------------

    async def refresh(self, force: bool = False) -> None:
        rev = await self._store.get_doc(KIND, SCOPE, REV)
        if not force and rev == self._rev and self._rev is not None:
            return
        doc = await self._store.get_doc(KIND, SCOPE, MAIN)
        if len(doc or {}) > DECODE_INLINE_FIELDS:  # off the event loop
            state = await asyncio.to_thread(RegistryState.from_doc, doc)
        else:
            state = RegistryState.from_doc(doc)
        self._install(state, rev)
        await self._read_used()

    async def _read_used(self) -> None:
        used = await self._store.get_doc(KIND, SCOPE, USED)
        self._flushed = {
            k: float(v)
            for k, v in (used or {}).items()
            if k != "version" and isinstance(v, int | float)
        }

    def _install(self, state: RegistryState, rev: Any) -> None:
        self._state, self._rev = state, rev
        self._live = by_hash(state, self._file, self._plans, time.time())
        for tenant in stranded(state, self._plans):
            warn_throttled(
                log,
                f"tenant {tenant.name!r} is on plan {tenant.plan!r}, which the policies do "
                "not define: its keys are refused until the plan is defined or the tenant "
                "moved (PATCH /admin/tenants/{name})",
            )

    async def run(self) -> None:
        """Follow the store: a changed revision reloads the registry, and every
        USED_FLUSH_S it is read whole anyway (should a revision bump have been lost)
        and key use is written (last used to within that). Nothing stops it: an error
        is logged and the next tick tries again."""
        flushed_at = time.monotonic()
        while not self._stopped:
            try:
                due = time.monotonic() - flushed_at >= USED_FLUSH_S
                await self.refresh(force=due)
                if due:
                    flushed_at = time.monotonic()
                    await self.flush_used()
            except StoreUnavailable:
                pass
            except Exception as exc:  # noqa: BLE001 - the follower must outlive any one read
                warn_throttled(log, f"registry refresh failed: {type(exc).__name__}: {exc}")
            await asyncio.sleep(REFRESH_S)

    def stop(self) -> None:
        """`run` ends at its next tick (also should its cancellation be lost)."""
        self._stopped = True

    async def flush_used(self) -> None:
        if not self._used:
            return
        used, self._used = self._used, {}
        try:
            await self._store.patch_doc(KIND, SCOPE, USED, used)
        except StoreUnavailable:
            for key, at in used.items():  # keep them for the next flush
                self._used.setdefault(key, at)
            raise
        self._flushed.update(used)

    # -- operators' changes ---------------------------------------------------------

    async def _change(self, edit: Callable[[RegistryState], dict[str, Any]]) -> dict[str, Any]:
        """Apply `edit` to the current registry by compare-and-set, retrying on a
        concurrent change; `edit` returns the changed fields (and may raise)."""
        for _ in range(_TRIES):
            doc = await self._store.get_doc(KIND, SCOPE, MAIN)
            version = int((doc or {}).get("version") or 0)
            state = RegistryState.from_doc(doc)
            changed = edit(state)
            dead = [k for k in _long_dead(state, time.time()) if KEY_FIELD + k not in changed]
            removed = [KEY_FIELD + k for k in dead]
            if await self._store.swap_doc(KIND, SCOPE, MAIN, changed, removed, None, version):
                with contextlib.suppress(StoreUnavailable):
                    if dead:  # their last use goes with them
                        await self._store.patch_doc(KIND, SCOPE, USED, {}, dead)
                    # Should this bump fail, the other replicas still read the registry
                    # whole within USED_FLUSH_S (Registry.run).
                    await self._store.patch_doc(KIND, SCOPE, REV, {"rev": version + 1})
                    await self.refresh(force=True)
                return changed
        raise StoreUnavailable("The registry kept changing under this write; try again.")

    async def add_tenant(self, name: Any, plan: Any) -> TenantRecord:
        name, plan = check_tenant_name(name), check_plan(plan, self._plans)
        record = TenantRecord(name, plan, round(time.time(), 3))

        def edit(state: RegistryState) -> dict[str, Any]:
            if name in state.tenants or any(t.name == name for t in self._file.values()):
                raise RegistryRefused(f"Tenant {name!r} already exists.", 409, "conflict")
            # Keys the API made for a tenants.yaml tenant of this name that the file no
            # longer declares: that tenant's, not the new one's, revoked with its coming.
            now = time.time()
            gone = [revoked(k, now) for k in state.keys.values() if k.tenant == name]
            return dict([tenant_field(record), *(key_field(k) for k in gone if k.revoked == now)])

        await self._change(edit)
        return record

    def _api_tenant(self, name: str, state: RegistryState) -> TenantRecord | None:
        if any(t.name == name for t in self._file.values()):
            return None  # tenants.yaml's
        found = state.tenants.get(name)
        if found is None:
            raise RegistryRefused(f"No tenant {name!r}.", 404, "not_found")
        return found

    async def set_plan(self, name: str, plan: Any) -> TenantRecord:
        plan = check_plan(plan, self._plans)
        out: list[TenantRecord] = []

        def edit(state: RegistryState) -> dict[str, Any]:
            found = self._api_tenant(name, state)
            if found is None:
                raise RegistryRefused(
                    f"Tenant {name!r} is declared in tenants.yaml: change its plan there "
                    "(the file wins for the tenants it declares).",
                    409,
                    "conflict",
                )
            out[:] = [replace(found, plan=plan)]
            return dict([tenant_field(out[0])])

        await self._change(edit)
        return out[0]

    async def create_key(
        self,
        tenant: str,
        name: Any = None,
        expires: float | None = None,
        rpm_limit: Any = None,
        tpm_limit: Any = None,
        now: float | None = None,
    ) -> tuple[KeyRecord, str]:
        """A new key for the tenant: (its record, the key itself, shown once)."""
        key = new_key()
        now = time.time() if now is None else now
        record = KeyRecord(
            id=new_key_id(),
            tenant=tenant,
            sha256=key_hash(key),
            name=check_key_name(name),
            created=round(now, 3),
            expires=expires,
            rpm_limit=check_limit(rpm_limit, "rpm_limit"),
            tpm_limit=check_limit(tpm_limit, "tpm_limit"),
        )
        if expires is not None and expires <= now:
            raise RegistryRefused("'expires_at' is in the past.")

        def edit(state: RegistryState) -> dict[str, Any]:
            self._api_tenant(tenant, state)  # exists (in the file or the registry)
            return dict([key_field(record)])

        await self._change(edit)
        return record, key

    async def revoke(self, key_id: str, at: float | None = None) -> KeyRecord:
        """Revoke now (or let it expire at `at`, for a rotation's grace period)."""
        out: list[KeyRecord] = []

        def edit(state: RegistryState) -> dict[str, Any]:
            found = state.keys.get(key_id)
            if found is None:
                file_key = key_id.startswith(FILE_KEY)
                raise RegistryRefused(
                    f"Key {key_id!r} is a tenants.yaml key: remove it from the file."
                    if file_key
                    else f"No key {key_id!r}.",
                    409 if file_key else 404,
                    "conflict" if file_key else "not_found",
                )
            now = time.time()
            if at is None or at <= now:
                out[:] = [revoked(found, now)]
            else:
                out[:] = [replace(found, expires=min(found.expires or at, at))]
            return dict([key_field(out[0])])

        await self._change(edit)
        return out[0]

    async def rotate(self, key_id: str, grace_s: float = 0.0) -> tuple[KeyRecord, str, KeyRecord]:
        """A new key with the old one's tenant, name and limits (not its expiry: keys
        are often rotated because they are about to expire), and the old one revoked now
        or after `grace_s`, in one write. Returns (new record, new key, old record)."""
        key, now = new_key(), time.time()
        out: list[KeyRecord] = []

        def edit(state: RegistryState) -> dict[str, Any]:
            old = state.keys.get(key_id)
            if old is None or not old.live(now):
                raise RegistryRefused(f"No live key {key_id!r}.", 404, "not_found")
            self._api_tenant(old.tenant, state)  # its tenant still exists
            new = KeyRecord(
                id=new_key_id(),
                tenant=old.tenant,
                sha256=key_hash(key),
                name=old.name,
                created=round(now, 3),
                rpm_limit=old.rpm_limit,
                tpm_limit=old.tpm_limit,
            )
            ends = now + grace_s
            before = (
                replace(old, expires=min(old.expires or ends, ends))
                if grace_s > 0
                else revoked(old, now)
            )
            out[:] = [new, before]
            return dict([key_field(new), key_field(before)])

        await self._change(edit)
        return out[0], key, out[1]

    def problems_with(self, known_plans: Iterable[str]) -> list[tuple[str, str, str]]:
        """Registry tenants on a plan the given policies do not define."""
        return [
            ("registry", f"tenants.{t.name}.plan", f"plan {t.plan!r} is not defined")
            for t in stranded(self._state, known_plans)
        ]


def _long_dead(state: RegistryState, now: float) -> list[str]:
    """The ids of the keys revoked or expired more than DEAD_KEPT_S ago."""
    before = now - DEAD_KEPT_S
    return [
        key.id
        for key in state.keys.values()
        if (key.revoked is not None and key.revoked <= before)
        or (key.expires is not None and key.expires <= before)
    ]
