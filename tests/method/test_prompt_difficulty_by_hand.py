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

from method.prompt_difficulty import (
    QUADRATURE_NODES,
    PromptDifficulty,
    _cells,
    _profile,
    prompt_difficulty,
)

# Evidence [C=6, M=4, L=1, T=2], per concept [generator][capability]: (1, c1) has trials from
# exactly two generators, one of them a single trial; (4, c0) is large (thousands of units, as a
# transcription cell: its log-likelihood is far below the others'); generator 2 answers c0 only
# in an uninformative cell, all right (rate 1), and never c1 (no rate); generator 3 answers c1
# only in an uninformative cell, all wrong (rate 0), and never c0. Generators 0 and 1 do well
# or badly together in most cells: a shared difficulty to find.
TRIALS = np.array(
    [[[4, 0], [0, 3], [0, 0], [0, 0]], [[3, 4], [5, 1], [0, 0], [0, 0]],
     [[6, 3], [4, 5], [0, 0], [0, 0]], [[5, 6], [3, 2], [0, 0], [0, 0]],
     [[2000, 5], [1500, 3], [0, 0], [0, 0]], [[0, 0], [0, 0], [4, 0], [0, 3]]],
    float,
)[:, :, None, :]  # fmt: skip
SUCCESSES = np.array(
    [[[3, 0], [0, 1], [0, 0], [0, 0]], [[0, 4], [1, 1], [0, 0], [0, 0]],
     [[6, 0], [4, 1], [0, 0], [0, 0]], [[1, 6], [0, 2], [0, 0], [0, 0]],
     [[1100, 1], [700, 0], [0, 0], [0, 0]], [[0, 0], [0, 0], [4, 0], [0, 0]]],
    float,
)[:, :, None, :]  # fmt: skip
MODELS = 4


def informative_cells():
    """(concept, capability) of the cells with trials from at least two generators, in the
    cells' order (concept-major)."""
    return [(c, t) for c in range(5) for t in range(2) if (TRIALS[c, :, 0, t] > 0).sum() >= 2]


def log_marginal(theta, sd) -> float:
    """sum over informative cells of log int prod_m Binom(y_m; n_m, sigmoid(theta_tm + e))
    N(e; 0, sd^2) de, the integral by the method's 21-node Gauss-Hermite rule (probabilists'),
    written out cell by cell."""
    x, w = np.polynomial.hermite_e.hermegauss(QUADRATURE_NODES)
    total = 0.0
    for c, t in informative_cells():
        y, n = SUCCESSES[c, :, 0, t, None], TRIALS[c, :, 0, t, None]  # [M, 1]
        eta = theta[t][:, None] + sd * x[None, :]  # [M, nodes]
        choose = gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1)
        log_binomial = choose - y * np.logaddexp(0.0, -eta) - (n - y) * np.logaddexp(0.0, eta)
        log_joint = np.log(w / w.sum()) + log_binomial.sum(axis=0)  # [nodes]
        top = log_joint.max()
        total += top + math.log(np.exp(log_joint - top).sum())
    return total


def hand_profile(sd, start):
    """(max over the abilities of `log_marginal` at `sd`, its argmax) by scipy's BFGS."""
    best = minimize(
        lambda flat: -log_marginal(flat.reshape(2, MODELS), sd), start.ravel(), method="BFGS",
        options={"gtol": 1e-6},
    )  # fmt: skip
    return -best.fun, best.x.reshape(2, MODELS)


@pytest.mark.filterwarnings("error")
def test_cells_by_hand():
    """Guards `_cells`: only cells with trials from two generators or more (a single trial
    counts), each cell's row of successes and trials over generators and its ability index
    (language x capability), and the starting abilities: each generator's logit pooled rate per
    capability over every cell (the uninformative ones too), clipped to [0.001, 0.999], 0 where
    it has no trials (no RuntimeWarning for that 0 / 0)."""
    cells, theta = _cells(SUCCESSES, TRIALS)
    kept = informative_cells()
    assert len(kept) == 8 and (1, 1) in kept
    assert cells.successes.tolist() == [SUCCESSES[c, :, 0, t].tolist() for c, t in kept]
    assert cells.trials.tolist() == [TRIALS[c, :, 0, t].tolist() for c, t in kept]
    assert cells.ability.tolist() == [t for _, t in kept]
    for t in range(2):
        for m in range(MODELS):
            total = TRIALS[:, m, 0, t].sum()
            rate = SUCCESSES[:, m, 0, t].sum() / total if total else 0.5
            rate = min(max(rate, 1e-3), 1 - 1e-3)
            assert theta[t, m] == pytest.approx(math.log(rate / (1 - rate)), rel=1e-12)
    assert theta[1, 2] == 0.0 and theta[0, 2] > 6.9 and theta[1, 3] < -6.9


def test_a_cell_subset_is_drawn_without_repeats():
    """Guards `_cells`' cap: 7 of the 8 informative cells, each at most once."""
    cells, _ = _cells(SUCCESSES, TRIALS, max_cells=7)
    rows = {tuple(r) for r in np.c_[cells.successes, cells.trials, cells.ability].tolist()}
    assert len(cells.successes) == 7 == len(rows)


def test_profile_is_the_maximised_marginal_likelihood(sd=0.8):
    """Guards `_profile`: the marginal log-likelihood (binomial constants included, the shared
    effect integrated over N(0, sd^2) by the 21-node rule, each cell's evidence summed over
    generators, each cell's log-sum-exp taken against its own maximum: the large cell's is
    hundreds below the others') at the abilities that maximise it (scipy, from the same start),
    and those abilities (the ones no informative cell reads stay at their start); the start is
    left as it was."""
    cells, start = _cells(SUCCESSES, TRIALS)
    kept = start.copy()
    value, theta = _profile(cells, start, sd)
    want, argmax = hand_profile(sd, start)
    assert value == pytest.approx(want, abs=1e-8)
    assert theta == pytest.approx(argmax, abs=1e-4)
    assert start.tolist() == kept.tolist()


def test_prompt_difficulty_of_the_small_world():
    """Guards `prompt_difficulty`'s search: the sd it returns is the profile's maximum (the
    profile, checked by hand above, is no higher 0.005 either side), to 0.01 at the default
    tolerance, its log-likelihood ratio the profile there against sd = 0, and the cells read."""
    fit = prompt_difficulty(SUCCESSES, TRIALS, tolerance=1e-4)
    cells, start = _cells(SUCCESSES, TRIALS)

    def profile(sd):
        return _profile(cells, start, sd, iterations=100)[0]

    assert fit.n_cells == 8 and fit.sd > 0.1
    assert profile(fit.sd) >= max(profile(fit.sd - 0.005), profile(fit.sd + 0.005))
    assert fit.log_likelihood_ratio == pytest.approx(profile(fit.sd) - profile(0.0), abs=1e-6)
    assert abs(prompt_difficulty(SUCCESSES, TRIALS).sd - fit.sd) < 0.01  # the default tolerance


def test_evidence_without_shared_difficulty_stays_at_the_boundary():
    """Guards the boundary: where every generator scores exactly its own rate in every cell, no
    sd > 0 is more likely than none, so the fit is sd 0 with a ratio of 0, and still counts its
    cells; a single informative cell is read, not taken for none."""
    trials = np.full((6, 2, 1, 1), 4.0)
    successes = np.full((6, 2, 1, 1), 2.0)
    assert prompt_difficulty(successes, trials) == PromptDifficulty(0.0, 0.0, 6)
    assert prompt_difficulty(successes[:1], trials[:1]).n_cells == 1
