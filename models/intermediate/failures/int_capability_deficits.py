"""How far each generator's capability scores sit from the field's, with paired concept-bootstrap
intervals (issue 24, `method.deficits`): one row per generator x scope x capability with a score.

A dbt Python model for the same reason as int_reliability_draws: the replicates are one product
of concept-count weights and per-concept sufficient statistics, not SQL re-run per draw.
"""

from method.bootstrap import STATS_COLUMNS
from method.dbt_vars import var_int, var_list
from method.deficits import capability_deficits


def model(dbt, session):
    dbt.config(materialized="table")
    stats = (
        dbt.ref("int_prompt_sufficient_stats").project(", ".join(STATS_COLUMNS)).to_arrow_table()
    )
    return capability_deficits(
        stats,
        dbt.ref("capabilities").to_arrow_table(),
        dbt.ref("int_capability_scores").to_arrow_table(),
        draws=var_int(dbt.config.get("draws")),
        seed=var_int(dbt.config.get("seed")),
        bilingual_languages=var_list(dbt.config.get("bilingual_languages")),
    )
