"""Chart geometry (reporting/charts.py): where a value lands, worked out by hand from the layout
rules (12 px padding, 22 px rows, a 36 px header, glyphs 0.6 em of 12 px)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from reporting.charts import (
    BarLane,
    ColorKey,
    Heatmap,
    Interval,
    IntervalLane,
    LineChart,
    Plane,
    PlanePoint,
    Series,
    heatmap,
    line_chart,
    plane,
    row_chart,
)

NS = {"svg": "http://www.w3.org/2000/svg"}
BLACK = Series("s", "", "#000000")


def _marks(svg: str) -> list[ET.Element]:
    return [e for e in ET.fromstring(svg).iter() if e.get("class") == "mark"]


def test_an_interval_lands_where_its_scale_puts_it():
    """One row labelled "a" (7.2 px + 12 px padding), no text columns: the lane starts at
    12 + 19.2 + 12 = 43.2 px; domain 0..10 over 280 px is 28 px per unit."""
    lane = IntervalLane("x", [BLACK], [{"s": Interval(5.0, 2.0, 8.0)}], domain=(0.0, 10.0))
    whisker, point = _marks(row_chart("t", ["a"], lanes=[lane]))
    assert (whisker.get("x1"), whisker.get("x2")) == ("99.2", "267.2")  # 43.2 + 56, + 224
    assert (point.get("cx"), point.get("cy")) == ("183.2", "47")  # 43.2 + 140; 36 + 22 / 2
    assert point.find("svg:title", NS).text == "a: 5.00 [2.00, 8.00]"


def test_series_of_one_row_are_spread_around_its_middle():
    series = [Series("p", "P", "#111111"), Series("q", "Q", "#222222")]
    values = [{"p": Interval(1.0), "q": Interval(2.0)}]  # no interval: points only
    lane = IntervalLane("x", series, values, domain=(0.0, 10.0))
    p, q = _marks(row_chart("t", ["a"], lanes=[lane]))
    # offsets are +-0.28 rows: 47 -+ 6.16
    assert (p.get("cy"), q.get("cy")) == ("40.84", "53.16")
    assert p.get("cx") == "71.2"  # 43.2 + 28


def test_a_bar_is_as_long_as_its_share_of_the_lane():
    """A 150 px bar lane keeps 44 px for its label: 0.5 of 106 px is 53 px."""
    bars = BarLane("p", [0.5, None], label=lambda v: f"{v:.0%}")
    (bar,) = _marks(row_chart("t", ["a", "b"], lanes=[bars]))
    assert (bar.get("x"), bar.get("width")) == ("43.2", "53")


def test_heatmap_cells_sit_on_the_grid_and_missing_ones_are_grey():
    """Column labels "a", "b" rise at 45 degrees: header 7.2 sin 45 + 12 = 17.09 px; the row
    label "r" takes 19.2 px after the 12 px margin, so the grid starts at x = 31.2."""
    spec = Heatmap(
        label="h",
        row_labels=["r"],
        col_labels=["a", "b"],
        values=[[10.0, None]],
        color_key=ColorKey(lambda v: "#123456", 0.0, 10.0, "points"),
        cell_text=lambda v: f"{v:.0f}",
        tip=lambda i, j, v: f"{i},{j}={v}",
    )
    first, second = _marks(heatmap(spec))
    assert (first.get("x"), first.get("y"), first.get("fill")) == ("31.2", "17.09", "#123456")
    assert (second.get("x"), second.get("fill")) == ("69.2", "#e5e5e5")  # one 38 px cell on
    assert second.find("svg:title", NS).text == "0,1=None"


def test_a_line_chart_puts_categories_in_band_centres():
    """Two categories over a 480 px plot starting at x = 56: centres at 176 and 416; y runs
    0..100 over 300 px from y = 314 up to 14."""
    spec = LineChart("l", ["1", "2"], [(BLACK, [0.0, 100.0])], "x", "y", domain=(0.0, 100.0))
    low, high = _marks(line_chart(spec))
    assert (low.get("cx"), low.get("cy")) == ("176", "314")
    assert (high.get("cx"), high.get("cy")) == ("416", "14")


def test_a_plane_draws_points_below_the_floor_on_its_bottom_edge():
    on = PlanePoint(10.0, 90.0, BLACK, "on", label="on")
    off = PlanePoint(20.0, 50.0, BLACK, "off", label="off")
    svg = plane(
        Plane("p", [on, off, PlanePoint(30.0, 95.0, BLACK, "t")], [], "x", "y", y_floor=80.0)
    )
    marks = _marks(svg)
    down = marks[1]
    assert down.tag.endswith("polygon")  # the off-scale point: a downward triangle
    apex_y = float(down.get("points").split()[0].split(",")[1])
    assert apex_y == pytest.approx(14 + 420 - 7 + 5.2)  # the bottom edge, less 7 px, + apex
    assert "off (50.0, off scale)" in svg
