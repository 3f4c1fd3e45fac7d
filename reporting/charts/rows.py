"""The row chart: rows of a table, each with text columns, then lanes of interval marks (a forest
plot, `IntervalLane`) or bars (`BarLane`); leaderboards and forest plots are drawn with it."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reporting.charts.common import AXIS, GRID, MUTED, PAD, STRIPE, Series
from reporting.svg import (
    FONT_SIZE,
    LinearScale,
    Svg,
    marker,
    nice_domain,
    nice_step,
    nice_ticks,
    text_width,
    tick_label,
)


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval (either end may be unknown)."""

    estimate: float
    lo: float | None = None
    hi: float | None = None


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
