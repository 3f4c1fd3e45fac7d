"""Shared prompt difficulty: the spread of item effects every generator shares (METHOD 16).

A subset of prompts estimates a new generator better than a random one of the same size only
where a prompt that is hard for the generators already evaluated is hard for the new one too:
the subset estimators (`method.subsets`) predict the unseen prompts from that shared part. How
much there is, is a property of the benchmark and its judge, and it decides how much a subset
can save, so it is measured here, on any warehouse's evidence, in the simulator's own terms.

Model (the simulator's `prompt_effect_sd` plants exactly this): the valid questions of
capability t in concept c, language l succeed for generator m with probability

    P = sigmoid(theta_mlt + e_clt),   e_clt ~ N(0, sd^2), shared by every generator,

independently given e (a binomial count per cell; for the transcription capability, UTF-16
units matched of target units). `sd` = 0 means the prompts share no difficulty (the demo world).
It is estimated by marginal maximum likelihood: e is integrated out by Gauss-Hermite quadrature,
the abilities theta are profiled out at each sd (Newton steps on the expected complete-data
log-likelihood, i.e. EM with quadrature weights), and the profile is maximised over sd by golden
section. Only cells with evidence from at least two generators carry information on sd.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, gammaln

QUADRATURE_NODES = 21
MAX_SD = 4.0
# Cells the fit reads at most: a seeded random subset beyond it (a paper-scale warehouse has about
# 100,000; a few thousand pin the sd to a few hundredths, and the fit stays a few seconds).
MAX_CELLS = 4000
_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class PromptDifficulty:
    """The estimated sd of the shared item effects (logits), with the log-likelihood ratio of
    that fit against sd = 0 (no shared difficulty) and the number of cells that carry it."""

    sd: float
    log_likelihood_ratio: float
    n_cells: int


@dataclass(frozen=True)
class _Cells:
    """Binomial counts of the informative cells: successes and trials [cells, M] (columns are
    generators), and each cell's ability index into theta [abilities, M]."""

    successes: np.ndarray
    trials: np.ndarray
    ability: np.ndarray


def _cells(
    numerator: np.ndarray, denominator: np.ndarray, max_cells: int = MAX_CELLS
) -> tuple[_Cells, np.ndarray]:
    """Cells (concept x language x capability) with trials from >= 2 generators (`max_cells` of
    them at most, drawn with a fixed seed), and the starting abilities [L * T, M]: each
    generator's logit success rate per language x capability."""
    y, n = np.asarray(numerator, float), np.asarray(denominator, float)  # [C, M, L, T]
    concepts, models, languages, capabilities = y.shape
    by_cell = (0, 2, 3, 1)  # [C, L, T, M]
    y_cells = y.transpose(by_cell).reshape(-1, models)
    n_cells = n.transpose(by_cell).reshape(-1, models)
    ability = np.tile(np.arange(languages * capabilities), concepts)
    keep = np.flatnonzero((n_cells > 0).sum(axis=1) >= 2)
    if len(keep) > max_cells:
        keep = np.sort(np.random.default_rng(0).choice(keep, max_cells, replace=False))
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = y.sum(axis=0) / n.sum(axis=0)  # [M, L, T]
    rate = np.clip(np.nan_to_num(rate, nan=0.5), 1e-3, 1 - 1e-3)
    theta = np.log(rate / (1 - rate)).reshape(models, -1).T  # [L * T, M]
    return _Cells(y_cells[keep], n_cells[keep], ability[keep]), theta


def _profile(cells: _Cells, theta: np.ndarray, sd: float, iterations: int = 25):
    """Marginal log-likelihood at `sd` with the abilities at their maximum, and those abilities
    (`theta` is the start; it is not modified)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(QUADRATURE_NODES)
    log_weights = np.log(weights / weights.sum())
    y, n = cells.successes[:, :, None], cells.trials[:, :, None]
    constant = (gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1)).sum()
    theta = theta.copy()
    for step in range(iterations + 1):
        eta = theta[cells.ability][:, :, None] + sd * nodes[None, None, :]  # [cells, M, Q]
        # log sigmoid and log(1 - sigmoid), stably
        log_p, log_q = -np.logaddexp(0.0, -eta), -np.logaddexp(0.0, eta)
        per_node = (y * log_p + (n - y) * log_q).sum(axis=1) + log_weights  # [cells, Q]
        top = per_node.max(axis=1, keepdims=True)
        marginal = top[:, 0] + np.log(np.exp(per_node - top).sum(axis=1))
        if step == iterations:
            break
        posterior = np.exp(per_node - marginal[:, None])[:, None, :]  # [cells, 1, Q]
        p = expit(eta)
        gradient = ((y - n * p) * posterior).sum(axis=2)  # [cells, M]
        curvature = (n * p * (1 - p) * posterior).sum(axis=2)
        g, h = np.zeros_like(theta), np.zeros_like(theta)
        np.add.at(g, cells.ability, gradient)
        np.add.at(h, cells.ability, curvature)
        change = np.clip(np.where(h > 0, g / np.maximum(h, 1e-12), 0.0), -1.0, 1.0)
        theta += change
        if np.max(np.abs(change), initial=0.0) < 1e-8:
            break
    return float(marginal.sum() + constant), theta


def profile_log_likelihood(numerator: np.ndarray, denominator: np.ndarray, sd: float) -> float:
    """The marginal log-likelihood of the evidence [C, M, L, T] at `sd`, abilities profiled out.
    At sd = 0 it is the binomial log-likelihood at each generator's own rates."""
    cells, theta = _cells(numerator, denominator)
    return _profile(cells, theta, sd)[0]


def prompt_difficulty(
    numerator: np.ndarray,
    denominator: np.ndarray,
    tolerance: float = 0.01,
    max_cells: int = MAX_CELLS,
) -> PromptDifficulty:
    """Marginal maximum-likelihood sd of the shared item effects from evidence [C, M, L, T]
    (`method.bootstrap.ConceptStats` numerator / denominator), to within `tolerance` logits;
    `n_cells` counts the cells read (at most `max_cells`)."""
    cells, theta = _cells(numerator, denominator, max_cells)
    if len(cells.successes) == 0:
        return PromptDifficulty(0.0, 0.0, 0)
    null, theta = _profile(cells, theta, 0.0)
    start = {"theta": theta}

    def fit(sd: float) -> float:
        # each fit starts from the last one's abilities: neighbouring sds have close maxima
        value, start["theta"] = _profile(cells, start["theta"], sd)
        return value

    lo, hi = 0.0, MAX_SD
    a, b = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    fa, fb = fit(a), fit(b)
    while hi - lo > tolerance:
        if fa >= fb:
            hi, b, fb = b, a, fa
            a = hi - _GOLDEN * (hi - lo)
            fa = fit(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + _GOLDEN * (hi - lo)
            fb = fit(b)
    sd, best = (a, fa) if fa >= fb else (b, fb)
    if best <= null:  # the boundary: no shared difficulty
        return PromptDifficulty(0.0, 0.0, len(cells.successes))
    return PromptDifficulty(float(sd), float(best - null), len(cells.successes))
