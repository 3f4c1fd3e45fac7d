"""The cost-quality frontier of routing (METHOD 12, RouterBench-style): agg_router_frontier.

The frontier is the non-decreasing concave hull of the routers' (GPU-s/MP, bilingual points)
points (`upper_frontier`), the best quality reachable at each cost by mixing routers; AIQ is its
mean quality over a cost range (`area_under_frontier`). `frontier_table` also marks the epsilon
`qct2i route` uses live.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from method.routing.predict import TIE_TOLERANCE
from method.scores import POINTS


def upper_frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The non-decreasing concave hull of (cost, quality) points: best quality reachable at each
    cost by mixing routers (RouterBench's frontier; the 'lower convex hull' of cost over quality).
    Returns its vertices by increasing cost."""
    pareto: list[tuple[float, float]] = []
    for cost, quality in sorted(points, key=lambda p: (p[0], -p[1])):
        if not pareto or quality > pareto[-1][1]:
            pareto.append((cost, quality))
    hull: list[tuple[float, float]] = []
    for point in pareto:
        while len(hull) >= 2 and _not_below(hull[-2], hull[-1], point):
            hull.pop()
        hull.append(point)
    return hull


def _not_below(a, b, c) -> bool:
    """Whether b lies on or below the segment a -> c (so it is not a hull vertex)."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) >= 0


def frontier_value(hull: Sequence[tuple[float, float]], cost: float) -> float:
    """The frontier's quality at `cost` (linear between vertices, flat after the last)."""
    costs = [p[0] for p in hull]
    qualities = [p[1] for p in hull]
    if cost < costs[0]:
        return float("nan")
    return float(np.interp(cost, costs, qualities))


def area_under_frontier(hull: Sequence[tuple[float, float]], lo: float, hi: float) -> float:
    """Mean frontier quality over costs [lo, hi] (RouterBench's AIQ, normalised by the width);
    the frontier's value at lo when the interval is empty."""
    if hi <= lo:
        return frontier_value(hull, lo)
    xs = sorted({lo, hi, *(c for c, _ in hull if lo < c < hi)})
    ys = [frontier_value(hull, x) for x in xs]
    area = sum(
        (x1 - x0) * (y0 + y1) / 2 for x0, x1, y0, y1 in zip(xs, xs[1:], ys, ys[1:], strict=False)
    )
    return area / (hi - lo)


FRONTIER_SCHEMA = pa.schema(
    [
        ("point_kind", pa.string()),
        ("router", pa.string()),
        ("eps", pa.float64()),
        ("model_id", pa.string()),
        ("en", pa.float64()),
        ("zh", pa.float64()),
        ("bilingual", pa.float64()),
        ("gpu_s_per_mp", pa.float64()),
        ("on_frontier", pa.bool_()),
        ("frontier_quality", pa.float64()),
        ("is_live_eps", pa.bool_()),
        ("aiq", pa.float64()),
        ("aiq_fixed_only", pa.float64()),
    ]
)


def frontier_table(points: pa.Table) -> pa.Table:
    """`agg_router_frontier` (METHOD 12, RouterBench-style) from `int_router_points`.

    Points: Q-Profile-C out of fold at every grid epsilon and every fixed generator, as (GPU-s/MP,
    bilingual points); `on_frontier` marks the vertices of their non-decreasing concave hull
    (`upper_frontier`), `frontier_quality` the hull at the point's cost, `aiq` the hull's mean
    quality over costs from the cheapest to the best fixed generator (`aiq_fixed_only`: the same
    for the fixed generators' hull alone). `is_live_eps` marks the epsilon `qct2i route` uses:
    the largest grid value whose out-of-fold quality is not below the best fixed generator's.
    Empty when no fixed generator has both a quality and a cost.
    """
    rows_in = points.to_pylist()
    grid = [p for p in rows_in if p["router"] == "q_profile_c" and p["grid_eps"] is not None]
    fixed = [p for p in rows_in if p["router"].startswith("fixed:")]
    # A point needs both axes: a bundle may name generators with no cost figure at all.
    usable = [
        p for p in grid + fixed if p["bilingual_frac"] is not None and p["gpu_s_per_mp"] is not None
    ]
    fixed_ok = [p for p in fixed if p in usable]
    if not fixed_ok:
        return FRONTIER_SCHEMA.empty_table()
    hull = upper_frontier([(p["gpu_s_per_mp"], POINTS * p["bilingual_frac"]) for p in usable])
    hull_fixed = upper_frontier(
        [(p["gpu_s_per_mp"], POINTS * p["bilingual_frac"]) for p in fixed_ok]
    )
    best = max(fixed_ok, key=lambda p: (p["bilingual_frac"], -p["gpu_s_per_mp"]))
    lo = min(p["gpu_s_per_mp"] for p in fixed_ok)
    aiq = area_under_frontier(hull, lo, best["gpu_s_per_mp"])
    aiq_fixed = area_under_frontier(hull_fixed, lo, best["gpu_s_per_mp"])
    clearing = [
        p["grid_eps"]
        for p in grid
        if p["bilingual_frac"] is not None
        and p["bilingual_frac"] >= best["bilingual_frac"] - TIE_TOLERANCE
    ]
    live = max(clearing, default=0.0)
    vertices = set(hull)
    rows = []
    for p in grid + fixed:
        quality = None if p["bilingual_frac"] is None else POINTS * p["bilingual_frac"]
        is_grid = p["router"] == "q_profile_c"
        rows.append(
            {
                "point_kind": "q_profile_c" if is_grid else "fixed",
                "router": p["router"],
                "eps": p["grid_eps"],
                "model_id": None if is_grid else p["router"].removeprefix("fixed:"),
                "en": None if p["en_frac"] is None else POINTS * p["en_frac"],
                "zh": None if p["zh_frac"] is None else POINTS * p["zh_frac"],
                "bilingual": quality,
                "gpu_s_per_mp": p["gpu_s_per_mp"],
                "on_frontier": (p["gpu_s_per_mp"], quality) in vertices,
                "frontier_quality": (
                    None if p["gpu_s_per_mp"] is None else frontier_value(hull, p["gpu_s_per_mp"])
                ),
                "is_live_eps": is_grid and p["grid_eps"] == live,
                "aiq": aiq,
                "aiq_fixed_only": aiq_fixed,
            }
        )
    return pa.Table.from_pylist(rows, schema=FRONTIER_SCHEMA)
