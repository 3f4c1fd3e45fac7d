"""Epsilon of Q-Profile-C per outer fold, chosen on the nested inner folds (METHOD 12).

For each outer fold k and each grid value: Q-Profile-C's routed quality over k's training requests,
each inner fold predicted from the other three training folds, beside the best fixed generator's
quality there. The selected epsilon (`is_selected`) is the largest grid value whose routed quality
is not below the best fixed generator's. The numerics live in `method.routing`.
"""

import pyarrow as pa

from method.routing import EPS_GRID, N_FOLDS, Evidence, select_epsilon


def model(dbt, session):
    dbt.config(materialized="table")
    # dbt finds refs only in plain assignments, so each is read on its own line
    evidence = dbt.ref("int_router_request_evidence").to_arrow_table()
    requests = dbt.ref("int_router_requests").to_arrow_table()
    capabilities = dbt.ref("capabilities").to_arrow_table()
    generators = dbt.ref("int_generators").to_arrow_table()
    evidence = Evidence.from_arrow(evidence, requests, capabilities, generators)
    rows = []
    for fold in range(1, N_FOLDS + 1):
        search = select_epsilon(evidence, fold)
        for eps, quality in zip(EPS_GRID, search.grid_quality, strict=True):
            rows.append(
                {
                    "outer_fold": fold,
                    "eps": eps,
                    "inner_quality_frac": quality,
                    "best_fixed_quality_frac": search.best_fixed_quality,
                    "best_fixed_model_id": search.best_fixed_model,
                    "is_selected": eps == search.eps,
                }
            )
    schema = pa.schema(
        [
            ("outer_fold", pa.int64()),
            ("eps", pa.float64()),
            ("inner_quality_frac", pa.float64()),
            ("best_fixed_quality_frac", pa.float64()),
            ("best_fixed_model_id", pa.string()),
            ("is_selected", pa.bool_()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)
