"""Agreement of each judge with the human ratings (METHOD 15): Spearman and Kendall correlation
of the zero-out image scores with the mean human rating, with 95% percentile intervals over a
concept bootstrap, and the generator-level ranking correlation. fct_human_agreement presents it.

A dbt Python model because rank correlations of weighted resamples are matrix products in numpy
(`method.agreement.human_agreement`), with no natural SQL form.
"""

from method.agreement import human_agreement
from method.dbt_vars import var_int


def model(dbt, session):
    dbt.config(materialized="table")
    draws = var_int(dbt.config.get("draws"))
    seed = var_int(dbt.config.get("seed"))
    scores = dbt.ref("int_judge_human_scores").to_arrow_table()
    return human_agreement(scores, draws=draws, seed=seed)
