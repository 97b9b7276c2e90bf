"""The plots of `gateway report` as inline SVG, for the admin page: drawn here from the
report's figures, so the page needs no matplotlib and no asset. Pure: a `Report` in, SVG
text out, every label escaped."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from gateway.ops.report import Report

WIDTH, HEIGHT = 460, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 40, 48  # margins around the plotting area
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
PERCENT_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _x(share: float) -> float:
    return LEFT + share * PLOT_W


def _y(share: float) -> float:
    return TOP + (1 - share) * PLOT_H


def _text(x: float, y: float, text: str, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'


def _frame(title: str, xlabel: str, ylabel: str, css_class: str) -> list[str]:
    """The opening tag, title, axis labels and axes of one chart."""
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" role="img" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        _text(WIDTH / 2, 18, title, extra=' font-size="13" font-weight="bold"'),
        _text(LEFT + PLOT_W / 2, HEIGHT - 10, xlabel),
        _text(
            14, TOP + PLOT_H / 2, ylabel, extra=f' transform="rotate(-90 14 {TOP + PLOT_H / 2})"'
        ),
        f'<path d="M{LEFT} {TOP}V{TOP + PLOT_H}H{LEFT + PLOT_W}" fill="none" stroke="#333"/>',
    ]


def _percent_axes() -> list[str]:
    parts = []
    for tick in PERCENT_TICKS:
        label = f"{tick:.0%}"
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + PLOT_W}" y1="{_y(tick):.1f}" y2="{_y(tick):.1f}" '
            'stroke="#ddd"/>'
        )
        parts.append(_text(LEFT - 6, _y(tick) + 4, label, anchor="end"))
        parts.append(_text(_x(tick), TOP + PLOT_H + 16, label))
    return parts


def _polyline(points: Sequence[tuple[float, float]], style: str) -> str:
    coords = " ".join(f"{_x(x):.1f},{_y(y):.1f}" for x, y in points)
    return f'<polyline points="{coords}" fill="none" {style}/>'


def concentration_svg(report: Report) -> str:
    """Percent of cost carried by the costliest percent of conversations, beside the
    diagonal every-conversation-alike line; a mark at the top 5%."""
    parts = _frame(
        f"Concentration of cost, {report.title}",
        "share of conversations, costliest first",
        "share of cost",
        "plot concentration",
    )
    parts += _percent_axes()
    parts.append(_polyline([(0, 0), (1, 1)], 'stroke="#999" stroke-dasharray="3 3"'))
    parts.append(
        f'<line x1="{_x(0.05):.1f}" x2="{_x(0.05):.1f}" y1="{TOP}" y2="{TOP + PLOT_H}" '
        'stroke="#aaa"/>'
    )
    if report.concentration:
        curve = [(0.0, 0.0), *report.concentration]
        parts.append(_polyline(curve, 'stroke="#1f5fa8" stroke-width="2"'))
    else:
        parts.append(_text(LEFT + PLOT_W / 2, TOP + PLOT_H / 2, "no conversations this period"))
    parts.append("</svg>")
    return "\n".join(parts)


def usd_tick(value: float, step: float) -> str:
    """A tick label with as many decimals as the step between ticks needs."""
    decimals = max(2, -math.floor(math.log10(step)) if step > 0 else 2)
    return f"${value:.{decimals}f}"


def _nice_step(top: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving about four ticks up to `top`."""
    raw = top / 4
    power = 10 ** math.floor(math.log10(raw))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def turn_cost_svg(report: Report) -> str:
    """Mean cost of a turn (USD) by turn bucket, one bar each."""
    parts = _frame(
        f"Mean cost of a turn by turn bucket, {report.title}",
        "turns into the conversation",
        "USD per turn",
        "plot turn-cost",
    )
    buckets = list(report.marginal_cost.items())
    top = max((m["mean_cost_usd"] for _, m in buckets), default=0.0)
    if top <= 0:
        parts.append(_text(LEFT + PLOT_W / 2, TOP + PLOT_H / 2, "no priced turns this period"))
        parts.append("</svg>")
        return "\n".join(parts)
    step = _nice_step(top)
    ceiling = step * math.ceil(top / step)
    for n in range(round(ceiling / step) + 1):
        y = TOP + PLOT_H - n * step / ceiling * PLOT_H
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + PLOT_W}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
        )
        parts.append(_text(LEFT - 6, y + 4, usd_tick(n * step, step), anchor="end"))
    slot = PLOT_W / len(buckets)
    for i, (name, m) in enumerate(buckets):
        height = m["mean_cost_usd"] / ceiling * PLOT_H
        x = LEFT + i * slot + slot * 0.2
        parts.append(
            f'<rect x="{x:.1f}" y="{TOP + PLOT_H - height:.1f}" width="{slot * 0.6:.1f}" '
            f'height="{height:.1f}" fill="#1f5fa8"><title>{escape(name)}: '
            f"${m['mean_cost_usd']:.6f} over {int(m['turns'])} turns</title></rect>"
        )
        parts.append(_text(x + slot * 0.3, TOP + PLOT_H + 16, name))
    parts.append("</svg>")
    return "\n".join(parts)
