"""Paired quality differences of every router against reference generators (METHOD 12).

fct_router_paired: each router's bilingual quality minus a reference generator's, with a 95%
percentile interval from a paired bootstrap over concepts: every router and reference is scored
on the same draw from per-concept sufficient statistics, so the interval is of the difference.
The SQL marts score the routed virtual generators with the HCQ macro itself; this module needs
the numpy twin (`method.hcq`) because it scores every draw.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from method.bootstrap import encode, percentile_interval
from method.routing.evidence import Evidence, language_mean
from method.routing.predict import hcq_frac
from method.scores import POINTS, capability_score
from method.taxonomy import Taxonomy


def bilingual_from_sums(num: np.ndarray, den: np.ndarray, taxonomy: Taxonomy) -> np.ndarray:
    """(..., L, T) sums -> (...,) equal-weight mean over languages of the per-language HCQ."""
    scores = capability_score(num, den)
    return language_mean(hcq_frac(scores, np.ones(scores.shape[-1], dtype=bool), taxonomy))


def multinomial_concept_weights(n_concepts: int, draws: int, seed: int) -> np.ndarray:
    """(draws, C) multiplicities of the router's concept bootstrap, drawn as one multinomial
    vector per draw. The same distribution as `method.bootstrap.concept_weights`, another random
    stream: `fct_router_paired`'s published intervals come from this one."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_concepts, np.full(n_concepts, 1.0 / n_concepts), size=draws).astype(
        np.float64
    )


def bootstrap_bilingual(
    num: np.ndarray, den: np.ndarray, weights: np.ndarray, taxonomy: Taxonomy
) -> np.ndarray:
    """(B,) bilingual quality per draw from per-concept sums num/den (C, L, T)."""
    c, n_lang, n_cap = num.shape
    drawn_num = (weights @ num.reshape(c, -1)).reshape(-1, n_lang, n_cap)
    drawn_den = (weights @ den.reshape(c, -1)).reshape(-1, n_lang, n_cap)
    return bilingual_from_sums(drawn_num, drawn_den, taxonomy)


PAIRED_TAILS = (0.025, 0.975)  # the 95% percentile interval, as published (METHOD 12)

