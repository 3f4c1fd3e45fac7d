"""Paired quality differences of every router against each reference generator (METHOD 12):
`method.routing.paired_table` on the request evidence and the out-of-fold decisions.
`fct_router_paired` presents it."""

from method.dbt_vars import var_float, var_int, var_list
from method.routing import EVIDENCE_COLUMNS, paired_table


def model(dbt, session):
    dbt.config(materialized="table")
    seed = var_int(dbt.config.get("router_seed"))
    draws = var_int(dbt.config.get("bootstrap_draws"))
    margin = var_float(dbt.config.get("margin_points"))
    references = var_list(dbt.config.get("reference_models"))
    # dbt finds refs only in plain assignments, so each is read on its own line
    evidence = (
        dbt.ref("int_router_request_evidence").project(", ".join(EVIDENCE_COLUMNS)).to_arrow_table()
    )
    requests = dbt.ref("int_router_requests").to_arrow_table()
    capabilities = dbt.ref("capabilities").to_arrow_table()
    generators = dbt.ref("int_generators").to_arrow_table()
    decisions = dbt.ref("int_router_decisions").to_arrow_table()
    random_draws = dbt.ref("int_router_uniform_draws").to_arrow_table()
    points = dbt.ref("int_router_points").to_arrow_table()
    return paired_table(
        evidence,
        requests,
        capabilities,
        generators,
        decisions,
        random_draws,
        points,
        references=references,
        draws=draws,
        seed=seed,
        margin_points=margin,
    )
