"""Delta per context and Gamma per contrast (Eq. 7-8, METHOD 9) with 95% prompt-bootstrap intervals.

A dbt Python model over int_coupling_draws, each model's draws (var `structure_coupling_bootstrap`:
`exact`, the marginals rebuilt per draw, `linearised`, the first-order expansion in the prompt
weights, or `auto`, exact within `structure_coupling_exact_budget` cell evaluations per language):
per model the percentile interval of its draws, and the `__macro__` mean over models, drawn from
the same resamples (`method.structure.coupling_intervals_from_draws`). `bootstrap_method` says
which method a row got. One row per language x model (plus `__macro__`) x effect, as fractions;
fct_coupling and fct_coupling_contrast present it in points.
"""

from method.structure import coupling_intervals_from_draws


def model(dbt, session):
    dbt.config(materialized="table")
    return coupling_intervals_from_draws(dbt.ref("int_coupling_draws").to_arrow_table())
