"""Routing (METHOD 12, Table 4): the cost-quality plane of every fixed generator, Q-Profile-Q,
Q-Profile-C across epsilon, the hull frontier with its AIQ, the oracle and uniform random; and
the routed figures as tables."""

from __future__ import annotations

from reporting.charts import Plane, PlanePath, PlanePoint, Series, plane
from reporting.page import Chart, Section, Table
from reporting.reader import Reader
from reporting.sections.common import count, percent, points

FIXED = Series("fixed", "fixed generator", "#7a7a7a", "circle")
GRID = Series("grid", "Q-Profile-C at each ε (out of fold)", "#4e79a7", "circle")
FRONTIER = Series("frontier", "hull frontier", "#222222", "dashed")
ROUTERS = {
    "q_profile_q": Series("q_profile_q", "Q-Profile-Q", "#e15759", "star"),
    "q_profile_c": Series("q_profile_c", "Q-Profile-C (nested ε)", "#2b5d8a", "diamond"),
    "oracle": Series("oracle", "oracle (upper bound)", "#59a14f", "triangle"),
    "uniform_random": Series("uniform_random", "uniform random", "#b07aa1", "square"),
}
ROUTER_NAMES = {key: series.label for key, series in ROUTERS.items()}


def routing_section(reader: Reader) -> Section:
    return Section(
        anchor="routing",
        title="Cost-aware routing",
        intro="Routing each request to one generator by its predicted quality (Q-Profile, METHOD "
        "12): what quality it buys at what GPU cost, against always using one generator."
        + cost_gpus_note(reader)
        + excluded_note(reader),
        items=[
            router_plane_chart(reader),
            router_summary_table(reader),
            router_paired_table(reader),
        ],
    )


def cost_gpus_note(reader: Reader) -> str:
    """Where the calibrated costs were measured (`qct2i calibrate`), and a warning when on more
    than one GPU model: their GPU-s/MP are then compared as if they were one."""
    rows = reader.rows(
        "select cost_gpu_models, mixed_cost_gpus from marts.agg_router_summary limit 1"
    )
    if not rows or rows[0]["cost_gpu_models"] is None:
        return ""
    gpus = rows[0]["cost_gpu_models"]
    if rows[0]["mixed_cost_gpus"]:
        return (
            f" Warning: the measured costs come from different GPU models ({gpus}), so the cost "
            "axis compares GPU-s/MP of different GPUs as if they were one; calibrate every "
            "generator on one GPU model (qct2i calibrate)."
        )
    return f" Measured costs: {gpus}."


def excluded_note(reader: Reader) -> str:
    """The generators routing leaves out and why (a cost that is unknown cannot be ranked):
    their quality is in every other section, but in no figure here."""
    rows = reader.rows(
        "select model_id, reason from marts.fct_router_excluded_generators order by model_id"
    )
    if not rows:
        return ""
    listed = "; ".join(f"{reader.name(r['model_id'])} ({r['reason']})" for r in rows)
    return f" Left out of routing: {listed}."


def router_display(reader: Reader, router: str) -> str:
    if router.startswith("fixed:"):
        return reader.name(router.removeprefix("fixed:"))
    return ROUTER_NAMES.get(router, router)


def router_plane_chart(reader: Reader) -> Chart:
    frontier = reader.rows(
        "select point_kind, model_id, eps, bilingual, gpu_s_per_mp, on_frontier, is_live_eps, "
        "aiq, aiq_fixed_only from marts.agg_router_frontier "
        "where bilingual is not null and gpu_s_per_mp is not null order by eps, model_id"
    )
    summary = reader.rows(
        "select router, bilingual, gpu_s_per_mp from marts.agg_router_summary "
        "where bilingual is not null and gpu_s_per_mp is not null order by router"
    )
    points_, paths = _plane_marks(reader, frontier, summary)
    aiq = _aiq_text(frontier)
    legend = [(FIXED, "point"), (GRID, "point"), (FRONTIER, "line")]
    legend += [(ROUTERS[r["router"]], "point") for r in summary if r["router"] in ROUTERS]
    spec = Plane(
        label="Cost-quality plane of routing",
        points=points_,
        paths=paths,
        x_title="mean cost (GPU-s per megapixel)",
        y_title="bilingual routed HCQ (points)",
        legend=legend,
        y_floor=_quality_floor(frontier, summary),
    )
    return Chart(
        chart_id="router-plane",
        title=f"Routing: cost against quality{aiq}",
        how_to_read="Each point is a way to serve every request: grey dots always use one "
        "generator; the blue path is Q-Profile-C as its tolerance ε grows from 0 (top right) "
        "to 0.10, the ringed point the ε in use; the dashed line is the concave hull of all "
        "these points, and AIQ its mean quality from the cheapest to the best fixed "
        "generator's cost. Up and to the left is better; the oracle marks what perfect routing "
        "could reach.",
        svg=plane(spec) if points_ else None,
        empty="No router has both a quality and a cost in marts.agg_router_frontier / "
        "agg_router_summary (the evidence has no image timings and no generator costs).",
    )


