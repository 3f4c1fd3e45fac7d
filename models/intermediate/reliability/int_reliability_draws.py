"""Paired concept-bootstrap replicates of the HCQ total (METHOD 11), one row per draw x scope x
model. Draw 0 is the observed sample (every concept once: the leaderboard's totals); draws 1..B
resample concepts with replacement, shared by both languages and every generator.

A dbt Python model because the replicates are one matrix product of concept-count weights and
per-concept sufficient statistics (`method.bootstrap.reliability_draws`), not SQL re-run per draw.
"""

from method.bootstrap import STATS_COLUMNS, reliability_draws
from method.dbt_vars import var_int, var_list


def model(dbt, session):
    dbt.config(materialized="table")
    draws = var_int(dbt.config.get("draws"))
    seed = var_int(dbt.config.get("seed"))
    bilingual = var_list(dbt.config.get("bilingual_languages"))
    stats = (
        dbt.ref("int_prompt_sufficient_stats").project(", ".join(STATS_COLUMNS)).to_arrow_table()
    )
    capabilities = dbt.ref("capabilities").to_arrow_table()
    capability_scores = dbt.ref("int_capability_scores").to_arrow_table()
    return reliability_draws(
        stats,
        capabilities,
        capability_scores,
        draws=draws,
        seed=seed,
        bilingual_languages=bilingual,
    )
