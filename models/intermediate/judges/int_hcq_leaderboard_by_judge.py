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
    languages = dbt.ref("stg_prompts").project("language").distinct().to_arrow_table()
    return leaderboards_by_judge(
        dbt.ref("int_judge_prompt_stats").to_arrow_table(),
        dbt.ref("capabilities").to_arrow_table(),
        dbt.ref("int_capability_score_sources").to_arrow_table(),
        languages=languages.column("language").to_pylist(),
        bilingual_languages=var_list(dbt.config.get("bilingual_languages")),
    )
