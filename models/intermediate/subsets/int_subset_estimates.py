"""Full-benchmark HCQ estimates of the generators evaluated on part of the benchmark (METHOD 16),
per generator x scope, against the fully evaluated generators. fct_subset_estimates presents it.

A dbt Python model because the estimate re-weights per-concept sufficient statistics by the
plan's inclusion probabilities, which the item model fitted on the references gives, and (the
default `greg` estimator) adds that model's predictions (`method.subsets.subset_estimates`)."""

from method.bootstrap import STATS_COLUMNS
from method.dbt_vars import var_list
from method.subsets import subset_estimates


def model(dbt, session):
    dbt.config(materialized="table")
    strategy = str(dbt.config.get("strategy"))
    estimator = str(dbt.config.get("estimator"))
    bilingual = var_list(dbt.config.get("bilingual_languages"))
    stats = (
        dbt.ref("int_prompt_sufficient_stats").project(", ".join(STATS_COLUMNS)).to_arrow_table()
    )
    covered = dbt.ref("int_prompt_coverage").to_arrow_table()
    capabilities = dbt.ref("capabilities").to_arrow_table()
    capability_scores = dbt.ref("int_capability_scores").to_arrow_table()
    return subset_estimates(
        stats, covered, capabilities, capability_scores, strategy, bilingual, estimator
    )
