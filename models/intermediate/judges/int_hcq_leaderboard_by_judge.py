"""The HCQ leaderboard of every judge but the official one (METHOD 3-4), one row per judge x model
x scope, from int_judge_prompt_stats by the numpy twins of the leaderboard's formulas
(`method.leaderboard`). fct_hcq_leaderboard_by_judge adds the official judge's rows, which are
fct_hcq_leaderboard's own.

A dbt Python model because the leaderboard's group columns come from the taxonomy and one
vectorised pass scores every judge; with one judge it has no rows and costs nothing.
"""

from method.dbt_vars import var_list
from method.leaderboard import leaderboards_by_judge


def model(dbt, session):
    dbt.config(materialized="table")
    bilingual = var_list(dbt.config.get("bilingual_languages"))
    # dbt finds refs only in plain assignments, so each is read on its own line
    stats = dbt.ref("int_judge_prompt_stats").to_arrow_table()
    capabilities = dbt.ref("capabilities").to_arrow_table()
    score_sources = dbt.ref("int_capability_score_sources").to_arrow_table()
    languages = dbt.ref("stg_prompts").project("language").distinct().to_arrow_table()
    return leaderboards_by_judge(
        stats,
        capabilities,
        score_sources,
        languages,
        bilingual_languages=bilingual,
    )