def _plane_marks(
    reader: Reader, frontier: list[dict], summary: list[dict]
) -> tuple[list[PlanePoint], list[PlanePath]]:
    marks: list[PlanePoint] = []
    grid = [r for r in frontier if r["point_kind"] == "q_profile_c"]
    for r in frontier:
        x, y = r["gpu_s_per_mp"], r["bilingual"]
        if r["point_kind"] == "fixed":
            name = reader.name(r["model_id"])
            marks.append(
                PlanePoint(x, y, FIXED, f"{name}: {y:.2f} points at {x:.2f} GPU-s/MP", label=name)
            )
        else:
            live = bool(r["is_live_eps"])
            tip = f"Q-Profile-C, ε = {r['eps']:g}: {y:.2f} points at {x:.2f} GPU-s/MP"
            small = Series("grid", GRID.label, GRID.color, "circle")
            marks.append(
                PlanePoint(
                    x,
                    y,
                    small,
                    tip + (" (live ε)" if live else ""),
                    ring=live,
                    label=f"live ε = {r['eps']:g}" if live else "",
                )
            )
    for r in summary:
        series = ROUTERS.get(r["router"])
        if series is not None:
            x, y = r["gpu_s_per_mp"], r["bilingual"]
            tip = f"{series.label}: {y:.2f} points at {x:.2f} GPU-s/MP"
            marks.append(PlanePoint(x, y, series, tip, label=series.label))
    paths = []
    if grid:
        paths.append(PlanePath([(r["gpu_s_per_mp"], r["bilingual"]) for r in grid], GRID))
    hull = sorted((r["gpu_s_per_mp"], r["bilingual"]) for r in frontier if r["on_frontier"])
    if hull:
        # flat after the last vertex (method.routing.frontier_value), to the dearest point
        right = max(r["gpu_s_per_mp"] for r in frontier)
        paths.append(PlanePath([*hull, (right, hull[-1][1])], FRONTIER, dash="6 4"))
    return marks, paths


def _quality_floor(frontier: list[dict], summary: list[dict]) -> float | None:
    """2 points under the lowest router (the Q-Profile-C grid, the routers, uniform random):
    fixed generators far below it are drawn off scale, so the routers' region keeps its room."""
    routed = [r["bilingual"] for r in frontier if r["point_kind"] == "q_profile_c"]
    routed += [r["bilingual"] for r in summary if r["router"] in ROUTERS]
    return min(routed) - 2.0 if routed else None


def _aiq_text(frontier: list[dict]) -> str:
    if not frontier or frontier[0]["aiq"] is None:
        return ""
    first = frontier[0]
    return (
        f" (AIQ {first['aiq']:.2f} points; fixed generators alone "
        f"{points(first['aiq_fixed_only'])})"
    )


def router_summary_table(reader: Reader) -> Table:
    rows = reader.rows(
        "select router, router_kind, en, zh, bilingual, gpu_s_per_mp, n_requests "
        "from marts.agg_router_summary "
        "order by router_kind = 'fixed', bilingual desc nulls last, router"
    )
    body = [
        [
            router_display(reader, r["router"]),
            r["router_kind"],
            points(r["en"]),
            points(r["zh"]),
            points(r["bilingual"]),
            points(r["gpu_s_per_mp"]),
            count(r["n_requests"]),
        ]
        for r in rows
    ]
    return Table(
        table_id="router-summary",
        title="Routed quality and cost (Table 4)",
        headers=["router", "kind", "en", "zh", "bilingual", "GPU-s/MP", "requests"],
        rows=body,
        text_columns=2,
        how_to_read="Routed HCQ per language and their 50/50 mean (points), out of fold, and "
        "the mean cost per request. `fixed` rows always use one generator; uniform random is "
        "the mean of 100 random assignments; the oracle picks the best generator per request "
        "after the fact.",
        empty="No rows in marts.agg_router_summary.",
    )


def router_paired_table(reader: Reader) -> Table:
    rows = reader.rows(
        "select router, reference_model_id, diff, ci_lo, ci_hi, cost_saving_frac, non_inferior, "
        "margin_points from marts.fct_router_paired where router not like 'fixed:%' "
        "order by router, reference_model_id"
    )
    body = [
        [
            router_display(reader, r["router"]),
            reader.name(r["reference_model_id"]),
            f"{points(r['diff'])} [{points(r['ci_lo'])}, {points(r['ci_hi'])}]",
            percent(r["cost_saving_frac"]),
            "yes" if r["non_inferior"] else "no",
        ]
        for r in rows
    ]
    margin = rows[0]["margin_points"] if rows else None
    return Table(
        table_id="router-paired",
        title="Routers against the best fixed generators (paired concept bootstrap)",
        headers=["router", "reference", "difference [95% interval]", "cost saving", "non-inferior"],
        rows=body,
        text_columns=2,
        how_to_read="Bilingual routed HCQ minus the reference generator's, in points, with its "
        "95% paired concept-bootstrap interval; the cost saving is relative to the reference. "
        f"Non-inferior: the interval's lower end is above minus {points(margin)} points.",
        empty="No router rows in marts.fct_router_paired.",
    )
