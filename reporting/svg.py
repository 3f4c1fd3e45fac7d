"""Chart primitives for the HTML report: scales, ticks, colours and an SVG writer.

Everything renders to inline SVG text in Python, so the report needs no JavaScript, no charting
library and no network. Coordinates are written with at most two decimals, so the same data
gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

FONT_SIZE = 12
# Mean advance of a sans-serif glyph as a fraction of the font size; labels are laid out with it
# because the browser's font metrics are not known when the SVG is written.
CHAR_WIDTH_EM = 0.6


def num(value: float) -> str:
    """A coordinate as SVG text: two decimals at most, no trailing zeros, no `-0`."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """Estimated rendered width of `text` in pixels (wide CJK glyphs count double)."""
    units = sum(2 if ord(char) > 0x2E80 else 1 for char in text)
    return units * size * CHAR_WIDTH_EM


# -- scales ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinearScale:
    """Maps `domain` linearly onto `range` (pixels); a reversed range flips the axis."""

    domain: tuple[float, float]
    range: tuple[float, float]

    def __call__(self, value: float) -> float:
        d0, d1 = self.domain
        r0, r1 = self.range
        if d1 == d0:
            return (r0 + r1) / 2
        return r0 + (value - d0) / (d1 - d0) * (r1 - r0)

    def ticks(self, count: int = 5) -> list[float]:
        return nice_ticks(*self.domain, count)


def nice_step(span: float, count: int) -> float:
    """The 1-2-5 step that cuts `span` into about `count` intervals."""
    raw = span / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power * 1.5 or factor == 10:
            return factor * power
    return 10 * power  # pragma: no cover - the loop always returns


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values within [lo, hi] (at most about `count` + 1 of them)."""
    if hi <= lo:
        return [lo]
    step = nice_step(hi - lo, count)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    # round away the float noise of k * step (0.30000000000000004)
    return [round(k * step, 10) for k in range(first, last + 1)]


def nice_domain(lo: float, hi: float, count: int = 5) -> tuple[float, float]:
    """[lo, hi] widened to the nearest ticks, so the axis starts and ends on a labelled value."""
    if hi <= lo:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    step = nice_step(hi - lo, count)
    return math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step


def tick_label(value: float, step: float) -> str:
    """A tick's text with as many decimals as the step needs."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    text = f"{value:.{decimals}f}"
    return "0" if text.strip("-0.") == "" else text


# -- colours -----------------------------------------------------------------------------------

# ColorBrewer GnBu (sequential: low is light) and RdBu (diverging: red below zero, blue above).
SEQUENTIAL = (
    "#f7fcf0",
    "#e0f3db",
    "#ccebc5",
    "#a8ddb5",
    "#7bccc4",
    "#4eb3d3",
    "#2b8cbe",
    "#0868ac",
    "#084081",
)
DIVERGING = (
    "#b2182b",
    "#d6604d",
    "#f4a582",
    "#fddbc7",
    "#f7f7f7",
    "#d1e5f0",
    "#92c5de",
    "#4393c3",
    "#2166ac",
)
# Tableau 20's strong colours first, then its light ones: one per generator.
CATEGORICAL = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#79706e",
    "#d37295",
    "#8cd17d",
    "#499894",
    "#b6992d",
    "#86bcb6",
    "#f1ce63",
)
NO_DATA = "#e5e5e5"


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return int(hex_color[1:3], 16), int(hex_color[3:5], 16), int(hex_color[5:7], 16)


def interpolate(stops: Sequence[str], t: float) -> str:
    """The colour at `t` in [0, 1] along evenly spaced `stops` (clamped), as #rrggbb."""
    t = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    i = min(int(t), len(stops) - 2)
    a, b = _rgb(stops[i]), _rgb(stops[i + 1])
    mix = [round(x + (y - x) * (t - i)) for x, y in zip(a, b, strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*mix)


def sequential_color(value: float, lo: float, hi: float) -> str:
    return interpolate(SEQUENTIAL, 0.5 if hi == lo else (value - lo) / (hi - lo))


def diverging_color(value: float, limit: float) -> str:
    """White at 0, full red at -limit, full blue at +limit."""
    return interpolate(DIVERGING, 0.5 if limit <= 0 else 0.5 + value / (2 * limit))


def ink_for(fill: str) -> str:
    """Black or white text, whichever reads better on `fill` (WCAG relative luminance)."""

    def channel(c: int) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in _rgb(fill))
    return "#000" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.3 else "#fff"


