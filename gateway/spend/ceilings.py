"""Spend ceilings (`policies/spend.yaml`): what a tenant, or one of its end customers,
may spend per day and per month, and what happens at the ceiling. Pure.

Every booking adds its cost to the budget counters of its tenant (day, month) and, when
the app names the customer, of that customer (day, month), whether or not a ceiling is
set, so a ceiling configured mid-month already knows what was spent. Before a call is
forwarded its worst case is reserved against the budgets that have a ceiling; the
booking settles the reservation to the real cost in the same atomic step.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import Field, PositiveInt, model_validator

from gateway.spend.money import to_units
from gateway.yamlfile import Strict, read_yaml, validate

SPEND_FILE = "spend.yaml"


class Ceiling(Strict):
    monthly_usd: Decimal | None = Field(default=None, ge=0)
    daily_usd: Decimal | None = Field(default=None, ge=0)
    customer_monthly_usd: Decimal | None = Field(default=None, ge=0)
    customer_daily_usd: Decimal | None = Field(default=None, ge=0)
    action: Literal["block", "degrade"] | None = None
    degrade_to: str | None = None
    # A model the gateway cannot price (an Azure deployment name, a vLLM model) cannot be
    # held against a ceiling: refuse it (`block`, the default where a ceiling is set),
    # reserve and book it at another model's price (`price_as`), or let it through
    # uncounted (`allow`, booked with its tokens as unpriced).
    unpriced: Literal["block", "price_as", "allow"] | None = None
    price_as: str | None = None

    @model_validator(mode="after")
    def _price_as_needs_a_model(self) -> Ceiling:
        if self.unpriced == "price_as" and not self.price_as:
            raise ValueError("unpriced: price_as needs 'price_as: MODEL'")
        return self

    @property
    def unpriced_action(self) -> str:
        if self.unpriced is not None:
            return self.unpriced
        return "price_as" if self.price_as else "block"


class SpendFile(Strict):
    plans: dict[str, Ceiling] = {}
    tenants: dict[str, Ceiling] = {}
    # Must outlast the longest call (a reservation that expires mid-call no longer holds
    # its amount): the default is twice the default upstream timeout.
    reservation_ttl_s: float = Field(default=600.0, gt=0)
    input_margin: float = Field(default=1.05, ge=1.0)  # reserve a bit above our own count
    # A call that does not fit only because other calls hold reservations waits up to
    # this long for them to settle, instead of being refused while money is left.
    hold_wait_s: float = Field(default=10.0, ge=0)
    # The reply ceiling of a pass-through call that names none: sent upstream as its
    # max_output_tokens / max_tokens, so the reservation is a true worst case.
    default_max_output_tokens: dict[str, PositiveInt] = {"responses": 4096, "completions": 16}
    # The built-in tool calls of a Responses call with a web search tool that names no
    # `max_tool_calls`: sent upstream as that, so its searches (billed each, and each
    # held at a context window of results: gateway.spend.files) are bounded.
    default_max_tool_calls: PositiveInt = 10

    @model_validator(mode="after")
    def _degrade_needs_a_model(self) -> SpendFile:
        for where, table in (("plans", self.plans), ("tenants", self.tenants)):
            for name, ceiling in table.items():
                if ceiling.action == "degrade" and not ceiling.degrade_to:
                    raise ValueError(f"{where}.{name}: action 'degrade' needs 'degrade_to'")
        return self


@dataclass(frozen=True)
class Budget:
    """One counter with (maybe) a ceiling: key, limit in 1e-10 USD units (None: no ceiling)."""

    key: str
    limit_units: int | None
    scope: str  # "tenant" or "customer"
    period: str  # "day" or "month"
    resets_at: float


@dataclass(frozen=True)
class SpendPolicy:
    ceiling: Ceiling
    budgets: tuple[Budget, ...]

    @property
    def guarded(self) -> tuple[Budget, ...]:
        return tuple(b for b in self.budgets if b.limit_units is not None)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(b.key for b in self.budgets)


# The limits a tenant's `null` lifts (no ceiling there); its other settings (the action,
# the models it names) are taken from its plan where it sets none, `null` included.
LIFTED_BY_NULL = frozenset(
    {"monthly_usd", "daily_usd", "customer_monthly_usd", "customer_daily_usd"}
)


def _merge(plan: Ceiling | None, tenant: Ceiling | None) -> Ceiling:
    values: dict[str, object] = {}
    for layer in (plan, tenant):
        if layer is not None:
            said = layer.model_dump(exclude_unset=True, exclude={"schema_ref"})
            values.update({k: v for k, v in said.items() if v is not None or k in LIFTED_BY_NULL})
    return Ceiling.model_validate(values)


def _resets(now: float) -> tuple[str, float, str, float]:
    t = time.gmtime(now)
    day = time.strftime("%Y-%m-%d", t)
    next_day = calendar.timegm((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0)) + 86400
    month = time.strftime("%Y-%m", t)
    year, mon = (t.tm_year + 1, 1) if t.tm_mon == 12 else (t.tm_year, t.tm_mon + 1)
    next_month = calendar.timegm((year, mon, 1, 0, 0, 0))
    return day, float(next_day), month, float(next_month)


def _units(value: Decimal | None) -> int | None:
    return None if value is None else to_units(value)


@dataclass(frozen=True)
class SpendRules:
    file: SpendFile
    # Each (plan, tenant)'s merged ceiling, made once per loaded file, not per request.
    _merged: dict[tuple[str, str], Ceiling] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def policy(self, tenant: str, plan: str, customer: str | None, now: float) -> SpendPolicy:
        ceiling = self._merged.get((plan, tenant))
        if ceiling is None:
            ceiling = _merge(self.file.plans.get(plan), self.file.tenants.get(tenant))
            self._merged[(plan, tenant)] = ceiling
        day, day_reset, month, month_reset = _resets(now)
        budgets = [
            Budget(
                f"{tenant}|month|{month}",
                _units(ceiling.monthly_usd),
                "tenant",
                "month",
                month_reset,
            ),
            Budget(f"{tenant}|day|{day}", _units(ceiling.daily_usd), "tenant", "day", day_reset),
        ]
        if customer:
            budgets += [
                Budget(
                    f"{tenant}|customer:{customer}|month|{month}",
                    _units(ceiling.customer_monthly_usd),
                    "customer",
                    "month",
                    month_reset,
                ),
                Budget(
                    f"{tenant}|customer:{customer}|day|{day}",
                    _units(ceiling.customer_daily_usd),
                    "customer",
                    "day",
                    day_reset,
                ),
            ]
        return SpendPolicy(ceiling, tuple(budgets))

    @property
    def ttl_s(self) -> float:
        return self.file.reservation_ttl_s


def describe(budget: Budget) -> str:
    """The words of a 429: which ceiling, which period, when it resets."""
    from gateway.spend.money import from_units

    who = "this customer's" if budget.scope == "customer" else "the tenant's"
    period = "daily" if budget.period == "day" else "monthly"
    reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(budget.resets_at))
    limit = format(from_units(budget.limit_units or 0).normalize(), "f")  # never "5E+2"
    return f"Spend ceiling reached: {who} {period} ceiling of ${limit} USD; it resets at {reset}."


def load_spend(policies_dir: Path) -> SpendRules:
    path = policies_dir / SPEND_FILE
    if not path.exists():
        return SpendRules(SpendFile())  # no ceilings: spend is still counted per budget
    return SpendRules(validate(SpendFile, read_yaml(path), path))


def _has_ceiling(c: Ceiling) -> bool:
    limits = (c.monthly_usd, c.daily_usd, c.customer_monthly_usd, c.customer_daily_usd)
    return any(v is not None for v in limits)


def _entries(file: SpendFile) -> list[tuple[str, Ceiling]]:
    return [
        (f"{where}.{name}", c)
        for where in ("plans", "tenants")
        for name, c in getattr(file, where).items()
    ]


def spend_problems(rules: SpendRules, priced: Callable[[str], bool]) -> list[tuple[str, str]]:
    """(key, reason) per error `serve` must refuse: a `price_as` model without a price
    would hold nothing."""
    return [
        (f"{key}.price_as", f"{c.price_as!r} has no price itself")
        for key, c in _entries(rules.file)
        if c.price_as and not priced(c.price_as)
    ]


def spend_warnings(
    rules: SpendRules,
    tenant_plans: Mapping[str, str],
    priced: Callable[[str], bool],
    upstream_timeout_s: float,
) -> list[str]:
    """What `check-config` warns of: choices that refuse calls or weaken a ceiling.
    `tenant_plans`: the tenants to check (tenants.yaml's, and the store's when read)."""
    out = [
        f"{SPEND_FILE}: {key}.degrade_to: {c.degrade_to!r} has no price: at the ceiling "
        "calls are refused, not degraded (add it to config.yaml prices, or set "
        "`unpriced: price_as`)"
        for key, c in _entries(rules.file)
        if c.degrade_to and not priced(c.degrade_to) and c.unpriced_action != "price_as"
    ]
    blocking = sorted(
        name
        for name, plan in tenant_plans.items()
        if _has_ceiling(c := _merge(rules.file.plans.get(plan), rules.file.tenants.get(name)))
        and c.unpriced is None
        and not c.price_as
    )
    if blocking:
        out.append(
            f"{SPEND_FILE}: tenants {', '.join(blocking)} have a spend ceiling and no "
            "`unpriced` policy: calls to models without a price (Azure deployment names, "
            "self-hosted models, image and audio routes) are refused (400 model_not_priced); "
            "add prices in config.yaml or set `unpriced: allow` or `price_as: MODEL`"
        )
    if rules.ttl_s < upstream_timeout_s:
        out.append(
            f"{SPEND_FILE}: reservation_ttl_s ({rules.ttl_s:g} s) is below upstream.timeout_s "
            f"({upstream_timeout_s:g} s): a running call renews its reservation every "
            f"{rules.ttl_s / 3:g} s; a replica stalled for longer loses its holds, and its "
            "calls can pass a ceiling"
        )
    return out
