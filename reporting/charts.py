"""The report's chart types, on plain data: a row chart (text columns beside interval and bar
lanes: leaderboards and forest plots), a heatmap, a line chart and a labelled scatter plane.

Every data mark carries `class="mark"` and a tooltip (<title>), so a reader can hover for the exact
figure and a test can count what was drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from reporting.svg import (
    FONT_SIZE,
    NO_DATA,
    LinearScale,
    Svg,
    ink_for,
    marker,
    nice_domain,
    nice_step,
    nice_ticks,
    text_width,
    tick_label,
)

AXIS = "#555"
GRID = "#e3e3e3"
STRIPE = "#f6f7f9"
MUTED = "#666"
PAD = 12


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval (either end may be unknown)."""

    estimate: float
    lo: float | None = None
    hi: float | None = None


@dataclass(frozen=True)
class Series:
    key: str
    label: str
    color: str
    shape: str = "circle"


@dataclass(frozen=True)
class TextColumn:
    title: str
    cells: Sequence[str]
    align: str = "end"  # `end`: figures right-aligned; `start`: text


@dataclass(frozen=True)
class IntervalLane:
    """A forest-plot lane: per row and series, a point with a whisker over its interval."""

    title: str
    series: Sequence[Series]
    values: Sequence[dict[str, Interval]]  # per row: series key -> interval
    unit: str = ""
    reference: float | None = None  # a dashed line at this value (0 for differences)
    domain: tuple[float, float] | None = None  # default: the data's, widened to round ticks
    integer_ticks: bool = False
    width: float = 280


@dataclass(frozen=True)
class BarLane:
    """A lane of horizontal bars from 0, each labelled with its figure."""

    title: str
    values: Sequence[float | None]
    label: Callable[[float], str]
    domain: tuple[float, float] = (0.0, 1.0)
    color: str = "#4e79a7"
    width: float = 150


def _interval_domain(lane: IntervalLane) -> tuple[float, float]:
    if lane.domain is not None:
        return lane.domain
    ends = [
        v
        for row in lane.values
        for iv in row.values()
        for v in (iv.estimate, iv.lo, iv.hi)
        if v is not None
    ]
    if lane.reference is not None:
        ends.append(lane.reference)
    return nice_domain(min(ends), max(ends), 4) if ends else (0.0, 1.0)


def row_chart(
    label: str,
    row_labels: Sequence[str],
    columns: Sequence[TextColumn] = (),
    lanes: Sequence[IntervalLane | BarLane] = (),
    separators: Sequence[int] = (),
    row_height: float = 22,
) -> str:
    """Rows of a table, each with text columns, then lanes of interval marks or bars.

    `separators`: indices of rows above which a rule is drawn (e.g. before a macro-mean row)."""
    header = 36
    label_w = max((text_width(t) for t in row_labels), default=0) + PAD
    col_ws = [max([text_width(c.title), *map(text_width, c.cells)]) + PAD for c in columns]
    axis_h = 34
    width = PAD + label_w + sum(col_ws) + sum(lane.width + 2 * PAD for lane in lanes) + PAD
    legend_rows = _legend_rows(_lane_legend(lanes), width - 2 * PAD)
    body_h = row_height * len(row_labels)
    height = header + body_h + axis_h + 20 * len(legend_rows) + 4
    svg = Svg(width, height, label)
    top = header
    for i in range(len(row_labels)):
        if i % 2 == 0:
            svg.rect(PAD, top + i * row_height, width - 2 * PAD, row_height, fill=STRIPE)
    for i in separators:
        svg.line(PAD, top + i * row_height, width - PAD, top + i * row_height, stroke=AXIS)
    baseline = row_height / 2 + FONT_SIZE * 0.35
    x = PAD
    for i, text in enumerate(row_labels):
        svg.text(x + 4, top + i * row_height + baseline, text)
    x += label_w
    for column, w in zip(columns, col_ws, strict=True):
        anchor_x = x + w - PAD / 2 if column.align == "end" else x + PAD / 2
        svg.text(
            anchor_x,
            header - 10,
            column.title,
            text_anchor=column.align,
            fill=MUTED,
            font_weight="bold",
        )
        for i, cell in enumerate(column.cells):
            svg.text(anchor_x, top + i * row_height + baseline, cell, text_anchor=column.align)
        x += w
    for lane in lanes:
        x += PAD
        if isinstance(lane, IntervalLane):
            _draw_interval_lane(svg, lane, x, top, row_height, row_labels)
        else:
            _draw_bar_lane(svg, lane, x, top, row_height, row_labels)
        x += lane.width + PAD
    for k, entries in enumerate(legend_rows):
        _draw_legend(svg, entries, PAD + 4, header + body_h + axis_h + 20 * k + 10)
    return svg.render()


