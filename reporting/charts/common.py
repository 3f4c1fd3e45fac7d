"""What every chart shares: the palette of axes, grid and labels, the outer padding, a data
series (key, legend label, colour, marker shape) and the value axis of the line chart and the
plane."""

from __future__ import annotations

from dataclasses import dataclass

from reporting.svg import (
    LinearScale,
    Svg,
    tick_label,
)

AXIS = "#555"
GRID = "#e3e3e3"
STRIPE = "#f6f7f9"
MUTED = "#666"
PAD = 12


@dataclass(frozen=True)
class Series:
    key: str
    label: str
    color: str
    shape: str = "circle"


def _y_axis(
    svg: Svg,
    y: LinearScale,
    left: float,
    plot_w: float,
    title: str,
    middle: float,
    tick_count: int = 5,
) -> None:
    ticks = y.ticks(tick_count)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    for tick in ticks:
        svg.line(left, y(tick), left + plot_w, y(tick), stroke=GRID)
        svg.text(left - 6, y(tick) + 4, tick_label(tick, step), text_anchor="end", fill=MUTED)
    svg.line(left, y.range[0], left + plot_w, y.range[0], stroke=AXIS)
    svg.line(left, y.range[0], left, y.range[1], stroke=AXIS)
    svg.text(
        14,
        middle,
        title,
        text_anchor="middle",
        fill=MUTED,
        transform=f"rotate(-90 14 {middle:.2f})",
    )
