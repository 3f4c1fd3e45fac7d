"""int_coupling_draws keeps each model's coupling bootstrap draws per generator (issue 33), and an
incremental build draws every model again when the stored draws no longer hold.

`auto` picks a language's bootstrap method from models x cells x draws against
`structure_coupling_exact_budget`, so appending a generator can move a language from `exact` to
`linearised`, and then no stored draw is what a full build would store. Here the budget var moves
the plan instead of a 14th generator, which takes the same branch of the model without a world
of its own (an append where the method stays is `test_determinism.py`'s).
"""

from __future__ import annotations

import json

import duckdb

from ingestion.store.build_inputs import BuildPlan, mark_pending
from tests.helpers import copy_warehouse, dbt_build, exact_bits, query

DRAWS = 1000  # the project's structure_bootstrap_draws, which built the template
COUPLING = ("int_coupling_draws", "int_coupling_intervals")


def _run(warehouse, budget, incremental=False):
    build_vars = {"structure_coupling_exact_budget": budget, "incremental_build": incremental}
    dbt_build(warehouse, select=COUPLING, extra=("--vars", json.dumps(build_vars)), command="run")


def _rows(warehouse, table):
    """The table's rows in key order, every float as its bits (NaN draws compare equal)."""
    return exact_bits(query(warehouse, f"select * from intermediate.{table} order by all"))


def test_an_append_that_changes_the_method_draws_every_model_again(small_demo, tmp_path):
    """The small demo's 13 models are drawn `exact`, well within the project's budget; an
    incremental run of one pending generator under a budget 13 models exceed by one cell
    evaluation must draw every model `linearised` and equal a full run's under that budget.
    Fails if the kept generators' rows were reused (12 `exact` models beside one
    `linearised`)."""
    built, _ = small_demo
    warehouse = copy_warehouse(built, tmp_path / "incremental")
    assert query(
        warehouse, "select distinct bootstrap_method from intermediate.int_coupling_draws"
    ) == [("exact",)]
    cells = query(
        warehouse,
        "select max(n) from (select count(distinct (prompt_id, context, stratum_key)) as n"
        " from intermediate.int_question_pairs group by language)",
    )[0][0]
    exceeds = 13 * cells * DRAWS - 1
    pending = query(warehouse, "select min(model_id) from intermediate.int_coupling_draws")[0][0]
    with duckdb.connect(str(warehouse)) as con:
        mark_pending(con, BuildPlan(False, (pending,), "one generator"))
    _run(warehouse, exceeds, incremental=True)

    full = copy_warehouse(built, tmp_path / "full")
    _run(full, exceeds)
    methods = query(
        warehouse,
        "select bootstrap_method, count(distinct model_id) from intermediate.int_coupling_draws"
        " group by all",
    )
    assert methods == [("linearised", 13)]
    for table in COUPLING:
        assert _rows(warehouse, table) == _rows(full, table), table
