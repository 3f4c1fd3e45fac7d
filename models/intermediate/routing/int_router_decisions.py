"""Out-of-fold routing decisions per router x request (METHOD 12).

Routers: `q_profile_q`, `q_profile_c` (each fold's epsilon from `int_router_epsilon`), `oracle`
(per request the generator with the best realised request quality, cheapest on ties), every
`fixed:<model_id>`, and Q-Profile-C at every grid epsilon for the frontier (router `q_profile_c`
with `grid_eps` set). Each request is predicted from the four folds other than its own, so its
own judgments never reach its decision (the oracle, an upper bound, excepted). The table is
`method.routing.decisions_table`.
"""

from method.routing import EVIDENCE_COLUMNS, decisions_table


def model(dbt, session):
    dbt.config(materialized="table")
    # dbt finds refs only in plain assignments, so each is read on its own line
    evidence = (
        dbt.ref("int_router_request_evidence").project(", ".join(EVIDENCE_COLUMNS)).to_arrow_table()
    )
    requests = dbt.ref("int_router_requests").to_arrow_table()
    capabilities = dbt.ref("capabilities").to_arrow_table()
    generators = dbt.ref("int_generators").to_arrow_table()
    epsilon = dbt.ref("int_router_epsilon").to_arrow_table()
    return decisions_table(evidence, requests, capabilities, generators, epsilon)
