"""The cost-quality frontier of routing (METHOD 12, RouterBench-style):
`method.routing.frontier_table` on the routers' cost-quality points. `agg_router_frontier`
presents it."""

from method.routing import frontier_table


def model(dbt, session):
    dbt.config(materialized="table")
    points = dbt.ref("int_router_points").to_arrow_table()
    return frontier_table(points)
