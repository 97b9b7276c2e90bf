"""The gateway's live resources, built once per process in the app's lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
from prometheus_client import CollectorRegistry
from starlette.requests import Request

from gateway.config import Config, Settings, UpstreamConfig
from gateway.context.builder import WindowBuilder
from gateway.context.common_words import common_words
from gateway.context.conversations import ConversationStore
from gateway.context.first_names import first_names
from gateway.context.places import city_names
from gateway.context.summarizer import Summarizer
from gateway.errors import StoreUnavailable
from gateway.ledger.accounting import Accountant
from gateway.ledger.booking import Bookkeeper
from gateway.ledger.inflight import InFlight, left_behind
from gateway.ledger.tokens import TokenCounter
from gateway.loops.escalation import Escalations
from gateway.ops.metrics import GatewayMetrics
from gateway.ops.metrics_files import forget_gone_workers, worker_stopped
from gateway.proxy.cache_scope import CacheScopes, scope_secret
from gateway.proxy.identity import Caller
from gateway.proxy.request_body import BodyBytes, read_body
from gateway.proxy.transport import HTTP11Transport
from gateway.proxy.upstream import Upstream
from gateway.spend.guard import SpendGuard
from gateway.spend.pricing import Pricer
from gateway.spend.rate_guard import RateGuard
from gateway.store import Store, open_store
from gateway.tenancy.registry import Registry

log = logging.getLogger("gateway")
CLOSE_WAIT_S = 5.0

TRANSPORTS: dict[str, Callable[[UpstreamConfig], httpx.AsyncBaseTransport | None]] = {
    "lean": lambda cfg: HTTP11Transport(
        connect_timeout=cfg.connect_timeout_s, read_timeout=cfg.timeout_s
    ),
    "httpx": lambda cfg: None,  # httpx's default pool
}


@dataclass
class Gateway:
    settings: Settings
    upstream: Upstream
    store: Store
    bookkeeper: Bookkeeper
    tokens: TokenCounter
    accountant: Accountant
    metrics: GatewayMetrics
    windows: WindowBuilder
    guard: SpendGuard
    escalations: Escalations
    registry: Registry
    rates: RateGuard  # reads the rate limits of `settings` per call: a reload applies at once
    pricer: Pricer
    inflight: InFlight  # the calls forwarded and not yet booked, on disk
    # Each tenant's prompt-cache scope (gateway/proxy/cache_scope.py): None when shared.
    cache_scopes: CacheScopes
    # The conversations' clock: when a turn arrives and ends (facts' dates, the pause
    # since the last turn). `gateway replay --clock workload` sets it to the turns' times.
    turn_clock: Callable[[], float] = time.time
    bodies: BodyBytes = field(default_factory=BodyBytes)  # shared by every generation
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _store_ok_at: float = -1e9

    async def guard_store(self) -> None:
        """With `store_failure: fail_closed`, refuse to forward while the store is down.
        A successful check stands for one second, so the guard costs no store round trip
        per request under load."""
        if self.settings.config.store_failure != "fail_closed":
            return
        now = asyncio.get_running_loop().time()
        if now - self._store_ok_at < 1.0:
            return
        await self.store.ping()
        self._store_ok_at = now

    async def refuse_early(self, caller: Caller, spends: bool) -> None:
        """Before any work for a call, its body's reading included: one its rate limits
        would refuse, or (`spends`: a call that may cost) a budget seen spent to its
        ceiling (`SpendGuard.refuse_spent`), costs next to nothing, and another tenant's
        calls wait for none of it. Raises as they refuse; counts nothing."""
        await self.guard_store()
        await self.rates.precheck(self.settings.rate_limits, caller.tenant)
        if spends:
            self.guard.refuse_spent(caller)

    async def read_body(
        self, request: Request, tenant: str | None, limit: int | None = None
    ) -> bytes:
        """A client's body within `limits` (`limit`: a route's own, smaller one); a
        tenant's bytes count toward its `max_tenant_body_bytes` while they arrive."""
        limits = self.settings.config.limits
        share = None if tenant is None else self.bodies.of(tenant, limits.max_tenant_body_bytes)
        return await read_body(
            request, limit or limits.max_body_bytes, limits.body_timeout_s, share
        )

    def context_window(self, model: str) -> int:
        """The most input one pass of `model` reads, which a file or a search round is
        held at: its window in context.yaml, or genai-prices' where that is larger (the
        packaged default is 128,000 tokens; genai-prices gives gpt-4.1 1,000,000)."""
        configured = self.settings.policies.context_window(model)
        return max(configured, self.pricer.context_window(model) or 0)

    async def start(self) -> None:
        self._book_left_behind()
        self.bookkeeper.load_spill()
        with contextlib.suppress(StoreUnavailable):  # run() keeps trying
            await self.registry.refresh(force=True)
        self._tasks.append(asyncio.create_task(self.bookkeeper.run(), name="bookkeeper"))
        self._tasks.append(asyncio.create_task(self.registry.run(), name="registry"))

    def _book_left_behind(self) -> None:
        """The calls a killed process of this gateway journaled in flight, as bookings:
        written to the spill file first (durable), then queued from it as any spilled
        booking is, and their journals removed (kept for the next start when the spill
        file cannot be written)."""
        entries, journals = left_behind(self.inflight.folder, self.inflight.stem)
        records = [r for e in entries if (r := self.accountant.left_behind(e)) is not None]
        spilled = not records or self.bookkeeper.spill(records)
        if records and spilled:
            log.warning("booking %d calls a killed process left in flight", len(records))
        if not spilled:
            log.error("%d calls in flight at a kill not booked: no spill file", len(records))
        for journal in journals:
            journal.remove() if spilled else journal.keep()

    def reconfigured(self, settings: Settings) -> Gateway:
        """This gateway under reloaded policies and tenants: a new generation that shares
        every connection, queue and task with this one. Requests in flight hold the old
        generation and finish on the config they started with."""
        guard = self.guard.with_rules(settings.spend)
        summarizer = Summarizer(
            self.upstream,
            self.accountant,
            self.tokens,
            settings.policies,
            guard,
            self.metrics,
            settings.config.upstream.default_service_tier,
            self.cache_scopes.chat,
        )
        conversations = self.windows.conversations
        conversations.retention = settings.retention  # only sets TTLs of later writes
        windows = WindowBuilder(
            conversations,
            self.tokens,
            settings.policies,
            summarizer,
            self.metrics,
            fail_open=settings.config.store_failure == "fail_open",
        )
        self.registry.configure(settings.tenants_by_hash, settings.known_plans)
        return dataclasses.replace(
            self,
            settings=settings,
            guard=guard,
            windows=windows,
            escalations=self.escalations.with_policies(settings.policies),
        )

    async def close(self) -> None:
        self.registry.stop()
        for task in self._tasks:
            task.cancel()
        # Bounded: a task that swallowed its cancellation (inside a client library) must
        # not hold the shutdown forever; the bookings it held are written below.
        if self._tasks:
            done, stuck = await asyncio.wait(self._tasks, timeout=CLOSE_WAIT_S)
            for task in stuck:
                log.warning("task %s did not stop within %g s", task.get_name(), CLOSE_WAIT_S)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.error("task %s had failed: %r", task.get_name(), task.exception())
        await self.bookkeeper.close()
        await self.escalations.aclose()
        await self.upstream.aclose()
        await self.store.close()
        self.inflight.close()
        worker_stopped()


