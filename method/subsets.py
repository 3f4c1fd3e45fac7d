"""Estimating a generator from a subset of prompts (METHOD 16): plans, the estimator, validation.

Unit of a plan: the concept (both languages of a concept are drawn together, as METHOD 11
resamples them). The evidence is `method.bootstrap.ConceptStats`, numerator / denominator per
concept x model x language x capability, so a plan's evidence is a subset of rows.

Design (written down because METHOD 16 leaves the choice open):

- Two estimators, both design-based (every plan is a probability sample of concepts with known
  inclusion probabilities `pi_c > 0` that never depend on the new generator's outcomes):
  * `greg` (the default, `greg_estimate`): model-assisted difference estimator, the item
    model's prediction for every concept (the new generator's abilities fitted on its subset)
    plus the 1 / pi-weighted residuals of the drawn ones. Still close to unbiased whatever the
    model; smaller variance where prompts carry difficulty shared across generators (a hard
    prompt hard for everyone), none where they do not (the simulator's demo world).
  * `ht` (`subset_estimate`), the design-only baseline described next.
  agg_subset_validation names a plan with the `ht` estimator `<plan>-ht`; there each estimator
  draws `irt` plans with its own variance-minimising sizes (`irt_sizes`), while `qct2i plan`
  and fct_subset_estimates use the default estimator's.
- The design-only estimator: each capability score is the
  Hajek ratio `sum_s num_c / pi_c / sum_s den_c / pi_c` (`subset_estimate`). It is close to
  unbiased for the full-benchmark score whatever the strategy, because the probabilities never
  depend on the new generator's outcomes: a wrong item model makes a plan less efficient, never
  biased. HCQ is then the usual Eq. 4 of the estimated scores (`method.bootstrap.scope_totals`).
- Its 95% interval is the linearisation (Taylor) variance of the HCQ total under the plan:
  each drawn concept's influence `u_c = sum_(l,t) w_lt (num_clt - S_lt den_clt) / D_lt`, with
  `w_lt` the weight Eq. 4 gives the capability in the scope (`method.hcq.hcq_weights`), in
  Hajek's variance approximation for fixed-size high-entropy designs (per stratum), which
  includes the finite-population correction (a concept drawn with certainty adds no variance).
  The target is the finite full-benchmark HCQ, so this is the whole sampling noise; the item
  model enters only through `pi`, and its uncertainty can only widen the design variance, which
  the interval estimates from the drawn concepts themselves.
- Strategies decide the inclusion probabilities:
  * `random`: simple random sampling of concepts (pi = n / C);
  * `stratified`: strata = dominant reporting group (by HCQ-weighted expected valid questions)
    x difficulty tercile (the reference generators' mean success), proportional allocation,
    simple random sampling within strata;
  * `irt`: probability proportional to size, size = the concept's expected contribution to the
    variance of the HCQ total under a fitted item-response model (`fit_items`, `irt_sizes`),
    so informative concepts (many valid questions of heavily weighted, uncertain capabilities)
    are drawn more often and down-weighted by 1 / pi. Drawn by sequential Poisson sampling
    (Ohlsson 1998): keys U_c / size_c, the n smallest; nested in n, so `adaptive` extends it.
- Item model (`irt`): a 2PL per item, where an item is the set of questions of one capability
  in one prompt (one concept x language x capability cell; its valid yes of valid is a binomial
  count, and for the transcription capability matched of target UTF-16 units). Capabilities
  enter as the ability dimension: item `i` of capability t loads on the generator's ability
  theta_(m,l,t) = logit of its full-benchmark score of t in language l (anchored on the fully
  evaluated generators, not estimated). Slope-intercept form logit P = a (theta - theta_bar) + d
  with Gaussian priors centred on the homogeneous item (a = 1, d = theta_bar); MAP by Newton.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from method.bootstrap import (
    BILINGUAL,
    ConceptStats,
    columns_from_arrow,
    encode,
    point_totals,
    scope_totals,
    stats_from_arrow,
)
from method.hcq import hcq_weights
from method.scores import POINTS, capability_score

STRATEGIES = ("random", "stratified", "irt")
# Estimators (`greg` is the default; `ht` the design-only baseline it is validated against).
ESTIMATORS = ("greg", "ht")
DEFAULT_ESTIMATOR = "greg"
# Ability prior of a new generator (logit): the references' mean, their sd floored at this.
ABILITY_PRIOR_MIN_SD = 0.5
VALIDATION_BUDGETS = (0.02, 0.05, 0.10, 0.20)
Z95 = 1.959963984540054  # standard normal 97.5% quantile
# Item-model priors (logit scale): slope sd around 1, intercept sd around the mean ability.
SLOPE_PRIOR_SD = 0.5
INTERCEPT_PRIOR_SD = 1.0
DIFFICULTY_STRATA = 3
# Abilities are logits of scores clipped away from 0 and 1 (a generator perfect on a capability).
_CLIP = 1e-3


# -- evidence arrays -----------------------------------------------------------------------------


def scope_weights(available: np.ndarray, stats: ConceptStats) -> np.ndarray:
    """w [scopes, L, T]: the weight Eq. 4 gives each (language, capability) score in each scope's
    total, from the capabilities `available` [L, T] (the bilingual scope halves both languages')."""
    per_language = hcq_weights(available, stats.capability_groups)  # [L, T]
    weights = np.zeros((len(stats.scopes), *available.shape))
    for s, scope in enumerate(stats.scopes):
        if scope == BILINGUAL:
            for lang in stats.bilingual_languages:
                li = stats.languages.index(lang)
                weights[s, li] = 0.5 * per_language[li]
        else:
            li = stats.languages.index(scope)
            weights[s, li] = per_language[li]
    return weights


def design_weights(available: np.ndarray, stats: ConceptStats) -> np.ndarray:
    """w [L, T] the plans optimise for: the bilingual scope's, or the mean of the scopes' where
    the evidence has no bilingual pair."""
    weights = scope_weights(available, stats)
    if BILINGUAL in stats.scopes:
        return weights[stats.scopes.index(BILINGUAL)]
    return weights.mean(axis=0)


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), _CLIP, 1 - _CLIP)
    return np.log(p / (1 - p))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def full_scores(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Scores [K, L, T] (Eq. 2 / Eq. 3, `capability_score`) from per-concept statistics
    [C, K, L, T]; NaN where there is no evidence."""
    return capability_score(np.sum(numerator, axis=0), np.sum(denominator, axis=0))


# -- the item model --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemModel:
    """2PL per (concept, language, capability) cell: logit P = slope (theta - centre) + intercept.
    `covariance` [C, L, T, 2, 2] is the Laplace posterior covariance of (slope, intercept)."""

    slope: np.ndarray  # [C, L, T]
    intercept: np.ndarray  # [C, L, T]
    centre: np.ndarray  # [L, T] mean reference ability
    covariance: np.ndarray
    fitted: np.ndarray  # [C, L, T] cells with reference evidence

    def probability(self, theta: np.ndarray) -> np.ndarray:
        """P [C, K, L, T] of a valid success in each cell for abilities theta [K, L, T]."""
        centred = theta - self.centre
        return sigmoid(self.slope[:, None] * centred[None] + self.intercept[:, None])


def fit_items(
    numerator: np.ndarray,
    denominator: np.ndarray,
    theta: np.ndarray,
    slope_sd: float = SLOPE_PRIOR_SD,
    intercept_sd: float = INTERCEPT_PRIOR_SD,
    iterations: int = 30,
) -> ItemModel:
    """MAP 2PL item parameters from reference evidence [C, K, L, T] (binomial counts: `numerator`
    successes of `denominator` valid trials) at anchored abilities theta [K, L, T].

    Each cell is its own 2-parameter logistic regression over the K references with a Gaussian
    prior; all cells are solved at once by damped Newton steps (the objective is concave)."""
    y, n = np.asarray(numerator, float), np.asarray(denominator, float)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a capability no reference has
        mean = np.nanmean(theta, axis=0, keepdims=True)
    theta = np.nan_to_num(np.where(np.isnan(theta), mean, theta))
    centre = theta.mean(axis=0)  # [L, T]
    shape = (y.shape[0], *y.shape[2:])
    fitted = n.sum(axis=1) > 0
    # only cells with reference evidence are fitted (most concepts lack most capabilities); the
    # others keep the prior: the capability's mean item
    c, lang, t = np.nonzero(fitted)
    y_f, n_f = y[c, :, lang, t], n[c, :, lang, t]  # [I, K]
    x_f = (theta - centre)[:, lang, t].T  # [I, K]
    centre_f = centre[lang, t]
    slope_f, intercept_f = np.ones(len(c)), centre_f.copy()
    prior_a, prior_d = 1.0 / slope_sd**2, 1.0 / intercept_sd**2
    for _ in range(iterations):
        p = sigmoid(slope_f[:, None] * x_f + intercept_f[:, None])
        resid, info = y_f - n_f * p, n_f * p * (1 - p)
        g_a = (x_f * resid).sum(axis=1) - (slope_f - 1.0) * prior_a
        g_d = resid.sum(axis=1) - (intercept_f - centre_f) * prior_d
        h_aa = (x_f * x_f * info).sum(axis=1) + prior_a
        h_ad = (x_f * info).sum(axis=1)
        h_dd = info.sum(axis=1) + prior_d
        det = h_aa * h_dd - h_ad**2
        step_a = (h_dd * g_a - h_ad * g_d) / det
        step_d = (h_aa * g_d - h_ad * g_a) / det
        # damping: a logit step of at most 2 keeps the first iterations from overshooting
        scale = np.minimum(1.0, 2.0 / np.maximum(np.abs(step_a), np.abs(step_d)).clip(1e-12))
        slope_f += scale * step_a
        intercept_f += scale * step_d
        if len(c) == 0 or np.max(np.abs(np.r_[scale * step_a, scale * step_d])) < 1e-7:
            break
    slope, intercept = np.ones(shape), np.broadcast_to(centre, shape).copy()
    slope[c, lang, t], intercept[c, lang, t] = slope_f, intercept_f
    covariance = np.zeros((*shape, 2, 2))
    covariance[..., 0, 0], covariance[..., 1, 1] = slope_sd**2, intercept_sd**2
    if len(c):
        covariance[c, lang, t] = (
            np.stack([np.stack([h_dd, -h_ad], axis=-1), np.stack([-h_ad, h_aa], axis=-1)], axis=-2)
            / det[:, None, None]
        )
    return ItemModel(slope, intercept, centre, covariance, fitted=fitted)


def reference_abilities(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """theta [K, L, T]: logit of each reference's full-benchmark capability score."""
    return logit(full_scores(numerator, denominator))


def irt_sizes(
    numerator: np.ndarray,
    denominator: np.ndarray,
    stats: ConceptStats,
    items: ItemModel,
    estimator: str = "ht",
) -> np.ndarray:
    """Size measure per concept [C] for the `irt` plan: sqrt of the expected squared influence of
    the concept on the bilingual HCQ total, averaged over the reference generators as stand-ins
    for the new one. Under the item model a cell with n valid questions contributes
    E[(num - S den)^2] = phi n P (1 - P) + n^2 (P - S)^2: binomial noise (times the
    capability's overdispersion phi, `overdispersion`) plus the item's departure from the
    capability's mean, the latter de-biased for the fit's own noise (its Laplace variance is
    subtracted, so items that only look hard by chance do not attract the plan), scaled by
    (w / D)^2, its weight in the total over the capability's full-benchmark evidence.
    Probability proportional to this size is the variance-minimising (Neyman) choice for the
    Hajek total. For the model-assisted estimator (`estimator="greg"`) the departure is what the
    model predicts, so the size is the expected squared GREG residual instead: the same noise,
    the item's prediction error (its Laplace logit variance, by the delta method) and the
    valid count's departure from the references' mean, times (P - S)^2."""
    num, den = np.asarray(numerator, float), np.asarray(denominator, float)  # [C, K, L, T]
    totals = den.sum(axis=0)  # [K, L, T]
    scores = np.nan_to_num(full_scores(num, den))
    theta = reference_abilities(num, den)
    # a reference without evidence in a cell (a small release) stands at the item's centre
    theta = np.where(np.isnan(theta), items.centre[None], theta)
    p = items.probability(theta)
    x = (theta - items.centre)[None]
    cov = items.covariance[:, None]  # [C, 1, L, T, 2, 2]
    logit_var = x * x * cov[..., 0, 0] + 2 * x * cov[..., 0, 1] + cov[..., 1, 1]
    noise = overdispersion(num, den)[None] * den * p * (1 - p)
    if estimator == "greg":
        mean_den = den.mean(axis=1, keepdims=True)
        expected = (
            noise + den**2 * (p * (1 - p)) ** 2 * logit_var
            + (p - scores[None]) ** 2 * (den - mean_den) ** 2
        )  # fmt: skip
    else:
        departure = np.maximum((p - scores[None]) ** 2 - (p * (1 - p)) ** 2 * logit_var, 0.0)
        expected = noise + den**2 * departure
    available = (totals > 0).any(axis=0)
    weight = design_weights(available, stats)  # [L, T]
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(totals > 0, weight**2 / totals**2, 0.0)
    variance = (expected * scaled[None]).sum(axis=(2, 3)).mean(axis=1)  # [C]
    return np.sqrt(variance)


def overdispersion(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """phi [K, L, T]: the observed variance of a concept's residual num - S den over its binomial
    variance den S (1 - S). About 1 for yes/no questions; above 1 for transcription scores, where
    a target's characters fail together (a block missed or misread as a whole)."""
    scores = np.nan_to_num(full_scores(numerator, denominator))
    residual = numerator - scores[None] * denominator
    binomial = (denominator * scores * (1 - scores)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(binomial > 0, (residual**2).sum(axis=0) / binomial, 1.0)
    return np.maximum(phi, 1.0)


# -- plans -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """Chosen concept indices, every concept's inclusion probability, and its design stratum."""

    strategy: str
    chosen: np.ndarray  # [n] int, concept indices
    inclusion: np.ndarray  # [C] pi_c
    stratum: np.ndarray  # [C] int (one stratum for unstratified designs)


def budget_size(n_concepts: int, budget_frac: float) -> int:
    if not 0.0 < budget_frac <= 1.0:
        raise ValueError(f"budget must be a fraction in (0, 1], not {budget_frac}")
    return max(2, min(n_concepts, round(budget_frac * n_concepts)))


def pps_probabilities(sizes: np.ndarray, n: int) -> np.ndarray:
    """pi_c = n size_c / sum(size), capped at 1 (capped concepts are taken with certainty and
    the rest re-scaled to the remaining sample size)."""
    sizes = np.asarray(sizes, float)
    certain = np.zeros(len(sizes), bool)
    while True:
        remaining = n - certain.sum()
        free = sizes * ~certain
        pi = np.where(certain, 1.0, remaining * free / free.sum())
        if not (pi[~certain] > 1.0).any():
            return np.minimum(pi, 1.0)
        certain |= pi > 1.0


def sequential_poisson(sizes: np.ndarray, n: int, rng: np.random.Generator) -> Plan:
    """Sequential Poisson sampling: the n concepts with the smallest U_c / size_c. Approximately
    pi-ps with pi = `pps_probabilities(sizes, n)` (exactly simple random sampling for equal
    sizes); the order does not depend on n, so a larger budget extends a smaller one."""
    sizes = np.asarray(sizes, float)
    floor = 1e-6 * sizes[sizes > 0].mean() if (sizes > 0).any() else 1.0
    sizes = np.maximum(sizes, floor)  # every concept can be drawn
    keys = rng.random(len(sizes)) / sizes
    chosen = np.sort(np.argsort(keys, kind="stable")[:n])
    return Plan("", chosen, pps_probabilities(sizes, n), np.zeros(len(sizes), int))


def difficulty_strata(numerator, denominator, stats: ConceptStats) -> np.ndarray:
    """Stratum [C] = dominant reporting group x difficulty tercile of each concept, from the
    references' evidence [C, K, L, T]: the group with the largest HCQ-weighted expected valid
    count, and the tercile of the references' pooled success rate on the concept."""
    den = np.asarray(denominator, float)
    mean_den = den.mean(axis=1)  # [C, L, T]
    available = den.sum(axis=(0, 1)) > 0
    weight = design_weights(available, stats)
    groups = list(dict.fromkeys(stats.capability_groups))
    group_of = np.array([groups.index(g) for g in stats.capability_groups])
    per_group = np.zeros((len(den), len(groups)))
    weighted = (mean_den * weight[None]).sum(axis=1)  # [C, T]
    for gi in range(len(groups)):
        per_group[:, gi] = weighted[:, group_of == gi].sum(axis=1)
    dominant = per_group.argmax(axis=1)
    num_total, den_total = numerator.sum(axis=(1, 2, 3)), den.sum(axis=(1, 2, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        success = np.where(den_total > 0, num_total / den_total, 0.5)
    edges = np.quantile(success, np.linspace(0, 1, DIFFICULTY_STRATA + 1)[1:-1])
    tercile = np.searchsorted(edges, success, side="right")
    return dominant * DIFFICULTY_STRATA + tercile


def stratified_sample(strata: np.ndarray, n: int, rng: np.random.Generator) -> Plan:
    """Proportional allocation (largest remainder) and simple random sampling in each stratum."""
    labels, counts = np.unique(strata, return_counts=True)
    quota = n * counts / counts.sum()
    take = np.floor(quota).astype(int)
    order = np.argsort(-(quota - take), kind="stable")
    take[order[: n - take.sum()]] += 1
    inclusion = np.zeros(len(strata))
    chosen = []
    for label, size, k in zip(labels, counts, take, strict=True):
        members = np.flatnonzero(strata == label)
        chosen.append(rng.choice(members, size=k, replace=False))
        inclusion[members] = k / size
    return Plan("", np.sort(np.concatenate(chosen)), inclusion, strata)


@dataclass(frozen=True)
class Planner:
    """What the strategies know: the reference generators' evidence (never the new one's)."""

    stats: ConceptStats
    references: tuple[int, ...]  # model indices of the fully evaluated generators

    @property
    def numerator(self) -> np.ndarray:
        return self.stats.numerator[:, list(self.references)]

    @property
    def denominator(self) -> np.ndarray:
        return self.stats.denominator[:, list(self.references)]

    def items(self) -> ItemModel:
        num, den = self.numerator, self.denominator
        return fit_items(num, den, reference_abilities(num, den))

    def sizes(self, strategy: str, estimator: str = DEFAULT_ESTIMATOR) -> np.ndarray:
        """Sizes for the pps strategies (`random`: equal; `irt`: `irt_sizes` for `estimator`)."""
        if strategy == "random":
            return np.ones(len(self.stats.concept_ids))
        if strategy == "irt":
            return irt_sizes(self.numerator, self.denominator, self.stats, self.items(), estimator)
        raise ValueError(f"strategy {strategy!r} has no size measure; expected random or irt")

    def strata(self) -> np.ndarray:
        return difficulty_strata(self.numerator, self.denominator, self.stats)


def make_plan(
    strategy: str,
    budget_frac: float,
    seed: int,
    planner: Planner,
    design: np.ndarray | None = None,
) -> Plan:
    """The plan of `strategy` at `budget_frac` of the concepts. `design` (sizes for random / irt,
    strata for stratified) may be passed precomputed: it depends only on the references."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    n = budget_size(len(planner.stats.concept_ids), budget_frac)
    rng = np.random.default_rng([int(seed), STRATEGIES.index(strategy)])
    if strategy == "stratified":
        plan = stratified_sample(planner.strata() if design is None else design, n, rng)
    else:
        plan = sequential_poisson(planner.sizes(strategy) if design is None else design, n, rng)
    return Plan(strategy, plan.chosen, plan.inclusion, plan.stratum)


# -- the estimator ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SubsetEstimate:
    """Estimated totals (fractions) per scope with their standard error and 95% interval."""

    scopes: tuple[str, ...]
    total: np.ndarray  # [scopes]
    std_error: np.ndarray
    ci_lo: np.ndarray
    ci_hi: np.ndarray
    n_concepts: int


def subset_estimate(
    numerator: np.ndarray,
    denominator: np.ndarray,
    plan: Plan,
    stats: ConceptStats,
    available: np.ndarray | None = None,
) -> SubsetEstimate:
    """Hajek estimate of the full-benchmark HCQ per scope from one generator's evidence on the
    plan's concepts (`numerator`, `denominator` [C, L, T]; only the chosen rows are read) and
    its linearisation interval (module docstring). `available` [L, T]: the capabilities the full
    benchmark scores (default: those with evidence in the subset)."""
    s = plan.chosen
    pi = plan.inclusion[s]
    num, den = np.asarray(numerator, float)[s], np.asarray(denominator, float)[s]
    num_hat = (num / pi[:, None, None]).sum(axis=0)  # [L, T]
    den_hat = (den / pi[:, None, None]).sum(axis=0)
    total = scope_totals(num_hat[None], den_hat[None], stats)[0]  # [scopes]
    if available is None:
        available = den_hat > 0
    available = available & (den_hat > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(available, num_hat / den_hat, 0.0)
        weights = np.where(available, scope_weights(available, stats) / den_hat, 0.0)
    residual = num - score[None] * den  # [n, L, T]
    influence = np.einsum("nlt,slt->ns", residual, weights)  # [n, scopes]
    variance = hajek_variance(influence, pi, plan.stratum[s])
    se = np.sqrt(variance)
    return SubsetEstimate(
        stats.scopes, total, se, total - Z95 * se, total + Z95 * se, n_concepts=len(s)
    )


@dataclass(frozen=True)
class Predictor:
    """What the model-assisted (`greg`) estimator knows before the new generator's evidence: the
    item model fitted on the fully evaluated generators, their mean valid counts per cell
    (the predicted denominator), and the Gaussian prior of a new generator's abilities."""

    items: ItemModel
    denominator: np.ndarray  # [C, L, T] mean reference valid count (units for transcription)
    prior_mean: np.ndarray  # [L, T] logit
    prior_sd: np.ndarray  # [L, T]

    @classmethod
    def from_planner(cls, planner: Planner, items: ItemModel | None = None) -> Predictor:
        num, den = planner.numerator, planner.denominator
        theta = reference_abilities(num, den)  # [K, L, T]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a capability no reference has
            theta = np.where(np.isnan(theta), np.nanmean(theta, axis=0, keepdims=True), theta)
        theta = np.nan_to_num(theta)
        sd = np.maximum(theta.std(axis=0), ABILITY_PRIOR_MIN_SD)
        items = planner.items() if items is None else items
        return cls(items, den.mean(axis=1), theta.mean(axis=0), sd)

    def ability(self, numerator, denominator, chosen, iterations: int = 25):
        """MAP ability theta [L, T] of the new generator from its evidence on the `chosen`
        concepts (binomial counts under the item model, items fixed) and its posterior
        variance [L, T] (Laplace). A cell without evidence keeps the prior."""
        y, n = np.asarray(numerator, float)[chosen], np.asarray(denominator, float)[chosen]
        a, d = self.items.slope[chosen], self.items.intercept[chosen]
        centre, mu, precision = self.items.centre, self.prior_mean, 1.0 / self.prior_sd**2
        theta = mu.copy()
        for _ in range(iterations):
            p = sigmoid(a * (theta - centre) + d)
            gradient = (a * (y - n * p)).sum(axis=0) - (theta - mu) * precision
            hessian = (a * a * n * p * (1 - p)).sum(axis=0) + precision
            step = np.clip(gradient / hessian, -2.0, 2.0)  # damped: the objective is concave
            theta = theta + step
            if np.max(np.abs(step)) < 1e-8:
                break
        p = sigmoid(a * (theta - centre) + d)
        hessian = (a * a * n * p * (1 - p)).sum(axis=0) + precision
        return theta, 1.0 / hessian


def greg_estimate(
    numerator: np.ndarray,
    denominator: np.ndarray,
    plan: Plan,
    stats: ConceptStats,
    predictor: Predictor,
    available: np.ndarray | None = None,
) -> SubsetEstimate:
    """Model-assisted difference (GREG) estimate of the full-benchmark HCQ per scope (METHOD 16):
    each capability's numerator and denominator total is the item model's prediction summed over
    ALL concepts plus the Horvitz-Thompson sum of the drawn concepts' residuals,

        N_hat = sum_U P_c m_c + sum_s (num_c - P_c m_c) / pi_c,
        D_hat = sum_U m_c + sum_s (den_c - m_c) / pi_c,

    with P_c the predicted success at the new generator's ability (`Predictor.ability`, fitted
    on the subset) and m_c the references' mean valid count scaled by the ratio of the drawn
    concepts' weighted valid counts (so D_hat is the ratio estimate of the valid count). The
    residual term keeps it close to design-unbiased whatever the model (Saerndal, Swensson &
    Wretman 1992, ch. 6); its variance is the residuals', small where prompts carry difficulty
    shared across generators. This is the design-unbiased counterpart of tinyBenchmarks'
    gp-IRT (observed on the drawn items, predicted on the others). Interval: Hajek's variance
    of the linearised residuals e_c = sum_(l,t) w_lt [(num_c - P_c m_c) - S_lt (den_c - m_c)]
    / D_lt; the ability fit's own variance enters only for capabilities with no drawn evidence
    (there the estimate is the model's alone: (w dS/dtheta)^2 Var theta); elsewhere it is
    second order, because the residual term offsets a shifted prediction."""
    s = plan.chosen
    pi = plan.inclusion[s][:, None, None]
    num, den = np.asarray(numerator, float), np.asarray(denominator, float)
    theta, theta_var = predictor.ability(num, den, s)
    items = predictor.items
    # the valid count: the references' mean scaled to the new generator's level (a ratio
    # estimate; a generator weak in a language has far fewer valid children than the mean)
    drawn_mean = (predictor.denominator[s] / pi).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        level = np.where(drawn_mean > 0, (den[s] / pi).sum(axis=0) / drawn_mean, 1.0)
    m = predictor.denominator * level
    p = sigmoid(items.slope * (theta - items.centre) + items.intercept)  # [C, L, T]
    num_resid, den_resid = num[s] - p[s] * m[s], den[s] - m[s]
    num_hat = (p * m).sum(axis=0) + (num_resid / pi).sum(axis=0)
    den_hat = m.sum(axis=0) + (den_resid / pi).sum(axis=0)
    den_hat = np.maximum(den_hat, 0.0)
    num_hat = np.clip(num_hat, 0.0, den_hat)
    total = scope_totals(num_hat[None], den_hat[None], stats)[0]
    if available is None:
        available = den_hat > 0
    available = available & (den_hat > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(available, num_hat / den_hat, 0.0)
        weights = np.where(available, scope_weights(available, stats) / den_hat, 0.0)
    influence = np.einsum("nlt,slt->ns", num_resid - score[None] * den_resid, weights)
    variance = hajek_variance(influence, plan.inclusion[s], plan.stratum[s])
    unseen = den[s].sum(axis=0) == 0  # model-only cells: the prior's uncertainty
    slope_of_score = (items.slope * p * (1 - p) * m).sum(axis=0)  # d N_hat / d theta
    variance += np.einsum(
        "slt,lt->s", (weights * slope_of_score) ** 2, np.where(unseen, theta_var, 0.0)
    )
    se = np.sqrt(variance)
    return SubsetEstimate(
        stats.scopes, total, se, total - Z95 * se, total + Z95 * se, n_concepts=len(s)
    )


def estimate(
    estimator: str,
    numerator: np.ndarray,
    denominator: np.ndarray,
    plan: Plan,
    stats: ConceptStats,
    predictor: Predictor | None,
    available: np.ndarray | None = None,
) -> SubsetEstimate:
    """`greg_estimate` or the design-only `subset_estimate` (Hajek), by name."""
    if estimator == "greg":
        return greg_estimate(numerator, denominator, plan, stats, predictor, available)
    if estimator == "ht":
        return subset_estimate(numerator, denominator, plan, stats, available)
    raise ValueError(f"unknown estimator {estimator!r}; expected one of {ESTIMATORS}")


def hajek_variance(values: np.ndarray, pi: np.ndarray, stratum: np.ndarray) -> np.ndarray:
    """Hajek's approximation of the variance of sum_s y_c / pi_c under a fixed-size
    high-entropy design, summed over strata (for simple random sampling in a stratum it is
    N^2 (1 - f) s^2 / n): sum_s (1 - pi)(y / pi - A)^2 n / (n - 1), A = the (1 - pi)-weighted
    mean of y / pi. `values` [n, k]; returns [k]."""
    total = np.zeros(values.shape[1])
    for label in np.unique(stratum):
        idx = stratum == label
        k = int(idx.sum())
        if k < 2:
            continue
        y, p = values[idx] / pi[idx, None], pi[idx, None]
        c = 1.0 - p
        if c.sum() <= 0:
            continue  # every unit drawn with certainty: no sampling variance
        centre = (c * y).sum(axis=0) / c.sum()
        total += k / (k - 1) * (c * (y - centre) ** 2).sum(axis=0)
    return total


def rank_against(total: float, lo: float, hi: float, references: np.ndarray) -> tuple:
    """(rank, rank_lo, rank_hi): competition rank of `total` among the fully evaluated
    generators' totals, and the ranks at the interval's ends (higher total = better rank)."""
    refs = np.asarray(references, float)
    refs = refs[~np.isnan(refs)]
    if np.isnan(total):
        return None, None, None
    return tuple(int(1 + (refs > v).sum()) for v in (total, hi, lo))


# -- leave-one-generator-out validation ------------------------------------------------------


@dataclass(frozen=True)
class ValidationCase:
    strategy: str
    budget_frac: float
    seed: int
    model: int
    truth: float  # full-benchmark bilingual total (fraction)
    estimate: float
    ci_lo: float
    ci_hi: float
    estimator: str = "greg"


def strategy_label(strategy: str, estimator: str) -> str:
    """agg_subset_validation's `strategy`: the plan's name for the model-assisted (`greg`)
    estimator, `<plan>-ht` for the design-only (Hajek) baseline on the same plans."""
    return strategy if estimator == "greg" else f"{strategy}-{estimator}"


def validation_cases(
    stats: ConceptStats,
    budgets: Sequence[float] = VALIDATION_BUDGETS,
    strategies: Sequence[str] = STRATEGIES,
    seeds: Sequence[int] = range(5),
    scope: str = BILINGUAL,
    progress: Callable[[str], None] | None = None,
    estimators: Sequence[str] = ESTIMATORS,
) -> list[ValidationCase]:
    """Hold each generator out in turn: plan from the others' evidence, estimate the held-out
    generator from its evidence on the plan's concepts only, compare with its full total. Every
    estimator sees the same plans, so their errors differ by the estimator alone."""
    si = stats.scopes.index(scope)
    truth = scope_totals(stats.numerator.sum(axis=0), stats.denominator.sum(axis=0), stats)
    available = stats.denominator.sum(axis=(0, 1)) > 0
    cases = []
    for m in range(len(stats.model_ids)):
        planner = Planner(stats, tuple(k for k in range(len(stats.model_ids)) if k != m))
        items = planner.items()
        predictor = Predictor.from_planner(planner, items) if "greg" in estimators else None
        for strategy, estimator in itertools.product(strategies, estimators):
            design = (
                planner.strata() if strategy == "stratified"
                else irt_sizes(planner.numerator, planner.denominator, stats, items, estimator)
                if strategy == "irt" else planner.sizes(strategy)
            )  # fmt: skip
            for budget, seed in ((b, s) for b in budgets for s in seeds):
                plan = make_plan(strategy, budget, seed, planner, design)
                if True:
                    est = estimate(
                        estimator, stats.numerator[:, m], stats.denominator[:, m], plan, stats,
                        predictor, available,
                    )  # fmt: skip
                    cases.append(
                        ValidationCase(
                            strategy_label(strategy, estimator), budget, seed, m, truth[m, si],
                            est.total[si], est.ci_lo[si], est.ci_hi[si], estimator,
                        )
                    )  # fmt: skip
        if progress:
            progress(f"held out {stats.model_ids[m]}")
    return cases


def summarise_validation(cases: Sequence[ValidationCase]) -> list[dict]:
    """agg_subset_validation rows per strategy x budget: mean absolute error (points), interval
    coverage over (generator, seed) cases, and the mean over seeds of the Spearman and Kendall
    correlation between the estimated and the full-benchmark order of all generators."""
    from scipy.stats import kendalltau, spearmanr

    rows = []
    keys = dict.fromkeys((c.strategy, c.budget_frac) for c in cases)
    for strategy, budget in keys:
        mine = [c for c in cases if c.strategy == strategy and c.budget_frac == budget]
        errors = np.array([abs(c.estimate - c.truth) for c in mine])
        covered = np.array([c.ci_lo <= c.truth <= c.ci_hi for c in mine])
        rho, tau = [], []
        for seed in sorted({c.seed for c in mine}):
            one = [c for c in mine if c.seed == seed]
            est, full = [c.estimate for c in one], [c.truth for c in one]
            if len(one) > 2:
                rho.append(spearmanr(est, full).statistic)
                tau.append(kendalltau(est, full).statistic)
        rows.append(
            {
                "strategy": strategy,
                "estimator": mine[0].estimator,
                "budget_frac": budget,
                "mae_points": POINTS * float(np.mean(errors)),
                "coverage_frac": float(np.mean(covered)),
                "spearman": float(np.mean(rho)) if rho else None,
                "kendall": float(np.mean(tau)) if tau else None,
                "n_cases": len(mine),
            }
        )
    return rows


# -- the warehouse tables (dbt Python models pass DuckDB relations' Arrow tables) ---------------


def restrict_models(stats: ConceptStats, models: Sequence[int]) -> ConceptStats:
    """The same statistics for a subset of the generators."""
    idx = list(models)
    return replace(
        stats,
        model_ids=tuple(stats.model_ids[i] for i in idx),
        numerator=stats.numerator[:, idx],
        denominator=stats.denominator[:, idx],
    )


def coverage(coverage_table, stats: ConceptStats) -> np.ndarray:
    """covered [M, C, L]: which (concept, language) prompts each generator was evaluated on
    (`int_prompt_coverage`: model_id, concept_id, language)."""
    cols = columns_from_arrow(coverage_table.select(["model_id", "concept_id", "language"]))
    _, m = encode(cols["model_id"], stats.model_ids)
    _, c = encode(cols["concept_id"], stats.concept_ids)
    _, lang = encode(cols["language"], stats.languages)
    covered = np.zeros((len(stats.model_ids), len(stats.concept_ids), len(stats.languages)), bool)
    covered[m, c, lang] = True
    return covered


def fully_evaluated(covered: np.ndarray) -> np.ndarray:
    """[M] bool: generators with evidence on every prompt of the benchmark (every concept in
    every language that any generator was evaluated on)."""
    benchmark = covered.any(axis=0)
    return (covered | ~benchmark[None]).all(axis=(1, 2))


SUBSET_ESTIMATES_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("language_scope", pa.string()),
        ("n_prompts", pa.int64()),
        ("hcq_total", pa.float64()),
        ("ci_lo", pa.float64()),
        ("ci_hi", pa.float64()),
        ("rank", pa.int64()),
        ("rank_lo", pa.int64()),
        ("rank_hi", pa.int64()),
        ("strategy", pa.string()),
        ("estimator", pa.string()),
    ]
)


def planned_inclusion(
    strategy: str, planner: Planner, chosen: np.ndarray, estimator: str = DEFAULT_ESTIMATOR
) -> Plan:
    """The plan behind a generator's evidence on the concepts `chosen`, as `strategy` draws it
    from the same fully evaluated generators: inclusion probabilities at the plan's size (for
    `stratified`, each stratum's drawn share, which is exact for its design)."""
    n_concepts = len(planner.stats.concept_ids)
    if strategy == "stratified":
        strata = planner.strata()
        inclusion = np.zeros(n_concepts)
        for label in np.unique(strata):
            members = strata == label
            inclusion[members] = np.isin(np.flatnonzero(members), chosen).sum() / members.sum()
        return Plan(strategy, chosen, inclusion, strata)
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    inclusion = pps_probabilities(planner.sizes(strategy, estimator), len(chosen))
    return Plan(strategy, chosen, inclusion, np.zeros(n_concepts, int))


def subset_estimates(
    stats_table,
    coverage_table,
    capabilities_table,
    capability_scores_table,
    strategy: str = "irt",
    bilingual_languages: Sequence[str] = ("en", "zh"),
    estimator: str = "greg",
) -> pa.Table:
    """fct_subset_estimates, one row per generator evaluated on part of the benchmark x scope:
    the estimated full-benchmark HCQ total (points) with its 95% interval, the prompts used, and
    the rank (with the ranks at the interval's ends) among the fully evaluated generators, whose
    evidence is the item model's and the plan's reference. A concept counts as drawn when the
    generator was evaluated on any of its prompts (`coverage_table`, `int_prompt_coverage`);
    the other inputs as `method.bootstrap.stats_from_arrow`. `estimator`: `greg` (model-assisted,
    `greg_estimate`) or `ht` (design-only, `subset_estimate`)."""
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}; expected one of {ESTIMATORS}")
    stats = stats_from_arrow(
        stats_table, capabilities_table, capability_scores_table,
        bilingual_languages=bilingual_languages,
    )  # fmt: skip
    covered = coverage(coverage_table, stats)
    full = fully_evaluated(covered)
    rows: list[dict] = []
    partial = [m for m in range(len(stats.model_ids)) if not full[m] and covered[m].any()]
    if not partial or full.sum() < 2:
        return pa.Table.from_pylist(rows, schema=SUBSET_ESTIMATES_SCHEMA)
    references = tuple(np.flatnonzero(full))
    planner = Planner(stats, references)
    predictor = Predictor.from_planner(planner) if estimator == "greg" else None
    reference_totals = point_totals(restrict_models(stats, references))  # [K, scopes]
    available = stats.denominator[:, list(references)].sum(axis=(0, 1)) > 0
    for m in partial:
        chosen = np.flatnonzero(covered[m].any(axis=1))
        # the plan as `qct2i plan` drew it (default sizes), whichever estimator reads it
        plan = planned_inclusion(strategy, planner, chosen)
        est = estimate(
            estimator, stats.numerator[:, m], stats.denominator[:, m], plan, stats, predictor,
            available,
        )  # fmt: skip
        for s, scope in enumerate(stats.scopes):
            in_scope = [stats.languages.index(scope)] if scope in stats.languages else [
                stats.languages.index(lang) for lang in stats.bilingual_languages
            ]  # fmt: skip
            rank, rank_lo, rank_hi = rank_against(
                est.total[s], est.ci_lo[s], est.ci_hi[s], reference_totals[:, s]
            )
            defined = not np.isnan(est.total[s])
            rows.append(
                {
                    "model_id": stats.model_ids[m],
                    "language_scope": scope,
                    "n_prompts": int(covered[m][:, in_scope].sum()),
                    "hcq_total": POINTS * est.total[s] if defined else None,
                    "ci_lo": POINTS * est.ci_lo[s] if defined else None,
                    "ci_hi": POINTS * est.ci_hi[s] if defined else None,
                    "rank": rank,
                    "rank_lo": rank_lo,
                    "rank_hi": rank_hi,
                    "strategy": strategy,
                    "estimator": estimator,
                }
            )
    return pa.Table.from_pylist(rows, schema=SUBSET_ESTIMATES_SCHEMA)


SUBSET_VALIDATION_SCHEMA = pa.schema(
    [
        ("strategy", pa.string()),
        ("budget_frac", pa.float64()),
        ("mae_points", pa.float64()),
        ("coverage_frac", pa.float64()),
        ("spearman", pa.float64()),
        ("kendall", pa.float64()),
        ("n_cases", pa.int64()),
        ("estimator", pa.string()),
        ("language_scope", pa.string()),
    ]
)


def subset_validation(
    stats_table,
    coverage_table,
    capabilities_table,
    capability_scores_table,
    seeds: int,
    bilingual_languages: Sequence[str] = ("en", "zh"),
) -> pa.Table:
    """agg_subset_validation: leave-one-generator-out over the fully evaluated generators, every
    strategy x estimator x budget (`VALIDATION_BUDGETS`) x `seeds` seeds (`validation_cases`,
    `summarise_validation`), in the bilingual scope where the evidence has one, else in its one
    language's (an English-only release such as TIFA160). Empty with fewer than 3 such
    generators, or with several languages but no bilingual pair."""
    stats = stats_from_arrow(
        stats_table, capabilities_table, capability_scores_table,
        bilingual_languages=bilingual_languages,
    )  # fmt: skip
    full = fully_evaluated(coverage(coverage_table, stats))
    scope = validation_scope(stats)
    if full.sum() < 3 or scope is None:
        return pa.Table.from_pylist([], schema=SUBSET_VALIDATION_SCHEMA)
    cases = validation_cases(
        restrict_models(stats, np.flatnonzero(full)), seeds=range(seeds), scope=scope
    )
    rows = [row | {"language_scope": scope} for row in summarise_validation(cases)]
    return pa.Table.from_pylist(rows, schema=SUBSET_VALIDATION_SCHEMA)


def validation_scope(stats: ConceptStats) -> str | None:
    """The scope the validation reports: bilingual where it exists, else the only language."""
    if BILINGUAL in stats.scopes:
        return BILINGUAL
    return stats.languages[0] if len(stats.languages) == 1 else None