def _lane_legend(lanes: Sequence[IntervalLane | BarLane]) -> list[Series]:
    """The series of lanes with more than one series, once each."""
    seen: dict[str, Series] = {}
    for lane in lanes:
        if isinstance(lane, IntervalLane) and len(lane.series) > 1:
            for s in lane.series:
                seen.setdefault(s.key, s)
    return list(seen.values())


def _legend_width(entry: Series) -> float:
    return 14 + text_width(entry.label) + 18


def _legend_rows(entries: Sequence[Series], width: float) -> list[list[Series]]:
    """The legend's entries cut into lines that fit `width`."""
    rows: list[list[Series]] = []
    used = width
    for entry in entries:
        if used + _legend_width(entry) > width:
            rows.append([])
            used = 0.0
        rows[-1].append(entry)
        used += _legend_width(entry)
    return rows


def _draw_legend(svg: Svg, entries: Sequence[Series], x: float, y: float) -> None:
    for entry in entries:
        marker(svg, entry.shape, x + 5, y - 4, 9, fill=entry.color)
        svg.text(x + 14, y, entry.label)
        x += _legend_width(entry)


def _draw_interval_lane(
    svg: Svg, lane: IntervalLane, x0: float, top: float, row_h: float, row_labels: Sequence[str]
) -> None:
    lo, hi = _interval_domain(lane)
    scale = LinearScale((lo, hi), (x0, x0 + lane.width))
    bottom = top + row_h * len(row_labels)
    ticks = _lane_ticks(lo, hi, lane.integer_ticks, lane.width)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    for tick in ticks:
        svg.line(scale(tick), top, scale(tick), bottom, stroke=GRID)
        svg.text(scale(tick), bottom + 14, tick_label(tick, step), text_anchor="middle", fill=MUTED)
    svg.line(x0, bottom, x0 + lane.width, bottom, stroke=AXIS)
    title = f"{lane.title} ({lane.unit})" if lane.unit else lane.title
    svg.text(
        x0 + lane.width / 2, top - 10, title, text_anchor="middle", fill=MUTED, font_weight="bold"
    )
    if lane.reference is not None and lo <= lane.reference <= hi:
        ref = scale(lane.reference)
        svg.line(ref, top, ref, bottom, stroke=AXIS, stroke_dasharray="4 3")
    offsets = _series_offsets(len(lane.series), row_h)
    for i, row in enumerate(lane.values):
        for series, offset in zip(lane.series, offsets, strict=True):
            interval = row.get(series.key)
            if interval is None:
                continue
            y = top + i * row_h + row_h / 2 + offset
            _draw_interval(svg, scale, interval, y, series, f"{row_labels[i]}", lane.unit)


