"""The request chain's "guard spend" step: reserve a call's worst case against the
tenant's (and its customer's) ceilings before forwarding; block or degrade when it does
not fit. The booking settles the reservation (see gateway.spend and the stores)."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass

from gateway.errors import GatewayError, StoreUnavailable
from gateway.identity import Caller
from gateway.metrics import GatewayMetrics
from gateway.pricing import Pricer, to_units
from gateway.spend import SpendRules, describe
from gateway.store import Store
from gateway.usage import TokenUsage

log = logging.getLogger("gateway.guard")


class SpendCeilingReached(GatewayError):
    status = 429
    type = "insufficient_quota"
    code = "insufficient_quota"


@dataclass(frozen=True)
class Reservation:
    id: str
    model: str  # the model to call: the requested one, or the cheaper one when degraded
    budgets: tuple[str, ...]  # every counter the booking adds to
    guarded: tuple[str, ...]  # the counters this reservation holds an amount on
    degraded_from: str | None = None


class SpendGuard:
    def __init__(
        self,
        store: Store,
        rules: SpendRules,
        pricer: Pricer,
        metrics: GatewayMetrics,
        fail_open: bool = True,
    ) -> None:
        self._fail_open = fail_open
        self._store = store
        self._rules = rules
        self._pricer = pricer
        self._metrics = metrics

    def worst_case(self, model: str, input_tokens: int, max_output: int) -> int:
        """Every input token fresh, the whole output ceiling used; 0 when unpriced."""
        margin = self._rules.file.input_margin
        usage = TokenUsage(fresh_input=int(input_tokens * margin) + 1, output=max_output)
        cost = self._pricer.cost(model, usage)
        return 0 if cost is None else to_units(cost)

    async def reserve(
        self, caller: Caller, model: str, input_tokens: int, max_output: int
    ) -> Reservation:
        tenant = caller.tenant
        policy = self._rules.policy(tenant.name, tenant.plan, caller.customer, time.time())
        guarded = [(b.key, b.limit_units or 0) for b in policy.guarded]
        rid = uuid.uuid4().hex
        keys, held = policy.keys, tuple(k for k, _ in guarded)
        # At least one unit: a budget at its ceiling refuses even a call it cannot price.
        amount = max(self.worst_case(model, input_tokens, max_output), 1)
        try:
            blocked = await self._store.reserve(rid, guarded, amount, self._rules.ttl_s)
        except StoreUnavailable:
            if not self._fail_open:
                raise
            # fail_open: the store cannot say what was spent; the call goes unguarded
            # (and is booked against its budgets once the store is back).
            log.warning("store unreachable: call for %s goes without a reservation", tenant.name)
            return Reservation(rid, model, keys, ())
        if blocked is None:
            return Reservation(rid, model, keys, held)
        cheaper = policy.ceiling.degrade_to
        if policy.ceiling.action == "degrade" and cheaper and cheaper != model:
            amount = self.worst_case(cheaper, input_tokens, max_output)
            if await self._store.reserve(rid, guarded, amount, self._rules.ttl_s) is None:
                self._metrics.spend_degrades.labels(tenant.plan).inc()
                return Reservation(rid, cheaper, keys, held, degraded_from=model)
        self._metrics.spend_blocks.labels(tenant.plan).inc()
        budget = next(b for b in policy.budgets if b.key == blocked)
        raise SpendCeilingReached(describe(budget))

    async def release(self, reservation: Reservation) -> None:
        """Drop a reservation that will not be settled. Never raises: a release that
        cannot reach the store is left to expire, and must not hide the real error."""
        if reservation.guarded:
            try:
                await self._store.release(reservation.id, reservation.guarded)
            except StoreUnavailable:
                log.warning("store unreachable: reservation %s left to expire", reservation.id)
