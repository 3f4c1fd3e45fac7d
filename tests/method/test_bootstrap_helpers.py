"""method/bootstrap.py's small helpers on hand-made inputs: holes found by `make mutation`
(issue 36). Each test's docstring names the mutants it kills."""

from __future__ import annotations

import numpy as np
import pytest

from method.bootstrap import (
    ConceptStats,
    bootstrap_sums,
    concept_weights,
    encode,
    rank_intervals,
    top1_probability,
)


def test_encode_refuses_values_outside_the_universe_naming_five_of_each():
    """Kills the refusal dropped (`missing = None`: a KeyError instead), its message dropped, and
    the message showing six of the universe or of the missing values instead of five."""
    with pytest.raises(ValueError) as refused:
        encode(["g", "h", "i", "j", "k", "l"], ("a", "b", "c", "d", "e", "f"))
    assert str(refused.value) == (
        "values outside ('a', 'b', 'c', 'd', 'e')...: ['g', 'h', 'i', 'j', 'k']"
    )


def test_concept_weights_last_chunk_holds_the_rest():
    """Kills `draws + start` for `draws - start`: 5 draws in chunks of 4 are 4 then 1."""
    assert [len(w) for w in concept_weights(3, 5, seed=1, chunk=4)] == [4, 1]


def test_top1_leaves_out_draws_that_rank_no_model():
    """Kills `n_winners > 0` turned into `>= 0`: a draw where every total is undefined would
    enter the mean as 0/0. Draws: m2 wins; nothing ranked; a tie. P = (0 + 1/2) / 2 and
    (1 + 1/2) / 2."""
    totals = np.array([[1.0, 2.0], [np.nan, np.nan], [2.0, 2.0]])
    assert top1_probability(totals) == pytest.approx([0.25, 0.75])


def test_top1_without_any_ranked_draw_is_nan_per_model():
    """Kills the all-undefined return's shape or fill changed (None, an axis that is not
    there)."""
    result = top1_probability(np.full((3, 2), np.nan))
    assert result.shape == (2,) and result.dtype == float and np.isnan(result).all()


def test_rank_interval_tails_are_two_and_a_half_percent():
    """Kills the tail (1 - level) / 2 computed as * 2 (10 %) or / 3 (1.7 %). Inverse-CDF lower
    quantile: the smallest rank r with P(rank <= r) >= 2.5 %. Model a is first in 2 of 100
    draws (2 %: lower bound 2; at 1.7 % it would be 1) and, in a second set, in 5 of 100 (5 %:
    lower bound 1; at 10 % it would be 2)."""
    for firsts, lower in ((2, 2), (5, 1)):
        totals = np.array([[1.0, 0.0]] * firsts + [[0.0, 1.0]] * (100 - firsts))
        lo, hi = rank_intervals(totals)
        assert lo[0] == lower and hi[0] == 2, firsts


def test_bootstrap_sums_of_fractional_statistics_stay_float64():
    """Kills the float32 shortcut taken for statistics that are not integers (`or` for `and`,
    or always): 1/3 and 2/7 in float32 are off in the 8th digit. The sums are the weights
    (concept_weights, the same seed) times the statistics, in float64 by hand."""
    numerator = np.array([1 / 3, 2 / 7]).reshape(2, 1, 1, 1)
    stats = ConceptStats(
        concept_ids=("c1", "c2"),
        model_ids=("m",),
        languages=("en",),
        capabilities=("color",),
        capability_groups=("attribute",),
        is_transcription=np.array([False]),
        numerator=numerator,
        denominator=np.ones((2, 1, 1, 1)),
    )
    ((num, den),) = list(bootstrap_sums(stats, draws=4, seed=3))
    (weights,) = list(concept_weights(2, 4, seed=3))
    expected = [w[0] / 3 + w[1] * 2 / 7 for w in weights]
    assert num[:, 0, 0, 0] == pytest.approx(expected, rel=1e-12, abs=0)
    assert den[:, 0, 0, 0] == pytest.approx(weights.sum(axis=1))
