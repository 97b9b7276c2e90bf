"""Every Prometheus metric of the gateway, on an injected registry.

Two kinds: process metrics (latency, statuses) live in the registry; per-tenant money
and token totals are read from the store at scrape time, so they are durable across
restarts and whole across workers and replicas. Labels stay bounded: tenant, plan,
route, status, token kind; never a conversation id.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gateway.spend.money import from_units
from gateway.store.records import SpendRow

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
        self.requests = Counter(
            "gateway_requests",
            "Requests answered, by route and HTTP status.",
            ["route", "status"],
            registry=registry,
        )
        self.overhead = Histogram(
            "gateway_overhead_seconds",
            "Time the gateway itself adds to a request (total minus waiting on the upstream).",
            ["route", "stream"],
            buckets=_OVERHEAD_BUCKETS,
            registry=registry,
        )
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

        self.turns_evicted = Counter(
            "context_turns_evicted",
            "Messages folded into a summary and left out of the window.",
            ["reason"],
            registry=registry,
        )
        self.summary_recompressed = Counter(
            "context_summary_recompressed",
            "Running summaries recompressed to stay under their ceiling.",
            registry=registry,
        )
        self.window_used = Histogram(
            "context_window_used_tokens",
            "History tokens a turn carried (everything but the app's system message).",
            ["at_ceiling"],
            buckets=(250, 500, 1000, 2000, 4000, 6000, 8000, 12000, 16000, 32000, 64000),
            registry=registry,
        )
        self.class_turns = Counter(
            "context_class_turns",
            "Turns by conversation class.",
            ["class"],
            registry=registry,
        )
        self.class_turns_at_ceiling = Counter(
            "context_class_turns_at_ceiling",
            "Turns that reached the class's quota (compacted, or at 95% of it).",
            ["class"],
            registry=registry,
        )
        self.over_quota = Counter(
            "context_class_turns_over_quota",
            "Turns sent above the quota because nothing could hold the turns leaving it.",
            ["class"],
            registry=registry,
        )
        self.system_over_budget = Counter(
            "context_class_turns_system_over_budget",
            "Turns whose app system message(s) passed the class's system_budget (sent whole).",
            ["class"],
            registry=registry,
        )

        self.spend_blocks = Counter(
            "spend_ceiling_blocks",
            "Calls refused at a spend ceiling (HTTP 429).",
            ["plan"],
            registry=registry,
        )
        self.spend_degrades = Counter(
            "spend_ceiling_degrades",
            "Calls sent to the plan's cheaper model at a spend ceiling.",
            ["plan"],
            registry=registry,
        )
        self.turn_cost = Histogram(
            "conversation_turn_cost_usd",
            "Cost of one turn (fresh, cached and output priced apart).",
            ["plan", "turn_bucket"],
            registry=registry,
            buckets=(0.00001, 0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5),
        )
        self.turn_history = Histogram(
            "conversation_turn_history_tokens",
            "Input tokens (history included) of one turn.",
            ["plan", "turn_bucket"],
            registry=registry,
            buckets=(500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000),
        )
        self.turn_marginal = Histogram(
            "conversation_turn_marginal_cost_ratio",
            "Cost of a turn divided by the cost of the same conversation's first turn.",
            ["plan", "turn_bucket"],
            registry=registry,
            buckets=(0.5, 1, 1.5, 2, 3, 5, 8, 13, 21, 34, 55),
        )
        self.escalations = Counter(
            "conversation_escalations",
            "Escalations to a human, by class and reason (loop, turn_ceiling).",
            ["class", "reason"],
            registry=registry,
        )
        self.conversation_cost = Counter(
            "conversation_cost_usd",
            "Cost of chat turns, per tenant (USD).",
            ["tenant", "plan"],
            registry=registry,
        )

    def observe_turn(self, record: Any, cost_units: int | None, history_tokens: int) -> None:
        """Per-turn telemetry, labelled by plan and turn bucket (never the turn itself)."""
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

    def render(self, spend: list[SpendRow] | None) -> bytes:
        """The exposition text: process metrics, then tenant totals from the store."""
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            # Several workers: every process's samples, summed, not just this one's.
            merged = CollectorRegistry(auto_describe=False)
            multiprocess.MultiProcessCollector(merged)  # type: ignore[no-untyped-call]
            text = generate_latest(merged)
        else:
            text = generate_latest(self.registry)
        extra = CollectorRegistry(auto_describe=False)
        extra.register(_TenantTotals(spend))
        return text + generate_latest(extra)


class _TenantTotals(Collector):
    def __init__(self, spend: list[SpendRow] | None) -> None:
        self._spend = spend

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "gateway_store_scrape_ok", "1 when the tenant totals below were read from the store."
        )
        up.add_metric([], 1.0 if self._spend is not None else 0.0)
        yield up
        if self._spend is None:
            return
        yield from _tenant_families(self._spend)


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
        "Booked upstream calls per tenant, all periods.",
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
