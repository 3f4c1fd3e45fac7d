"""`method.routing.frontier`'s hull and its readings on hand points (METHOD 12): ties in cost or
quality, collinear vertices and empty intervals, which the frontier's table test does not reach
(`make mutation`, issue 36). Every expected value is worked out by hand in the docstrings."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

from method.routing.frontier import (
    area_under_frontier,
    frontier_table,
    frontier_value,
    upper_frontier,
)


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


def frontier_point(router, cost, en, zh, bilingual, grid_eps=None):
    """An int_router_points row; the three qualities are given apart (any may be missing)."""
    return {
        "router": router,
        "grid_eps": grid_eps,
        "en_frac": en,
        "zh_frac": zh,
        "bilingual_frac": bilingual,
        "gpu_s_per_mp": cost,
    }


def test_frontier_table_with_missing_figures_by_hand():
    """Guards agg_router_frontier where figures are missing: a point without a quality or a
    cost stays a row but off the hull (no quality: no `bilingual`, no `frontier_quality` only
    without a cost), the cost column as given; a Q-Profile-C row without a grid epsilon is a
    router proper, not a frontier point; of two fixed generators equally good the cheaper (D) is
    the best, which ends the AIQ range.
      Usable: grid .01 (1.5, 70); fixed A (1, 50), C (3, 70), D (2.5, 70). Hull (1, 50),
      (1.5, 70), flat after; the fixed hull (1, 50), (2.5, 70).
      AIQ over [1, 2.5]: (0.5 * (50 + 70) / 2 + 1 * 70) / 1.5 = 100 / 1.5; fixed only: 60.
      Live epsilon: .01, the one grid point as good as D (0.7)."""
    points = pa.Table.from_pylist(
        [
            frontier_point("q_profile_c", 2.0, None, 0.8, None, grid_eps=0.0),
            frontier_point("q_profile_c", None, 0.6, None, 0.6, grid_eps=0.005),
            frontier_point("q_profile_c", 1.5, 0.6, 0.8, 0.7, grid_eps=0.01),
            frontier_point("q_profile_c", 0.5, 0.9, 0.9, 0.9),  # a router proper
            frontier_point("fixed:A", 1.0, 0.5, 0.5, 0.5),
            frontier_point("fixed:B", None, 0.9, 0.9, 0.9),  # no cost figure
            frontier_point("fixed:C", 3.0, 0.7, 0.7, 0.7),
            frontier_point("fixed:D", 2.5, 0.7, 0.7, 0.7),
        ]
    )
    rows = frontier_table(points).to_pylist()
    names = ("router", "eps", "en", "zh", "bilingual", "gpu_s_per_mp", "on_frontier")
    names += ("frontier_quality", "is_live_eps")
    want = [
        ("q_profile_c", 0.0, None, 80.0, None, 2.0, False, 70.0, False),
        ("q_profile_c", 0.005, 60.0, None, 60.0, None, False, None, False),
        ("q_profile_c", 0.01, 60.0, 80.0, 70.0, 1.5, True, 70.0, True),
        ("fixed:A", None, 50.0, 50.0, 50.0, 1.0, True, 50.0, False),
        ("fixed:B", None, 90.0, 90.0, 90.0, None, False, None, False),
        ("fixed:C", None, 70.0, 70.0, 70.0, 3.0, False, 70.0, False),
        ("fixed:D", None, 70.0, 70.0, 70.0, 2.5, False, 70.0, False),
    ]
    got = [tuple(r[n] for n in names) for r in rows]
    assert got == [
        tuple(pytest.approx(v) if isinstance(v, float) else v for v in row) for row in want
    ]
    assert [r["aiq"] for r in rows] == pytest.approx([100 / 1.5] * 7)
    assert [r["aiq_fixed_only"] for r in rows] == pytest.approx([60.0] * 7)


def test_live_epsilon_is_zero_when_no_grid_point_clears_the_best_fixed():
    """Guards the live epsilon's fallback: no grid point reaches the best fixed generator's
    quality (0.4 < 0.5), so `qct2i route` uses 0: the grid row at eps 0 is marked."""
    points = pa.Table.from_pylist(
        [
            frontier_point("q_profile_c", 1.0, 0.4, 0.4, 0.4, grid_eps=0.0),
            frontier_point("q_profile_c", 1.0, 0.3, 0.3, 0.3, grid_eps=0.005),
            frontier_point("fixed:A", 1.0, 0.5, 0.5, 0.5),
        ]
    )
    rows = frontier_table(points).to_pylist()
    assert [r["is_live_eps"] for r in rows] == [True, False, False]


def test_frontier_table_keeps_its_column_types_when_a_column_is_all_null():
    """Guards agg_router_frontier's declared schema (the mart's contract): with no grid point
    every `eps` is null and with no Chinese figure every `zh`; they stay float64 columns."""
    table = frontier_table(pa.Table.from_pylist([frontier_point("fixed:A", 1.0, 0.5, None, 0.5)]))
    assert table.schema.field("eps").type == pa.float64()
    assert table.schema.field("zh").type == pa.float64()
    assert table.to_pylist()[0]["frontier_quality"] == 50.0
