"""The chart primitives (reporting/svg.py) against figures worked out by hand."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from reporting.svg import (
    LinearScale,
    Svg,
    diverging_color,
    ink_for,
    interpolate,
    marker,
    nice_domain,
    nice_ticks,
    num,
    text_width,
    tick_label,
)

NS = {"svg": "http://www.w3.org/2000/svg"}


def test_a_linear_scale_maps_the_domain_onto_pixels():
    x = LinearScale((0.0, 10.0), (100.0, 300.0))
    assert x(0.0) == 100.0 and x(10.0) == 300.0
    assert x(2.5) == 150.0  # a quarter of the way: 100 + 200 / 4
    assert x(-5.0) == 0.0  # outside the domain it extrapolates
    y = LinearScale((0.0, 100.0), (400.0, 0.0))  # an upward y axis
    assert y(25.0) == 300.0
    assert LinearScale((3.0, 3.0), (0.0, 50.0))(3.0) == 25.0  # one value: the middle


@pytest.mark.parametrize(
    ("lo", "hi", "count", "ticks"),
    [
        (0.0, 1.0, 5, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        # span 14.9 / 6 = 2.48 per interval -> step 2
        (82.3, 97.2, 6, [84.0, 86.0, 88.0, 90.0, 92.0, 94.0, 96.0]),
        # span 1.99 / 4 = 0.4975 -> step 0.5
        (-0.43, 1.56, 4, [0.0, 0.5, 1.0, 1.5]),
        (0.0, 70.0, 6, [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]),
    ],
)
def test_nice_ticks_step_by_one_two_or_five(lo, hi, count, ticks):
    assert nice_ticks(lo, hi, count) == ticks


def test_a_nice_domain_ends_on_ticks():
    assert nice_domain(82.3, 97.2, 6) == (82.0, 98.0)
    assert nice_domain(-0.43, 1.56, 4) == (-0.5, 2.0)
    assert nice_domain(100.0, 100.0, 5) == (90.0, 110.0)  # one value: widened by 10%


def test_numbers_are_written_short_and_without_negative_zero():
    assert num(12.5) == "12.5"
    assert num(183.2000001) == "183.2"
    assert num(-0.001) == "0"
    assert num(40.0) == "40"
    assert tick_label(0.30000000000000004, 0.1) == "0.3"
    assert tick_label(-0.0, 0.5) == "0"
    assert tick_label(90.0, 2.0) == "90"


def test_colours_interpolate_between_stops():
    assert interpolate(("#000000", "#ffffff"), 0.0) == "#000000"
    assert interpolate(("#000000", "#ffffff"), 0.5) == "#808080"  # 127.5 rounds to 128
    assert interpolate(("#000000", "#ffffff"), 2.0) == "#ffffff"  # clamped
    assert diverging_color(0.0, 10.0) == "#f7f7f7"  # the middle stop: white
    assert diverging_color(-10.0, 10.0) == "#b2182b"  # full red
    assert diverging_color(25.0, 10.0) == "#2166ac"  # beyond the limit: full blue
    assert ink_for("#ffffff") == "#000" and ink_for("#084081") == "#fff"


def test_text_width_counts_wide_glyphs_double():
    assert text_width("abc") == pytest.approx(3 * 12 * 0.6)
    assert text_width("中文") == pytest.approx(4 * 12 * 0.6)


def _parse(svg: Svg) -> ET.Element:
    return ET.fromstring(svg.render())


def test_the_writer_escapes_text_and_names_attributes():
    svg = Svg(100, 50, 'a "label"')
    svg.text(1.0, 2.0, "<b> & c", class_="mark", font_size=10.5, tip="x < y")
    root = _parse(svg)
    assert root.get("viewBox") == "0 0 100 50" and root.get("aria-label") == 'a "label"'
    text = root.find("svg:text", NS)
    assert text.get("class") == "mark" and text.get("font-size") == "10.5"
    assert text.find("svg:title", NS).text == "x < y"
    assert "".join(text.itertext()) == "x < y<b> & c"


def test_markers_are_centred_on_their_point():
    svg = Svg(100, 100, "m")
    marker(svg, "square", 50.0, 40.0, 8.0)
    marker(svg, "triangle-down", 50.0, 40.0, 8.0)
    marker(svg, "star", 50.0, 40.0, 8.0)
    square, down, star = list(_parse(svg))
    assert (square.get("x"), square.get("y"), square.get("width")) == ("46", "36", "8")
    apex = down.get("points").split()[0]
    assert apex == "50,45.2"  # points down: below the centre by 1.3 half-sizes
    assert len(star.get("points").split()) == 10
    with pytest.raises(ValueError, match="unknown marker shape"):
        marker(svg, "hexagon", 0.0, 0.0, 1.0)
