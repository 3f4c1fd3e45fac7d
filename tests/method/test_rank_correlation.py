"""method.rank_correlation against scipy.stats (the reference it replaces in the marts): the same
float, bit for bit, on samples with ties, constants, NaN and the generator counts the marts see."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau, rankdata, spearmanr

from method.rank_correlation import average_ranks, kendall_tau_b, spearman_rho

# few distinct values, so ties are common; a NaN now and then
VALUE = st.sampled_from([0.0, 0.25, 1.0, 1.0 / 3.0, 2.5, -1.0, 7.0, float("nan")])


def same_float(got: float, expected: float) -> bool:
    return (np.isnan(got) and np.isnan(expected)) or got == expected


def scipy_statistic(function, a, b) -> float:
    with warnings.catch_warnings():  # constant input: scipy warns and gives NaN
        warnings.simplefilter("ignore")
        return float(function(a, b).statistic)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(VALUE, VALUE), min_size=0, max_size=14))
def test_spearman_and_kendall_are_scipys_floats(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    assert same_float(spearman_rho(a, b), scipy_statistic(spearmanr, a, b))
    assert same_float(kendall_tau_b(a, b), scipy_statistic(kendalltau, a, b))


@pytest.mark.parametrize("n", [3, 13, 14])
def test_on_generator_totals_like_the_marts(n):
    """Continuous totals of n generators (no ties) and their rounded copies (ties)."""
    rng = np.random.default_rng(n)
    for _ in range(50):
        a = rng.uniform(20, 80, n)
        b = a + rng.normal(0, 5, n)
        for x, y in ((a, b), (np.round(a, -1), np.round(b, -1))):
            assert same_float(spearman_rho(x, y), scipy_statistic(spearmanr, x, y))
            assert same_float(kendall_tau_b(x, y), scipy_statistic(kendalltau, x, y))


def test_hand_values():
    assert spearman_rho([1, 2, 3], [3, 2, 1]) == -1.0
    # pairs: (1,2) concordant, (1,3) concordant, (2,3) tied in b: (2 - 0) / sqrt(3 * 2)
    assert kendall_tau_b([1, 2, 3], [1, 2, 2]) == pytest.approx(2 / np.sqrt(6))
    assert np.isnan(spearman_rho([1, 1, 1], [1, 2, 3]))
    assert np.isnan(kendall_tau_b([2, 2], [1, 2]))


@given(st.lists(VALUE.filter(lambda v: not np.isnan(v)), max_size=20))
def test_average_ranks_are_scipys(values):
    assert average_ranks(np.array(values)).tolist() == rankdata(values).tolist()


def test_samples_of_two_lengths_are_refused():
    with pytest.raises(ValueError, match="two samples of one length"):
        spearman_rho([1, 2], [1, 2, 3])


def test_a_missing_value_given_as_none_is_a_nan():
    """A sample read from Arrow holds None for a null: taken as a float NaN (nan_policy
    'propagate'), never an object array that NaN checks cannot read (mutation testing, issue 36:
    the float64 conversion dropped)."""
    for a, b in (([1, None, 3], [1, 2, 3]), ([1, 2, 3], [3, None, 1])):
        assert np.isnan(spearman_rho(a, b)) and np.isnan(kendall_tau_b(a, b))
