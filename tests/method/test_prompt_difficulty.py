"""method.prompt_difficulty against planted truth and an independent route: the marginal
maximum-likelihood sd recovers a planted sd of shared item effects, finds none where none was
planted, and its log-likelihood at sd = 0 is the plain binomial one (scipy, by hand)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binom

from method.prompt_difficulty import profile_log_likelihood, prompt_difficulty


def planted_world(sd: float, seed: int = 0, concepts: int = 400, models: int = 6):
    """Evidence [C, M, L=2, T=3] with 3 trials per cell where present (about half the
    capabilities of a concept, as prompts tag few), generator abilities spread over
    logits -1..2, and one shared N(0, sd) effect per (concept, language, capability)."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(-1.0, 2.0, size=(models, 2, 3))
    present = rng.random((concepts, 1, 2, 3)) < 0.5
    trials = np.where(present, 3, 0) * np.ones((1, models, 1, 1), int)
    effect = rng.normal(0.0, sd, size=(concepts, 1, 2, 3))
    successes = rng.binomial(trials, expit(theta[None] + effect))
    return successes, trials


@pytest.mark.parametrize("planted", [0.7, 1.5])
def test_the_planted_sd_is_recovered(planted):
    fit = prompt_difficulty(*planted_world(planted))
    # about 1,200 informative cells of 6 generators: the sd to about +-0.1 (seed fixed)
    assert fit.sd == pytest.approx(planted, abs=0.15)
    assert fit.log_likelihood_ratio > 10  # far beyond chance for a 1-parameter test
    assert 1000 < fit.n_cells < 1400


def test_no_shared_difficulty_is_found_where_none_was_planted():
    fit = prompt_difficulty(*planted_world(0.0, seed=3))
    assert fit.sd < 0.25
    assert fit.log_likelihood_ratio < 3  # chance level (half a chi-square with 1 df)


def test_at_sd_zero_the_likelihood_is_binomial_at_each_generators_own_rates():
    successes, trials = planted_world(1.0, concepts=50)
    keep = (trials > 0).sum(axis=1) >= 2  # [C, L, T] cells with >= 2 generators
    rates = successes.sum(axis=0) / trials.sum(axis=0)  # [M, L, T], every cell here is informative
    expected = 0.0
    for c, lang, t in zip(*np.nonzero(keep), strict=True):
        for m in range(successes.shape[1]):
            expected += binom.logpmf(
                successes[c, m, lang, t], trials[c, m, lang, t], rates[m, lang, t]
            )
    assert profile_log_likelihood(successes, trials, 0.0) == pytest.approx(expected, rel=1e-9)
    # and the planted effects make a positive sd more likely than none
    assert profile_log_likelihood(successes, trials, 1.0) > expected


def test_evidence_from_one_generator_per_cell_says_nothing():
    successes, trials = planted_world(1.0, models=1)
    fit = prompt_difficulty(successes, trials)
    assert (fit.sd, fit.log_likelihood_ratio, fit.n_cells) == (0.0, 0.0, 0)


def test_a_large_warehouse_is_read_through_a_fixed_subset_of_cells():
    successes, trials = planted_world(1.0, concepts=400)
    first = prompt_difficulty(successes, trials, max_cells=300)
    again = prompt_difficulty(successes, trials, max_cells=300)
    assert first.n_cells == 300 and first == again  # seeded: the same cells each time
