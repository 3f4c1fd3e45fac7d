"""The cost-quality frontier of routing (RouterBench-style): Q-Profile-C out of fold at every
epsilon of the grid and every fixed generator as (GPU-s/MP, bilingual quality) points, the
non-decreasing concave hull over them (`on_frontier`), and the area under it averaged over costs
from the cheapest to the best fixed generator (`aiq`, points; `aiq_fixed_only` is the same for the
fixed generators' hull alone). `is_live_eps` marks the epsilon `qct2i route` uses: the largest grid
value whose out-of-fold quality is not below the best fixed generator's (METHOD 12's rule applied
to the outer folds).
"""

import pyarrow as pa

from method.routing import TIE_TOLERANCE, area_under_frontier, frontier_value, upper_frontier


def model(dbt, session):
    dbt.config(materialized="table")
    points = dbt.ref("int_router_points").to_arrow_table().to_pylist()
    grid = [p for p in points if p["router"] == "q_profile_c" and p["grid_eps"] is not None]
    fixed = [p for p in points if p["router"].startswith("fixed:")]
    # A point needs both axes: a bundle may name generators with no cost figure at all.
    usable = [
        p for p in grid + fixed if p["bilingual_frac"] is not None and p["gpu_s_per_mp"] is not None
    ]
    fixed_ok = [p for p in fixed if p in usable]
    rows = []
    if fixed_ok:
        xy = [(p["gpu_s_per_mp"], 100 * p["bilingual_frac"]) for p in usable]
        hull = upper_frontier(xy)
        hull_fixed = upper_frontier(
            [(p["gpu_s_per_mp"], 100 * p["bilingual_frac"]) for p in fixed_ok]
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
        for p in grid + fixed:
            quality = None if p["bilingual_frac"] is None else 100 * p["bilingual_frac"]
            is_grid = p["router"] == "q_profile_c"
            rows.append(
                {
                    "point_kind": "q_profile_c" if is_grid else "fixed",
                    "router": p["router"],
                    "eps": p["grid_eps"],
                    "model_id": None if is_grid else p["router"].removeprefix("fixed:"),
                    "en": None if p["en_frac"] is None else 100 * p["en_frac"],
                    "zh": None if p["zh_frac"] is None else 100 * p["zh_frac"],
                    "bilingual": quality,
                    "gpu_s_per_mp": p["gpu_s_per_mp"],
                    "on_frontier": (p["gpu_s_per_mp"], quality) in vertices,
                    "frontier_quality": (
                        None
                        if p["gpu_s_per_mp"] is None
                        else frontier_value(hull, p["gpu_s_per_mp"])
                    ),
                    "is_live_eps": is_grid and p["grid_eps"] == live,
                    "aiq": aiq,
                    "aiq_fixed_only": aiq_fixed,
                }
            )
    schema = pa.schema(
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
    return pa.Table.from_pylist(rows, schema=schema)
