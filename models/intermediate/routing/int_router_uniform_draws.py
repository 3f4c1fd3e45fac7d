"""The uniform random router's draws (METHOD 12): per draw and request one generator, uniformly,
from `router_seed`; the router's quality is the expectation over the draws."""

import numpy as np
import pyarrow as pa

from method.dbt_vars import var_int
from method.routing import UNIFORM_DRAWS, uniform_draws


def model(dbt, session):
    dbt.config(materialized="table")
    seed = var_int(dbt.config.get("router_seed"))
    requests = dbt.ref("int_router_requests")
    evidence = dbt.ref("int_router_request_evidence")
    prompts = sorted(requests.to_arrow_table()["prompt_id"].to_pylist())
    models = np.array(sorted(m for (m,) in evidence.unique("model_id").fetchall()), dtype=object)
    draws = uniform_draws(len(models), len(prompts), seed, UNIFORM_DRAWS)
    return pa.table(
        {
            "draw": pa.array(np.repeat(np.arange(1, UNIFORM_DRAWS + 1), len(prompts))),
            "prompt_id": pa.array(np.tile(np.array(prompts, dtype=object), UNIFORM_DRAWS)),
            "model_id": pa.array(models[draws.reshape(-1)], pa.string()),
        }
    )
