"""Paired differences per scope x ordered model pair (METHOD 11) with 95% percentile intervals
over the concept-bootstrap draws. fct_pairwise_reliability presents it."""

from method.bootstrap import pairwise_reliability


def model(dbt, session):
    dbt.config(materialized="table")
    draws = dbt.ref("int_reliability_draws").to_arrow_table()
    return pairwise_reliability(draws)
