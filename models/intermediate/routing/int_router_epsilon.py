"""Epsilon of Q-Profile-C per outer fold, chosen on the nested inner folds (METHOD 12).

For each outer fold k and each grid value: Q-Profile-C's routed quality over k's training requests,
each inner fold predicted from the other three training folds, beside the best fixed generator's
quality there. The selected epsilon (`is_selected`) is the largest grid value whose routed quality
is not below the best fixed generator's. The table is `method.routing.epsilon_table`.
"""

from method.routing import EVIDENCE_COLUMNS, epsilon_table


def model(dbt, session):
    dbt.config(materialized="table")
    # dbt finds refs only in plain assignments, so each is read on its own line
    evidence = (
        dbt.ref("int_router_request_evidence").project(", ".join(EVIDENCE_COLUMNS)).to_arrow_table()
    )
    requests = dbt.ref("int_router_requests").to_arrow_table()
    capabilities = dbt.ref("capabilities").to_arrow_table()
    generators = dbt.ref("int_generators").to_arrow_table()
    return epsilon_table(evidence, requests, capabilities, generators)
