"""The score formulas (`method.scores`, `method.hcq`) given a missing value as None, as Arrow
hands a null to Python: it is NaN, no evidence, never an object array (mutation testing, issue
36: each `dtype=float` conversion dropped survived every test). Expected values by hand."""

from __future__ import annotations

import numpy as np
import pytest

from method.hcq import hcq_group_views, hcq_total, hcq_weights
from method.scores import bilingual_mean, capability_score


def test_a_none_statistic_gives_no_score():
    # 1 of 2 valid yes: 0.5; a None numerator or denominator: no score
    np.testing.assert_array_equal(
        capability_score([1, None, 1], [2, 2, None]), [0.5, np.nan, np.nan]
    )


def test_the_bilingual_mean_of_a_none_is_undefined():
    np.testing.assert_array_equal(bilingual_mean([0.5, None], [0.25, 0.75]), [0.375, np.nan])
    np.testing.assert_array_equal(bilingual_mean([0.5, 0.25], [None, 0.75]), [np.nan, 0.5])


def test_a_none_capability_score_drops_out_of_its_group():
    # groups a: (0.2, None) -> 0.2; b: (0.6) -> 0.6; total (0.2 + 0.6) / 2
    assert hcq_total([0.2, None, 0.6], ["a", "a", "b"]) == pytest.approx(0.4)


def test_a_mapping_of_another_length_is_refused_naming_both_counts():
    with pytest.raises(ValueError, match=r"^scores have 3 capabilities, the mapping 2$"):
        hcq_group_views(np.zeros((1, 2, 3)), ["a", "b"])


def test_hcq_weights_leave_unavailable_capabilities_at_zero():
    """alpha_t = 1 / (G T_g(t)) by hand: a: (available, not), b: (available) -> 1/2, 0, 1/2
    (mutation testing, issue 36: an unavailable capability weighted 1 survived)."""
    np.testing.assert_array_equal(hcq_weights([True, False, True], ["a", "a", "b"]), [0.5, 0, 0.5])


def test_a_score_is_eq_2s_quotient_unless_eq_3_is_asked_for():
    """By default num / den (1/3 = 0.333...33); 1 - D / L (0.333...37) only when asked: the
    leaderboard's rounding, which a default of True would move in the last bit."""
    assert capability_score(1, 3) == 1 / 3 != 1 - 2 / 3
    assert capability_score(1, 3, one_minus_distance=True) == 1 - 2 / 3
