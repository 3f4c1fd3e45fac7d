"""The effect of dependency masking (METHOD 6) per model x scope: masked and unmasked HCQ totals,
ranks and the scope's Spearman correlation. fct_masking_effect presents it."""

from method.bootstrap import UNMASKED_STATS_COLUMNS, masking_effect
from method.dbt_vars import var_list


def model(dbt, session):
    dbt.config(materialized="table")
    bilingual = var_list(dbt.config.get("bilingual_languages"))
    stats = (
        dbt.ref("int_prompt_sufficient_stats")
        .project(", ".join(UNMASKED_STATS_COLUMNS))
        .to_arrow_table()
    )
    capabilities = dbt.ref("capabilities").to_arrow_table()
    capability_scores = dbt.ref("int_capability_scores").to_arrow_table()
    return masking_effect(stats, capabilities, capability_scores, bilingual)
