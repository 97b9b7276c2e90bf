"""Accounting: turn what the upstream reported (or, failing that, the gateway's own
counts) into a priced ledger record and book it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from gateway.ids import new_id
from gateway.ledger.booking import Bookkeeper
from gateway.ledger.tokens import TokenCounter
from gateway.ledger.usage import (
    Malformed,
    TokenUsage,
    UsageBound,
    clamped,
    implausible,
    normalize,
)
from gateway.ops.metrics import GatewayMetrics
from gateway.proxy.identity import Caller
from gateway.spend.money import to_units
from gateway.spend.pricing import Pricer
from gateway.store.records import UsageRecord
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway.ledger.accounting")


class Accountant:
    def __init__(
        self,
        tokens: TokenCounter,
        pricer: Pricer,
        bookkeeper: Bookkeeper,
        metrics: GatewayMetrics,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._tokens = tokens
        self._pricer = pricer
        self._bookkeeper = bookkeeper
        self._metrics = metrics
        self._clock = clock

    def usage(
        self,
        model: str,
        reported: Any,
        input_estimate: int | None,
        output_text: Callable[[], str] | None = None,
        bound: UsageBound | None = None,
    ) -> TokenUsage | None:
        """The call's token split: reported when present, else estimated from our counts.

        `input_estimate` is the raw (uncorrected) count of what was sent; None when the
        gateway did not count it (pass-through routes), and then only reported usage books.
        `bound`: the most the call can have used; a report past it is implausible (a
        corrupt or hostile upstream would otherwise bill a tenant past its reservation).
        The model's token factor learns from the report unless the call's images,
        audio, files or searches added input the estimate does not measure
        (`bound.uncounted`).
        """
        try:
            usage = normalize(reported)
        except Malformed as exc:
            self._metrics.implausible_usage.inc()
            warn_throttled(log, "malformed usage reported for %s (%s): estimated", model, exc)
            usage = None
        if usage is not None and (problem := implausible(usage, bound)):
            self._metrics.implausible_usage.inc()
            warn_throttled(log, "implausible usage reported for %s (%s): estimated", model, problem)
            if input_estimate is None:
                return clamped(usage, bound)
            usage = None  # the gateway's own counts are the better guess
        elif usage is not None:
            if input_estimate and not (bound is not None and bound.uncounted):
                self._tokens.learn(model, input_estimate, usage.input_total)
            return usage
        if input_estimate is None:
            return None
        output = self._tokens.count_text(model, output_text()) if output_text else 0
        return TokenUsage(
            fresh_input=round(input_estimate * self._tokens.factor(model)),
            output=output,
            estimated=True,
        )

    def unread(self, model: str, input_estimate: int, bound: UsageBound) -> TokenUsage:
        """A call the upstream answered but whose reply the gateway could not read (too
        large, timed out mid-answer): the provider may have billed every reply to its
        ceiling, so that is what is booked, estimated."""
        return TokenUsage(
            fresh_input=round(input_estimate * self._tokens.factor(model)),
            output=bound.output,
            estimated=True,
        )

    async def book(
        self,
        caller: Caller,
        model: str,
        usage: TokenUsage,
        route: str,
        *,
        conversation: str | None = None,
        budgets: tuple[str, ...] = (),
        reservation: str | None = None,
        fallback_model: str | None = None,
        tier: str | None = None,
        held_tier: str | None = None,
        record_id: str | None = None,
        at: float = 0.0,
    ) -> UsageRecord:
        """Book `usage` of `model`, priced at its service `tier`'s rates (the tier that
        served the call, gateway.spend.pricing); `held_tier`: the tier it was held at.
        `record_id`: the call's id in the in-flight journal (gateway.ledger.inflight).
        `at`: when its reservation was made (`Reservation.at`), the record's date: the
        ledger's period is then the one whose `budgets` it adds to (0: now)."""
        ts = at or self._clock()
        cost = self._cost(model, usage, tier, held_tier, fallback_model, ts)
        if cost is None:
            self._metrics.count_unpriced(model)
        if usage.estimated:
            self._metrics.estimated.labels(route).inc()
        record = UsageRecord(
            id=record_id or new_id(),
            ts=ts,
            tenant=caller.tenant.name,
            plan=caller.tenant.plan,
            model=model,
            usage=usage,
            cost_units=None if cost is None else to_units(cost),
            customer=caller.customer,
            conversation=conversation or caller.conversation,
            route=route,
            budgets=budgets,
            reservation=reservation,
        )
        await self._bookkeeper.book(record)
        return record

    def left_behind(self, entry: dict[str, Any]) -> UsageRecord | None:
        """A call a killed process journaled in flight (gateway.ledger.inflight), as its
        booking: its input and its whole output ceiling, estimated (the provider may
        have billed that much), under the id it would have been booked with; None for an
        entry that cannot be read."""
        try:
            usage = TokenUsage(
                fresh_input=int(entry["input"]),
                output=int(entry["output"]),
                web_searches=int(entry.get("web_searches") or 0),
                estimated=True,
            )
            model, tier = str(entry["model"]), entry.get("tier")
            priced_as = entry.get("priced_as")
            at = float(entry["at"])  # priced as it was when the call was made
            fallback = str(priced_as) if priced_as else None
            cost = self._cost(model, usage, tier, tier, fallback, at)
            self._metrics.estimated.labels(str(entry.get("route", "chat"))).inc()
            return UsageRecord(
                id=str(entry["begun"]),
                ts=at,
                tenant=str(entry["tenant"]),
                plan=str(entry.get("plan") or ""),
                model=model,
                usage=usage,
                cost_units=None if cost is None else to_units(cost),
                customer=entry.get("customer"),
                conversation=entry.get("conversation"),
                route=str(entry.get("route", "chat")),
                budgets=tuple(str(b) for b in entry.get("budgets") or ()),
                reservation=entry.get("reservation"),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def _cost(
        self,
        model: str,
        usage: TokenUsage,
        tier: str | None,
        held_tier: str | None,
        fallback_model: str | None,
        at: float,
    ) -> Decimal | None:
        """The price of `usage` at the time `at`: nothing for a call that bills nothing,
        priced or not (no "unpriced" warning); else at `model`'s rates (the model the reply
        names), or `fallback_model`'s (the model the call was held at: the requested one, or its
        `price_as`) when the operator priced that one in config.yaml and not the one the
        reply names (OpenAI and Azure name a dated snapshot, `gpt-4o-2024-08-06`, for
        `gpt-4o`: the operator's price wins over genai-prices' list price, and is what
        was held), or when the reply names a model there is no price for: the requested
        model's price is the honest guess, and what was reserved. A call whose use the
        upstream did not report (`usage.unmetered`) is unpriced."""
        if usage.unmetered:
            return None
        if not usage.billed:
            return Decimal(0)
        pricer = self._pricer
        if fallback_model and fallback_model != model:
            if pricer.operator_priced(fallback_model) and not pricer.operator_priced(model):
                return self._price(fallback_model, usage, tier, held_tier, at)
            if not pricer.knows(model):
                # not "counted unpriced": it is priced, at the model it was held at
                log.debug(
                    "no price for %r (the reply's model): booked at %r's", model, fallback_model
                )
                return self._price(fallback_model, usage, tier, held_tier, at)
        cost = self._price(model, usage, tier, held_tier, at)
        if cost is None and fallback_model and fallback_model != model:
            cost = self._price(fallback_model, usage, tier, held_tier, at)
        return cost

    def _price(
        self, model: str, usage: TokenUsage, tier: str | None, held_tier: str | None, at: float
    ) -> Decimal | None:
        """At the rates of the tier that served the call. A tier the reply names without
        rates for the model ("on_demand") is booked at the held tier's, never free; one
        dearer than the hold is booked at its own rates, past what was held (a project
        set to a dearer tier than `upstream.default_service_tier` says)."""
        cost = self._pricer.cost(model, usage, tier, at=at)
        if tier == held_tier:
            return cost
        held = self._pricer.cost(model, usage, held_tier, at=at)
        if cost is None:
            return held
        if held is not None and cost > held:
            warn_throttled(
                log,
                "a call held at service tier %r was served at %r, dearer: booked at its "
                "rates, past what was held (upstream.default_service_tier)",
                held_tier,
                str(tier)[:32],
            )
        return cost
