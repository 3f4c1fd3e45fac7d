"""Paired concept-bootstrap replicates of the HCQ total (METHOD 11), one row per draw x scope x
model. Draw 0 is the observed sample (every concept once: the leaderboard's totals); draws 1..B
resample concepts with replacement, shared by both languages and every generator.

A dbt Python model because the replicates are one matrix product of concept-count weights and
per-concept sufficient statistics (`method.bootstrap`), not SQL re-run per draw.
"""

import numpy as np
import pyarrow as pa

from method.bootstrap import bootstrap_totals, config_list, point_totals, stats_from_arrow


def model(dbt, session):
    dbt.config(materialized="table")
    draws = int(dbt.config.get("draws"))
    seed = int(dbt.config.get("seed"))
    bilingual = config_list(dbt.config.get("bilingual_languages"))
    stats = stats_from_arrow(
        dbt.ref("int_prompt_sufficient_stats").to_arrow_table(),
        dbt.ref("capabilities").to_arrow_table(),
        dbt.ref("int_capability_scores").to_arrow_table(),
        bilingual_languages=bilingual,
    )
    totals = np.concatenate(
        [point_totals(stats)[None], bootstrap_totals(stats, draws, seed)]
    )  # [1 + draws, models, scopes]
    draw_index, model_index, scope_index = np.indices(totals.shape).reshape(3, -1)
    return pa.table(
        {
            "draw_index": pa.array(draw_index, pa.int32()),
            "language_scope": pa.array(np.array(stats.scopes)[scope_index], pa.string()),
            "model_id": pa.array(np.array(stats.model_ids)[model_index], pa.string()),
            "hcq_total_frac": pa.array(totals.ravel(), pa.float64(), mask=np.isnan(totals.ravel())),
        }
    )
