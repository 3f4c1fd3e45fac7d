"""`method.prompt_difficulty`'s cells and profile likelihood on a world of ten cells, against an
independent route: the marginal likelihood integrated here by loops over 200 Gauss-Hermite
nodes and maximised over the abilities by scipy. Written for mutants the planted-world tests
survived (mutation testing, issue 36): those check the sd to +-0.15, which a profile whose
abilities stop short of their maximum, or a cell dropped, still meets; and their 41 s of
fits made each surviving mutant cost that much."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import gammaln

from method.prompt_difficulty import QUADRATURE_NODES, _cells, _profile, prompt_difficulty

# Evidence [C=5, M=3, L=1, T=2]: cell (0, 0) has trials from one generator only (not
# informative), (1, 1) from exactly two, (2, 0) one trial of generator 2, the rest all three.
TRIALS = np.array(
    [[[4, 0], [0, 3], [0, 5]], [[3, 4], [5, 2], [2, 0]], [[6, 3], [4, 5], [1, 6]],
     [[5, 6], [3, 2], [4, 4]], [[2, 5], [6, 3], [5, 2]]],
    float,
)[:, :, None, :]  # fmt: skip
SUCCESSES = np.array(
    [[[3, 0], [0, 1], [0, 4]], [[0, 4], [5, 1], [2, 0]], [[6, 0], [1, 5], [1, 2]],
     [[1, 6], [3, 0], [0, 4]], [[2, 1], [6, 3], [5, 0]]],
    float,
)[:, :, None, :]  # fmt: skip


def informative_cells():
    """(concept, capability) of the cells with trials from at least two generators, in the
    cells' order (concept-major)."""
    return [(c, t) for c in range(5) for t in range(2) if (TRIALS[c, :, 0, t] > 0).sum() >= 2]


def log_marginal(theta, sd) -> float:
    """sum over informative cells of log int prod_m Binom(y_m; n_m, sigmoid(theta_tm + e))
    N(e; 0, sd^2) de, the integral by the method's 21-node Gauss-Hermite rule (probabilists'),
    written out per cell and generator."""
    x, w = np.polynomial.hermite_e.hermegauss(QUADRATURE_NODES)
    total = 0.0
    for c, t in informative_cells():
        log_joint = np.log(w / w.sum())
        for m in range(3):
            y, n = SUCCESSES[c, m, 0, t], TRIALS[c, m, 0, t]
            eta = theta[t, m] + sd * x
            choose = gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1)
            log_joint = (
                log_joint + choose - y * np.logaddexp(0.0, -eta) - (n - y) * np.logaddexp(0.0, eta)
            )
        top = log_joint.max()
        total += top + math.log(np.exp(log_joint - top).sum())
    return total


def hand_profile(sd, start):
    """(max over the abilities of `log_marginal` at `sd`, its argmax) by scipy's BFGS."""
    best = minimize(
        lambda flat: -log_marginal(flat.reshape(2, 3), sd), start.ravel(), method="BFGS",
        options={"gtol": 1e-8},
    )  # fmt: skip
    return -best.fun, best.x.reshape(2, 3)


def test_cells_by_hand():
    """Guards `_cells`: only cells with trials from two generators or more (a single trial
    counts), each cell's row of successes and trials over generators and its ability index
    (language x capability), and the starting abilities: each generator's logit pooled rate
    per capability over every cell (the uninformative ones too)."""
    cells, theta = _cells(SUCCESSES, TRIALS)
    kept = informative_cells()
    assert len(kept) == 9
    assert cells.successes.tolist() == [SUCCESSES[c, :, 0, t].tolist() for c, t in kept]
    assert cells.trials.tolist() == [TRIALS[c, :, 0, t].tolist() for c, t in kept]
    assert cells.ability.tolist() == [t for _, t in kept]
    for t in range(2):
        for m in range(3):
            rate = SUCCESSES[:, m, 0, t].sum() / TRIALS[:, m, 0, t].sum()
            assert theta[t, m] == pytest.approx(math.log(rate / (1 - rate)), rel=1e-12)


def test_a_cell_subset_is_drawn_without_repeats():
    """Guards `_cells`' cap: 4 of the 9 informative cells, each at most once."""
    cells, _ = _cells(SUCCESSES, TRIALS, max_cells=4)
    rows = {tuple(r) for r in np.c_[cells.successes, cells.trials, cells.ability].tolist()}
    assert len(cells.successes) == 4 == len(rows)


@pytest.mark.parametrize("sd", [0.5, 0.8])
def test_profile_is_the_maximised_marginal_likelihood(sd):
    """Guards `_profile`: the marginal log-likelihood (binomial constants included, the shared
    effect integrated over N(0, sd^2) by the 21-node rule, each cell's evidence summed over
    generators) at the abilities that maximise it (scipy, from the same start), and those
    abilities; the start is left as it was."""
    cells, start = _cells(SUCCESSES, TRIALS)
    kept = start.copy()
    value, theta = _profile(cells, start, sd)
    want, argmax = hand_profile(sd, start)
    assert value == pytest.approx(want, abs=1e-8)
    assert theta == pytest.approx(argmax, abs=1e-4)
    assert start.tolist() == kept.tolist()


def test_prompt_difficulty_of_the_small_world():
    """Guards `prompt_difficulty`'s search: the sd it returns is the profile's maximum (the
    route above is no higher 0.005 either side), its log-likelihood ratio the profile there
    against sd = 0, and the cells read."""
    fit = prompt_difficulty(SUCCESSES, TRIALS, tolerance=1e-4)
    _, start = _cells(SUCCESSES, TRIALS)
    best = hand_profile(fit.sd, start)[0]
    assert fit.n_cells == 9 and 0.5 < fit.sd < 1.2
    assert best >= hand_profile(fit.sd - 0.005, start)[0]
    assert best >= hand_profile(fit.sd + 0.005, start)[0]
    assert fit.log_likelihood_ratio == pytest.approx(best - hand_profile(0.0, start)[0], abs=1e-7)
