"""Two small helpers of the router and the subset plans, by hand: written for mutants every test
survived (mutation testing, issue 36)."""

from __future__ import annotations

import numpy as np

from method.routing.predict import cost_ranks
from method.subsets.evidence import logit


def test_cost_ranks_are_integer_positions_usable_as_indices():
    """m_b costs least, m_a and m_c tie (id order): positions 1, 0, 2; integers, since callers
    index with them (a float array would not index)."""
    ranks = cost_ranks(np.array([2.0, 1.0, 2.0]), ["m_a", "m_b", "m_c"])
    assert ranks.dtype == np.int64 and ranks.tolist() == [1, 0, 2]
    assert np.array(["a", "b", "c"])[ranks].tolist() == ["b", "a", "c"]


def test_logit_is_clipped_at_both_ends():
    """p is clipped to [0.001, 0.999] first: 0 and 1 give finite logits, log(0.001 / 0.999) and
    its negative, never infinities."""
    low = np.log(0.001 / 0.999)
    np.testing.assert_allclose(logit([0.0, 1.0, 0.5]), [low, -low, 0.0])
