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
from method.structure import PAIR_COLUMNS, RECORD_COLUMNS, coupling_intervals


def model(dbt, session):
    dbt.config(materialized="table")
    draws = var_int(dbt.config.get("bootstrap_draws"))
    seed = var_int(dbt.config.get("bootstrap_seed"))
    method = dbt.config.get("coupling_bootstrap")
    exact_budget = var_int(dbt.config.get("coupling_exact_budget"))  # "3e8" works too
    # Ordering only, no data flows: this model and int_coupling_prompt_effects each hold the
    # record-level outcome matrix, and run side by side they took 17 GB at 10x paper scale
    # (bench/RESULTS.md, "10x paper scale"); one after the other, the larger of the two.
    dbt.ref("int_coupling_prompt_effects")
    pairs = dbt.ref("int_question_pairs").project(", ".join(PAIR_COLUMNS))
    records = dbt.ref("int_question_validity").project(", ".join(RECORD_COLUMNS))
    # readers, not tables: the library holds one Arrow table at a time, only while its arrays
    # are built (method.structure.coupling.TableSource)
    return coupling_intervals(
        pairs.to_arrow_table,
        records.to_arrow_table,
        draws=draws,
        seed=seed,
        method=method,
        exact_budget=exact_budget,
    )
