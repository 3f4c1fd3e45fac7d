"""The scatter plane: labelled points and polylines (a cost-quality plane), its legend to the
right; each point label is placed where it covers no mark, line or other label."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from reporting.charts.common import GRID, MUTED, Series, _y_axis
from reporting.svg import (
    LinearScale,
    Svg,
    marker,
    nice_domain,
    text_width,
    tick_label,
)


@dataclass(frozen=True)
class PlanePoint:
    x: float
    y: float
    series: Series
    tip: str
    label: str = ""  # printed beside the point when not empty
    ring: bool = False  # circled, to single the point out


@dataclass(frozen=True)
class PlanePath:
    points: Sequence[tuple[float, float]]
    series: Series
    dash: str = ""


@dataclass(frozen=True)
class Plane:
    label: str
    points: Sequence[PlanePoint]
    paths: Sequence[PlanePath]
    x_title: str
    y_title: str
    legend: Sequence[tuple[Series, str]] = field(default_factory=tuple)  # (series, "point"|"line")
    # points below this quality sit on the bottom edge as "off scale" (with their figure), so a
    # far outlier does not squeeze the region where the comparison happens
    y_floor: float | None = None
    plot: tuple[float, float] = (620.0, 420.0)


Box = tuple[float, float, float, float]  # x, y, width, height


def plane(spec: Plane) -> str:
    """A scatter plot with labelled points and polylines, its legend to the right."""
    plot_w, plot_h = spec.plot
    left, top = 58.0, 14.0
    legend_w = max((text_width(s.label) for s, _ in spec.legend), default=0) + 34
    width = left + plot_w + 24 + legend_w
    height = max(top + plot_h + 50, top + 20 * len(spec.legend) + 10)
    svg = Svg(width, height, spec.label)
    floor = -math.inf if spec.y_floor is None else spec.y_floor
    on_scale = [p for p in spec.points if p.y >= floor]
    xs = [p.x for p in spec.points] + [x for path in spec.paths for x, _ in path.points]
    ys = [p.y for p in on_scale] + [y for path in spec.paths for _, y in path.points if y >= floor]
    x = LinearScale(nice_domain(min(xs), max(xs), 6), (left, left + plot_w))
    y = LinearScale(nice_domain(min(ys), max(ys), 6), (top + plot_h, top))
    _y_axis(svg, y, left, plot_w, spec.y_title, top + plot_h / 2, tick_count=6)
    _x_axis(svg, x, top, plot_h, spec.x_title)
    bottom = top + plot_h - 7

    def position(point: PlanePoint) -> tuple[float, float]:
        return x(point.x), (y(point.y) if point.y >= floor else bottom)

    for path in spec.paths:
        svg.polyline(
            [(x(a), max(y(b), top) if b >= floor else bottom) for a, b in path.points],
            stroke=path.series.color,
            stroke_width=1.6,
            stroke_dasharray=path.dash or None,
            class_="mark",
        )
    for point in spec.points:
        px, py = position(point)
        if point.ring:
            svg.circle(px, py, 9, fill="none", stroke=point.series.color, stroke_width=1.5)
        shape = point.series.shape if point.y >= floor else "triangle-down"
        marker(
            svg,
            shape,
            px,
            py,
            8,
            fill=point.series.color,
            stroke="#fff",
            stroke_width=0.8,
            class_="mark",
            tip=point.tip,
        )
    labels = [
        (p, p.label if p.y >= floor else f"{p.label} ({p.y:.1f}, off scale)")
        for p in spec.points
        if p.label
    ]
    marks = [position(p) for p in spec.points]
    lines = [
        [(x(a), y(b) if b >= floor else bottom) for a, b in path.points] for path in spec.paths
    ]
    _point_labels(svg, labels, position, marks + _samples(lines), (left, top, plot_w, plot_h))
    _plane_legend(svg, spec.legend, left + plot_w + 24, top + 8)
    return svg.render()


def _x_axis(svg: Svg, x: LinearScale, top: float, plot_h: float, title: str) -> None:
    ticks = x.ticks(6)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    for tick in ticks:
        svg.line(x(tick), top, x(tick), top + plot_h, stroke=GRID)
        svg.text(
            x(tick), top + plot_h + 16, tick_label(tick, step), text_anchor="middle", fill=MUTED
        )
    middle = (x.range[0] + x.range[1]) / 2
    svg.text(middle, top + plot_h + 38, title, text_anchor="middle", fill=MUTED)


def _plane_legend(svg: Svg, legend: Sequence[tuple[Series, str]], lx: float, y0: float) -> None:
    for n, (series, kind) in enumerate(legend):
        ly = y0 + 20 * n
        if kind == "line":
            dash = "6 4" if series.shape == "dashed" else None
            svg.line(
                lx, ly, lx + 20, ly, stroke=series.color, stroke_width=2, stroke_dasharray=dash
            )
        else:
            marker(svg, series.shape, lx + 10, ly, 8, fill=series.color)
        svg.text(lx + 28, ly + 4, series.label)


LABEL_SIZE = 11.0


def _label_candidates(px: float, py: float, w: float) -> list[tuple[float, float]]:
    """Baseline-left corners to try for a label of width `w`: right, left, above, below of the
    point, then further up and down on either side."""
    near = [(px + 8, py + 4), (px - 8 - w, py + 4), (px - w / 2, py - 9), (px - w / 2, py + 17)]
    for dy in (8, -8, 14, -14, 20, -20, 26, -26, 34, -34, 42, -42, 50, -50):
        near += [(px + 8, py + 4 + dy), (px - 8 - w, py + 4 + dy)]
    return near


def _samples(lines: Sequence[Sequence[tuple[float, float]]], every: float = 4.0) -> list:
    """Points every few pixels along polylines: labels keep off the lines too."""
    out = []
    for line in lines:
        for (x0, y0), (x1, y1) in pairwise(line):
            n = max(1, int(math.hypot(x1 - x0, y1 - y0) // every))
            out += [(x0 + (x1 - x0) * k / n, y0 + (y1 - y0) * k / n) for k in range(n + 1)]
    return out


def _point_labels(
    svg: Svg,
    labels: Sequence[tuple[PlanePoint, str]],
    position: Callable[[PlanePoint], tuple[float, float]],
    marks: Sequence[tuple[float, float]],
    plot: Box,
) -> None:
    """Each label at the first candidate place that stays in the plot and covers no mark and no
    label placed before it (top to bottom); a label moved off its point gets a thin leader."""
    taken: list[Box] = [(mx - 4, my - 4, 8, 8) for mx, my in marks]
    for point, text in sorted(labels, key=lambda item: position(item[0])[::-1]):
        px, py = position(point)
        w, h = text_width(text, LABEL_SIZE), LABEL_SIZE + 1
        candidates = _label_candidates(px, py, w)
        boxes = [(lx, ly - h + 2, w, h) for lx, ly in candidates]
        free = [
            k
            for k, box in enumerate(boxes)
            if _inside(box, plot) and not any(_overlaps(box, other) for other in taken)
        ]
        k = free[0] if free else 0
        (lx, ly), box = candidates[k], boxes[k]
        taken.append(box)
        if k >= 4:  # moved off its point: tie it back
            end = lx if lx > px else lx + w
            svg.line(px, py, end, ly - 4, stroke="#999", stroke_width=0.7)
        svg.text(
            lx,
            ly,
            text,
            font_size=LABEL_SIZE,
            fill="#333",
            stroke="#fff",
            stroke_width=3,
            paint_order="stroke",
            stroke_linejoin="round",
        )


def _inside(box: Box, area: Box) -> bool:
    x, y, w, h = box
    ax, ay, aw, ah = area
    return ax <= x and x + w <= ax + aw and ay <= y and y + h <= ay + ah


def _overlaps(a: Box, b: Box) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah
