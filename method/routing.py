"""Cost-aware routing (METHOD 12, the paper's Table 4): the Q-Profile predictor and its evaluation.

A request is one prompt in one language with its questions. Q-Profile predicts generator m's
quality on request r as HCQ (Eq. 4) over m's reference-fold capability scores in r's language,
restricted to the capabilities r's questions carry: mean over the active capabilities within each
reporting group, then over the groups present; a capability without a reference score drops out.
No learned parameters. Q-Profile-Q takes the best prediction, Q-Profile-C the cheapest generator
within `eps` of it; ties go to the cheaper generator, then to the model id that sorts first.

The dbt Python models of `models/intermediate/routing` call the evaluation functions here on
request-level sufficient statistics (`Evidence`); `qct2i route` calls `route_requests`, which
reads only the small `marts.fct_router_profiles` (and the live epsilon from
`marts.agg_router_frontier`), so it never imports dbt or Dagster.

The restricted HCQ (`hcq_frac`) calls `method.hcq`, the numpy form of `macros/hcq.sql`; the SQL
marts score the routed virtual generators with the macro itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa

from method.bootstrap import encode, percentile_interval
from method.hcq import hcq_total
from method.scores import POINTS, bilingual_mean, capability_score
from method.taxonomy import Taxonomy

# METHOD 12: the epsilon grid (fractions of HCQ, i.e. 0 to 10 points in 0.5-point steps).
EPS_GRID: tuple[float, ...] = tuple(round(0.005 * i, 3) for i in range(21))
N_FOLDS = 5
# Predictions equal up to float rounding count as tied (then cost, then model id decide).
TIE_TOLERANCE = 1e-12
UNIFORM_DRAWS = 100


# --------------------------------------------------------------------------------------------------
# HCQ restricted to active capabilities
# --------------------------------------------------------------------------------------------------


def hcq_frac(scores: np.ndarray, active: np.ndarray, taxonomy: Taxonomy) -> np.ndarray:
    """HCQ (Eq. 4, `method.hcq`) over the last axis, restricted to `active` capabilities.

    `scores` (..., T): capability scores as fractions, NaN where there is none; `active` broadcasts
    to it. An inactive capability is treated as having no score, so it drops out as a missing one
    does: mean over the used capabilities within each group, then over the groups that have one;
    NaN where no group has one.
    """
    return hcq_total(np.where(active, scores, np.nan), taxonomy.capability_groups)


def predict_quality(profile: np.ndarray, active: np.ndarray, taxonomy: Taxonomy) -> np.ndarray:
    """Q-Profile: (P, M) predicted quality of M generators (profile (M, T)) on P requests
    (active (P, T))."""
    return hcq_frac(profile[None, :, :], active[:, None, :], taxonomy)


def choose(predicted: np.ndarray, cost_rank: np.ndarray, eps: float) -> np.ndarray:
    """(P,) index of the chosen generator per request (row of `predicted`, (P, M)).

    Candidates: predictions within `eps` of the row's best (NaN = no prediction, never a
    candidate unless the whole row is NaN); among them the one first in `cost_rank` order
    (`cost_rank[m]` = position of m sorted by cost, then model id). eps = 0 is Q-Profile-Q.
    """
    filled = np.where(np.isnan(predicted), -np.inf, predicted)
    best = filled.max(axis=1, keepdims=True)
    candidate = filled >= best - eps - TIE_TOLERANCE
    ranked = np.where(candidate, cost_rank[None, :], np.iinfo(np.int64).max)
    return ranked.argmin(axis=1)


def cost_ranks(cost: np.ndarray, models: Sequence[str]) -> np.ndarray:
    """Each generator's position when sorted by cost, then model id (the tie rule)."""
    order = sorted(range(len(models)), key=lambda m: (cost[m], models[m]))
    ranks = np.empty(len(models), dtype=np.int64)
    ranks[order] = np.arange(len(models))
    return ranks


# --------------------------------------------------------------------------------------------------
# Request-level evidence and out-of-fold evaluation
# --------------------------------------------------------------------------------------------------


@dataclass
class Evidence:
    """Request-level sufficient statistics of every generator (dense arrays).

    num/den (M, P, T): per generator, request and capability the score's numerator and
    denominator (valid yes / valid questions; for the transcription capability L - D / L of the
    request's image). `active` (P, T): the capabilities the request's questions carry.
    """

    taxonomy: Taxonomy
    models: tuple[str, ...]
    cost: np.ndarray  # (M,) GPU-s/MP
    prompts: tuple[str, ...]
    concepts: tuple[str, ...]
    concept: np.ndarray  # (P,) index into concepts
    languages: tuple[str, ...]
    language: np.ndarray  # (P,) index into languages
    fold: np.ndarray  # (P,) 1..N_FOLDS
    num: np.ndarray
    den: np.ndarray
    active: np.ndarray

    @property
    def cost_rank(self) -> np.ndarray:
        return cost_ranks(self.cost, self.models)

    @classmethod
    def from_arrow(
        cls,
        evidence: pa.Table,
        requests: pa.Table,
        capabilities: pa.Table,
        generators: pa.Table,
    ) -> Evidence:
        """From `int_router_request_evidence` (model_id, prompt_id, capability, score_num,
        score_den), `int_router_requests` (prompt_id, concept_id, language, fold), the taxonomy
        seed and `int_generators` (model_id, cost_gpu_s_per_mp)."""
        taxonomy = Taxonomy.from_rows(capabilities.to_pylist())
        req = requests.sort_by("prompt_id").to_pydict()
        prompts = tuple(req["prompt_id"])
        concepts = tuple(sorted(set(req["concept_id"])))
        languages = tuple(sorted(set(req["language"])))
        models = tuple(sorted(set(evidence["model_id"].to_pylist())))
        cost_of = dict(
            zip(
                generators["model_id"].to_pylist(),
                generators["cost_gpu_s_per_mp"].to_pylist(),
                strict=True,
            )
        )
        m_idx = encode(evidence["model_id"], models)[1]
        p_idx = encode(evidence["prompt_id"], prompts)[1]
        t_idx = encode(evidence["capability"], taxonomy.capabilities)[1]
        shape = (len(models), len(prompts), len(taxonomy.capabilities))
        num, den = np.zeros(shape), np.zeros(shape)
        num[m_idx, p_idx, t_idx] = evidence["score_num"].to_numpy(zero_copy_only=False)
        den[m_idx, p_idx, t_idx] = evidence["score_den"].to_numpy(zero_copy_only=False)
        active = np.zeros(shape[1:], dtype=bool)
        active[p_idx, t_idx] = True
        return cls(
            taxonomy=taxonomy,
            models=models,
            # a generator without any cost figure sorts last and makes mean costs infinite
            cost=np.array(
                [np.inf if cost_of.get(m) is None else float(cost_of[m]) for m in models]
            ),
            prompts=prompts,
            concepts=concepts,
            concept=encode(pa.chunked_array([req["concept_id"]]), concepts)[1],
            languages=languages,
            language=encode(pa.chunked_array([req["language"]]), languages)[1],
            fold=np.array(req["fold"], dtype=np.int64),
            num=num,
            den=den,
            active=active,
        )

    def fold_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """(F+1, M, L, T) numerator and denominator sums per fold (index 0 unused) and language."""
        n_caps = len(self.taxonomy.capabilities)
        shape = (N_FOLDS + 1, len(self.models), len(self.languages), n_caps)
        num, den = np.zeros(shape), np.zeros(shape)
        for f in range(1, N_FOLDS + 1):
            for li in range(len(self.languages)):
                mask = (self.fold == f) & (self.language == li)
                num[f, :, li] = self.num[:, mask].sum(axis=1)
                den[f, :, li] = self.den[:, mask].sum(axis=1)
        return num, den

    def predict(self, excluded_folds: Sequence[int], requests: np.ndarray) -> np.ndarray:
        """(len(requests), M) Q-Profile predictions from the folds not in `excluded_folds`."""
        num_f, den_f = self.sums_by_fold
        keep = [f for f in range(1, N_FOLDS + 1) if f not in excluded_folds]
        profile = capability_score(num_f[keep].sum(axis=0), den_f[keep].sum(axis=0))  # (M, L, T)
        out = np.full((len(requests), len(self.models)), np.nan)
        for li in range(len(self.languages)):
            rows = np.flatnonzero(self.language[requests] == li)
            if len(rows):
                active = self.active[requests[rows]]
                out[rows] = predict_quality(profile[:, li], active, self.taxonomy)
        return out

    @cached_property
    def sums_by_fold(self) -> tuple[np.ndarray, np.ndarray]:
        return self.fold_sums()

    def routed_quality(self, choice: np.ndarray, requests: np.ndarray) -> np.ndarray:
        """(L,) HCQ per language of the virtual generator whose records for request
        `requests[i]` are generator `choice[i]`'s records; NaN for a language without requests."""
        num = self.num[choice, requests]  # (R, T)
        den = self.den[choice, requests]
        out = np.full(len(self.languages), np.nan)
        for li in range(len(self.languages)):
            mask = self.language[requests] == li
            if mask.any():
                scores = capability_score(num[mask].sum(axis=0), den[mask].sum(axis=0))
                out[li] = hcq_frac(scores, np.ones_like(scores, dtype=bool), self.taxonomy)
        return out

    def realised_quality(self) -> np.ndarray:
        """(P, M) HCQ of each generator's own records on each request alone (the oracle's view)."""
        scores = capability_score(self.num, self.den)  # (M, P, T)
        return hcq_frac(scores, self.active[None], self.taxonomy).T


