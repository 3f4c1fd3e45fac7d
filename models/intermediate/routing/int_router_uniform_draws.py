"""The uniform random router's draws (METHOD 12): per draw and request one generator, uniformly,
from `router_seed`; the router's quality is the expectation over the draws
(`method.routing.uniform_draws_table`)."""

from method.dbt_vars import var_int
from method.routing import uniform_draws_table


def model(dbt, session):
    dbt.config(materialized="table")
    seed = var_int(dbt.config.get("router_seed"))
    requests = dbt.ref("int_router_requests").to_arrow_table()
    # only the judged generators' ids are needed, not the evidence itself
    evidence = (
        dbt.ref("int_router_request_evidence").project("model_id").distinct().to_arrow_table()
    )
    return uniform_draws_table(requests, evidence, seed)
