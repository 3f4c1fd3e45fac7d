"""The full-benchmark HCQ (Eq. 4) of a generator from its evidence on a plan (METHOD 16).

Two estimators, both design-based (every plan is a probability sample of concepts with known
inclusion probabilities `pi_c > 0` that never depend on the new generator's outcomes):

- `greg` (the default, `greg_estimate`): model-assisted difference estimator, the item
  model's prediction for every concept (the new generator's abilities fitted on its subset)
  plus the 1 / pi-weighted residuals of the drawn ones. Still close to unbiased whatever the
  model; smaller variance where prompts carry difficulty shared across generators (a hard
  prompt hard for everyone), none where they do not (the simulator's demo world).
- `ht` (`subset_estimate`), the design-only baseline: each capability score is the
  Hajek ratio `sum_s num_c / pi_c / sum_s den_c / pi_c`. It is close to
  unbiased for the full-benchmark score whatever the strategy, because the probabilities never
  depend on the new generator's outcomes: a wrong item model makes a plan less efficient, never
  biased. HCQ is then the usual Eq. 4 of the estimated scores (`method.bootstrap.scope_totals`).

agg_subset_validation names a plan with the `ht` estimator `<plan>-ht`; there each estimator
draws `irt` plans with its own variance-minimising sizes (`irt_sizes`), while `qct2i plan`
and fct_subset_estimates use the default estimator's.

The design-only 95% interval is the linearisation (Taylor) variance of the HCQ total under the
plan: each drawn concept's influence `u_c = sum_(l,t) w_lt (num_clt - S_lt den_clt) / D_lt`, with
`w_lt` the weight Eq. 4 gives the capability in the scope (`method.hcq.hcq_weights`), in
Hajek's variance approximation for fixed-size high-entropy designs (per stratum), which
includes the finite-population correction (a concept drawn with certainty adds no variance).
The target is the finite full-benchmark HCQ, so this is the whole sampling noise; the item
model enters only through `pi`, and its uncertainty can only widen the design variance, which
the interval estimates from the drawn concepts themselves.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from method.bootstrap import ConceptStats, scope_totals
from method.subsets.evidence import scope_weights, sigmoid
from method.subsets.items import ItemModel, reference_abilities
from method.subsets.plans import ESTIMATORS, Plan, Planner

# Ability prior of a new generator (logit): the references' mean, their sd floored at this.
ABILITY_PRIOR_MIN_SD = 0.5
Z95 = 1.959963984540054  # standard normal 97.5% quantile


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