# -- the writer --------------------------------------------------------------------------------


def _attrs(attributes: dict[str, object]) -> str:
    parts = []
    for key, value in attributes.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        text = num(value) if isinstance(value, float) else str(value)
        parts.append(f' {name}="{escape(text)}"')
    return "".join(parts)


class Svg:
    """An SVG document built element by element. Attribute names are written with `_` as `-`
    (`font_size` -> `font-size`; a trailing `_` lets `class_` stand for `class`); float values
    go through `num`. `tip` adds a <title> child, which browsers show as a tooltip."""

    def __init__(self, width: float, height: float, label: str):
        self.width = width
        self.height = height
        self.label = label
        self._parts: list[str] = []

    def element(
        self, tag: str, text: str | None = None, tip: str | None = None, **attributes: object
    ) -> None:
        inner = (f"<title>{escape(tip)}</title>" if tip else "") + (escape(text) if text else "")
        if inner:
            self._parts.append(f"<{tag}{_attrs(attributes)}>{inner}</{tag}>")
        else:
            self._parts.append(f"<{tag}{_attrs(attributes)}/>")

    def rect(self, x: float, y: float, w: float, h: float, **attributes: object) -> None:
        self.element("rect", x=float(x), y=float(y), width=float(w), height=float(h), **attributes)

    def line(self, x1: float, y1: float, x2: float, y2: float, **attributes: object) -> None:
        self.element("line", x1=float(x1), y1=float(y1), x2=float(x2), y2=float(y2), **attributes)

    def circle(self, cx: float, cy: float, r: float, **attributes: object) -> None:
        self.element("circle", cx=float(cx), cy=float(cy), r=float(r), **attributes)

    def polyline(self, points: Iterable[tuple[float, float]], **attributes: object) -> None:
        coordinates = " ".join(f"{num(x)},{num(y)}" for x, y in points)
        self.element("polyline", points=coordinates, fill="none", **attributes)

    def polygon(self, points: Iterable[tuple[float, float]], **attributes: object) -> None:
        coordinates = " ".join(f"{num(x)},{num(y)}" for x, y in points)
        self.element("polygon", points=coordinates, **attributes)

    def text(self, x: float, y: float, text: str, **attributes: object) -> None:
        self.element("text", text=text, x=float(x), y=float(y), **attributes)

    def open_group(self, **attributes: object) -> None:
        self._parts.append(f"<g{_attrs(attributes)}>")

    def close_group(self) -> None:
        self._parts.append("</g>")

    def render(self) -> str:
        w, h = num(float(self.width)), num(float(self.height))
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}" role="img" aria-label="{escape(self.label)}" '
            f'font-size="{FONT_SIZE}">'
        )
        return head + "".join(self._parts) + "</svg>"


def marker(svg: Svg, shape: str, x: float, y: float, size: float, **attributes: object) -> None:
    """A point mark: `circle`, `square`, `diamond`, `triangle`, `triangle-down` or `star`,
    centred on (x, y)."""
    r = size / 2
    if shape == "circle":
        svg.circle(x, y, r, **attributes)
    elif shape == "square":
        svg.rect(x - r, y - r, size, size, **attributes)
    elif shape == "diamond":
        corners = [(x, y - r * 1.3), (x + r * 1.3, y), (x, y + r * 1.3), (x - r * 1.3, y)]
        svg.polygon(corners, **attributes)
    elif shape == "triangle-down":
        svg.polygon([(x, y + r * 1.3), (x + r * 1.2, y - r), (x - r * 1.2, y - r)], **attributes)
    elif shape == "triangle":
        svg.polygon([(x, y - r * 1.3), (x + r * 1.2, y + r), (x - r * 1.2, y + r)], **attributes)
    elif shape == "star":
        points = []
        for k in range(10):
            radius = r * 1.5 if k % 2 == 0 else r * 0.65
            angle = math.pi / 2 + k * math.pi / 5
            points.append((x + radius * math.cos(angle), y - radius * math.sin(angle)))
        svg.polygon(points, **attributes)
    else:
        raise ValueError(f"unknown marker shape {shape!r}")