def _lane_ticks(lo: float, hi: float, integer: bool, width: float) -> list[float]:
    count = max(2, int(width // 60))
    if not integer:
        return nice_ticks(lo, hi, count)
    integers = range(math.ceil(lo), math.floor(hi) + 1)
    if len(integers) <= width // 16:
        return [float(v) for v in integers]
    step = max(1, math.ceil(nice_step(hi - lo, count)))
    return [float(v) for v in integers if v == integers[0] or v % step == 0]


def _series_offsets(n: int, row_h: float) -> list[float]:
    """Vertical offsets that spread n series over the middle of a row."""
    if n == 1:
        return [0.0]
    spread = row_h * 0.56
    return [-spread / 2 + k * spread / (n - 1) for k in range(n)]


def _draw_interval(
    svg: Svg,
    scale: LinearScale,
    interval: Interval,
    y: float,
    series: Series,
    row: str,
    unit: str,
) -> None:
    span = ""
    if interval.lo is not None and interval.hi is not None:
        svg.line(
            scale(interval.lo),
            y,
            scale(interval.hi),
            y,
            stroke=series.color,
            stroke_width=2,
            class_="mark",
        )
        for end in (interval.lo, interval.hi):
            svg.line(scale(end), y - 3, scale(end), y + 3, stroke=series.color, stroke_width=1.5)
        span = f" [{interval.lo:.2f}, {interval.hi:.2f}]"
    name = f"{row} · {series.label}" if series.label else row
    tip = f"{name}: {interval.estimate:.2f}{span} {unit}".rstrip()
    marker(
        svg,
        series.shape,
        scale(interval.estimate),
        y,
        7.5,
        fill=series.color,
        stroke="#fff",
        stroke_width=1,
        class_="mark",
        tip=tip,
    )


def _draw_bar_lane(
    svg: Svg, lane: BarLane, x0: float, top: float, row_h: float, row_labels: Sequence[str]
) -> None:
    label_room = 44
    scale = LinearScale(lane.domain, (x0, x0 + lane.width - label_room))
    bottom = top + row_h * len(row_labels)
    svg.text(
        x0 + lane.width / 2,
        top - 10,
        lane.title,
        text_anchor="middle",
        fill=MUTED,
        font_weight="bold",
    )
    svg.line(x0, top, x0, bottom, stroke=AXIS)
    for i, value in enumerate(lane.values):
        if value is None:
            continue
        y = top + i * row_h
        w = max(scale(value) - x0, 0.0)
        svg.rect(
            x0,
            y + row_h * 0.22,
            w,
            row_h * 0.56,
            fill=lane.color,
            class_="mark",
            tip=f"{row_labels[i]}: {lane.label(value)}",
        )
        svg.text(x0 + w + 4, y + row_h / 2 + FONT_SIZE * 0.35, lane.label(value), fill=MUTED)


# -- heatmap -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColorKey:
    """The heatmap's legend: `color` over [lo, hi] with a caption."""

    color: Callable[[float], str]
    lo: float
    hi: float
    caption: str
    below: bool = False  # values under `lo` take lo's colour: the key says "≤ lo"


@dataclass(frozen=True)
class Heatmap:
    label: str
    row_labels: Sequence[str]
    col_labels: Sequence[str]
    values: Sequence[Sequence[float | None]]  # [row][col]
    color_key: ColorKey
    cell_text: Callable[[float], str]
    tip: Callable[[int, int, float | None], str]
    col_groups: Sequence[tuple[str, int]] = ()  # (group title, number of columns), in order
    row_groups: Sequence[tuple[str, int]] = ()
    cell: tuple[float, float] = (38.0, 22.0)
    angle: float = 45.0  # column labels rise at this angle
    no_data: str = NO_DATA


def heatmap(spec: Heatmap) -> str:
    cell_w, cell_h = spec.cell
    sin, cos = math.sin(math.radians(spec.angle)), math.cos(math.radians(spec.angle))
    longest = max((text_width(c) for c in spec.col_labels), default=0)
    group_h = 20 if spec.col_groups else 0
    header = longest * sin + 12 + group_h
    row_group_w = max((text_width(g) for g, _ in spec.row_groups), default=-PAD) + PAD
    label_w = max((text_width(r) for r in spec.row_labels), default=0) + PAD
    grid_x = PAD + row_group_w + label_w
    grid_w = cell_w * len(spec.col_labels)
    overhang = max(0.0, longest * cos - cell_w / 2)
    width = grid_x + grid_w + max(overhang, 0) + PAD
    grid_y = header
    height = grid_y + cell_h * len(spec.row_labels) + 62
    svg = Svg(width, height, spec.label)
    _heatmap_headers(svg, spec, grid_x, grid_y, group_h, sin, cos)
    _heatmap_rows(svg, spec, grid_x, grid_y, row_group_w)
    for i, row in enumerate(spec.values):
        for j, value in enumerate(row):
            _heatmap_cell(svg, spec, grid_x + j * cell_w, grid_y + i * cell_h, i, j, value)
    _color_key(svg, spec.color_key, grid_x, grid_y + cell_h * len(spec.row_labels) + 22)
    return svg.render()


def _heatmap_headers(
    svg: Svg, spec: Heatmap, grid_x: float, grid_y: float, group_h: float, sin: float, cos: float
) -> None:
    cell_w = spec.cell[0]
    for j, text in enumerate(spec.col_labels):
        x, y = grid_x + j * cell_w + cell_w / 2, grid_y - 6
        svg.text(x, y, text, transform=f"rotate(-{spec.angle:g} {x:.2f} {y:.2f})")
    x = grid_x
    for title, span in spec.col_groups:
        w = span * cell_w
        svg.line(x + 1, group_h - 4, x + w - 1, group_h - 4, stroke=AXIS)
        svg.text(
            x + w / 2,
            group_h - 8,
            _fitted(title, w),
            text_anchor="middle",
            font_weight="bold",
            fill=MUTED,
            tip=title,
        )
        x += w


def _fitted(title: str, width: float) -> str:
    """`title`, else its first word, else that word cut short with an ellipsis."""
    for candidate in (title, title.split()[0]):
        if text_width(candidate) <= width - 2:
            return candidate
    keep = max(1, int(width // text_width("x")) - 1)
    return title[:keep] + "…"


def _heatmap_rows(svg: Svg, spec: Heatmap, grid_x: float, grid_y: float, group_w: float) -> None:
    cell_h = spec.cell[1]
    for i, text in enumerate(spec.row_labels):
        svg.text(
            grid_x - 6, grid_y + i * cell_h + cell_h / 2 + FONT_SIZE * 0.35, text, text_anchor="end"
        )
    y = grid_y
    for title, span in spec.row_groups:
        h = span * cell_h
        svg.text(PAD, y + h / 2 + FONT_SIZE * 0.35, title, font_weight="bold", fill=MUTED)
        if y > grid_y:
            svg.line(PAD, y, grid_x + spec.cell[0] * len(spec.col_labels), y, stroke=AXIS)
        y += h


def _heatmap_cell(
    svg: Svg, spec: Heatmap, x: float, y: float, i: int, j: int, value: float | None
) -> None:
    cell_w, cell_h = spec.cell
    fill = spec.no_data if value is None else spec.color_key.color(value)
    svg.rect(x, y, cell_w - 1, cell_h - 1, fill=fill, class_="mark", tip=spec.tip(i, j, value))
    text = "–" if value is None else spec.cell_text(value)
    svg.text(
        x + cell_w / 2 - 0.5,
        y + cell_h / 2 + FONT_SIZE * 0.32,
        text,
        text_anchor="middle",
        fill=ink_for(fill),
        font_size=10.5,
    )


def _color_key(svg: Svg, key: ColorKey, x: float, y: float) -> None:
    steps, w, h = 40, 4.5, 10
    for k in range(steps):
        value = key.lo + (key.hi - key.lo) * (k + 0.5) / steps
        svg.rect(x + k * w, y, w + 0.3, h, fill=key.color(value))
    low = ("≤ " if key.below else "") + tick_label(key.lo, _label_step(key))
    svg.text(x, y + h + 13, low, fill=MUTED)
    svg.text(
        x + steps * w,
        y + h + 13,
        tick_label(key.hi, _label_step(key)),
        fill=MUTED,
        text_anchor="end",
    )
    svg.text(x + steps * w + 10, y + h - 1, key.caption, fill=MUTED)


def _label_step(key: ColorKey) -> float:
    return nice_step(key.hi - key.lo, 4) if key.hi > key.lo else 1.0


# -- line chart --------------------------------------------------------------------------------


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


# -- scatter plane -----------------------------------------------------------------------------


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
