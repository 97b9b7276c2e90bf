"""The Redis store's key names, and those of earlier versions (for `migrate_layout`).

Every key a script touches belongs to one tenant and carries the tenant's hash tag, so
on a Redis Cluster all of them share one slot:
  gw:{<tenant>}:booked:<id>        idempotency marker of a ledger record (expires)
  gw:{<tenant>}:month:<period>     hash of the tenant-month counters, plus `plan`
  gw:{<tenant>}:ledger:<period>    list of the tenant's JSON ledger records
  gw:{<tenant>}:budget:<key>       a budget (gateway.spend.ceilings; redis_scripts),
  gw:{<tenant>}:resv:<key>         its live reservations
  gw:{<tenant>}:resvamt:<key>      and their amounts
  gw:{<tenant>}:rate:<name>        a rate-limit counter's buckets (redis_scripts.RATE)
The tag holds the tenant's name percent-quoted up to its first "|" and the quoted rest
follows it, because a budget key ("acme|customer:c1|day|2026-11-30") names its tenant only
up to the first "|": a tenant's budgets, its customers' budgets and its bookings then share
a slot whatever the name holds, and a quoted name holds no "{", "}", ":" or "|", so no
tenant's keys can pose as another's. Tenants whose names agree up to a "|" share a slot.

Global keys, never in a script (updated by their own idempotent commands):
  gw:periods              set of periods ever booked
  gw:tenants:<period>     set of tenants booked in the period
Documents (`doc_key`) are single-key operations and need no tag.
"""

from __future__ import annotations

from urllib.parse import quote

PERIODS = "gw:periods"
BUDGET_FAMILIES = ("budget", "resv", "resvamt")


def _tag(name: str) -> str:
    # An empty tag ("{}") would hash the whole key; a lone "%" is no quote() output.
    return "{" + (quote(name, safe="") or "%") + "}"


def tenant_prefix(tenant: str) -> str:
    head, bar, rest = tenant.partition("|")
    return f"gw:{_tag(head)}{quote(bar + rest, safe='')}"


def booked_key(tenant: str, record_id: str) -> str:
    return f"{tenant_prefix(tenant)}:booked:{record_id}"


def month_key(tenant: str, period: str) -> str:
    return f"{tenant_prefix(tenant)}:month:{period}"


def ledger_key(tenant: str, period: str) -> str:
    return f"{tenant_prefix(tenant)}:ledger:{period}"


def tenants_key(period: str) -> str:
    return f"gw:tenants:{period}"


def budget_key(family: str, key: str) -> str:
    """`family` ("budget", "resv", "resvamt") of a budget key, tagged with its tenant."""
    return f"gw:{_tag(key.partition('|')[0])}:{family}:{key}"


def budget_keys(key: str) -> list[str]:
    """The (budget hash, reservation zset, amount hash) triple the scripts take."""
    return [budget_key(family, key) for family in BUDGET_FAMILIES]


def rate_key(tenant: str, name: str) -> str:
    """A rate-limit counter of the tenant (its own, or one of its keys'): hash of
    bucket -> amount, on the tenant's slot so one script counts them all."""
    return f"{tenant_prefix(tenant)}:rate:{name}"


def doc_key(kind: str, tenant: str, key: str) -> str:
    """A document's own key. The tenant is quoted (no ':'), so no tenant's keys can
    pose as another's."""
    return f"gw:d:{kind}:{quote(tenant, safe='')}:{key}"


# Earlier versions (untagged; the tenant unquoted). `gw:periods` and `gw:tenants:*`
# keep their names.
LEGACY_PATTERNS = {
    "doc": "gw:doc:*",  # hash per (kind, tenant): field = key, value = the JSON document
    "booked": "gw:booked:*",  # gw:booked:<id>
    "month": "gw:month:*",  # gw:month:<period>:<tenant>
    "ledger": "gw:ledger:*",  # gw:ledger:<period>:<tenant>, and gw:ledger:<period> (all)
    "budget": "gw:budget:*",  # gw:budget:<key>, and resv, resvamt
    "resv": "gw:resv:*",
    "resvamt": "gw:resvamt:*",
}
_PERIOD_LEN = len("YYYY-MM")


def legacy_doc_hash(name: str) -> tuple[str, str]:
    """(kind, tenant) of an old `gw:doc:<kind>:<tenant>` hash (kinds hold no ':')."""
    kind, _, tenant = name.removeprefix("gw:doc:").partition(":")
    return kind, tenant


def legacy_period_tenant(family: str, name: str) -> tuple[str, str | None]:
    """(period, tenant) of an old `gw:<family>:<period>:<tenant>` key; the tenant is
    None for the old all-tenants ledger list `gw:ledger:<period>`."""
    rest = name.removeprefix(f"gw:{family}:")
    if len(rest) == _PERIOD_LEN:
        return rest, None
    return rest[:_PERIOD_LEN], rest[_PERIOD_LEN + 1 :]


def legacy_renamed(family: str, name: str) -> str | None:
    """Today's name of an old month, tenant ledger or budget key; None for the old
    all-tenants ledger list (dropped: the tenants' lists hold the same rows)."""
    if family in BUDGET_FAMILIES:
        return budget_key(family, name.removeprefix(f"gw:{family}:"))
    period, tenant = legacy_period_tenant(family, name)
    if tenant is None:
        return None
    return month_key(tenant, period) if family == "month" else ledger_key(tenant, period)


def text(value: bytes | str) -> str:
    """A key's name (or a field) as Redis answers it, as text."""
    return value.decode() if isinstance(value, bytes) else value
