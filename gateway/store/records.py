"""What the stores keep: one ledger record per upstream call, and spend rows."""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gateway.ledger.usage import TokenUsage
from gateway.spend.money import to_units, usd_text


def period_of(ts: float) -> str:
    """Booking period (UTC month) of a unix timestamp: 'YYYY-MM'."""
    return time.strftime("%Y-%m", time.gmtime(ts))


@dataclass(frozen=True, slots=True)
class UsageRecord:
    id: str
    ts: float
    tenant: str
    plan: str
    model: str
    usage: TokenUsage
    cost_units: int | None  # 1e-10 USD; None when the model has no price
    customer: str | None = None
    conversation: str | None = None
    route: str = "chat"
    budgets: tuple[str, ...] = ()  # spend counters the cost adds to (gateway.spend.ceilings)
    reservation: str | None = None  # the reservation this booking settles

    @property
    def period(self) -> str:
        return period_of(self.ts)

    def to_json(self) -> dict[str, Any]:
        u = self.usage
        return {
            "id": self.id,
            "ts": self.ts,
            "tenant": self.tenant,
            "plan": self.plan,
            "customer": self.customer,
            "conversation": self.conversation,
            "model": self.model,
            "route": self.route,
            "fresh_input_tokens": u.fresh_input,
            "cached_input_tokens": u.cached_input,
            "cache_write_tokens": u.cache_write,
            "output_tokens": u.output,
            "reasoning_tokens": u.reasoning,
            "cost_usd": None if self.cost_units is None else usd_text(self.cost_units),
            "estimated": u.estimated,
            "budgets": list(self.budgets),
            "reservation": self.reservation,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> UsageRecord:
        cost = d["cost_usd"]
        return cls(
            id=d["id"],
            ts=d["ts"],
            tenant=d["tenant"],
            plan=d["plan"],
            model=d["model"],
            customer=d["customer"],
            conversation=d["conversation"],
            route=d["route"],
            usage=TokenUsage(
                d["fresh_input_tokens"],
                d["cached_input_tokens"],
                d["cache_write_tokens"],
                d["output_tokens"],
                d["reasoning_tokens"],
                d["estimated"],
            ),
            cost_units=None if cost is None else to_units(Decimal(cost)),
            budgets=tuple(d.get("budgets") or ()),
            reservation=d.get("reservation"),
        )


def record_of_row(
    r: Any, budgets: tuple[str, ...] = (), reservation: str | None = None
) -> UsageRecord:
    """A ledger row as the SQL stores keep it (id, ts, period, tenant, plan, customer,
    conversation, model, route, the five token counts, cost_units, estimated)."""
    return UsageRecord(
        id=r[0],
        ts=r[1],
        tenant=r[3],
        plan=r[4],
        customer=r[5],
        conversation=r[6],
        model=r[7],
        route=r[8],
        usage=TokenUsage(r[9], r[10], r[11], r[12], r[13], bool(r[15])),
        cost_units=r[14],
        budgets=budgets,
        reservation=reservation,
    )


@dataclass(slots=True)
class SpendRow:
    tenant: str
    plan: str
    requests: int = 0
    fresh_input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_units: int = 0
    estimated_requests: int = 0
    unpriced_requests: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "plan": self.plan,
            "requests": self.requests,
            "fresh_input_tokens": self.fresh_input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cost_usd": usd_text(self.cost_units),
            "estimated_requests": self.estimated_requests,
            "unpriced_requests": self.unpriced_requests,
        }

    def add(self, other: SpendRow) -> None:
        for name in COUNTER_FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))


COUNTER_FIELDS = (
    "requests",
    "fresh_input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cost_units",
    "estimated_requests",
    "unpriced_requests",
)


def increments(record: UsageRecord) -> dict[str, int]:
    """How one ledger record moves each tenant-month counter."""
    u = record.usage
    return {
        "requests": 1,
        "fresh_input_tokens": u.fresh_input,
        "cached_input_tokens": u.cached_input,
        "cache_write_tokens": u.cache_write,
        "output_tokens": u.output,
        "reasoning_tokens": u.reasoning,
        "cost_units": record.cost_units or 0,
        "estimated_requests": int(u.estimated),
        "unpriced_requests": int(record.cost_units is None),
    }


# A customer's spend counter: "{tenant}|customer:{id}|day|YYYY-MM-DD" or "...|month|YYYY-MM"
# (gateway.spend.ceilings). The id is not quoted, so an id holding "|" could make another
# customer's key start with this one's prefix: only these exact tails are the customer's.
_BUDGET_TAIL = re.compile(r"(?:day\|\d{4}-\d{2}-\d{2}|month\|\d{4}-\d{2})")


def customer_budget(key: str, tenant: str, customer: str) -> str | None:
    """The period tail ("day|2026-11-30") when `key` is this customer's counter."""
    prefix = f"{tenant}|customer:{customer}|"
    tail = key[len(prefix) :] if key.startswith(prefix) else ""
    return tail if _BUDGET_TAIL.fullmatch(tail) else None


# How long a budget counter is kept after its period ends. Nothing reads an ended
# period's counter (a ceiling, /admin/budgets and /metrics read the current day and
# month; the spend report reads the ledger and the month counters): the days of grace
# only cover calls reserved before the period ended and booked after it.
BUDGET_DAY_KEPT_S = 3 * 86400
BUDGET_MONTH_KEPT_S = 40 * 86400
_BUDGET_PERIOD = re.compile(r"\|(?:day\|(\d{4})-(\d{2})-(\d{2})|month\|(\d{4})-(\d{2}))$")


def budget_expires(key: str) -> float | None:
    """When a budget counter may go (unix seconds): BUDGET_DAY_KEPT_S after its day ends
    (UTC, as gateway.spend.ceilings counts it), BUDGET_MONTH_KEPT_S after its month;
    None for a key that names no period."""
    found = _BUDGET_PERIOD.search(key)
    if found is None:
        return None
    year, month, day, month_year, month_month = found.groups()
    if day is not None:
        start = calendar.timegm((int(year), int(month), int(day), 0, 0, 0))
        return start + 86400 + BUDGET_DAY_KEPT_S
    year_n, month_n = int(month_year), int(month_month)
    if not 1 <= month_n <= 12:
        return None
    year_n, month_n = (year_n + 1, 1) if month_n == 12 else (year_n, month_n + 1)
    return calendar.timegm((year_n, month_n, 1, 0, 0, 0)) + BUDGET_MONTH_KEPT_S


def legacy_doc(kind: str, key: str, doc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A document as earlier versions stored it (whole, one per key), in today's layout:
    a customer's episodes were one document each (`episodes`, `{customer}/{conversation}`)
    and are now the fields of the customer's index (`episodes`, `{customer}`), one per
    conversation (gateway.context.conversations). Other documents keep their key."""
    listed = doc.get("facts")
    if (
        kind == "facts"
        and isinstance(listed, list)
        and len(doc) == 1
        and all(isinstance(f, dict) and "id" in f for f in listed)
    ):  # a field per fact
        return key, {f"f:{f['id']}": f for f in listed}
    if kind == "episodes" and "/" in key:
        customer, conversation = key.split("/", 1)
        at = max(float(doc.get("summarized_at") or 0.0), float(doc.get("ended_at") or 0.0))
        return customer, {conversation: {**doc, "at": at}}
    return key, doc
