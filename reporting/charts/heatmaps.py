"""The heatmap: a grid of coloured cells with their figures, column labels at an angle, optional
row and column groups, and a colour key."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reporting.charts.common import AXIS, MUTED, PAD
from reporting.svg import (
    FONT_SIZE,
    NO_DATA,
    Svg,
    ink_for,
    nice_step,
    text_width,
    tick_label,
)


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
