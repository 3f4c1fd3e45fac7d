"""method/bootstrap.py's small helpers on hand-made inputs: holes found by `make mutation`
(issue 36). Each test's docstring names the mutants it kills."""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pytest

from method.bootstrap import (
    ConceptStats,
    bootstrap_sums,
    bootstrap_totals,
    concept_weights,
    encode,
    missing_judgments,
    pairwise_intervals,
    percentile_interval,
    point_totals,
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


def one_cell_stats(numerator, denominator, transcription=False) -> ConceptStats:
    """ConceptStats of one model, language and capability over len(numerator) concepts."""
    n = len(numerator)
    return ConceptStats(
        concept_ids=tuple(f"k{i}" for i in range(n)),
        model_ids=("m",),
        languages=("en",),
        capabilities=("text" if transcription else "color",),
        capability_groups=("g",),
        is_transcription=np.array([transcription]),
        numerator=np.asarray(numerator, dtype=float).reshape(n, 1, 1, 1),
        denominator=np.asarray(denominator, dtype=float).reshape(n, 1, 1, 1),
    )


def test_transcription_total_is_one_minus_distance_over_length_to_the_bit():
    """Kills `one_minus_distance` not handed to the score (None or dropped): Eq. 3 is evaluated
    as 1 - D / L, as the leaderboard does (METHOD 3), and (L - D) / L differs in the last bit:
    L = 3, D = 1 gives 1 - 1/3 = 0.6666666666666667 but 2/3 = 0.6666666666666666, so the
    reliability marts would disagree with fct_hcq_leaderboard."""
    total = point_totals(one_cell_stats([2], [3], transcription=True))
    assert total[0, 0] == 1 - 1 / 3


def test_bootstrap_sums_leave_float32_when_a_sum_can_pass_two_to_the_24():
    """Kills the float32 bound divided by the concepts instead of multiplied: values 2**24 - 1
    and 2 are exact in float32, but a draw of each once sums to 2**24 + 1, which float32 rounds
    to 2**24. The sums by hand in integers, from the weights (`concept_weights`, same seed)."""
    big = 2**24 - 1
    ((num, _),) = list(bootstrap_sums(one_cell_stats([big, 2], [1, 1]), draws=8, seed=0))
    (weights,) = list(concept_weights(2, 8, seed=0))
    assert [1, 1] in weights.tolist()  # the draw that reaches 2**24 + 1
    expected = [int(w[0]) * big + int(w[1]) * 2 for w in weights]
    assert num[:, 0, 0, 0].tolist() == expected


def test_bootstrap_sums_of_a_world_without_concepts_are_zeros():
    """Kills the bound's `initial=0` dropped or None: a warehouse without any evidence has no
    concept, the product no row and no column, and numpy's max over nothing without an initial
    value raises instead of giving the draws their zero sums."""
    ((num, den),) = list(bootstrap_sums(one_cell_stats([], []), draws=3, seed=1))
    assert num.shape == den.shape == (3, 1, 1, 1)
    assert not num.any() and not den.any()


def test_bootstrap_totals_past_two_chunks_land_in_their_own_rows():
    """Kills the chunk offset `start += len` turned into `=` or `-=`: with 2,001 draws (chunks of
    1,000, 1,000 and 1) the third chunk or the second would overwrite earlier rows and leave the
    last rows unwritten (np.empty). Five concepts with statistics 1..5 over 5: each draw's score
    is sum(w_c * c) / sum(w_c * 5), by hand from the weights (`concept_weights`, same seed)."""
    stats = one_cell_stats([1, 2, 3, 4, 5], [5] * 5)
    totals = bootstrap_totals(stats, draws=2001, seed=4)
    weights = np.concatenate(list(concept_weights(5, 2001, seed=4)))
    expected = [sum(w * c for w, c in zip(row, range(1, 6), strict=True)) / 25 for row in weights]
    assert totals[:, 0, 0] == pytest.approx(expected, rel=1e-12, abs=0)


def test_pairwise_intervals_use_the_level_asked_for():
    """Kills `level` not handed to the percentile interval (the 95 % default instead): a 50 %
    interval of the differences 0, 1, 2, 3, 4 is their 25th and 75th percentiles, 1 and 3."""
    totals = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 0.0]])
    lo, hi = pairwise_intervals(totals, level=0.5)
    assert (lo[0, 1], hi[0, 1]) == (1.0, 3.0)
    assert (lo[1, 0], hi[1, 0]) == (-3.0, -1.0)


def test_percentile_interval_leaves_an_undefined_column_out_quietly():
    """Kills the defined-columns mask taken over the whole matrix or over nothing (`axis`
    None or dropped, or np.isnan dropped): a column undefined in every draw must be NaN without
    numpy's all-NaN RuntimeWarning, which the marts' builds would print for every such pair; the
    other column is still its percentiles (1 + 0.025 and 1 + 0.975 between 1 and 2)."""
    draws = np.array([[1.0, np.nan], [2.0, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = percentile_interval(draws)
    assert lo[0] == pytest.approx(1.025) and hi[0] == pytest.approx(1.975)
    assert np.isnan(lo[1]) and np.isnan(hi[1])


def test_missing_judgments_follow_the_model_order_given():
    """Kills the models encoded in their own sorted order instead of the order asked for
    (`model_ids` not handed to `encode`), and the counts returned as floats: the caller's
    models may come in another order and include one without any row (0 missing)."""
    stats = pa.table({"model_id": ["b", "a"], "language": ["en", "en"], "n_missing": [4, 1]})
    got = missing_judgments(stats, ("c", "b", "a"), ("en",), ("en", "zh"))
    assert got.tolist() == [[0], [4], [1]]
    assert got.dtype == np.int64
