"""The out-of-fold routing tables (METHOD 12): int_router_epsilon, int_router_decisions and
int_router_uniform_draws, from the Arrow tables their dbt Python models read.

Each table is one call of its model, so the models stay adapters and the tables are unit-tested
here (tests/method/test_routing_tables.py). A request is always predicted from the four folds
other than its own, so its own judgments never reach its decision (the oracle, an upper bound,
excepted).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from method.routing.evidence import (
    EPS_GRID,
    N_FOLDS,
    UNIFORM_DRAWS,
    Evidence,
    out_of_fold_predictions,
    select_epsilon,
    uniform_draws,
)
from method.routing.predict import choose

EPSILON_SCHEMA = pa.schema(
    [
        ("outer_fold", pa.int64()),
        ("eps", pa.float64()),
        ("inner_quality_frac", pa.float64()),
        ("best_fixed_quality_frac", pa.float64()),
        ("best_fixed_model_id", pa.string()),
        ("is_selected", pa.bool_()),
    ]
)


def epsilon_table(
    evidence: pa.Table, requests: pa.Table, capabilities: pa.Table, generators: pa.Table
) -> pa.Table:
    """int_router_epsilon: per outer fold x grid epsilon (`EPS_GRID`), Q-Profile-C's routed
    quality over the fold's training requests, each inner fold predicted from the other three
    training folds, beside the best fixed generator's quality there (`select_epsilon`).
    `is_selected` marks the fold's epsilon: the largest grid value whose routed quality is not
    below the best fixed generator's (0 if none is). Inputs as `Evidence.from_arrow`."""
    ev = Evidence.from_arrow(evidence, requests, capabilities, generators)
    rows = []
    for fold in range(1, N_FOLDS + 1):
        search = select_epsilon(ev, fold)
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
    return pa.Table.from_pylist(rows, schema=EPSILON_SCHEMA)


def selected_eps(epsilon: pa.Table, fold: np.ndarray) -> np.ndarray:
    """(P,) each request's Q-Profile-C epsilon: its outer fold's selected row of `epsilon`
    (int_router_epsilon), 0 for a fold without one."""
    selected = epsilon.filter(epsilon["is_selected"]).to_pydict()
    eps_of_fold = dict(zip(selected["outer_fold"], selected["eps"], strict=True))
    return np.array([eps_of_fold.get(int(f), 0.0) for f in fold])


def decisions_table(
    evidence: pa.Table,
    requests: pa.Table,
    capabilities: pa.Table,
    generators: pa.Table,
    epsilon: pa.Table,
) -> pa.Table:
    """int_router_decisions: the out-of-fold decision of every router on every request.

    Routers, in this order, each with one row per request (by prompt_id): `q_profile_q`,
    `q_profile_c` (each request at its fold's epsilon from `epsilon`, int_router_epsilon),
    `oracle` (the generator with the best realised request quality, cheapest on ties), every
    `fixed:<model_id>`, and Q-Profile-C at every grid epsilon for the frontier (router
    `q_profile_c` with `grid_eps` set). `predicted_quality_frac` is the chosen generator's
    out-of-fold prediction (the oracle's: its realised quality). Inputs as
    `Evidence.from_arrow`."""
    ev = Evidence.from_arrow(evidence, requests, capabilities, generators)
    predicted = out_of_fold_predictions(ev)
    n = len(ev.prompts)
    request_eps = selected_eps(epsilon, ev.fold)
    c_choice = np.empty(n, dtype=np.int64)
    for eps in np.unique(request_eps):
        mask = request_eps == eps
        c_choice[mask] = choose(predicted[mask], ev.cost_rank, float(eps))
    realised = ev.realised_quality()
    # (router, grid_eps, eps per request, choice per request, the quality it reports)
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
    return _decision_rows(ev, routers)


def _decision_rows(ev: Evidence, routers: list[tuple]) -> pa.Table:
    """The routers' decisions stacked, router after router, in `ev.prompts` order."""
    n = len(ev.prompts)
    rows_index = np.arange(n)
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


def uniform_draws_table(
    requests: pa.Table, evidence: pa.Table, seed: int, draws: int = UNIFORM_DRAWS
) -> pa.Table:
    """int_router_uniform_draws: the uniform random router's `draws` draws, per draw (1..draws)
    and request (sorted prompt_id) one generator, uniformly, from `seed` (`uniform_draws`).
    `requests`: int_router_requests; `evidence`: any table with a `model_id` column naming the
    judged generators (int_router_request_evidence), sorted by id to be indexed."""
    prompts = sorted(requests["prompt_id"].to_pylist())
    models = np.array(sorted(set(evidence["model_id"].to_pylist())), dtype=object)
    picks = uniform_draws(len(models), len(prompts), seed, draws)
    return pa.table(
        {
            "draw": pa.array(np.repeat(np.arange(1, draws + 1), len(prompts))),
            "prompt_id": pa.array(np.tile(np.array(prompts, dtype=object), draws)),
            "model_id": pa.array(models[picks.reshape(-1)], pa.string()),
        }
    )
