"""Per model x prompt, the coupling terms of Eq. 7-8 (METHOD 9) on NATIVE outcomes.

A dbt Python model: per model, every pair's endpoint outcomes are gathered from one outcome matrix
and summed per (prompt, context, stratum) cell with numpy; the leave-one-prompt-out marginals are
the (language, context, stratum) totals minus the cell's own counts. The same in SQL means joining
~17M model x pair rows at paper scale (about 10x slower). The algorithm and its hand-computed
tests live in `method.structure.coupling_effects`. Incremental by generator as int_text_match is
(docs/warehouse.md, "Incremental builds"): every term is one model's.
"""

import pyarrow as pa

from method.dbt_vars import var_bool
from method.structure import PAIR_COLUMNS, RECORD_COLUMNS, coupling_prompt_effects

PENDING = "model_id in (select model_id from build_state.pending)"  # macro changed_generators


def model(dbt, session):
    dbt.config(materialized="table")
    pairs = dbt.ref("int_question_pairs").project(", ".join(PAIR_COLUMNS))
    records = dbt.ref("int_question_validity")
    if not var_bool(dbt.config.get("incremental_build")):
        # readers, not tables: the library holds one Arrow table at a time, only while its
        # arrays are built (method.structure.coupling.TableSource)
        return coupling_prompt_effects(
            pairs.to_arrow_table, records.project(", ".join(RECORD_COLUMNS)).to_arrow_table
        )
    kept = session.sql(f"select * from {dbt.this} where not ({PENDING})").to_arrow_table()
    rebuilt_records = records.filter(PENDING).project(", ".join(RECORD_COLUMNS))
    if not rebuilt_records.aggregate("count(*)").fetchall()[0][0]:
        return kept  # no generator rebuilt (the library refuses pairs without records)
    rebuilt = coupling_prompt_effects(pairs.to_arrow_table, rebuilt_records.to_arrow_table)
    return pa.concat_tables([kept, rebuilt.cast(kept.schema)])
