"""Judge agreement per judge pair x capability (METHOD 14): raw agreement and Cohen's kappa on the
items both judges answered, with 95% percentile intervals over a concept bootstrap.
fct_judge_agreement presents it.

A dbt Python model because each draw is the concept-count weights times the per-concept 2x2
tables of int_judge_pair_tables (`method.agreement.judge_agreement`), not SQL re-run per draw.
"""

from method.agreement import judge_agreement
from method.dbt_vars import var_int


def model(dbt, session):
    dbt.config(materialized="table")
    draws = var_int(dbt.config.get("draws"))
    seed = var_int(dbt.config.get("seed"))
    min_shared = var_int(dbt.config.get("min_shared"))
    tables = dbt.ref("int_judge_pair_tables").to_arrow_table()
    return judge_agreement(tables, draws=draws, seed=seed, min_shared=min_shared)
