"""Cross-prompt root controls (Eq. 6, METHOD 8, Figure 2 right) per model x language, in points,
with a 95% prompt-bootstrap interval of the difference (`method.structure.root_controls`: one
numpy matrix product for all draws). fct_root_controls presents it."""

from method.dbt_vars import var_int
from method.structure import root_controls


def model(dbt, session):
    dbt.config(materialized="table")
    draws = var_int(dbt.config.get("bootstrap_draws"))
    seed = var_int(dbt.config.get("bootstrap_seed"))
    contexts = dbt.ref("int_root_contexts").to_arrow_table()
    return root_controls(contexts, draws=draws, seed=seed)