def language_mean(per_language: np.ndarray) -> np.ndarray:
    """The equal-weight mean over the last (language) axis: with two languages the bilingual
    50/50 mean (`method.scores.bilingual_mean`), NaN unless both are defined."""
    if per_language.shape[-1] == 2:
        return bilingual_mean(per_language[..., 0], per_language[..., 1])
    return per_language.mean(axis=-1)


def selection_quality(per_language: np.ndarray) -> float:
    """The figure epsilon is selected on: the 50/50 (equal-weight) mean over languages."""
    return float(language_mean(per_language))


@dataclass(frozen=True)
class EpsilonSearch:
    """One outer fold's inner-fold search: routed quality per grid epsilon and the chosen one."""

    outer_fold: int
    grid_quality: tuple[float, ...]  # inner-fold selection quality of Q-Profile-C per EPS_GRID
    best_fixed_quality: float
    best_fixed_model: str
    eps: float


def select_epsilon(ev: Evidence, outer_fold: int) -> EpsilonSearch:
    """METHOD 12: on the training folds of `outer_fold`, each inner fold (one of the other four
    folds) is predicted from the remaining three; epsilon is the largest grid value whose routed
    quality over the training requests is not below the best fixed generator's quality there.
    If none clears it (or the fold has no training requests), eps = 0 (Q-Profile-Q)."""
    training = np.flatnonzero(ev.fold != outer_fold)
    predicted = np.full((len(training), len(ev.models)), np.nan)
    for inner in range(1, N_FOLDS + 1):
        if inner == outer_fold:
            continue
        rows = np.flatnonzero(ev.fold[training] == inner)
        if len(rows):
            predicted[rows] = ev.predict((outer_fold, inner), training[rows])
    fixed = [
        selection_quality(ev.routed_quality(np.full(len(training), m), training))
        for m in range(len(ev.models))
    ]
    best = int(np.nanargmax(fixed)) if not np.isnan(fixed).all() else 0
    grid, eps = [], 0.0
    for value in EPS_GRID:
        choice = choose(predicted, ev.cost_rank, value)
        quality = selection_quality(ev.routed_quality(choice, training))
        grid.append(quality)
        if quality >= fixed[best] - TIE_TOLERANCE:
            eps = value
    return EpsilonSearch(outer_fold, tuple(grid), fixed[best], ev.models[best], eps)


def out_of_fold_predictions(ev: Evidence) -> np.ndarray:
    """(P, M): each request predicted from the four folds other than its own."""
    out = np.full((len(ev.prompts), len(ev.models)), np.nan)
    for fold in range(1, N_FOLDS + 1):
        rows = np.flatnonzero(ev.fold == fold)
        if len(rows):
            out[rows] = ev.predict((fold,), rows)
    return out


def uniform_draws(n_models: int, n_requests: int, seed: int, draws: int = UNIFORM_DRAWS):
    """(draws, P) generator index per draw and request, uniform, from a fixed seed."""
    return np.random.default_rng(seed).integers(0, n_models, size=(draws, n_requests))


# --------------------------------------------------------------------------------------------------
# Paired bootstrap over concepts and the cost-quality frontier
# --------------------------------------------------------------------------------------------------


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


