"""Money as the stores keep it: integer counts of 1e-10 USD, so sums added up
atomically (a Lua script, one SQLite transaction) stay exact. Costs are `Decimal`."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

COST_QUANTUM = Decimal("1e-10")


def to_units(cost: Decimal) -> int:
    """Cost as an integer count of 1e-10 USD, the unit the stores add up atomically."""
    return int(cost.quantize(COST_QUANTUM, rounding=ROUND_HALF_EVEN).scaleb(10))


def from_units(units: int) -> Decimal:
    return Decimal(units).scaleb(-10)


def usd_text(units: int) -> str:
    """A cost as JSON shows it: fixed-point, ten decimals ("0.0000001234", never
    "1.234E-7" or "0E-10")."""
    return format(from_units(units), "f")
