"""The item model of the `irt` plans and the `greg` estimator (METHOD 16), and the `irt` sizes.

Item model (`irt`): a 2PL per item, where an item is the set of questions of one capability
in one prompt (one concept x language x capability cell; its valid yes of valid is a binomial
count, and for the transcription capability matched of target UTF-16 units). Capabilities
enter as the ability dimension: item `i` of capability t loads on the generator's ability
theta_(m,l,t) = logit of its full-benchmark score of t in language l (anchored on the fully
evaluated generators, not estimated). Slope-intercept form logit P = a (theta - theta_bar) + d
with Gaussian priors centred on the homogeneous item (a = 1, d = theta_bar); MAP by Newton.

`irt_sizes` is the `irt` plan's size measure: the concept's expected contribution to the variance
of the HCQ total (Eq. 4) under this model, for either estimator.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from method.bootstrap import ConceptStats
from method.subsets.evidence import design_weights, full_scores, logit, sigmoid

# Item-model priors (logit scale): slope sd around 1, intercept sd around the mean ability.
SLOPE_PRIOR_SD = 0.5
INTERCEPT_PRIOR_SD = 1.0


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
    return irt_sizes_by_estimator(numerator, denominator, stats, items, (estimator,))[estimator]


def irt_sizes_by_estimator(
    numerator: np.ndarray,
    denominator: np.ndarray,
    stats: ConceptStats,
    items: ItemModel,
    estimators: Sequence[str],
) -> dict[str, np.ndarray]:
    """`irt_sizes` for each of `estimators`, what they share (the item probabilities, their
    Laplace logit variance, the binomial noise) computed once: the leave-one-generator-out
    validation asks for both estimators' sizes in every fold, and computing the shared terms
    twice was a third of its time at paper scale. Each size is `irt_sizes`' bit for bit."""
    num, den = np.asarray(numerator, float), np.asarray(denominator, float)  # [C, K, L, T]
    totals = den.sum(axis=0)  # [K, L, T]
    raw_scores = full_scores(num, den)
    scores = np.nan_to_num(raw_scores)
    theta = logit(raw_scores)  # reference_abilities
    # a reference without evidence in a cell (a small release) stands at the item's centre
    theta = np.where(np.isnan(theta), items.centre[None], theta)
    available = (totals > 0).any(axis=0)
    weight = design_weights(available, stats)  # [L, T]
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(totals > 0, weight**2 / totals**2, 0.0)
    # Every term of a cell no reference has evidence in is an exact 0 (each is a multiple of
    # its valid counts or of their departure from their mean), so only the cells with evidence
    # (37 % at paper scale) are computed, [I, K], and put back into a [C, K, L, T] of zeros
    # summed as before. The sizes equal the dense computation's to about 1e-15 of their value
    # (numpy's vectorised exp rounds an element's last bit by where it lies in the array).
    cells = evidence_cells(num, den)
    c, lang, t = cells
    n_f = den[c, :, lang, t]  # [I, K]
    x_f = (theta - items.centre)[:, lang, t].T  # [I, K]
    p_f = sigmoid(items.slope[c, lang, t][:, None] * x_f + items.intercept[c, lang, t][:, None])
    cov = items.covariance[c, lang, t]  # [I, 2, 2]
    logit_var = x_f * x_f * cov[:, None, 0, 0] + 2 * x_f * cov[:, None, 0, 1] + cov[:, None, 1, 1]
    phi = overdispersion(num, den, scores, cells)[:, lang, t].T
    noise = phi * n_f * p_f * (1 - p_f)
    scores_f, scaled_f = scores[:, lang, t].T, scaled[:, lang, t].T
    sizes = {}
    for estimator in estimators:
        if estimator == "greg":
            # over K in the dense array's order of additions ([I, K]'s mean adds pairwise)
            mean_den = den.mean(axis=1)[c, lang, t][:, None]
            expected = (
                noise + n_f**2 * (p_f * (1 - p_f)) ** 2 * logit_var
                + (p_f - scores_f) ** 2 * (n_f - mean_den) ** 2
            )  # fmt: skip
        else:
            departure = np.maximum((p_f - scores_f) ** 2 - (p_f * (1 - p_f)) ** 2 * logit_var, 0.0)
            expected = noise + n_f**2 * departure
        cells = np.zeros(den.shape)
        cells[c, :, lang, t] = expected * scaled_f
        variance = cells.sum(axis=(2, 3)).mean(axis=1)  # [C]
        sizes[estimator] = np.sqrt(variance)
    return sizes


def evidence_cells(numerator: np.ndarray, denominator: np.ndarray) -> tuple[np.ndarray, ...]:
    """(c, l, t) of the (concept, language, capability) cells where some reference [C, K, L, T]
    has a nonzero count, in C order: outside them every term of the `irt` sizes and of the
    overdispersion is an exact 0."""
    return np.nonzero(((numerator != 0) | (denominator != 0)).any(axis=1))


def overdispersion(
    numerator: np.ndarray,
    denominator: np.ndarray,
    scores: np.ndarray | None = None,
    cells: tuple[np.ndarray, ...] | None = None,
) -> np.ndarray:
    """phi [K, L, T]: the observed variance of a concept's residual num - S den over its binomial
    variance den S (1 - S). About 1 for yes/no questions; above 1 for transcription scores, where
    a target's characters fail together (a block missed or misread as a whole). `scores` (the
    full-benchmark scores S with 0 for no evidence) and `cells` (`evidence_cells`), when the
    caller has them."""
    if scores is None:
        scores = np.nan_to_num(full_scores(numerator, denominator))
    # sum over concepts of residual^2 and of den S (1 - S): only the (concept, language,
    # capability) cells where some reference has a nonzero count add anything, so those are
    # gathered ([I, K]) and summed per cell with `np.bincount`, which adds each cell's terms in
    # concept order as the dense sum over axis 0 does: the same figures, bit for bit, from six
    # passes fewer over [C, K, L, T] (the 10x library call 139.9 s to 133.4 s).
    _, n_models, n_languages, n_capabilities = np.shape(denominator)
    c, lang, t = evidence_cells(numerator, denominator) if cells is None else cells
    s_f = scores[:, lang, t].T  # [I, K]
    n_f = denominator[c, :, lang, t]
    residual = numerator[c, :, lang, t] - s_f * n_f
    cell = lang * n_capabilities + t
    size = n_languages * n_capabilities

    def per_cell(terms: np.ndarray) -> np.ndarray:  # [I, K] -> [K, L, T]
        sums = [np.bincount(cell, terms[:, k], size) for k in range(n_models)]
        return np.stack(sums).reshape(n_models, n_languages, n_capabilities)

    binomial = per_cell(n_f * s_f * (1 - s_f))
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(binomial > 0, per_cell(residual**2) / binomial, 1.0)
    return np.maximum(phi, 1.0)
