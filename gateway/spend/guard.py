"""The request chain's "guard spend" step: reserve a call's worst case against the
tenant's (and its customer's) ceilings before forwarding; block or degrade when it does
not fit. The booking settles the reservation (see gateway.spend.ceilings and the stores); a
`Hold` (gateway.spend.hold) carries it from the reservation to its one end."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gateway.errors import GatewayError, StoreBusy, StoreUnavailable
from gateway.ids import new_id
from gateway.ledger.inflight import InFlight
from gateway.ledger.usage import TokenUsage
from gateway.ops.metrics import GatewayMetrics
from gateway.proxy.identity import Caller
from gateway.spend.ceilings import Ceiling, SpendRules, describe
from gateway.spend.hold import Hold, Reservation
from gateway.spend.images import beyond_count
from gateway.spend.money import to_units
from gateway.spend.pricing import Pricer
from gateway.store import Store
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway.spend.guard")

_FIRST_WAIT_S, _LONGEST_WAIT_S = 0.05, 1.0  # re-check another replica's settlements
SPENT_S = 30.0  # a budget seen spent to its ceiling refuses calls at once this long
MAX_SPENT = 10_000  # such budgets remembered (customers' budgets come from clients' ids)


class SpendCeilingReached(GatewayError):
    """A 429 that a retry cannot cure before the ceiling's period resets: it says so
    (`x-should-retry: false`, which the OpenAI SDKs obey instead of retrying twice) and
    when it resets (`retry-after`, seconds)."""

    status = 429
    type = "insufficient_quota"
    code = "insufficient_quota"

    def __init__(
        self, message: str, *, param: str | None = None, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message, param=param)
        self.retry_after_s = retry_after_s

    def headers(self) -> list[tuple[bytes, bytes]]:
        out = [(b"x-should-retry", b"false")]
        if self.retry_after_s is not None:
            out.append((b"retry-after", str(max(math.ceil(self.retry_after_s), 1)).encode()))
        return out


class UnpricedModelRefused(SpendCeilingReached):
    """A model without a price under a ceiling (`unpriced: block`). A subclass of the
    ceiling error so that callers which fall back at a ceiling (the summarizer) fall back
    here too; the client sees a 400 naming the model, since a retry cannot help."""

    status = 400
    type = "invalid_request_error"
    code = "model_not_priced"


@dataclass(frozen=True, slots=True)
class WorstCase:
    """What a call may be billed at most, in tokens: every input the provider bills
    (messages, tools, schemas) already corrected by the model's token factor, and the
    output ceiling of every reply it may generate (`n`, `best_of`)."""

    input_tokens: int
    output_tokens: int

    @classmethod
    def of(cls, raw_input: int, factor: float, max_output: int, replies: int = 1) -> WorstCase:
        return cls(corrected(raw_input, factor), max_output * max(replies, 1))


def corrected(raw: int, factor: float) -> int:
    """The gateway's own count of what a call sends, in the tokens the provider bills
    (the model's learned token `factor`); never fewer than our own count: a learned
    factor below 1 is an average."""
    return math.ceil(raw * max(factor, 1.0))


class SpendGuard:
    def __init__(
        self,
        store: Store,
        rules: SpendRules,
        pricer: Pricer,
        metrics: GatewayMetrics,
        fail_open: bool = True,
        inflight: InFlight | None = None,
    ) -> None:
        self._fail_open = fail_open
        self._inflight = inflight
        self._store = store
        self._rules = rules
        self._pricer = pricer
        self._metrics = metrics
        self._waiters: deque[asyncio.Future[None]] = deque()
        # Budgets whose settled spend reached their ceiling: until when (wall clock) a call
        # under it is refused without asking the store (`refuse_spent`), and the ceiling
        # it reached (a plan changed since may set another).
        self._spent: dict[str, tuple[float, int]] = {}

    def with_rules(self, rules: SpendRules) -> SpendGuard:
        """This guard under reloaded rules: calls in flight keep the old object, and both
        share the queue of calls waiting for a hold to settle. (A ceiling raised by the
        reload lets its budget's calls through at once.)"""
        guard = copy.copy(self)
        guard._rules = rules
        guard._spent = {}
        return guard

    def refuse_spent(self, caller: Caller) -> None:
        """Refuse (`SpendCeilingReached`, as `reserve` would) a call under a budget this
        process saw spent to its ceiling in the last SPENT_S: no call can fit in it (each
        holds at least one unit) until it resets, so none builds its window or reads the
        store first (a tenant past its ceiling sending long histories cost every other
        tenant the event loop). Only at the ceiling it was seen spent to: a plan changed
        since may set a higher one. Re-read after SPENT_S: an erasure on another replica
        moves a customer's spend away, and another replica's reload may raise the
        ceiling (this replica's own erasures and reloads forget it at once)."""
        if not self._spent:
            return
        tenant, now = caller.tenant, time.time()
        policy = self._rules.policy(tenant.name, tenant.plan, caller.customer, now)
        for budget in policy.guarded:
            seen = self._spent.get(budget.key)
            if seen is None:
                continue
            until, limit = seen
            if until <= now or (budget.limit_units or 0) > limit:
                del self._spent[budget.key]
                continue
            self._metrics.spend_blocks.labels(tenant.plan).inc()
            raise SpendCeilingReached(describe(budget), retry_after_s=budget.resets_at - now)

    def _spent_out(self, key: str, limit: int) -> None:
        if len(self._spent) >= MAX_SPENT:
            self._spent.clear()
        self._spent[key] = (time.time() + SPENT_S, limit)

    def forget_spent(self) -> None:
        """An erasure moved a customer's spend to a pseudonym: their budgets may have
        room again."""
        self._spent.clear()

    def worst_case(
        self,
        model: str,
        input_tokens: int,
        max_output: int,
        *,
        audio_output: bool = False,
        audio_input: int = 0,
        web_searches: int = 0,
        tier: str | None = None,
    ) -> int | None:
        """Every input token fresh (plus the margin), `audio_input` of them input audio
        at the model's audio rate, the whole output ceiling used, and `web_searches`
        searches, at the service `tier`'s rates, in units; None when the model has no
        price (for that tier, or for its audio). A call that asks for audio output may
        spend all of it on audio: the dearer of the text and audio rates."""
        margin = self._rules.file.input_margin
        fresh = int(input_tokens * margin) + 1
        usage = TokenUsage(
            fresh_input=fresh,
            input_audio=min(audio_input, fresh),
            output=max_output,
            web_searches=web_searches,
        )
        cost = self._pricer.cost(model, usage, tier)
        if cost is None:
            return None
        if audio_output:
            spoken = self._pricer.cost(model, replace(usage, output_audio=max_output), tier)
            cost = max(cost, spoken or cost)
        return to_units(cost)

    def unheld(self, caller: Caller, model: str) -> Reservation:
        """For a call that costs nothing (models, moderations): booked, never held."""
        tenant, now = caller.tenant, time.time()
        policy = self._rules.policy(tenant.name, tenant.plan, caller.customer, now)
        return Reservation(new_id(), model, policy.keys, (), at=now)

    def guards(self, caller: Caller) -> bool:
        """Whether a ceiling holds this caller's calls (the tenant's or its customer's)."""
        tenant = caller.tenant
        policy = self._rules.policy(tenant.name, tenant.plan, caller.customer, time.time())
        return bool(policy.guarded)

    async def reserve(
        self,
        caller: Caller,
        model: str,
        input_tokens: int,
        max_output: int,
        *,
        bounded: bool = True,
        images: Sequence[tuple[Any, int]] = (),
        audio_output: bool = False,
        audio_input: int = 0,
        web_searches: int = 0,
        tier: str | None = None,
        degradable: bool = True,
    ) -> Reservation:
        """Hold the cost of `input_tokens` (already corrected, see `WorstCase`) and
        `max_output` tokens for one call, and of its input `images` at the most the
        model it goes to may bill for them (gateway.spend.images); with `audio_output`,
        every output token at the audio rate if that is dearer; and `web_searches` at the
        model's per-search fee; at the rates of the service `tier` it asks for.
        `bounded=False`: its cost cannot be read from the request (image and audio
        routes), so under a ceiling only `unpriced: allow` admits it; so is audio output,
        input audio (`audio_input`: the most it may bill, in tokens, held at the audio
        rate), a search or a dearer service tier on a model whose price has no rate for it.
        `degradable=False`: a call the ceiling's `degrade_to` model cannot stand in for
        (an embedding's vectors belong to the model that made them) is refused instead."""
        tenant, now = caller.tenant, time.time()
        policy = self._rules.policy(tenant.name, tenant.plan, caller.customer, now)
        rid, keys = new_id(), policy.keys
        if not policy.guarded:
            return Reservation(rid, model, keys, (), at=now)  # no ceiling: booked, never held
        guarded = [(b.key, b.limit_units or 0) for b in policy.guarded]
        held = tuple(k for k, _ in guarded)
        worst = _Bill(
            input_tokens, max_output, tuple(images), audio_output, web_searches, tier, audio_input
        )
        price_as = self._price_as(policy.ceiling, model, bounded, worst)
        amount = self._amount(price_as or model, model, worst)
        try:
            blocked = await self._reserve(rid, guarded, amount)
            if blocked is None:
                return Reservation(rid, model, keys, held, price_as=price_as, at=now)
            degraded = (
                await self._degrade(rid, guarded, policy.ceiling, model, worst)
                if degradable
                else None
            )
        except StoreUnavailable as exc:
            # a busy pool is this process's own load: refused (503), never unguarded
            if not self._fail_open or isinstance(exc, StoreBusy):
                raise
            # fail_open: the store cannot say what was spent; the call goes unguarded
            # (and is booked against its budgets once the store is back).
            warn_throttled(log, "store unreachable: calls go without a reservation")
            return Reservation(rid, model, keys, (), price_as=price_as, at=now)
        if degraded is not None:
            self._metrics.spend_degrades.labels(tenant.plan).inc()
            cheaper, cheaper_price_as = degraded
            return Reservation(rid, cheaper, keys, held, model, cheaper_price_as, now)
        self._metrics.spend_blocks.labels(tenant.plan).inc()
        budget = next(b for b in policy.budgets if b.key == blocked)
        raise SpendCeilingReached(describe(budget), retry_after_s=budget.resets_at - time.time())

    def _price_as(self, ceiling: Ceiling, model: str, bounded: bool, worst: _Bill) -> str | None:
        """The model an unpriced one is held and booked as; raises under `block`."""
        bounded = bounded and not self._lacks_rate(model, worst)
        if bounded and self.worst_case(model, 0, 0, tier=worst.tier) is not None:
            return None
        action = ceiling.unpriced_action
        if action == "allow":
            return None
        if bounded and action == "price_as" and ceiling.price_as:
            return ceiling.price_as
        what = f"The model {model!r} has no known price and" if bounded else "This call's cost"
        raise UnpricedModelRefused(
            f"{what} cannot be held against a spend ceiling; ask the gateway's operator "
            "for a price (config.yaml `prices`) or an `unpriced` policy (spend.yaml).",
            param="model",
        )

    def _lacks_rate(self, model: str, worst: _Bill) -> bool:
        """Whether `model` has a price but not for all that `worst` may bill."""
        searches = worst.searches > 0
        return self._pricer.lacks_rate(
            model,
            audio_output=worst.audio,
            audio_input=worst.audio_input > 0,
            web_searches=searches,
            tier=worst.tier,
        )

    def _amount(self, priced_as: str, model: str, worst: _Bill) -> int:
        """`worst` on `model` (its images as `model` bills them), priced as `priced_as`."""
        tokens = worst.input_tokens + beyond_count(model, worst.images)
        cost = self.worst_case(
            priced_as,
            tokens,
            worst.max_output,
            audio_output=worst.audio,
            audio_input=worst.audio_input,
            web_searches=worst.searches,
            tier=worst.tier,
        )
        # At least one unit: a budget at its ceiling refuses even a call it cannot price.
        return max(cost or 0, 1)

    async def _degrade(
        self,
        rid: str,
        guarded: Sequence[tuple[str, int]],
        ceiling: Ceiling,
        model: str,
        worst: _Bill,
    ) -> tuple[str, str | None] | None:
        cheaper = ceiling.degrade_to
        if ceiling.action != "degrade" or not cheaper or cheaper == model:
            return None
        try:
            price_as = self._price_as(ceiling, cheaper, True, worst)
        except UnpricedModelRefused:
            return None  # a cheaper model that cannot be held is no way out
        if price_as is None and (
            self.worst_case(cheaper, 0, 0, tier=worst.tier) is None
            or self._lacks_rate(cheaper, worst)
        ):
            return None  # nor one `unpriced: allow` would let past the ceiling uncounted
        amount = self._amount(price_as or cheaper, cheaper, worst)
        if await self._reserve(rid, guarded, amount) is not None:
            return None
        return cheaper, price_as

    async def _reserve(
        self, rid: str, guarded: Sequence[tuple[str, int]], amount: int
    ) -> str | None:
        """Reserve, waiting (up to `hold_wait_s`) while the call would fit once the
        reservations of calls in flight are settled: those hold worst cases, and most
        settle far below them. Refuse at once when what is spent leaves no room."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._rules.file.hold_wait_s
        wait = _FIRST_WAIT_S
        limits = dict(guarded)
        while True:
            blocked = await self._store.reserve(rid, guarded, amount, self._rules.ttl_s)
            if blocked is None or loop.time() >= deadline:
                return blocked
            spent, held = (await self._store.budgets([blocked]))[blocked]
            if spent + amount > limits[blocked]:
                if spent >= limits[blocked]:
                    self._spent_out(blocked, limits[blocked])
                return blocked
            if held > 0:
                await self._until_freed(min(wait, max(deadline - loop.time(), 0)))
                wait = min(wait * 2, _LONGEST_WAIT_S)
            else:  # they settled since: try again at once
                await asyncio.sleep(0)

    async def _until_freed(self, timeout: float) -> None:
        """Until a hold of this process ends (then the oldest waiter retries first) or
        `timeout` passes (a hold of another replica may have ended)."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter, timeout)
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)

    def _freed(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def release(self, reservation: Reservation) -> None:
        """Drop a reservation that will not be settled. Never raises: a release that
        cannot reach the store is left to expire, and must not hide the real error."""
        if reservation.guarded:
            try:
                await self._store.release(reservation.id, reservation.guarded)
            except StoreUnavailable:
                warn_throttled(log, "store unreachable: reservations left to expire")
            self._freed()

    async def renew(self, reservation: Reservation) -> None:
        """Keep a running call's reservation alive for another TTL. Never raises."""
        try:
            if not await self._store.renew(reservation.id, reservation.guarded, self._rules.ttl_s):
                log.warning("reservation %s lapsed while its call ran", reservation.id)
        except StoreUnavailable:
            warn_throttled(log, "store unreachable: reservations not renewed")

    @contextlib.asynccontextmanager
    async def held(
        self,
        reservation: Reservation,
        book_estimate: Callable[[], Awaitable[None]] | None = None,
        journal: dict[str, Any] | None = None,
    ) -> AsyncIterator[Hold]:
        """One reservation lifecycle: renewed while the call runs; released on every exit
        unless the call was settled (`hold.settled()`) or handed to a stream relay
        (`hold.hand_over()`, whose end settles it). On a `GatewayError` that says the
        upstream may have processed the call, `book_estimate` books it instead (the
        provider may bill it): `hold.book_estimate = None` once an answer shows it did not.
        `journal`: the call's worst case (gateway.ledger.inflight), journaled from
        `hold.forwarded()` until the hold ends, so a process killed meanwhile leaves it
        to be booked; its booking takes `hold.call` as its id."""
        hold = Hold(reservation, self.release, self.renew, self._freed, self._rules.ttl_s / 3)
        hold.book_estimate = book_estimate
        if journal is not None and self._inflight is not None:
            entry = {
                **journal,
                "model": reservation.model,
                "priced_as": reservation.priced_as,
                "budgets": list(reservation.budgets),
                "reservation": reservation.id,
            }
            hold.journal = (self._inflight, entry)
        try:
            yield hold
        except GatewayError as exc:
            if exc.reached_upstream and hold.book_estimate is not None and not hold.done:
                await hold.shielded(hold.book_estimate)
            raise
        finally:
            if not hold.handed_over:
                await hold.close()


@dataclass(frozen=True, slots=True)
class _Bill:
    """What one call may bill, before it is priced on the model it goes to."""

    input_tokens: int
    max_output: int
    images: tuple[tuple[Any, int], ...]
    audio: bool  # asks for audio output
    searches: int  # web searches it may make (gateway.spend.tool_fees)
    tier: str | None = None  # the service tier it asks for (gateway.spend.pricing)
    audio_input: int = 0  # the most its input audio may bill, in audio tokens