def upper_frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The non-decreasing concave hull of (cost, quality) points: best quality reachable at each
    cost by mixing routers (RouterBench's frontier; the 'lower convex hull' of cost over quality).
    Returns its vertices by increasing cost."""
    pareto: list[tuple[float, float]] = []
    for cost, quality in sorted(points, key=lambda p: (p[0], -p[1])):
        if not pareto or quality > pareto[-1][1]:
            pareto.append((cost, quality))
    hull: list[tuple[float, float]] = []
    for point in pareto:
        while len(hull) >= 2 and _not_below(hull[-2], hull[-1], point):
            hull.pop()
        hull.append(point)
    return hull


def _not_below(a, b, c) -> bool:
    """Whether b lies on or below the segment a -> c (so it is not a hull vertex)."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) >= 0


def frontier_value(hull: Sequence[tuple[float, float]], cost: float) -> float:
    """The frontier's quality at `cost` (linear between vertices, flat after the last)."""
    costs = [p[0] for p in hull]
    qualities = [p[1] for p in hull]
    if cost < costs[0]:
        return float("nan")
    return float(np.interp(cost, costs, qualities))


def area_under_frontier(hull: Sequence[tuple[float, float]], lo: float, hi: float) -> float:
    """Mean frontier quality over costs [lo, hi] (RouterBench's AIQ, normalised by the width);
    the frontier's value at lo when the interval is empty."""
    if hi <= lo:
        return frontier_value(hull, lo)
    xs = sorted({lo, hi, *(c for c, _ in hull if lo < c < hi)})
    ys = [frontier_value(hull, x) for x in xs]
    area = sum(
        (x1 - x0) * (y0 + y1) / 2 for x0, x1, y0, y1 in zip(xs, xs[1:], ys, ys[1:], strict=False)
    )
    return area / (hi - lo)


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
    random_sums = [
        routed_concept_sums(ev, c, by_concept)
        for c in choices_by_group(ev, random_draws, "draw").values()
    ]
    if random_sums:
        sums["uniform_random"] = (
            np.mean([n for n, _ in random_sums], axis=0),
            np.mean([d for _, d in random_sums], axis=0),
        )
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


FRONTIER_SCHEMA = pa.schema(
    [
        ("point_kind", pa.string()),
        ("router", pa.string()),
        ("eps", pa.float64()),
        ("model_id", pa.string()),
        ("en", pa.float64()),
        ("zh", pa.float64()),
        ("bilingual", pa.float64()),
        ("gpu_s_per_mp", pa.float64()),
        ("on_frontier", pa.bool_()),
        ("frontier_quality", pa.float64()),
        ("is_live_eps", pa.bool_()),
        ("aiq", pa.float64()),
        ("aiq_fixed_only", pa.float64()),
    ]
)


def frontier_table(points: Sequence[Mapping]) -> pa.Table:
    """`agg_router_frontier` (METHOD 12, RouterBench-style) from `int_router_points` rows.

    Points: Q-Profile-C out of fold at every grid epsilon and every fixed generator, as (GPU-s/MP,
    bilingual points); `on_frontier` marks the vertices of their non-decreasing concave hull
    (`upper_frontier`), `frontier_quality` the hull at the point's cost, `aiq` the hull's mean
    quality over costs from the cheapest to the best fixed generator (`aiq_fixed_only`: the same
    for the fixed generators' hull alone). `is_live_eps` marks the epsilon `qct2i route` uses:
    the largest grid value whose out-of-fold quality is not below the best fixed generator's.
    Empty when no fixed generator has both a quality and a cost.
    """
    grid = [p for p in points if p["router"] == "q_profile_c" and p["grid_eps"] is not None]
    fixed = [p for p in points if p["router"].startswith("fixed:")]
    # A point needs both axes: a bundle may name generators with no cost figure at all.
    usable = [
        p for p in grid + fixed if p["bilingual_frac"] is not None and p["gpu_s_per_mp"] is not None
    ]
    fixed_ok = [p for p in fixed if p in usable]
    if not fixed_ok:
        return FRONTIER_SCHEMA.empty_table()
    hull = upper_frontier([(p["gpu_s_per_mp"], POINTS * p["bilingual_frac"]) for p in usable])
    hull_fixed = upper_frontier(
        [(p["gpu_s_per_mp"], POINTS * p["bilingual_frac"]) for p in fixed_ok]
    )
    best = max(fixed_ok, key=lambda p: (p["bilingual_frac"], -p["gpu_s_per_mp"]))
    lo = min(p["gpu_s_per_mp"] for p in fixed_ok)
    aiq = area_under_frontier(hull, lo, best["gpu_s_per_mp"])
    aiq_fixed = area_under_frontier(hull_fixed, lo, best["gpu_s_per_mp"])
    clearing = [
        p["grid_eps"]
        for p in grid
        if p["bilingual_frac"] is not None
        and p["bilingual_frac"] >= best["bilingual_frac"] - TIE_TOLERANCE
    ]
    live = max(clearing, default=0.0)
    vertices = set(hull)
    rows = []
    for p in grid + fixed:
        quality = None if p["bilingual_frac"] is None else POINTS * p["bilingual_frac"]
        is_grid = p["router"] == "q_profile_c"
        rows.append(
            {
                "point_kind": "q_profile_c" if is_grid else "fixed",
                "router": p["router"],
                "eps": p["grid_eps"],
                "model_id": None if is_grid else p["router"].removeprefix("fixed:"),
                "en": None if p["en_frac"] is None else POINTS * p["en_frac"],
                "zh": None if p["zh_frac"] is None else POINTS * p["zh_frac"],
                "bilingual": quality,
                "gpu_s_per_mp": p["gpu_s_per_mp"],
                "on_frontier": (p["gpu_s_per_mp"], quality) in vertices,
                "frontier_quality": (
                    None if p["gpu_s_per_mp"] is None else frontier_value(hull, p["gpu_s_per_mp"])
                ),
                "is_live_eps": is_grid and p["grid_eps"] == live,
                "aiq": aiq,
                "aiq_fixed_only": aiq_fixed,
            }
        )
    return pa.Table.from_pylist(rows, schema=FRONTIER_SCHEMA)


# --------------------------------------------------------------------------------------------------
# Live routing of new requests (`qct2i route`)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ranked:
    """One generator for one request: rank by predicted quality, cost, and the router choices."""

    prompt_id: str
    rank: int
    model_id: str
    predicted_quality: float | None  # points
    cost_gpu_s_per_mp: float
    is_q_choice: bool
    is_c_choice: bool


@dataclass(frozen=True)
class RouteResult:
    language_scope: str
    eps: float
    rankings: tuple[Ranked, ...]

    def as_json(self) -> dict:
        prompts: dict[str, list[dict]] = {}
        for row in self.rankings:
            prompts.setdefault(row.prompt_id, []).append(
                {k: v for k, v in row.__dict__.items() if k != "prompt_id"}
            )
        return {
            "language_scope": self.language_scope,
            "eps": self.eps,
            "requests": [{"prompt_id": p, "ranking": r} for p, r in prompts.items()],
        }


def route_requests(
    questions: pa.Table,
    profiles: Sequence[Mapping],
    language: str = "en",
    eps: float | None = None,
    live_eps: float | None = None,
) -> RouteResult:
    """Rank every generator for every prompt of `questions` (a validated questions table).

    `profiles`: rows of `marts.fct_router_profiles`. The profile of `language` is used; a
    language the warehouse has no evidence for falls back to the `pooled` profile. `eps` defaults
    to `live_eps` (the warehouse's selected value), else 0.
    """
    scopes = {row["language_scope"] for row in profiles}
    scope = language if language in scopes else "pooled"
    rows = [row for row in profiles if row["language_scope"] == scope]
    if not rows:
        raise ValueError("the warehouse has no router profiles; run `qct2i build` first")
    taxonomy = Taxonomy.from_rows(
        {
            "capability": r["capability"],
            "group_key": r["capability_group"],
            "group_order": r["group_order"],
            "capability_order": r["capability_order"],
        }
        for r in {r["capability"]: r for r in rows}.values()
    )
    models = tuple(sorted({r["model_id"] for r in rows}))
    cost = np.array(
        [next(r["cost_gpu_s_per_mp"] for r in rows if r["model_id"] == m) for m in models]
    )
    position = {t: i for i, t in enumerate(taxonomy.capabilities)}
    profile = np.full((len(models), len(taxonomy.capabilities)), np.nan)
    for r in rows:
        if r["score_frac"] is not None:
            profile[models.index(r["model_id"]), position[r["capability"]]] = r["score_frac"]
    prompt_ids = list(dict.fromkeys(questions["prompt_id"].to_pylist()))
    active = np.zeros((len(prompt_ids), len(taxonomy.capabilities)), dtype=bool)
    row_of = {p: i for i, p in enumerate(prompt_ids)}
    for prompt, capability in zip(
        questions["prompt_id"].to_pylist(), questions["capability"].to_pylist(), strict=True
    ):
        if capability in position:
            active[row_of[prompt], position[capability]] = True
    predicted = predict_quality(profile, active, taxonomy)
    eps = float(live_eps if eps is None and live_eps is not None else (eps or 0.0))
    ranks = cost_ranks(cost, models)
    q_choice = choose(predicted, ranks, 0.0)
    c_choice = choose(predicted, ranks, eps)
    out = []
    for i, prompt in enumerate(prompt_ids):
        filled = np.where(np.isnan(predicted[i]), -np.inf, predicted[i])
        order = sorted(range(len(models)), key=lambda m, f=filled: (-f[m], ranks[m]))
        for rank, m in enumerate(order, start=1):
            value = predicted[i, m]
            out.append(
                Ranked(
                    prompt_id=prompt,
                    rank=rank,
                    model_id=models[m],
                    predicted_quality=None if np.isnan(value) else round(POINTS * float(value), 4),
                    cost_gpu_s_per_mp=round(float(cost[m]), 4),
                    is_q_choice=bool(m == q_choice[i]),
                    is_c_choice=bool(m == c_choice[i]),
                )
            )
    return RouteResult(scope, eps, tuple(out))
