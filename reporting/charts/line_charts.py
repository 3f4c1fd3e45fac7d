"""The line chart: one line per series over categories; a line breaks where a value is missing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reporting.charts.common import MUTED, Series, _y_axis
from reporting.svg import (
    LinearScale,
    Svg,
    nice_domain,
    text_width,
)


@dataclass(frozen=True)
class LineChart:
    label: str
    categories: Sequence[str]
    series: Sequence[tuple[Series, Sequence[float | None]]]
    x_title: str
    y_title: str
    domain: tuple[float, float] | None = None
    plot: tuple[float, float] = (480.0, 300.0)


def line_chart(spec: LineChart) -> str:
    plot_w, plot_h = spec.plot
    left, top = 56.0, 14.0
    legend_w = max((text_width(s.label) for s, _ in spec.series), default=0) + 30
    width = left + plot_w + 24 + legend_w
    height = max(top + plot_h + 48, top + 18 * len(spec.series) + 10)
    svg = Svg(width, height, spec.label)
    lo, hi = spec.domain or nice_domain(*_extent(v for _, vs in spec.series for v in vs), 5)
    y = LinearScale((lo, hi), (top + plot_h, top))
    step_x = plot_w / max(len(spec.categories), 1)

    def x(k: int) -> float:
        return left + step_x * (k + 0.5)

    _y_axis(svg, y, left, plot_w, spec.y_title, top + plot_h / 2)
    for k, category in enumerate(spec.categories):
        svg.text(x(k), top + plot_h + 16, category, text_anchor="middle", fill=MUTED)
    svg.text(left + plot_w / 2, top + plot_h + 36, spec.x_title, text_anchor="middle", fill=MUTED)
    for series, values in spec.series:
        for run in _runs(values):
            svg.polyline([(x(k), y(values[k])) for k in run], stroke=series.color, stroke_width=1.8)
        for k, value in enumerate(values):
            if value is not None:
                tip = f"{series.label}, {spec.categories[k]}: {value:.2f}"
                svg.circle(x(k), y(value), 3, fill=series.color, class_="mark", tip=tip)
    for n, (series, _) in enumerate(spec.series):
        ly = top + 8 + 18 * n
        lx = left + plot_w + 24
        svg.line(lx, ly, lx + 18, ly, stroke=series.color, stroke_width=2.5)
        svg.text(lx + 24, ly + 4, series.label)
    return svg.render()


def _extent(values) -> tuple[float, float]:
    present = [v for v in values if v is not None]
    return (min(present), max(present)) if present else (0.0, 1.0)


def _runs(values: Sequence[float | None]) -> list[list[int]]:
    """Indices of consecutive present values (a line breaks where a value is missing)."""
    runs, current = [], []
    for k, value in enumerate(values):
        if value is None:
            if len(current) > 1:
                runs.append(current)
            current = []
        else:
            current.append(k)
    if len(current) > 1:
        runs.append(current)
    return runs
