"""Paired differences per scope x ordered model pair (METHOD 11): diff = total(a) - total(b) in
points with its 95% percentile interval over the concept-bootstrap draws, and whether the
interval excludes zero. Both orders of a pair are listed (the second mirrors the first)."""

import numpy as np
import pyarrow as pa

from method.bootstrap import pairwise_intervals, totals_from_draws


def model(dbt, session):
    dbt.config(materialized="table")
    scopes, models, totals = totals_from_draws(dbt.ref("int_reliability_draws").to_arrow_table())
    rows = []
    for s, scope in enumerate(scopes):
        point, draws = totals[0, :, s], totals[1:, :, s]
        lo, hi = pairwise_intervals(draws)
        for a, model_a in enumerate(models):
            for b, model_b in enumerate(models):
                if a == b or np.isnan(point[a]) or np.isnan(point[b]):
                    continue
                rows.append(
                    {
                        "language_scope": scope,
                        "model_a": model_a,
                        "model_b": model_b,
                        "diff": 100 * (point[a] - point[b]),
                        "ci_lo": 100 * lo[a, b],
                        "ci_hi": 100 * hi[a, b],
                        "excludes_zero": bool(lo[a, b] > 0 or hi[a, b] < 0),
                        "n_draws": int((~np.isnan(draws[:, a] - draws[:, b])).sum()),
                    }
                )
    schema = pa.schema(
        [
            ("language_scope", pa.string()),
            ("model_a", pa.string()),
            ("model_b", pa.string()),
            ("diff", pa.float64()),
            ("ci_lo", pa.float64()),
            ("ci_hi", pa.float64()),
            ("excludes_zero", pa.bool_()),
            ("n_draws", pa.int64()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)
