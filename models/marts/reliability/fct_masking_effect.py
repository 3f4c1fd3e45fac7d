"""The effect of dependency masking (METHOD 6) per model x scope: the official HCQ total beside
the total with every question counted (v := 1, y := native outcome, a missing judgment := 0),
both competition ranks, and the scope's Spearman rank correlation between the two orders.
Text Content scored from transcriptions is unaffected (no validity enters Eq. 3)."""

import numpy as np
import pyarrow as pa
from scipy.stats import spearmanr

from method.bootstrap import competition_ranks, config_list, point_totals, stats_from_arrow


def model(dbt, session):
    dbt.config(materialized="table")
    bilingual = config_list(dbt.config.get("bilingual_languages"))
    inputs = (
        dbt.ref("int_prompt_sufficient_stats").to_arrow_table(),
        dbt.ref("capabilities").to_arrow_table(),
        dbt.ref("int_capability_scores").to_arrow_table(),
    )
    masked = stats_from_arrow(*inputs, masked=True, bilingual_languages=bilingual)
    unmasked = stats_from_arrow(*inputs, masked=False, bilingual_languages=bilingual)
    totals_masked, totals_unmasked = point_totals(masked), point_totals(unmasked)
    rows = []
    for s, scope in enumerate(masked.scopes):
        a, b = totals_masked[:, s], totals_unmasked[:, s]
        both = ~np.isnan(a) & ~np.isnan(b)
        rank_a, rank_b = (
            competition_ranks(np.where(both, a, np.nan)),
            competition_ranks(np.where(both, b, np.nan)),
        )
        rho = float(spearmanr(a[both], b[both]).statistic) if both.sum() > 2 else None
        for m, model_id in enumerate(masked.model_ids):
            rows.append(
                {
                    "model_id": model_id,
                    "language_scope": scope,
                    "hcq_masked": 100 * a[m] if not np.isnan(a[m]) else None,
                    "hcq_unmasked": 100 * b[m] if not np.isnan(b[m]) else None,
                    "rank_masked": int(rank_a[m]) if both[m] else None,
                    "rank_unmasked": int(rank_b[m]) if both[m] else None,
                    "rank_shift": int(rank_b[m] - rank_a[m]) if both[m] else None,
                    "has_moved": bool(rank_a[m] != rank_b[m]) if both[m] else None,
                    "spearman_rho": rho,
                }
            )
    schema = pa.schema(
        [
            ("model_id", pa.string()),
            ("language_scope", pa.string()),
            ("hcq_masked", pa.float64()),
            ("hcq_unmasked", pa.float64()),
            ("rank_masked", pa.int64()),
            ("rank_unmasked", pa.int64()),
            ("rank_shift", pa.int64()),
            ("has_moved", pa.bool_()),
            ("spearman_rho", pa.float64()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)
