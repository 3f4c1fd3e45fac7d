"""Out-of-fold routing decisions per router x request (METHOD 12).

Routers: `q_profile_q`, `q_profile_c` (each fold's epsilon from `int_router_epsilon`), `oracle`
(per request the generator with the best realised request quality, cheapest on ties), every
`fixed:<model_id>`, and Q-Profile-C at every grid epsilon for the frontier (router `q_profile_c`
with `grid_eps` set). Each request is predicted from the four folds other than its own, so its
own judgments never reach its decision (the oracle, an upper bound, excepted).
"""

import numpy as np
import pyarrow as pa

from method.routing import EPS_GRID, Evidence, choose, out_of_fold_predictions


def model(dbt, session):
    dbt.config(materialized="table")
    # dbt finds refs only in plain assignments, so each is read on its own line
    evidence = dbt.ref("int_router_request_evidence").to_arrow_table()
    requests = dbt.ref("int_router_requests").to_arrow_table()
    capabilities = dbt.ref("capabilities").to_arrow_table()
    generators = dbt.ref("int_generators").to_arrow_table()
    ev = Evidence.from_arrow(evidence, requests, capabilities, generators)
    selected = dbt.ref("int_router_epsilon").filter("is_selected").to_arrow_table().to_pydict()
    eps_of_fold = dict(zip(selected["outer_fold"], selected["eps"], strict=True))
    predicted = out_of_fold_predictions(ev)
    n = len(ev.prompts)
    rows_index = np.arange(n)
    request_eps = np.array([eps_of_fold.get(int(f), 0.0) for f in ev.fold])

    c_choice = np.empty(n, dtype=np.int64)
    for eps in np.unique(request_eps):
        mask = request_eps == eps
        c_choice[mask] = choose(predicted[mask], ev.cost_rank, float(eps))
    realised = ev.realised_quality()
    routers = [
        ("q_profile_q", None, None, choose(predicted, ev.cost_rank, 0.0), predicted),
        ("q_profile_c", None, request_eps, c_choice, predicted),
        ("oracle", None, None, choose(realised, ev.cost_rank, 0.0), realised),
    ]
    routers += [
        (f"fixed:{m}", None, None, np.full(n, i), predicted) for i, m in enumerate(ev.models)
    ]
    routers += [
        ("q_profile_c", eps, np.full(n, eps), choose(predicted, ev.cost_rank, eps), predicted)
        for eps in EPS_GRID
    ]
    models = np.array(ev.models, dtype=object)
    prompts = np.array(ev.prompts, dtype=object)
    columns = {k: [] for k in ("router", "grid_eps", "eps", "prompt_id", "model_id", "pred")}
    for router, grid_eps, eps, choice, quality in routers:
        columns["router"].append(np.full(n, router, dtype=object))
        columns["grid_eps"].append(np.full(n, np.nan if grid_eps is None else grid_eps))
        columns["eps"].append(np.full(n, np.nan) if eps is None else eps)
        columns["prompt_id"].append(prompts)
        columns["model_id"].append(models[choice])
        columns["pred"].append(quality[rows_index, choice])
    data = {k: np.concatenate(v) for k, v in columns.items()}
    return pa.table(
        {
            "router": pa.array(data["router"], pa.string()),
            "grid_eps": pa.array(data["grid_eps"], pa.float64(), from_pandas=True),
            "eps": pa.array(data["eps"], pa.float64(), from_pandas=True),
            "prompt_id": pa.array(data["prompt_id"], pa.string()),
            "model_id": pa.array(data["model_id"], pa.string()),
            "predicted_quality_frac": pa.array(data["pred"], pa.float64(), from_pandas=True),
        }
    )
