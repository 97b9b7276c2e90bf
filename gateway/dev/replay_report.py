"""What `gateway replay` prints: the policy's figures beside the baseline's, as a table
or as JSON (`--format json`, for CI). Pure: a `Replay` in, text or a dict out."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gateway.dev.replay import Replay, SideResult
from gateway.dev.replay_metrics import fact_figures, pct, quota_by_class, top_share
from gateway.ledger.usage import TokenUsage

_PER_MTOK = 1_000_000


def _rates(replay: Replay, model: str) -> dict[str, str | None]:
    def rate(usage: TokenUsage) -> str | None:
        cost = replay.pricer.cost(model, usage)
        return None if cost is None else str(cost.normalize())

    return {
        "input_per_mtok": rate(TokenUsage(fresh_input=_PER_MTOK)),
        "cached_input_per_mtok": rate(TokenUsage(cached_input=_PER_MTOK)),
        "output_per_mtok": rate(TokenUsage(output=_PER_MTOK)),
    }


def side_figures(
    side: SideResult, baseline_cost: Decimal | None, baseline_input_cost: Decimal | None = None
) -> dict[str, Any]:
    """`baseline_input_cost`: what the baseline's input alone cost (the part of the cost
    the window decides; both sides pay the same answers)."""
    u = side.usage
    cost = sum(side.costs, Decimal(0))
    figures: dict[str, Any] = {
        "requests": side.requests,
        "answered_by_gateway": side.answered_by_gateway,
        "input_fresh_tokens": u.fresh_input,
        "input_cached_tokens": u.cached_input,
        "output_tokens": u.output,
        "cost_usd": float(cost),
        "cost_pct_of_baseline": (
            round(float(100 * cost / baseline_cost), 2) if baseline_cost else None
        ),
        "input_cost_pct_of_baseline": (
            round(float(100 * side.input_cost / baseline_input_cost), 2)
            if baseline_input_cost
            else None
        ),
        "cached_share_pct": pct(u.cached_input, u.fresh_input + u.cached_input),
        "top5_cost_share_pct": top_share(side.costs, 0.05),
        "top1_cost_share_pct": top_share(side.costs, 0.01),
        "facts": fact_figures(side.tally),
    }
    for name in ("opening", "last4"):
        figures[f"{name}_kept_pct"] = pct(*side.tally.get(name, [0, 0]))
    raw = side.tally.get("raw_episode", [0, 0])
    figures["requests_with_raw_episode_text"] = raw[0]
    figures["requests_after_episodes"] = raw[1]
    figures["over_quota_by_class"] = quota_by_class(side.quota) if side.quota else None
    if side.fact_docs:
        figures["facts_document"] = {
            "customers": len(side.fact_docs),
            "facts_p50_p95_max": _p50_p95_max([n for n, _ in side.fact_docs]),
            "tokens_p50_p95_max": _p50_p95_max([t for _, t in side.fact_docs]),
        }
    return figures


def _p50_p95_max(values: list[int]) -> list[int]:
    ordered = sorted(values)
    return [
        ordered[len(ordered) // 2],
        ordered[min(len(ordered) - 1, len(ordered) * 95 // 100)],
        ordered[-1],
    ]


def _classes(replay: Replay) -> float | None:
    """How often the gateway's class (at the last turn) is the workload's class_hint."""
    if not replay.policy.classes:
        return None
    hints = [c["class_hint"] for c in replay.conversations]
    return pct(sum(a == b for a, b in zip(replay.policy.classes, hints, strict=True)), len(hints))


def _per_conversation(replay: Replay) -> list[dict[str, Any]]:
    base = replay.baseline.costs if replay.baseline else [None] * len(replay.conversations)
    return [
        {
            **outline,
            "class": cls,
            "policy_cost_usd": float(cost),
            "baseline_cost_usd": None if other is None else float(other),
        }
        for outline, cls, cost, other in zip(
            replay.conversations, replay.policy.classes, replay.policy.costs, base, strict=True
        )
    ]


def to_json(replay: Replay, model: str, workload: str, policies: str) -> dict[str, Any]:
    base_cost = sum(replay.baseline.costs, Decimal(0)) if replay.baseline else None
    base_input = replay.baseline.input_cost if replay.baseline else None
    return {
        "workload": workload,
        "conversations": len(replay.conversations),
        "model": model,
        "policies": policies,
        "pricing": {
            **_rates(replay, model),
            "source": "the gateway's pricer (config prices, then genai-prices)",
        },
        "wall_time_s": round(replay.wall_s, 1),
        "cache_clock": replay.clock,
        "policy": side_figures(replay.policy, base_cost, base_input),
        "baseline": side_figures(replay.baseline, base_cost, base_input)
        if replay.baseline
        else None,
        "class_hint_agreement_pct": _classes(replay),
        "per_conversation": _per_conversation(replay),
    }


def _cell(value: Any, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.2f}{unit}" if unit else f"{value:,.6f}"
    if isinstance(value, int):
        return f"{value:,}{unit}"
    return str(value)


def _fact_rows(sides: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    facts = [s["facts"] for s in sides]
    rows: list[tuple[str, list[str]]] = []
    labels = (
        ("all", "facts kept, all later turns"),
        ("far", "  far back (> 8k tokens)"),
        ("far_beyond_verbatim", "    of them not in the always-sent part"),
        ("needed", "facts of this conversation where a reply needs them"),
        ("needed_beyond_verbatim", "  of them not in the always-sent part"),
        ("episode_at_referring_turns", "earlier-episode facts at referring turns"),
        ("episode_without_contact_details", "  of them not contact details (no scope needed)"),
    )
    for key, label in labels:
        checked = facts[0][key]["checked"]
        rows.append((f"{label} (n={checked:,})", [_cell(f[key]["pct"], "%") for f in facts]))
    for kind in sorted(facts[0]["by_type"]):
        cells = [
            " / ".join(
                _cell(f["by_type"].get(kind, {}).get(g), "%")
                for g in ("all", "far", "needed", "episode")
            )
            for f in facts
        ]
        rows.append((f"  {kind} (all / far / needed / episode)", cells))
    return rows


def _rows(sides: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    def row(label: str, key: str, unit: str = "") -> tuple[str, list[str]]:
        return label, [_cell(s[key], unit) for s in sides]

    rows = [
        row("requests", "requests"),
        row("input fresh tokens", "input_fresh_tokens"),
        row("input cached tokens", "input_cached_tokens"),
        row("output tokens", "output_tokens"),
        row("cost USD", "cost_usd"),
        row("cost, % of baseline", "cost_pct_of_baseline", "%"),
        row("input cost, % of baseline", "input_cost_pct_of_baseline", "%"),
        row("cached share of input", "cached_share_pct", "%"),
        row("cost share, top 5% conversations", "top5_cost_share_pct", "%"),
        row("cost share, top 1% conversations", "top1_cost_share_pct", "%"),
        *_fact_rows(sides),
        row("opening request kept verbatim", "opening_kept_pct", "%"),
        row("last 4 messages kept verbatim", "last4_kept_pct", "%"),
        row("requests with raw earlier-episode text", "requests_with_raw_episode_text"),
    ]
    if sides[0]["answered_by_gateway"]:
        rows.append(row("turns answered by the gateway (no upstream)", "answered_by_gateway"))
    return rows


def _quota_lines(policy: dict[str, Any]) -> list[str]:
    by_class = policy["over_quota_by_class"] or {}
    lines = ["", "turns over quota (policy), per class:  turns  over  over, unavoidable*"]
    for cls, r in by_class.items():
        lines.append(f"  {cls:<36} {r['turns']:>6,} {r['over']:>5,} {r['over_unavoidable']:>8,}")
    lines.append(
        "  * the opening request and the last messages, kept verbatim, with a one-line "
        "summary of what lies between, alone pass the quota (which does not cap the "
        "app's system message)"
    )
    return lines


def as_table(report: dict[str, Any]) -> str:
    sides = [report["policy"]] + ([report["baseline"]] if report["baseline"] else [])
    heads = ["policy"] + (["baseline (full history)"] if report["baseline"] else [])
    rows = _rows(sides)
    width = max(len(label) for label, _ in rows) + 2
    cols = [max(len(h), *(len(c[i]) for _, c in rows)) + 2 for i, h in enumerate(heads)]
    out = [
        f"replay of {report['workload']}: {report['conversations']} conversations, "
        f"model {report['model']}, policies {report['policies']}",
        "",
        " " * width + "".join(h.rjust(w) for h, w in zip(heads, cols, strict=True)),
    ]
    out += [
        label.ljust(width) + "".join(c.rjust(w) for c, w in zip(cells, cols, strict=True))
        for label, cells in rows
    ]
    out.append(
        "  not in the always-sent part: neither stated nor said again in the opening request "
        "or the last keep_last_messages messages, which every window sends whole"
    )
    out += _quota_lines(report["policy"])
    docs = report["policy"].get("facts_document")
    if docs:
        facts, tokens = docs["facts_p50_p95_max"], docs["tokens_p50_p95_max"]
        out.append(
            f"  facts document per customer ({docs['customers']:,}): facts p50 {facts[0]}, "
            f"p95 {facts[1]}, max {facts[2]}; tokens p50 {tokens[0]}, p95 {tokens[1]}, "
            f"max {tokens[2]}"
        )
    out.append(
        "  gateway class = the workload's class_hint in "
        f"{_cell(report['class_hint_agreement_pct'], '%')} of conversations"
    )
    p = report["pricing"]
    out += [
        "",
        f"prices per million tokens: input {p['input_per_mtok']}, cached input "
        f"{p['cached_input_per_mtok']}, output {p['output_per_mtok']} ({p['source']}); "
        "cache hits as the simulator bills them (prefix cache, 5 min TTL of "
        + ("the turns' own times)" if report["cache_clock"] == "workload" else "replay time)"),
        f"wall time {report['wall_time_s']} s",
    ]
    return "\n".join(out)
