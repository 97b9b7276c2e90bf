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
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from gateway.config import _read_yaml, _Strict, _validate
from gateway.pricing import to_units

SPEND_FILE = "spend.yaml"


class Ceiling(_Strict):
    monthly_usd: Decimal | None = Field(default=None, ge=0)
    daily_usd: Decimal | None = Field(default=None, ge=0)
    customer_monthly_usd: Decimal | None = Field(default=None, ge=0)
    customer_daily_usd: Decimal | None = Field(default=None, ge=0)
    action: Literal["block", "degrade"] | None = None
    degrade_to: str | None = None


class SpendFile(_Strict):
    plans: dict[str, Ceiling] = {}
    tenants: dict[str, Ceiling] = {}
    # Must outlast the longest call (a reservation that expires mid-call no longer holds
    # its amount): the default is twice the default upstream timeout.
    reservation_ttl_s: float = Field(default=600.0, gt=0)
    input_margin: float = Field(default=1.05, ge=1.0)  # reserve a bit above our own count

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


def _merge(plan: Ceiling | None, tenant: Ceiling | None) -> Ceiling:
    values: dict[str, object] = {}
    for layer in (plan, tenant):
        if layer is not None:
            values.update(layer.model_dump(exclude_none=True, exclude={"schema_ref"}))
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

    def policy(self, tenant: str, plan: str, customer: str | None, now: float) -> SpendPolicy:
        ceiling = _merge(self.file.plans.get(plan), self.file.tenants.get(tenant))
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
    from gateway.pricing import from_units

    who = "this customer's" if budget.scope == "customer" else "the tenant's"
    period = "daily" if budget.period == "day" else "monthly"
    reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(budget.resets_at))
    limit = from_units(budget.limit_units or 0).normalize()
    return f"Spend ceiling reached: {who} {period} ceiling of ${limit} USD; it resets at {reset}."


def load_spend(policies_dir: Path) -> SpendRules:
    path = policies_dir / SPEND_FILE
    if not path.exists():
        return SpendRules(SpendFile())  # no ceilings: spend is still counted per budget
    return SpendRules(_validate(SpendFile, _read_yaml(path), path))
