"""Two small helpers of the router and the subset plans, by hand: written for mutants every test
survived (mutation testing, issue 36)."""

from __future__ import annotations

import numpy as np

from method.bootstrap import concept_stats
from method.routing.predict import cost_ranks
from method.subsets.evidence import design_weights, full_scores, logit, scope_weights


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


def _stats(languages):
    """One concept, one model: color and shape (groups attr and other) in the first language,
    color alone in the second."""
    first, second = languages
    columns = {
        "concept_id": np.array(["c1"] * 3),
        "model_id": np.array(["m"] * 3),
        "language": np.array([first, second, first]),
        "capability": np.array(["color", "color", "shape"]),
        "score_num": np.array([1, 1, 1]),
        "score_den": np.array([1, 1, 1]),
    }
    return concept_stats(columns, ["color", "shape"], ["attr", "other"])


AVAILABLE = np.array([[True, True], [True, False]])  # [language, capability]


def test_scope_weights_put_each_languages_weights_on_that_language_only():
    """Eq. 4's weights by hand: first language two groups of one capability, 1/2 each; second
    language color alone, 1; bilingual halves both. With a bilingual pair the plans use its
    weights; without one (en and fr) the mean of the scopes'."""
    stats = _stats(("en", "zh"))
    expected = [[[0.5, 0.5], [0, 0]], [[0, 0], [1, 0]], [[0.25, 0.25], [0.5, 0]]]
    np.testing.assert_array_equal(scope_weights(AVAILABLE, stats), expected)
    np.testing.assert_array_equal(design_weights(AVAILABLE, stats), expected[2])
    np.testing.assert_array_equal(
        design_weights(AVAILABLE, _stats(("en", "fr"))), [[0.25, 0.25], [0.5, 0]]
    )


def test_full_scores_sum_over_concepts_only():
    """[C=2, K=2, L=1, T=1]: model 0 has 1 + 2 of 2 + 2, model 1 has 0 + 1 of 2 + 2."""
    numerator = np.array([[1, 0], [2, 1]], dtype=float).reshape(2, 2, 1, 1)
    denominator = np.full((2, 2, 1, 1), 2.0)
    np.testing.assert_array_equal(full_scores(numerator, denominator), [[[0.75]], [[0.25]]])


def test_the_bilingual_scope_weighs_only_its_two_languages():
    """A third language (fr, color alone: weight 1 in its own scope) has no weight in the
    bilingual scope, which halves en's and zh's only."""
    columns = {
        "concept_id": np.array(["c1"] * 3),
        "model_id": np.array(["m"] * 3),
        "language": np.array(["en", "fr", "zh"]),
        "capability": np.array(["color"] * 3),
        "score_num": np.array([1, 1, 1]),
        "score_den": np.array([1, 1, 1]),
    }
    stats = concept_stats(columns, ["color"], ["attr"])
    weights = scope_weights(np.ones((3, 1), dtype=bool), stats)
    bilingual = weights[stats.scopes.index("bilingual")]
    np.testing.assert_array_equal(
        bilingual[[stats.languages.index(x) for x in ("en", "fr", "zh")]], [[0.5], [0], [0.5]]
    )
