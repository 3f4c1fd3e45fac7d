"""Per model x prompt, the coupling terms of Eq. 7-8 (METHOD 9) on NATIVE outcomes.

A dbt Python model: per model, every pair's endpoint outcomes are gathered from one outcome matrix
and summed per (prompt, context, stratum) cell with numpy; the leave-one-prompt-out marginals are
the (language, context, stratum) totals minus the cell's own counts. The same in SQL means joining
~17M model x pair rows at paper scale (about 10x slower). The algorithm and its hand-computed
tests live in `method.structure.coupling_effects`.
"""

from method.structure import PAIR_COLUMNS, RECORD_COLUMNS, coupling_inputs, coupling_prompt_effects


def model(dbt, session):
    dbt.config(materialized="table")
    # The Arrow tables live only while their arrays are built (see method.structure.as_inputs).
    inputs = coupling_inputs(
        dbt.ref("int_question_pairs").project(", ".join(PAIR_COLUMNS)).to_arrow_table(),
        dbt.ref("int_question_validity").project(", ".join(RECORD_COLUMNS)).to_arrow_table(),
    )
    return coupling_prompt_effects(inputs)
