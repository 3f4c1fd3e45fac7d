"""`qct2i route` I/O: read the live router profiles from the warehouse and print a ranking.

The ranking itself is `method.routing.route_requests`, which needs neither DuckDB nor dbt.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from method.routing import RouteResult


def load_live_profiles(warehouse: Path) -> tuple[list[dict], float | None]:
    """The full-data capability profiles (`marts.fct_router_profiles`) and the live epsilon
    (`marts.agg_router_frontier`), read-only: the only warehouse reads routing a request needs."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        cursor = con.execute(
            "select model_id, language_scope, capability, capability_group, group_order, "
            "capability_order, score_frac, cost_gpu_s_per_mp from marts.fct_router_profiles"
        )
        names = [d[0] for d in cursor.description]
        profiles = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        live = con.execute(
            "select max(eps) from marts.agg_router_frontier where is_live_eps"
        ).fetchone()
    return profiles, (None if live is None else live[0])


def format_route(result: RouteResult) -> str:
    """The ranking as a table: one block per request, Q and C choices marked."""
    blocks = []
    rows = result.rankings
    prompts = list(dict.fromkeys(r.prompt_id for r in rows))
    for prompt in prompts:
        lines = [
            f"request {prompt} (profile {result.language_scope}, eps {result.eps:.3f}; "
            "Q = best predicted, C = cheapest within eps)"
        ]
        lines.append(f"{'rank':>4}  {'generator':<20} {'predicted':>9} {'GPU-s/MP':>9}  choice")
        for r in (r for r in rows if r.prompt_id == prompt):
            quality = "-" if r.predicted_quality is None else f"{r.predicted_quality:.2f}"
            marks = "".join(mark for mark, on in (("Q", r.is_q_choice), ("C", r.is_c_choice)) if on)
            lines.append(
                f"{r.rank:>4}  {r.model_id:<20} {quality:>9} {r.cost_gpu_s_per_mp:>9.2f}  {marks}"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
