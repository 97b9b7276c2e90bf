"""What a /metrics scrape reads and how long its body is kept: every tenant's spend
against its tenant-wide ceilings, read from the store in one go, and the rendered body,
made once for the scrapes that arrive together and kept in proportion to its cost."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gateway.store.records import SpendRow

if TYPE_CHECKING:
    from gateway.spend.ceilings import SpendRules
    from gateway.store import Store


@dataclass(frozen=True, slots=True)
class CeilingRow:
    """A tenant's spend in one ceiling's period, and that ceiling, in 1e-10 USD units."""

    tenant: str
    period: str  # "day" or "month"
    spent_units: int
    limit_units: int


# A /metrics body is kept this many times as long as it took to read and render (a
# thousands-of-tenants body that took a second is kept SCRAPE_KEPT_MAX_S; a small one
# only milliseconds, so a scrape still sees the requests just before it).
SCRAPE_KEPT_FACTOR = 10.0
SCRAPE_KEPT_MAX_S = 5.0

Scraped = tuple[list[SpendRow] | None, Sequence[CeilingRow]]
# GatewayMetrics.render: the exposition text of what was read
Render = Callable[[list[SpendRow] | None, Sequence[CeilingRow]], bytes]


class ScrapeCache:
    """The /metrics body of this process: rendered in a worker thread (every tenant's
    families can take the event loop a second), once for the scrapes that arrive while
    it renders, and kept a while after in proportion to what it cost, so that a scraper
    asking often cannot keep the process rendering."""

    def __init__(self) -> None:
        self._body: bytes | None = None
        self._until = 0.0
        self._making: asyncio.Future[bytes] | None = None
        self._generation = 0  # `forget` counts up: a render begun before is not kept

    def forget(self) -> None:
        """Every scrape's answer changed (a reload's config sha): the body kept, and one
        being rendered, are served no more."""
        self._generation += 1
        self._body, self._until, self._making = None, 0.0, None

    async def body(self, render: Render, read: Callable[[], Awaitable[Scraped]]) -> bytes:
        if self._body is not None and time.monotonic() < self._until:
            return self._body
        if self._making is None:
            self._making = asyncio.ensure_future(self._make(render, read))
            self._making.add_done_callback(self._made)
        return await asyncio.shield(self._making)

    async def _make(self, render: Render, read: Callable[[], Awaitable[Scraped]]) -> bytes:
        started, generation = time.monotonic(), self._generation
        spend, ceilings = await read()
        body = await asyncio.to_thread(render, spend, ceilings)
        now = time.monotonic()
        if generation == self._generation:
            self._body = body
            self._until = now + min((now - started) * SCRAPE_KEPT_FACTOR, SCRAPE_KEPT_MAX_S)
        return body

    def _made(self, making: asyncio.Future[bytes]) -> None:
        if self._making is making:
            self._making = None
        if not making.cancelled():
            making.exception()  # retrieved: the scrapes that waited on it raise it


async def tenant_ceilings(
    store: Store, rules: SpendRules, tenants: Mapping[str, str], now: float
) -> list[CeilingRow]:
    """Spend against every tenant-wide ceiling of `tenants` (name -> plan), in one store
    read. Customer ceilings are left out: a customer id is no label. Raises
    StoreUnavailable as the store does."""
    budgets = [
        (name, b)
        for name, plan in sorted(tenants.items())
        for b in rules.policy(name, plan, None, now).guarded
        if b.scope == "tenant"
    ]
    if not budgets:
        return []
    counters = await store.budgets([b.key for _, b in budgets])
    return [
        CeilingRow(name, b.period, counters[b.key][0], b.limit_units or 0) for name, b in budgets
    ]
