"""Delta per context and Gamma per contrast (Eq. 7-8, METHOD 9) with 95% prompt-bootstrap intervals.

A dbt Python model: every bootstrap draw reflects the resampled world's leave-one-prompt-out
marginals (`method.structure.coupling_intervals`; var `structure_coupling_bootstrap`: `exact`, the
marginals rebuilt per draw, `linearised`, the first-order expansion in the prompt weights, or
`auto`, exact within `structure_coupling_exact_budget` cell evaluations per language), which is
array work over the model x pair cells, not SQL. `bootstrap_method` says which one a row got.
Native outcomes (int_question_validity.outcome), never the masked ones. One row per language x
model (plus `__macro__`) x effect, as fractions; fct_coupling and fct_coupling_contrast present
it in points.
"""

from method.dbt_vars import var_int
from method.structure import coupling_intervals


def model(dbt, session):
    dbt.config(materialized="table")
    draws = var_int(dbt.config.get("bootstrap_draws"))
    seed = var_int(dbt.config.get("bootstrap_seed"))
    method = dbt.config.get("coupling_bootstrap")
    exact_budget = var_int(dbt.config.get("coupling_exact_budget"))  # "3e8" works too
    pairs = dbt.ref("int_question_pairs").to_arrow_table()
    records = dbt.ref("int_question_validity").to_arrow_table()
    return coupling_intervals(
        pairs, records, draws=draws, seed=seed, method=method, exact_budget=exact_budget
    )
