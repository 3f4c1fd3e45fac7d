"""Per model x prompt, the coupling terms of Eq. 7-8 (METHOD 9) on NATIVE outcomes.

A dbt Python model: per model, every pair's endpoint outcomes are gathered from one outcome matrix
and summed per (prompt, context, stratum) cell with numpy; the leave-one-prompt-out marginals are
the (language, context, stratum) totals minus the cell's own counts. The same in SQL means joining
~17M model x pair rows at paper scale (about 10x slower). The algorithm and its hand-computed
tests live in `method.structure.coupling_effects`.
"""

from method.structure import PAIR_COLUMNS, RECORD_COLUMNS, coupling_prompt_effects


def model(dbt, session):
    dbt.config(materialized="table")
    pairs = dbt.ref("int_question_pairs").project(", ".join(PAIR_COLUMNS))
    records = dbt.ref("int_question_validity").project(", ".join(RECORD_COLUMNS))
    # readers, not tables: the library holds one Arrow table at a time, only while its arrays
    # are built (method.structure.coupling.TableSource)
    return coupling_prompt_effects(pairs.to_arrow_table, records.to_arrow_table)
