"""Each model's bootstrap draws of Delta per context and Gamma per contrast (Eq. 7-8, METHOD 9):
the per-generator half of int_coupling_intervals, which takes the percentile intervals and the
macro mean over models from these rows.

A dbt Python model (`method.structure.coupling_model_draws`; its docstring and
int_coupling_intervals' say how a draw is evaluated), on native outcomes
(int_question_validity.outcome), never the masked ones. Incremental by generator as
int_coupling_prompt_effects is (docs/warehouse.md, "Incremental builds"): a model's draws depend
on its own records, the language's prompt resamples and the bootstrap method only. `auto`
chooses the method from the number of models, so when an append or a removal moves a language
across its budget (`method.structure.reusable_model_draws`), every model is drawn again.
"""

import pyarrow as pa

from method.dbt_vars import var_bool, var_int
from method.structure import (
    PAIR_COLUMNS,
    RECORD_COLUMNS,
    coupling_model_draws,
    reusable_model_draws,
)

PENDING = "model_id in (select model_id from build_state.pending)"  # macro changed_generators


def model(dbt, session):
    dbt.config(materialized="table")
    seed = var_int(dbt.config.get("bootstrap_seed"))
    how = {  # what decides each language's method
        "draws": var_int(dbt.config.get("bootstrap_draws")),
        "method": dbt.config.get("coupling_bootstrap"),
        "exact_budget": var_int(dbt.config.get("coupling_exact_budget")),  # "3e8" works too
    }
    # Ordering only, no data flows: this model and int_coupling_prompt_effects each hold the
    # record-level outcome matrix, and run side by side they took 17 GB at 10x paper scale
    # (bench/RESULTS.md, "10x paper scale"); one after the other, the larger of the two.
    dbt.ref("int_coupling_prompt_effects")
    pairs = dbt.ref("int_question_pairs").project(", ".join(PAIR_COLUMNS))
    records = dbt.ref("int_question_validity")
    if var_bool(dbt.config.get("incremental_build")):
        kept = session.sql(f"select * from {dbt.this} where not ({PENDING})").to_arrow_table()
        n_models = records.aggregate("count(distinct model_id)").fetchall()[0][0]
        pair_table = pairs.to_arrow_table()
        if reusable_model_draws(kept, pair_table, n_models=n_models, **how):
            rebuilt_records = records.filter(PENDING).project(", ".join(RECORD_COLUMNS))
            if not rebuilt_records.aggregate("count(*)").fetchall()[0][0]:
                return kept  # no generator rebuilt (the library refuses pairs without records)
            rebuilt = coupling_model_draws(
                pair_table, rebuilt_records.to_arrow_table, n_models=n_models, seed=seed, **how
            )
            return pa.concat_tables([kept, rebuilt.cast(kept.schema)])
        del pair_table  # every model is drawn again, from readers as in a full build
    # readers, not tables: the library holds one Arrow table at a time, only while its arrays
    # are built (method.structure.coupling.TableSource)
    return coupling_model_draws(
        pairs.to_arrow_table,
        records.project(", ".join(RECORD_COLUMNS)).to_arrow_table,
        seed=seed,
        **how,
    )
