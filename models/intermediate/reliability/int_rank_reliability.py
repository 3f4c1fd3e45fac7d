"""Rank reliability per model x scope (METHOD 11): observed total and rank, top-1 probability and
95% rank interval over the concept-bootstrap draws. fct_rank_reliability presents it."""

from method.bootstrap import rank_reliability


def model(dbt, session):
    dbt.config(materialized="table")
    draws = dbt.ref("int_reliability_draws").to_arrow_table()
    return rank_reliability(draws)
