"""Every Prometheus metric of the gateway, on an injected registry.

Two kinds: process metrics (latency, statuses) live in the registry; per-tenant money
and token totals, and each tenant's spend against its ceilings, are read from the store
at scrape time, so they are durable across restarts and whole across workers and
replicas. Every exported name starts with `gateway_` and passes `promtool check
metrics` (tests/test_observability.py); deploy/grafana and deploy/prometheus read them.
Labels stay bounded: tenant, plan, class, turn bucket, route, status, reason, token
kind; never a conversation or customer id.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gateway.ops.metrics_files import every_process
from gateway.ops.scrape import CeilingRow, ScrapeCache
from gateway.spend.money import from_units
from gateway.store.records import SpendRow

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_OVERHEAD_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5)
# Turn numbers as a bounded label (and the report's columns): the one place they are cut.
TURN_BUCKETS = ("1-5", "6-15", "16-40", "41+")
TOKEN_KINDS = (
    ("fresh_input", "fresh_input_tokens"),
    ("cached_input", "cached_input_tokens"),
    ("cache_write", "cache_write_tokens"),
    ("output", "output_tokens"),
)


def turn_bucket(turn: int) -> str:
    """The bucket of a 1-based turn number: one of TURN_BUCKETS."""
    return "1-5" if turn <= 5 else "6-15" if turn <= 15 else "16-40" if turn <= 40 else "41+"


class GatewayMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self._unpriced_models: set[str] = set()
        self._config_sha: str | None = None
        self.scrapes = ScrapeCache()
        self._requests(registry)
        self._bookings(registry)
        self._window(registry)
        self._conversations(registry)

    def _requests(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "gateway_requests",
            "Requests answered, by route and HTTP status.",
            ["route", "status"],
            registry=registry,
        )
        self.request_duration = Histogram(
            "gateway_request_duration_seconds",
            "Time from a request's arrival to its last byte sent (streams included), by route.",
            ["route"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.overhead = Histogram(
            "gateway_overhead_seconds",
            "Time the gateway itself adds to a request (total minus waiting on the upstream).",
            ["route", "stream"],
            buckets=_OVERHEAD_BUCKETS,
            registry=registry,
        )
        self.upstream_responses = Counter(
            "gateway_upstream_responses",
            "Upstream answers by status class (2xx..5xx), or timeout / unreachable when the "
            "upstream failed before or while answering.",
            ["status_class"],
            registry=registry,
        )
        self.config_info = Gauge(
            "gateway_config_info",
            "1 for the sha of the configuration this process runs.",
            ["sha"],
            multiprocess_mode="livemax",  # a worker gone (restarted on reload) runs nothing
            registry=registry,
        )

    def _bookings(self, registry: CollectorRegistry) -> None:
        self.unpriced = Counter(
            "gateway_unpriced_requests",
            "Upstream calls booked without a price, by model.",
            ["model"],
            registry=registry,
        )
        self.estimated = Counter(
            "gateway_estimated_bookings",
            "Upstream calls booked from the gateway's own token counts (no usage reported).",
            ["route"],
            registry=registry,
        )
        self.pending_bookings = Gauge(
            "gateway_pending_bookings",
            "Bookings held in memory because the store is unreachable.",
            multiprocess_mode="livesum",
            registry=registry,
        )
        self.store_errors = Counter(
            "gateway_store_errors",
            "Store operations that failed.",
            registry=registry,
        )
        self.implausible_usage = Counter(
            "gateway_implausible_usage",
            "Upstream replies whose usage no call can have (booked as an estimate).",
            registry=registry,
        )
        self.bookings_rejected = Counter(
            "gateway_bookings_rejected",
            "Bookings the store refused outright, set aside in the rejected-bookings file.",
            registry=registry,
        )
        self.bookings_spilled = Counter(
            "gateway_bookings_spilled",
            "Bookings written to the spill file because too many were held in memory.",
            registry=registry,
        )

    def _window(self, registry: CollectorRegistry) -> None:
        self.turns_evicted = Counter(
            "gateway_context_turns_evicted",
            "Messages folded into a summary and left out of the window.",
            ["reason"],
            registry=registry,
        )
        self.summary_recompressed = Counter(
            "gateway_context_recompressions",
            "Running summaries recompressed to stay under their ceiling.",
            registry=registry,
        )
        self.summarizer_calls = Counter(
            "gateway_summarizer_calls",
            "Calls to the summarizer model (summaries and cards), by outcome: kept; "
            "not_kept (read, but empty, cut at its ceiling or failing the gateway's "
            "checks); failed (an error, a timeout, a reply not read); refused (at a "
            "spend ceiling, not sent).",
            ["outcome"],
            registry=registry,
        )
        self.window_used = Histogram(
            "gateway_context_window_used_tokens",
            "History tokens a turn carried (everything but the app's system message).",
            ["at_ceiling"],
            buckets=(250, 500, 1000, 2000, 4000, 6000, 8000, 12000, 16000, 32000, 64000),
            registry=registry,
        )
        self.class_turns = Counter(
            "gateway_context_class_turns",
            "Turns by conversation class.",
            ["class"],
            registry=registry,
        )
        self.class_turns_at_ceiling = Counter(
            "gateway_context_class_turns_at_ceiling",
            "Turns that reached the class's quota (compacted, or at 95% of it).",
            ["class"],
            registry=registry,
        )
        self.quota_hits = Counter(
            "gateway_context_quota_hits",
            "Turns that hit the class's quota: history left the window, or it went over.",
            ["class"],
            registry=registry,
        )
        self.over_quota = Counter(
            "gateway_context_class_turns_over_quota",
            "Turns sent above the quota because nothing could hold the turns leaving it.",
            ["class"],
            registry=registry,
        )
        self.system_over_budget = Counter(
            "gateway_context_class_turns_system_over_budget",
            "Turns whose app system message(s) passed the class's system_budget (sent whole).",
            ["class"],
            registry=registry,
        )

    def _conversations(self, registry: CollectorRegistry) -> None:
        self.conversations = Counter(
            "gateway_conversations_started",
            "Conversations started, by class (at their first turn).",
            ["class"],
            registry=registry,
        )
        self.conversations_quota_hit = Counter(
            "gateway_conversations_quota_hit",
            "Conversations that hit their class's quota for the first time, by class (the "
            "report's alarm: over 10% of a class's conversations means its quota is wrong).",
            ["class"],
            registry=registry,
        )
        self.spend_blocks = Counter(
            "gateway_spend_ceiling_blocks",
            "Calls refused at a spend ceiling (HTTP 429).",
            ["plan"],
            registry=registry,
        )
        self.spend_degrades = Counter(
            "gateway_spend_ceiling_degrades",
            "Calls sent to the plan's cheaper model at a spend ceiling.",
            ["plan"],
            registry=registry,
        )
        self.turn_cost = Histogram(
            "gateway_conversation_turn_cost_usd",
            "Cost of one turn (fresh, cached and output priced apart).",
            ["plan", "turn_bucket"],
            registry=registry,
            buckets=(0.00001, 0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5),
        )
        self.turn_history = Histogram(
            "gateway_conversation_turn_history_tokens",
            "Input tokens (history included) of one turn.",
            ["plan", "turn_bucket"],
            registry=registry,
            buckets=(500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000),
        )
        self.turn_marginal = Histogram(
            "gateway_conversation_turn_marginal_cost_ratio",
            "Cost of a turn divided by the cost of the same conversation's first turn.",
            ["plan", "turn_bucket"],
            registry=registry,
            buckets=(0.5, 1, 1.5, 2, 3, 5, 8, 13, 21, 34, 55),
        )
        self.escalations = Counter(
            "gateway_conversation_escalations",
            "Escalations to a human, by class and reason (loop, turn_ceiling).",
            ["class", "reason"],
            registry=registry,
        )
        self.conversation_cost = Counter(
            "gateway_conversation_cost_usd",
            "Cost of chat turns, per tenant (USD).",
            ["tenant", "plan"],
            registry=registry,
        )

    def observe_request(self, route: str, status: int, seconds: float) -> None:
        """One answered request (the outermost layer calls it once per request)."""
        self.requests.labels(route, str(status)).inc()
        self.request_duration.labels(route).observe(seconds)

    def observe_upstream(self, status_class: str) -> None:
        """One upstream answer: "2xx".."5xx", or "timeout" / "unreachable"."""
        self.upstream_responses.labels(status_class).inc()

    def set_config(self, sha: str) -> None:
        """`gateway_config_info{sha}` is 1 for this sha only (at start-up and each reload)."""
        previous, self._config_sha = self._config_sha, sha
        if previous is not None and previous != sha:
            # Under PROMETHEUS_MULTIPROC_DIR the old value stays in this process's file:
            # 0 says it is no longer run here.
            self.config_info.labels(previous).set(0)
            self.config_info.remove(previous)
        self.config_info.labels(sha).set(1)
        if previous != sha:  # a scrape after the reload shows the sha it answered
            self.scrapes.forget()

    def observe_turn(
        self, record: Any, cost_units: int | None, history_tokens: int, quota_hit: bool = False
    ) -> None:
        """An answered turn, labelled by plan and turn bucket (never the turn itself), and
        its conversation by class: started (its first answered turn), or at the quota for
        the first time (`record` counts this turn's hit already, not yet the turn)."""
        if not record.degraded:  # a degraded record (store down) has no past: no first
            cls = record.conversation_class or "default"
            if record.turns == 0:
                self.conversations.labels(cls).inc()
            if quota_hit and record.quota_hits == 1:
                self.conversations_quota_hit.labels(cls).inc()
        turn = record.turns + 1
        bucket = turn_bucket(turn)
        self.turn_history.labels(record.plan, bucket).observe(history_tokens)
        if cost_units is None:
            return
        cost = float(from_units(cost_units))
        self.turn_cost.labels(record.plan, bucket).observe(cost)
        self.conversation_cost.labels(record.tenant, record.plan).inc(cost)
        first = record.first_turn_cost_units
        if first:
            self.turn_marginal.labels(record.plan, bucket).observe(cost_units / first)

    def count_unpriced(self, model: str) -> None:
        """Model names come from clients: label at most 100 of them, the rest as 'other'."""
        if model not in self._unpriced_models and len(self._unpriced_models) >= 100:
            model = "other"
        self._unpriced_models.add(model)
        self.unpriced.labels(model).inc()

    def render(self, spend: list[SpendRow] | None, ceilings: Sequence[CeilingRow] = ()) -> bytes:
        """The exposition text: process metrics, then tenant totals and ceilings from the
        store (`spend` None: the store did not answer)."""
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            # Several workers: every process's samples, summed, not just this one's.
            text = every_process()
        else:
            text = generate_latest(self.registry)
        extra = CollectorRegistry(auto_describe=False)
        extra.register(_TenantTotals(spend, ceilings))
        return text + generate_latest(extra)


class _TenantTotals(Collector):
    def __init__(self, spend: list[SpendRow] | None, ceilings: Sequence[CeilingRow]) -> None:
        self._spend = spend
        self._ceilings = ceilings

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "gateway_store_scrape_ok", "1 when the tenant totals below were read from the store."
        )
        up.add_metric([], 1.0 if self._spend is not None else 0.0)
        yield up
        if self._spend is None:
            return
        yield from _tenant_families(self._spend)
        yield from _ceiling_families(self._ceilings)


