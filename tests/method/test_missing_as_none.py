"""The score formulas (`method.scores`, `method.hcq`) given a missing value as None, as Arrow
hands a null to Python: it is NaN, no evidence, never an object array (mutation testing, issue
36: each `dtype=float` conversion dropped survived every test). Expected values by hand."""

from __future__ import annotations

import numpy as np
import pytest

from method.hcq import hcq_group_views, hcq_total
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
