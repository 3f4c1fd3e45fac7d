"""Leave-one-generator-out validation of the subset plans (METHOD 16) per strategy x budget over
`subset_validation_seeds` seeds, both estimators (`irt`: greg, `irt-ht`: Hajek), in the bilingual
scope or the one language of a single-language release. agg_subset_validation presents it.

Every plan and estimate is a selection of per-concept sufficient statistics
(`method.subsets.subset_validation`): seconds at demo scale, no SQL per plan. The folds run
`subset_validation_workers` at a time in threads (the same figures, bit for bit): this model is
often the last of a build, with dbt's other threads idle."""

from method.bootstrap import STATS_COLUMNS
from method.dbt_vars import var_int, var_list
from method.subsets import subset_validation


def model(dbt, session):
    dbt.config(materialized="table")
    seeds = var_int(dbt.config.get("seeds"))
    bilingual = var_list(dbt.config.get("bilingual_languages"))
    workers = var_int(dbt.config.get("workers"))
    stats = (
        dbt.ref("int_prompt_sufficient_stats").project(", ".join(STATS_COLUMNS)).to_arrow_table()
    )
    covered = dbt.ref("int_prompt_coverage").to_arrow_table()
    capabilities = dbt.ref("capabilities").to_arrow_table()
    capability_scores = dbt.ref("int_capability_scores").to_arrow_table()
    return subset_validation(
        stats, covered, capabilities, capability_scores, seeds, bilingual, workers
    )
