"""Paired quality differences of every router against each reference generator (METHOD 12).

Bootstrap over concepts: a draw resamples concepts with replacement and keeps both language
versions of each drawn concept, and every router and reference is scored on the same draw, from
per-concept sufficient statistics (`method.routing.bootstrap_bilingual`). References: the
`router_reference_models` var, or by default the two best fixed generators by bilingual quality.
`non_inferior`: the interval's lower end lies above minus the margin
(`router_non_inferiority_margin_points`). The uniform random router is scored from its
draw-averaged sufficient statistics (ratio of expectations).
"""

import numpy as np
import pyarrow as pa
from scipy import sparse

from method.routing import (
    Evidence,
    bilingual_from_sums,
    bootstrap_bilingual,
    concept_weights,
    indices,
)


def _concept_sums(ev, choice, by_concept):
    """(C, L, T) numerator and denominator sums of the routed records per concept and language."""
    shape = (len(ev.concepts), len(ev.languages), len(ev.taxonomy.capabilities))
    requests = np.arange(len(ev.prompts))
    num = (by_concept @ ev.num[choice, requests]).reshape(shape)
    den = (by_concept @ ev.den[choice, requests]).reshape(shape)
    return num, den


def _choices(ev, table, key):
    """Per router (or draw) the chosen generator index aligned to ev.prompts."""
    groups = table[key].to_numpy(zero_copy_only=False)
    prompts = indices(table["prompt_id"], ev.prompts)
    models = indices(table["model_id"], ev.models)
    out = {}
    for group in np.unique(groups):
        mask = groups == group
        choice = np.zeros(len(ev.prompts), dtype=np.int64)
        choice[prompts[mask]] = models[mask]
        out[group.item() if hasattr(group, "item") else group] = choice
    return out


def _saving(cost: float | None, reference_cost: float | None) -> float | None:
    """Fraction of the reference's GPU-s/MP saved; unknown when either cost is unknown."""
    if cost is None or not reference_cost:
        return None
    return 1.0 - cost / reference_cost


def model(dbt, session):
    dbt.config(materialized="table")
    # dbt finds refs only in plain assignments, so each is read on its own line
    evidence = dbt.ref("int_router_request_evidence").to_arrow_table()
    requests = dbt.ref("int_router_requests").to_arrow_table()
    capabilities = dbt.ref("capabilities").to_arrow_table()
    generators = dbt.ref("int_generators").to_arrow_table()
    seed = int(dbt.config.get("router_seed"))
    draws = int(dbt.config.get("bootstrap_draws"))
    margin = float(dbt.config.get("margin_points"))
    references = dbt.config.get("reference_models")
    ev = Evidence.from_arrow(evidence, requests, capabilities, generators)
    points = dbt.ref("int_router_points").filter("grid_eps is null").to_arrow_table().to_pylist()
    cost = {p["router"]: p["gpu_s_per_mp"] for p in points}
    if isinstance(references, str):  # a var given on the command line arrives as text
        references = [r.strip(" '\"") for r in references.strip("[]").split(",") if r.strip()]
    if not references:
        fixed = [p for p in points if p["router"].startswith("fixed:")]
        fixed.sort(key=lambda p: (-(p["bilingual_frac"] or -1.0), p["router"]))
        references = [p["router"].removeprefix("fixed:") for p in fixed[:2]]

    # requests -> (concept, language) rows, to sum routed records per concept and language
    cells = ev.concept * len(ev.languages) + ev.language
    by_concept = sparse.csr_matrix(
        (np.ones(len(ev.prompts)), (cells, np.arange(len(ev.prompts)))),
        shape=(len(ev.concepts) * len(ev.languages), len(ev.prompts)),
    )
    decisions = dbt.ref("int_router_decisions").filter("grid_eps is null").to_arrow_table()
    sums = {
        r: _concept_sums(ev, c, by_concept) for r, c in _choices(ev, decisions, "router").items()
    }
    draws_table = dbt.ref("int_router_uniform_draws").to_arrow_table()
    random_sums = [
        _concept_sums(ev, c, by_concept) for c in _choices(ev, draws_table, "draw").values()
    ]
    if random_sums:
        sums["uniform_random"] = (
            np.mean([n for n, _ in random_sums], axis=0),
            np.mean([d for _, d in random_sums], axis=0),
        )
    weights = concept_weights(len(ev.concepts), draws, seed)
    point = {r: bilingual_from_sums(n.sum(0), d.sum(0), ev.taxonomy) for r, (n, d) in sums.items()}
    boot = {r: bootstrap_bilingual(n, d, weights, ev.taxonomy) for r, (n, d) in sums.items()}

    rows = []
    for reference in references:
        ref_router = f"fixed:{reference}"
        if ref_router not in sums:
            raise ValueError(f"reference model {reference!r} has no fixed router (not judged)")
        for router in sorted(sums):
            diff = 100 * (point[router] - point[ref_router])
            lo, hi = 100 * np.nanpercentile(boot[router] - boot[ref_router], [2.5, 97.5])
            rows.append(
                {
                    "router": router,
                    "reference_model_id": reference,
                    "diff": float(diff),
                    "ci_lo": float(lo),
                    "ci_hi": float(hi),
                    "cost_saving_frac": _saving(cost.get(router), cost.get(ref_router)),
                    "non_inferior": bool(lo > -margin),
                    "margin_points": margin,
                    "n_draws": draws,
                }
            )
    schema = pa.schema(
        [
            ("router", pa.string()),
            ("reference_model_id", pa.string()),
            ("diff", pa.float64()),
            ("ci_lo", pa.float64()),
            ("ci_hi", pa.float64()),
            ("cost_saving_frac", pa.float64()),
            ("non_inferior", pa.bool_()),
            ("margin_points", pa.float64()),
            ("n_draws", pa.int64()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)
