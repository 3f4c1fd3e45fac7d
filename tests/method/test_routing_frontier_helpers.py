"""`method.routing.frontier`'s hull and its readings on hand points (METHOD 12): ties in cost or
quality, collinear vertices and empty intervals, which the frontier's table test does not reach
(`make mutation`, issue 36). Every expected value is worked out by hand in the docstrings."""

from __future__ import annotations

import math

from method.routing.frontier import area_under_frontier, frontier_value, upper_frontier


def test_upper_frontier_keeps_the_best_of_a_cost_and_drops_collinear_vertices():
    """Guards the hull's order (by cost, the best quality first at one cost), the strict gain a
    vertex needs, and a vertex on the segment of its neighbours dropped. Points (1, 50), (1, 60),
    (2, 60), (3, 70), (4, 71), (5, 80): the Pareto steps are (1, 60), (3, 70), (4, 71), (5, 80);
    (4, 71) lies below (3, 70) -> (5, 80) (cross product 1 * 10 - 1 * 2 = 8) and (3, 70) on
    (1, 60) -> (5, 80) (2 * 20 - 10 * 4 = 0): the hull is (1, 60), (5, 80)."""
    points = [(3.0, 70.0), (1.0, 50.0), (5.0, 80.0), (2.0, 60.0), (1.0, 60.0), (4.0, 71.0)]
    assert upper_frontier(points) == [(1.0, 60.0), (5.0, 80.0)]


def test_upper_frontier_needs_more_quality_for_more_cost():
    """Guards the strict gain: (2, 60) buys nothing over (1, 60), so it is not a vertex."""
    assert upper_frontier([(2.0, 60.0), (1.0, 60.0)]) == [(1.0, 60.0)]


def test_upper_frontier_keeps_every_vertex_of_a_concave_chain():
    """Guards the hull test against the last two vertices: slopes 5, 1, 1/2 fall, so (1, 60),
    (3, 70), (4, 71), (6, 72) all stay ((4, 71) is above (3, 70) -> (6, 72): 1 * 2 - 1 * 3 < 0)."""
    points = [(1.0, 60.0), (3.0, 70.0), (4.0, 71.0), (6.0, 72.0)]
    assert upper_frontier(points) == points


def test_frontier_value_and_area_at_the_edges():
    """Guards the frontier's readings: undefined below the cheapest vertex, linear between
    vertices, flat after the last; the area over an empty interval is the value there."""
    hull = [(1.0, 60.0), (5.0, 80.0)]
    assert math.isnan(frontier_value(hull, 0.5))
    assert frontier_value(hull, 3.0) == 70.0
    assert frontier_value(hull, 6.0) == 80.0
    assert area_under_frontier(hull, 3.0, 3.0) == 70.0
    assert area_under_frontier(hull, 3.0, 2.0) == 70.0
