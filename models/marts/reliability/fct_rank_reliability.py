"""Rank reliability per model x scope (METHOD 11): the observed HCQ total and rank beside the
paired concept-bootstrap top-1 probability and 95% rank interval (`method.bootstrap` documents
the tie and quantile rules)."""

import numpy as np
import pyarrow as pa

from method.bootstrap import (
    competition_ranks,
    rank_intervals,
    top1_probability,
    totals_from_draws,
)


def model(dbt, session):
    dbt.config(materialized="table")
    scopes, models, totals = totals_from_draws(dbt.ref("int_reliability_draws").to_arrow_table())
    rows = []
    for s, scope in enumerate(scopes):
        point, draws = totals[0, :, s], totals[1:, :, s]
        rank = competition_ranks(point)
        top1 = top1_probability(draws)
        rank_lo, rank_hi = rank_intervals(draws)
        for m, model_id in enumerate(models):
            defined = not np.isnan(point[m])
            rows.append(
                {
                    "model_id": model_id,
                    "language_scope": scope,
                    "hcq_total": 100 * point[m] if defined else None,
                    "hcq_total_frac": point[m] if defined else None,
                    "rank": int(rank[m]) if defined else None,
                    "top1_prob": float(top1[m]),
                    "rank_lo": int(rank_lo[m]) if not np.isnan(rank_lo[m]) else None,
                    "rank_hi": int(rank_hi[m]) if not np.isnan(rank_hi[m]) else None,
                    "n_draws": int((~np.isnan(draws[:, m])).sum()),
                }
            )
    schema = pa.schema(
        [
            ("model_id", pa.string()),
            ("language_scope", pa.string()),
            ("hcq_total", pa.float64()),
            ("hcq_total_frac", pa.float64()),
            ("rank", pa.int64()),
            ("top1_prob", pa.float64()),
            ("rank_lo", pa.int64()),
            ("rank_hi", pa.int64()),
            ("n_draws", pa.int64()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)
