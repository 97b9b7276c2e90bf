"""The request chain's rate-limit step: before a call is forwarded, count it (one
request, its input tokens) against every limited counter of its tenant and key, or
refuse it (429 `rate_limit_exceeded`, nothing forwarded, nothing booked); once the
reply is in, settle its output tokens into the same window. The arithmetic is pure
(gateway.spend.rate_limits); the store counts atomically (`Store.count_rate`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from gateway.config import Tenant
from gateway.errors import RateLimited, StoreRejected, StoreUnavailable
from gateway.spend.rate_limits import (
    TOKENS,
    Counter,
    RateRules,
    Verdict,
    Window,
    amount,
    message,
    used,
    verdict,
)
from gateway.store import Store
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway.spend.rate_guard")
_NO_WINDOW = Window(1000)  # an unlimited call counts nowhere


@dataclass(frozen=True, slots=True)
class RateTicket:
    """An admitted call: the headers it answers with, and where its output settles."""

    tenant: str = ""
    tokens: tuple[Counter, ...] = ()  # the token counters its output is added to
    bucket: int = 0
    window: Window = _NO_WINDOW
    headers: tuple[tuple[bytes, bytes], ...] = ()


UNLIMITED = RateTicket()


class RateGuard:
    def __init__(self, store: Store, fail_open: bool = True) -> None:
        self._store = store
        self._fail_open = fail_open

    async def admit(self, rules: RateRules, tenant: Tenant, tokens: int) -> RateTicket:
        """Count one request and `tokens` input tokens, or raise `RateLimited`."""
        counters = rules.counters(
            tenant.name, tenant.plan, tenant.key_id, tenant.rpm_limit, tenant.tpm_limit
        )
        if not counters:
            return UNLIMITED
        window = rules.window
        wanted = [(c.name, c.limit, amount(c, tokens)) for c in counters]
        try:
            use = await self._store.count_rate(
                tenant.name, wanted, window.bucket_ms, window.buckets
            )
        except StoreUnavailable:
            if not self._fail_open:
                raise
            warn_throttled(log, "store unreachable: calls go without rate limits")
            return UNLIMITED
        found = verdict(counters, tokens, use, window)
        if found.admitted:
            spent = tuple(c for c in counters if c.kind == TOKENS)
            return RateTicket(tenant.name, spent, use.bucket, window, found.headers)
        raise _refusal(found, tokens, rules)

    async def precheck(self, rules: RateRules, tenant: Tenant) -> None:
        """Refuse at once a call that could not be admitted anyway (its tenant or key
        has no request left in the window, or is past its tokens), before any work is
        done for it: a chat turn builds its window (and may summarize, upstream) before
        its input is counted by `admit`. Counts nothing."""
        counters = rules.counters(
            tenant.name, tenant.plan, tenant.key_id, tenant.rpm_limit, tenant.tpm_limit
        )
        if not counters:
            return
        window = rules.window
        try:
            use = await self._store.count_rate(
                tenant.name,
                [(c.name, c.limit, 0) for c in counters],
                window.bucket_ms,
                window.buckets,
            )
        except StoreUnavailable:
            if not self._fail_open:
                raise
            return  # admit() decides (and warns)
        full = any(used(use, n, window) + amount(c, 0) > c.limit for n, c in enumerate(counters))
        if full:
            raise _refusal(verdict(counters, 0, replace(use, admitted=False), window), 0, rules)

    async def settle(self, ticket: RateTicket, output_tokens: int) -> None:
        """Add a reply's output tokens to the window its request was counted in. Never
        raises: a settlement the store cannot take is left out (the limit then counts
        that call's input only)."""
        if not ticket.tokens or output_tokens <= 0:
            return
        wanted = [(c.name, c.limit, output_tokens) for c in ticket.tokens]
        try:
            await self._store.count_rate(
                ticket.tenant,
                wanted,
                ticket.window.bucket_ms,
                ticket.window.buckets,
                settle_bucket=ticket.bucket,
            )
        except (StoreUnavailable, StoreRejected):
            warn_throttled(log, "store unreachable: output tokens left out of rate limits")


def _refusal(found: Verdict, tokens: int, rules: RateRules) -> RateLimited:
    """The 429 of a refused call: `Retry-After`, or `x-should-retry: false` when no wait
    would help (a call larger than the limit itself)."""
    assert found.blocked is not None
    headers = list(found.headers)
    if found.retry_after_s is None:
        headers.append((b"x-should-retry", b"false"))
    else:
        headers.append((b"retry-after", str(found.retry_after_s).encode()))
    text = message(found, tokens, rules.file.window_s)
    return RateLimited(text, kind=found.blocked.kind, headers=headers)
