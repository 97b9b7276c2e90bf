"""`gateway report` and `GET /admin/report`: the figures that set the policy (seed 002).

Per-tenant cost for finance; conversation length percentiles; the share of cost in the
top 5% and 1% of conversations; the marginal cost of a turn by turn bucket, relative to
the same conversation's first turn; the fraction of conversations at the quota ceiling
per class, with an ALARM above 10% (that class's quota is wrong); the cached share of
input; the period's most recent escalations. `compute` is pure; `gather` reads the
store; `plot` draws with matplotlib (an extra), `gateway.ops.report_svg` without it.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gateway.context.conversation_record import ConversationRecord
from gateway.context.conversations import CONVERSATION
from gateway.ops.metrics import TURN_BUCKETS, turn_bucket
from gateway.spend.money import from_units
from gateway.store import Store
from gateway.store.records import SpendRow, UsageRecord, period_of

ALARM_SHARE = 0.10
RECENT_ESCALATIONS = 20  # the newest escalated conversations a report lists
PLOT_EXTRA = "pip install 'context-quota-gateway[plot]'"


class PlotUnavailable(Exception):
    """`--plot` without matplotlib: the message says how to install it."""


@dataclass
class Report:
    period: str
    tenant: str | None = None  # the one tenant reported on, or None for all
    tenants: list[dict[str, Any]] = field(default_factory=list)
    conversations: int = 0
    length_percentiles: dict[str, float] = field(default_factory=dict)
    top_share: dict[str, float] = field(default_factory=dict)
    marginal_cost: dict[str, dict[str, float]] = field(default_factory=dict)
    quota_ceiling: dict[str, dict[str, float]] = field(default_factory=dict)
    alarms: list[str] = field(default_factory=list)
    cached_share: float = 0.0
    concentration: list[tuple[float, float]] = field(default_factory=list)
    escalations: list[dict[str, Any]] = field(default_factory=list)  # newest first

    @property
    def title(self) -> str:
        return f"{self.tenant or 'all tenants'}, {self.period}"

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["concentration"] = [list(p) for p in self.concentration]
        return out


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return float(ordered[max(math.ceil(q / 100 * len(ordered)) - 1, 0)])


def top_share(costs: Sequence[int], fraction: float) -> float:
    total = sum(costs)
    if total == 0:
        return 0.0
    count = max(1, math.ceil(len(costs) * fraction))
    return sum(sorted(costs, reverse=True)[:count]) / total


def _marginal(ledger: Sequence[UsageRecord]) -> dict[str, dict[str, float]]:
    turns: dict[str, list[int]] = defaultdict(list)
    for record in sorted(ledger, key=lambda r: r.ts):
        if record.route == "chat" and record.conversation and record.cost_units is not None:
            turns[record.conversation].append(record.cost_units)
    ratios: dict[str, list[float]] = defaultdict(list)
    costs: dict[str, list[int]] = defaultdict(list)
    for series in turns.values():
        for n, cost in enumerate(series, start=1):
            costs[turn_bucket(n)].append(cost)
            if series[0]:
                ratios[turn_bucket(n)].append(cost / series[0])
    return {
        b: {
            "turns": len(costs[b]),
            "mean_cost_usd": float(from_units(sum(costs[b]) // len(costs[b]))) if costs[b] else 0.0,
            "vs_first_turn": sum(ratios[b]) / len(ratios[b]) if ratios[b] else 0.0,
        }
        for b in TURN_BUCKETS
    }


def _escalations(conversations: Sequence[ConversationRecord]) -> list[dict[str, Any]]:
    escalated = [c for c in conversations if c.escalations]
    escalated.sort(key=lambda c: (c.last_seen, c.id), reverse=True)
    return [
        {
            "tenant": c.tenant,
            "conversation": c.id,
            "class": c.conversation_class or "default",
            "reason": c.escalation,
            "escalations": c.escalations,
            "turns": c.turns,
            "last_seen": c.last_seen,
        }
        for c in escalated[:RECENT_ESCALATIONS]
    ]


def compute(
    period: str,
    spend: Sequence[SpendRow],
    conversations: Sequence[ConversationRecord],
    ledger: Sequence[UsageRecord],
    tenant: str | None = None,
) -> Report:
    report = Report(period=period, tenant=tenant, conversations=len(conversations))
    report.tenants = [row.to_json() for row in spend]
    lengths = [c.turns for c in conversations]
    report.length_percentiles = {f"p{q}": percentile(lengths, q) for q in (50, 90, 95, 99)}
    costs = [c.cost_units for c in conversations]
    report.top_share = {"top_5pct": top_share(costs, 0.05), "top_1pct": top_share(costs, 0.01)}
    ordered, total, running = sorted(costs, reverse=True), sum(costs) or 1, 0
    for n, cost in enumerate(ordered, start=1):
        running += cost
        report.concentration.append((n / len(ordered), running / total))
    report.marginal_cost = _marginal(ledger)
    by_class: dict[str, list[ConversationRecord]] = defaultdict(list)
    for c in conversations:
        by_class[c.conversation_class or "default"].append(c)
    for name, group in sorted(by_class.items()):
        at_ceiling = sum(1 for c in group if c.quota_hits > 0)
        share = at_ceiling / len(group)
        report.quota_ceiling[name] = {
            "conversations": len(group),
            "at_ceiling": at_ceiling,
            "share": share,
        }
        if share > ALARM_SHARE:
            report.alarms.append(
                f"ALARM class {name}: {share:.0%} of its conversations hit the quota ceiling "
                f"(over {ALARM_SHARE:.0%}): its quota is wrong, raise it or trim what goes in"
            )
    fresh = sum(r.fresh_input_tokens for r in spend)
    cached = sum(r.cached_input_tokens for r in spend)
    written = sum(r.cache_write_tokens for r in spend)
    report.cached_share = cached / (fresh + cached + written) if fresh + cached + written else 0.0
    report.escalations = _escalations(conversations)
    return report


async def gather(
    store: Store, tenants: Sequence[str], period: str, tenant: str | None = None
) -> Report:
    names = [t for t in tenants if tenant is None or t == tenant]
    spend = [r for r in await store.spend(period) if r.tenant in names]
    conversations: list[ConversationRecord] = []
    ledger: list[UsageRecord] = []
    for name in names:
        docs = await store.list_docs(CONVERSATION, name, "")
        records = [ConversationRecord.from_fields(d) for d in docs]
        conversations += [c for c in records if period_of(c.last_seen) == period]
        ledger += await store.ledger(period, name, limit=1_000_000)
    return compute(period, spend, conversations, ledger, tenant)


def as_table(report: Report) -> str:
    lines = [f"Report for {report.title}", "", "Cost per tenant:"]
    lines.append(f"  {'tenant':<12} {'plan':<8} {'requests':>9} {'cost USD':>14} {'cached in':>10}")
    for t in report.tenants:
        total_in = t["fresh_input_tokens"] + t["cached_input_tokens"] + t["cache_write_tokens"]
        share = t["cached_input_tokens"] / total_in if total_in else 0.0
        lines.append(
            f"  {t['tenant']:<12} {t['plan']:<8} {t['requests']:>9} "
            f"{Decimal(t['cost_usd']):>14.6f} {share:>9.1%}"
        )
    p = report.length_percentiles
    lines += [
        "",
        f"Conversations: {report.conversations}; length in turns p50 {p.get('p50', 0):g}, "
        f"p90 {p.get('p90', 0):g}, p95 {p.get('p95', 0):g}, p99 {p.get('p99', 0):g}",
        f"Share of cost in the top 5% of conversations: {report.top_share.get('top_5pct', 0):.1%};"
        f" top 1%: {report.top_share.get('top_1pct', 0):.1%}",
        f"Cached share of input tokens: {report.cached_share:.1%}",
        "",
        "Marginal cost by turn bucket (mean cost of a turn, and vs the conversation's first):",
    ]
    for name, m in report.marginal_cost.items():
        lines.append(
            f"  turns {name:<6} {m['turns']:>6} turns  ${m['mean_cost_usd']:.6f}  "
            f"x{m['vs_first_turn']:.2f}"
        )
    lines += ["", "Conversations at the quota ceiling, by class:"]
    for name, q in report.quota_ceiling.items():
        lines.append(
            f"  {name:<12} {q['at_ceiling']:>4} of {q['conversations']:<5} {q['share']:.1%}"
        )
    lines += ["", *report.alarms] if report.alarms else []
    if report.escalations:
        lines += ["", "Most recent escalations:"]
        lines += [
            f"  {e['tenant']:<12} {e['conversation']:<24} {e['class']:<12} {e['reason']} "
            f"(x{e['escalations']}, {e['turns']} turns)"
            for e in report.escalations
        ]
    return "\n".join(lines)


def _rows(report: Report) -> list[list[Any]]:
    rows: list[list[Any]] = [
        ["tenant", t["tenant"], k, v] for t in report.tenants for k, v in t.items() if k != "tenant"
    ]
    rows += [["length", k, "turns", v] for k, v in report.length_percentiles.items()]
    rows += [["concentration", k, "share", f"{v:.6f}"] for k, v in report.top_share.items()]
    sections = (("marginal_cost", report.marginal_cost), ("quota_ceiling", report.quota_ceiling))
    for section, table in sections:
        rows += [[section, name, k, v] for name, values in table.items() for k, v in values.items()]
    rows.append(["input", "all", "cached_share", f"{report.cached_share:.6f}"])
    rows += [["alarm", "", "", alarm] for alarm in report.alarms]
    rows += [
        ["escalation", f"{e['tenant']}/{e['conversation']}", e["reason"], e["escalations"]]
        for e in report.escalations
    ]
    return rows


def as_csv(report: Report) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["section", "key", "field", "value"])
    writer.writerows(_rows(report))
    return out.getvalue()


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend; PlotUnavailable without it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise PlotUnavailable(f"--plot needs matplotlib ({PLOT_EXTRA})") from exc
    return plt


def figure(report: Report) -> Any:
    """The concentration curve (percent of cost by percent of conversations) and the
    mean cost of a turn by turn bucket, titled with the tenant and the period."""
    plt = pyplot()
    from matplotlib.ticker import PercentFormatter

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6))
    fig.suptitle(f"Cost report: {report.title}")
    xs = [0.0] + [x for x, _ in report.concentration]
    ys = [0.0] + [y for _, y in report.concentration]
    left.plot(xs, ys, label="conversations, costliest first")
    left.plot([0, 1], [0, 1], linestyle=":", label="every conversation alike")
    left.axvline(0.05, color="grey", linewidth=0.8)
    left.set(
        title=f"Concentration of cost ({report.period})",
        xlabel="share of conversations",
        ylabel="share of cost",
        xlim=(0, 1),
        ylim=(0, 1),
    )
    for axis in (left.xaxis, left.yaxis):
        axis.set_major_formatter(PercentFormatter(1.0))
    left.legend()
    names = list(report.marginal_cost)
    right.bar(names, [report.marginal_cost[n]["mean_cost_usd"] for n in names])
    right.set(
        title=f"Mean cost of a turn by turn bucket ({report.period})", xlabel="turns", ylabel="USD"
    )
    fig.tight_layout()
    return fig


def plot(report: Report, path: str) -> None:
    """`figure` as a PNG."""
    fig = figure(report)
    try:
        fig.savefig(path, dpi=110)
    finally:
        pyplot().close(fig)