def _ceiling_families(ceilings: Iterable[CeilingRow]) -> Iterator[Metric]:
    spent = GaugeMetricFamily(
        "gateway_tenant_ceiling_spent_usd",
        "Booked spend of a tenant in the current period of its spend ceiling (USD).",
        labels=["tenant", "period"],
    )
    limit = GaugeMetricFamily(
        "gateway_tenant_ceiling_usd",
        "A tenant's spend ceiling for the period, from spend.yaml (USD).",
        labels=["tenant", "period"],
    )
    for row in ceilings:
        spent.add_metric([row.tenant, row.period], float(from_units(row.spent_units)))
        limit.add_metric([row.tenant, row.period], float(from_units(row.limit_units)))
    yield from (spent, limit)


def _tenant_families(spend: Iterable[SpendRow]) -> Iterator[Metric]:
    cost = CounterMetricFamily(
        "gateway_tenant_cost_usd",
        "Booked cost per tenant, all periods (USD).",
        labels=["tenant", "plan"],
    )
    tokens = CounterMetricFamily(
        "gateway_tenant_tokens",
        "Booked tokens per tenant, by kind, all periods.",
        labels=["tenant", "plan", "kind"],
    )
    requests = CounterMetricFamily(
        "gateway_tenant_requests",
        "Booked calls per tenant, all periods (upstream calls and handoff answers).",
        labels=["tenant", "plan"],
    )
    unpriced = CounterMetricFamily(
        "gateway_tenant_unpriced_requests",
        "Booked upstream calls without a price.",
        labels=["tenant", "plan"],
    )
    for row in spend:
        labels = [row.tenant, row.plan]
        cost.add_metric(labels, float(from_units(row.cost_units)))
        requests.add_metric(labels, row.requests)
        unpriced.add_metric(labels, row.unpriced_requests)
        for kind, field in TOKEN_KINDS:
            tokens.add_metric([*labels, kind], getattr(row, field))
    yield from (cost, tokens, requests, unpriced)