def open_configured_store(config: Config) -> Store:
    """The store config.yaml names; with `ledger: postgresql://...`, a Redis store that
    keeps no ledger rows, beside the PostgreSQL ledger (gateway.store.ledgered)."""
    if config.ledger is None:
        return open_store(config.store, config.sqlite, config.redis)
    from gateway.store.ledgered import LedgeredStore
    from gateway.store.postgres import PostgresLedger
    from gateway.store.redis import RedisStore

    hot = RedisStore(config.store, config.redis, keep_ledger=False)
    return LedgeredStore(hot, PostgresLedger(config.ledger, config.postgres))


async def build_gateway(
    settings: Settings, upstream_url: str, registry: CollectorRegistry | None = None
) -> Gateway:
    config = settings.config
    forget_gone_workers()
    metrics = GatewayMetrics(registry or CollectorRegistry())
    metrics.set_config(settings.sha)
    # Loading encodings and the city, name and word lists reads a few MB from disk: off the
    # event loop.
    tokens = await asyncio.to_thread(TokenCounter)
    await asyncio.to_thread(city_names)
    await asyncio.to_thread(first_names)
    await asyncio.to_thread(common_words)
    store = open_configured_store(config)
    try:
        await store.ping()
    except StoreUnavailable as exc:
        log.warning(
            "store not reachable at start-up (%s); continuing per %s",
            exc.message,
            config.store_failure,
        )
    spill = settings.config_path.resolve().parent / "gateway-pending-bookings.jsonl"
    bookkeeper = Bookkeeper(store, metrics, spill, max_pending=config.limits.max_pending_bookings)
    upstream = Upstream(
        upstream_url,
        settings.provider_key,
        connect_timeout_s=config.upstream.connect_timeout_s,
        timeout_s=config.upstream.timeout_s,
        transport=TRANSPORTS[config.upstream.transport](config.upstream),
    )
    upstream.max_reply_bytes = config.limits.max_reply_bytes
    upstream.observe = metrics.observe_upstream
    pricer = Pricer(config.prices, config.upstream.provider, upstream_url)
    accountant = Accountant(tokens, pricer, bookkeeper, metrics)
    inflight = InFlight(spill.parent)
    guard = SpendGuard(
        store,
        settings.spend,
        pricer,
        metrics,
        fail_open=config.store_failure == "fail_open",
        inflight=inflight,
    )
    cache_scopes = CacheScopes(
        scope_secret(settings.provider_key, settings.admin_key)
        if config.upstream.prompt_cache == "per_tenant"
        else None
    )
    summarizer = Summarizer(
        upstream,
        accountant,
        tokens,
        settings.policies,
        guard,
        metrics,
        settings.config.upstream.default_service_tier,
        cache_scopes.chat,
    )
    gateway = Gateway(
        settings=settings,
        upstream=upstream,
        store=store,
        bookkeeper=bookkeeper,
        tokens=tokens,
        accountant=accountant,
        metrics=metrics,
        guard=guard,
        escalations=Escalations(settings.policies, metrics),
        registry=Registry(store, settings.tenants_by_hash, settings.known_plans),
        rates=RateGuard(store, fail_open=config.store_failure == "fail_open"),
        pricer=pricer,
        inflight=inflight,
        cache_scopes=cache_scopes,
        windows=WindowBuilder(
            ConversationStore(store, settings.retention, config.limits.facts_limit()),
            tokens,
            settings.policies,
            summarizer,
            metrics,
            fail_open=config.store_failure == "fail_open",
        ),
    )
    await gateway.start()
    return gateway