PAIRED_SCHEMA = pa.schema(
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


def routed_concept_sums(ev: Evidence, choice: np.ndarray, by_concept) -> tuple:
    """(C, L, T) numerator and denominator sums of the routed records per concept and language."""
    shape = (len(ev.concepts), len(ev.languages), len(ev.taxonomy.capabilities))
    requests = np.arange(len(ev.prompts))
    num = (by_concept @ ev.num[choice, requests]).reshape(shape)
    den = (by_concept @ ev.den[choice, requests]).reshape(shape)
    return num, den


def mean_routed_sums(ev: Evidence, choices: Iterable[np.ndarray], by_concept) -> tuple:
    """The routed sums averaged over several choices (the uniform router's draws), as running
    totals: holding every draw's (C, L, T) sums at once took gigabytes at 10x paper scale. Adding
    in draw order, then dividing, is what numpy's mean over a stacked first axis does, to the
    bit."""
    total_num = total_den = None
    n = 0
    for choice in choices:
        num, den = routed_concept_sums(ev, choice, by_concept)
        total_num = num if total_num is None else np.add(total_num, num, out=total_num)
        total_den = den if total_den is None else np.add(total_den, den, out=total_den)
        n += 1
    return total_num / n, total_den / n


def choices_by_group(ev: Evidence, table: pa.Table, key: str) -> dict:
    """Per router (or draw, `key`) the chosen generator index aligned to ev.prompts."""
    groups = table[key].to_numpy(zero_copy_only=False)
    prompts = encode(table["prompt_id"], ev.prompts)[1]
    models = encode(table["model_id"], ev.models)[1]
    out = {}
    for group in np.unique(groups):
        mask = groups == group
        choice = np.zeros(len(ev.prompts), dtype=np.int64)
        choice[prompts[mask]] = models[mask]
        out[group.item() if hasattr(group, "item") else group] = choice
    return out


def cost_saving(cost: float | None, reference_cost: float | None) -> float | None:
    """Fraction of the reference's GPU-s/MP saved; unknown when either cost is unknown."""
    if cost is None or not reference_cost:
        return None
    return 1.0 - cost / reference_cost


def default_references(points: Sequence[Mapping]) -> list[str]:
    """The two best fixed generators by bilingual quality (model id breaks ties)."""
    fixed = [p for p in points if p["router"].startswith("fixed:")]
    fixed.sort(key=lambda p: (-(p["bilingual_frac"] or -1.0), p["router"]))
    return [p["router"].removeprefix("fixed:") for p in fixed[:2]]


def paired_differences(
    ev: Evidence,
    decisions: pa.Table,
    random_draws: pa.Table,
    points: Sequence[Mapping],
    references: Sequence[str],
    draws: int,
    seed: int,
    margin_points: float,
) -> pa.Table:
    """`fct_router_paired` (METHOD 12): every router's bilingual quality minus each reference's,
    in points, with a 95% percentile interval from a paired concept bootstrap.

    A draw resamples concepts with replacement (`multinomial_concept_weights`) and keeps both
    language versions of each drawn concept; every router and reference is scored on the same
    draw from per-concept sufficient statistics (`bootstrap_bilingual`). `decisions`: the
    out-of-fold decisions (router, prompt_id, model_id); `random_draws`: the uniform router's
    draws (draw, prompt_id, model_id), scored from its draw-averaged sums (ratio of
    expectations); `points`: `int_router_points` rows (costs; default references). `references`
    empty = `default_references`. `non_inferior`: ci_lo > -margin_points.
    """
    from scipy import sparse

    references = list(references) or default_references(points)
    cost = {p["router"]: p["gpu_s_per_mp"] for p in points}
    # requests -> (concept, language) rows, to sum routed records per concept and language
    cells = ev.concept * len(ev.languages) + ev.language
    by_concept = sparse.csr_matrix(
        (np.ones(len(ev.prompts)), (cells, np.arange(len(ev.prompts)))),
        shape=(len(ev.concepts) * len(ev.languages), len(ev.prompts)),
    )
    sums = {
        r: routed_concept_sums(ev, c, by_concept)
        for r, c in choices_by_group(ev, decisions, "router").items()
    }
    random_choices = choices_by_group(ev, random_draws, "draw").values()
    if random_choices:
        sums["uniform_random"] = mean_routed_sums(ev, random_choices, by_concept)
    weights = multinomial_concept_weights(len(ev.concepts), draws, seed)
    point = {r: bilingual_from_sums(n.sum(0), d.sum(0), ev.taxonomy) for r, (n, d) in sums.items()}
    boot = {r: bootstrap_bilingual(n, d, weights, ev.taxonomy) for r, (n, d) in sums.items()}
    rows = []
    for reference in references:
        ref_router = f"fixed:{reference}"
        if ref_router not in sums:
            raise ValueError(f"reference model {reference!r} has no fixed router (not judged)")
        for router in sorted(sums):
            diff = POINTS * (point[router] - point[ref_router])
            lo, hi = percentile_interval(
                (boot[router] - boot[ref_router])[:, None], tails=PAIRED_TAILS
            )
            lo, hi = POINTS * lo[0], POINTS * hi[0]
            rows.append(
                {
                    "router": router,
                    "reference_model_id": reference,
                    "diff": float(diff),
                    "ci_lo": float(lo),
                    "ci_hi": float(hi),
                    "cost_saving_frac": cost_saving(cost.get(router), cost.get(ref_router)),
                    "non_inferior": bool(lo > -margin_points),
                    "margin_points": margin_points,
                    "n_draws": draws,
                }
            )
    return pa.Table.from_pylist(rows, schema=PAIRED_SCHEMA)


def paired_table(
    evidence: pa.Table,
    requests: pa.Table,
    capabilities: pa.Table,
    generators: pa.Table,
    decisions: pa.Table,
    random_draws: pa.Table,
    points: pa.Table,
    *,
    references: Sequence[str],
    draws: int,
    seed: int,
    margin_points: float,
) -> pa.Table:
    """int_router_paired: `paired_differences` on the tables the dbt model reads. `evidence`,
    `requests`, `capabilities`, `generators` as `Evidence.from_arrow`; `decisions`:
    int_router_decisions and `points`: int_router_points, of which only the routers proper are
    compared (rows with `grid_eps` null; the grid rows are the frontier's); `random_draws`:
    int_router_uniform_draws."""
    decisions = decisions.filter(pc.is_null(decisions["grid_eps"]))
    points = points.filter(pc.is_null(points["grid_eps"]))
    return paired_differences(
        Evidence.from_arrow(evidence, requests, capabilities, generators),
        decisions,
        random_draws,
        points.to_pylist(),
        references,
        draws,
        seed,
        margin_points,
    )
