"""Delta per context and Gamma per contrast (Eq. 7-8, METHOD 9) with 95% prompt-bootstrap intervals.

A dbt Python model: every bootstrap draw reflects the resampled world's leave-one-prompt-out
marginals (`method.structure.coupling_bootstrap`; var `structure_coupling_bootstrap`: `exact`, the
marginals rebuilt per draw, `linearised`, the first-order expansion in the prompt weights, or
`auto`, exact within `structure_coupling_exact_budget` cell evaluations per language), which is
array work over the model x pair cells, not SQL. `bootstrap_method` says which one a row got.
Native outcomes (int_question_validity.outcome), never the masked ones. One row per language x
model (plus `__macro__`) x effect, as fractions; fct_coupling and fct_coupling_contrast present
it in points.
"""

import pyarrow as pa

from method.structure import CONTEXTS, coupling_bootstrap


def model(dbt, session):
    dbt.config(materialized="table")
    draws = int(dbt.config.get("bootstrap_draws"))
    seed = int(dbt.config.get("bootstrap_seed"))
    method = dbt.config.get("coupling_bootstrap")
    exact_budget = int(float(dbt.config.get("coupling_exact_budget")))  # "3e8" works too
    pairs = dbt.ref("int_question_pairs").to_arrow_table()
    records = dbt.ref("int_question_validity").to_arrow_table()
    records = records.select(["model_id", "prompt_id", "question_id", "outcome"])
    rows = coupling_bootstrap(
        pairs, records, draws=draws, seed=seed, method=method, exact_budget=exact_budget
    )
    schema = pa.schema(
        [
            ("language", pa.string()),
            ("model_id", pa.string()),
            ("effect_kind", pa.string()),
            ("effect", pa.string()),
            ("estimate", pa.float64()),
            ("ci_lo", pa.float64()),
            ("ci_hi", pa.float64()),
            ("n_prompts", pa.int64()),
            ("n_draws", pa.int64()),
            ("bootstrap_method", pa.string()),
        ]
    )
    out = {
        "language": [r["language"] for r in rows],
        "model_id": [r["model_id"] for r in rows],
        "effect_kind": ["context" if r["effect"] in CONTEXTS else "contrast" for r in rows],
        "effect": [r["effect"] for r in rows],
        "estimate": [r["estimate"] for r in rows],
        "ci_lo": [r["ci_lo"] for r in rows],
        "ci_hi": [r["ci_hi"] for r in rows],
        "n_prompts": [r["n_units"] for r in rows],
        "n_draws": [draws] * len(rows),
        "bootstrap_method": [r["method"] for r in rows],
    }
    return pa.Table.from_pydict(out, schema=schema)
