"""Aggregation robustness (METHOD 5, Eq. 9, Table 3) per language x capability x scale, plus a
`__total__` row per language and scale (`method.aggregation_robustness.robustness_table`).
fct_aggregation_robustness presents it."""

from method.aggregation_robustness import ROBUSTNESS_COLUMNS, robustness_table
from method.dbt_vars import var_int


def model(dbt, session):
    dbt.config(materialized="table")
    seed = var_int(dbt.config.get("seed"))
    stats = (
        dbt.ref("int_prompt_sufficient_stats")
        .project(", ".join(ROBUSTNESS_COLUMNS))
        .to_arrow_table()
    )
    capabilities = dbt.ref("capabilities").to_arrow_table()
    return robustness_table(stats, capabilities, seed)
